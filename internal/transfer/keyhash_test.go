package transfer_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/transferflow/orchestrator/internal/ledger"
	"github.com/transferflow/orchestrator/internal/transfer"
)

// testKeySecret is the IDEMPOTENCY_KEY_SECRET of the tests that key their hashes.
const testKeySecret = "test-only-idempotency-key-secret-0123456789"

// TestKeyedHashHidesTheKey: with IDEMPOTENCY_KEY_SECRET, the key part of a transfer id (which the payee and the
// outcome events' consumers see) and of an account key record is not the unkeyed SHA-256 of (scope, key), so nobody
// without the secret can confirm a guess of the key from it; the same key still replays.
func TestKeyedHashHidesTheKey(t *testing.T) {
	h := newHarnessEnv(t, map[string]string{"IDEMPOTENCY_KEY_SECRET": testKeySecret})
	const scope, key = "anonymous", "order-secret-1"

	first := h.post(key, aliceToBob)
	var created transfer.Resource
	decode(t, first, &created)
	if first.StatusCode != http.StatusAccepted {
		t.Fatalf("status = %d, body %s", first.StatusCode, first.Body)
	}
	if got, guessed := created.TransferID[len("tr_"):len("tr_")+26], ledger.KeyHash(scope, key); got == guessed {
		t.Errorf("transfer id %s embeds SHA-256(scope, key) %s: the key can be confirmed offline", created.TransferID, guessed)
	}
	h.clock.Advance(11 * time.Second)
	again := h.post(key, aliceToBob)
	var replayed transfer.Resource
	decode(t, again, &replayed)
	if again.Headers["Idempotent-Replayed"] != "true" || replayed.TransferID != created.TransferID {
		t.Errorf("retry: status %d, replayed %q, id %s, want a replay of %s", again.StatusCode,
			again.Headers["Idempotent-Replayed"], replayed.TransferID, created.TransferID)
	}

	open := h.postAccount(key, `{"currency":"EUR","accountId":"acc-keyed"}`)
	if open.StatusCode != http.StatusCreated {
		t.Fatalf("open: status %d, body %s", open.StatusCode, open.Body)
	}
	out, err := h.db.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(h.table),
		FilterExpression: aws.String("sk = :sk"), ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{
			":sk": &ddbtypes.AttributeValueMemberS{Value: "ACCOUNTKEY"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Items) != 1 {
		t.Fatalf("account key records = %d, want 1", len(out.Items))
	}
	pk := out.Items[0]["pk"].(*ddbtypes.AttributeValueMemberS).Value
	if !strings.HasPrefix(pk, "ACCOUNTKEY#") || pk == ledger.AccountKeyPK(scope, key) {
		t.Errorf("account key record %s is the unkeyed SHA-256 of (scope, key)", pk)
	}
	if again := h.postAccount(key, `{"currency":"EUR","accountId":"acc-keyed"}`); again.Headers["Idempotent-Replayed"] != "true" {
		t.Errorf("account retry: status %d, headers %v, want a replay", again.StatusCode, again.Headers)
	}
}
