package e2e

import (
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/transferflow/orchestrator/internal/ledger"
)

// TestTransferIDHidesTheKey: the payee sees the payer's transfer id in its account's listing, and the id's 26
// characters after "tr_" are not the unkeyed SHA-256 of the payer's scope and Idempotency-Key, so the payee cannot
// confirm a guess of the key; the stack's secret is kept in --data-dir, so a retry with the same key after a
// restart is still a replay.
func TestTransferIDHidesTheKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startStack(t, "--data-dir", dir)
	payee := userCaller("keyhashpayee")
	const key = "e2e-keyhash-order-1"
	if r := payee.send(s, http.MethodPost, "/accounts", map[string]any{"accountId": "acc-keyhash-payee", "currency": "EUR"},
		map[string]string{"Idempotency-Key": "e2e-keyhash-open"}); r.Status != http.StatusCreated {
		t.Fatalf("the payee opens its account: %d %s", r.Status, r.RawBody)
	}
	body := transferBody("acc-alice", "acc-keyhash-payee", 125, "EUR")
	id := s.submitAccepted("submit", key, body)
	s.waitCompleted("transfer", id)

	listing := payee.send(s, http.MethodGet, "/accounts/acc-keyhash-payee/transfers", nil, nil)
	if listing.Status != http.StatusOK || !strings.Contains(string(listing.RawBody), id) {
		t.Fatalf("the payee's listing: %d %s, want it to show %s", listing.Status, listing.RawBody, id)
	}
	if guessed := ledger.KeyHash(unsignedCaller.scope, key); id[len("tr_"):len("tr_")+26] == guessed {
		t.Errorf("transfer id %s embeds SHA-256(payer's scope, key) %s: the payee can confirm a guess of the key", id, guessed)
	}

	s.stop(syscall.SIGTERM)
	s2 := startStack(t, "--data-dir", dir)
	retry := s2.submit(key, body)
	if retry.Status != http.StatusOK || retry.Header.Get("Idempotent-Replayed") != "true" || retry.Body["transferId"] != id {
		t.Errorf("retry after a restart: %d %v %s, want a 200 replay of %s", retry.Status, retry.Header.Get("Idempotent-Replayed"), retry.RawBody, id)
	}
}
