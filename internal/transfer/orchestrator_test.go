package transfer_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/transferflow/orchestrator/internal/ledger"
	"github.com/transferflow/orchestrator/internal/transfer"
)

func TestSubmitNewTransfer(t *testing.T) {
	h := newHarness(t)
	resp := h.post("order-118", aliceToBob)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("status = %d, body %s", resp.StatusCode, resp.Body)
	}
	var got transfer.Resource
	decode(t, resp, &got)
	if resp.Headers["Location"] != "/transfers/"+got.TransferID {
		t.Errorf("Location = %q, transferId %q", resp.Headers["Location"], got.TransferID)
	}
	if _, ok := resp.Headers["Idempotent-Replayed"]; ok {
		t.Errorf("a first request is not a replay")
	}
	if got.Status != "IN_PROGRESS" || got.Amount != 1250 || got.Currency != "EUR" || got.Reference != "invoice 2026-118" ||
		got.SourceAccountID != "acc-alice" || got.DestinationAccountID != "acc-bob" || got.CreatedAt != "2026-11-21T10:00:00.123Z" {
		t.Errorf("resource = %+v", got)
	}
	if want := transfer.ExecutionArn(testStateMachineArn, got.TransferID); got.ExecutionArn != want {
		t.Errorf("executionArn = %q, want %q", got.ExecutionArn, want)
	}
	if got.Links.Self != "/transfers/"+got.TransferID || got.Links.History != "/transfers/"+got.TransferID+"/history" {
		t.Errorf("links = %+v", got.Links)
	}
	if n := h.sfn.created.Load(); n != 1 {
		t.Fatalf("executions created = %d, want 1", n)
	}
	// The execution input is built from the stored record, in a fixed order.
	var in transfer.ExecutionInput
	if err := json.Unmarshal([]byte(h.sfn.input(got.TransferID)), &in); err != nil {
		t.Fatal(err)
	}
	if in.TransferID != got.TransferID || in.Amount != 1250 || !strings.HasPrefix(in.RecordKey, "TRANSFER#") {
		t.Errorf("execution input = %+v", in)
	}
	if g := h.get(got.TransferID, ""); g.StatusCode != http.StatusOK {
		t.Errorf("GET status = %d", g.StatusCode)
	}
}

func TestDuplicates(t *testing.T) {
	h := newHarness(t)
	first := h.post(`"dup-1"`, aliceToBob)
	var created transfer.Resource
	decode(t, first, &created)

	// The same canonical payload with another key order and spacing, and the bare form of the key.
	reordered := `{ "reference":"invoice 2026-118", "currency":"EUR", "amount":1250, "destinationAccountId":"acc-bob", "sourceAccountId":"acc-alice" }`

	t.Run("inside the reservation window is 409 with Retry-After", func(t *testing.T) {
		resp := h.post("dup-1", reordered)
		wantProblem(t, resp, http.StatusConflict, "REQUEST_IN_PROGRESS")
		if resp.Headers["Retry-After"] != "10" {
			t.Errorf("Retry-After = %q, want 10", resp.Headers["Retry-After"])
		}
	})
	t.Run("another payload is 422", func(t *testing.T) {
		resp := h.post("dup-1", strings.Replace(aliceToBob, "1250", "1251", 1))
		wantProblem(t, resp, http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED")
	})
	t.Run("after the window, a running transfer is replayed with 202", func(t *testing.T) {
		h.clock.Advance(11 * time.Second)
		got := wantReplay(t, h.post("dup-1", reordered), http.StatusAccepted)
		if got.TransferID != created.TransferID || got.ExecutionArn != created.ExecutionArn {
			t.Errorf("replayed %s, created %s", got.TransferID, created.TransferID)
		}
	})
	t.Run("a terminal transfer is replayed with 200", func(t *testing.T) {
		settle(t, h, created.TransferID, "FAILED", "INSUFFICIENT_FUNDS")
		got := wantReplay(t, h.post("dup-1", aliceToBob), http.StatusOK)
		if got.Status != "FAILED" || got.Failure == nil || got.Failure.Code != "INSUFFICIENT_FUNDS" || got.Failure.Message == "" {
			t.Errorf("resource = %+v", got)
		}
	})
	if n := h.sfn.created.Load(); n != 1 {
		t.Errorf("executions created = %d, want 1", n)
	}
}

// settle marks a transfer terminal as the workflow would.
func settle(t *testing.T, h *harness, transferID, status, code string) {
	t.Helper()
	pk := "TRANSFER#" + strings.TrimPrefix(transferID, "tr_")[:26]
	_, err := h.db.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
		TableName:                aws.String(h.table),
		Key:                      map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: pk}, "sk": &ddbtypes.AttributeValueMemberS{Value: "TRANSFER"}},
		UpdateExpression:         aws.String("SET #s = :s, failureCode = :c REMOVE sweepShard"),
		ExpressionAttributeNames: map[string]string{"#s": "status"},
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{
			":s": &ddbtypes.AttributeValueMemberS{Value: status}, ":c": &ddbtypes.AttributeValueMemberS{Value: code},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestRejectedRequestsWriteNothing(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name   string
		req    func() events.APIGatewayProxyRequest
		status int
		code   string
	}{
		{name: "missing key", req: func() events.APIGatewayProxyRequest { return postReq("", "application/json", aliceToBob) },
			status: 400, code: "IDEMPOTENCY_KEY_MISSING"},
		{name: "malformed key", req: func() events.APIGatewayProxyRequest { return postReq(`"unterminated`, "application/json", aliceToBob) },
			status: 400, code: "IDEMPOTENCY_KEY_INVALID"},
		{name: "key too long", req: func() events.APIGatewayProxyRequest {
			return postReq(strings.Repeat("x", 256), "application/json", aliceToBob)
		}, status: 400, code: "IDEMPOTENCY_KEY_INVALID"},
		{name: "wrong content type", req: func() events.APIGatewayProxyRequest { return postReq("k1", "text/plain", aliceToBob) },
			status: 415, code: "UNSUPPORTED_MEDIA_TYPE"},
		{name: "no content type", req: func() events.APIGatewayProxyRequest { return postReq("k1", "", aliceToBob) },
			status: 415, code: "UNSUPPORTED_MEDIA_TYPE"},
		{name: "body over 16 KiB", req: func() events.APIGatewayProxyRequest {
			return postReq("k1", "application/json", `{"reference":"`+strings.Repeat("a", 16<<10)+`"}`)
		}, status: 413, code: "PAYLOAD_TOO_LARGE"},
		{name: "base64 body over 16 KiB", req: func() events.APIGatewayProxyRequest {
			r := postReq("k1", "application/json", base64.StdEncoding.EncodeToString([]byte(strings.Repeat(" ", 17<<10))))
			r.IsBase64Encoded = true
			return r
		}, status: 413, code: "PAYLOAD_TOO_LARGE"},
		{name: "invalid JSON", req: func() events.APIGatewayProxyRequest { return postReq("k1", "application/json", `{"amount":`) },
			status: 400, code: "VALIDATION_ERROR"},
		{name: "float amount", req: func() events.APIGatewayProxyRequest {
			return postReq("k1", "application/json; charset=utf-8", strings.Replace(aliceToBob, "1250", "12.50", 1))
		}, status: 400, code: "VALIDATION_ERROR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantProblem(t, h.do(tt.req()), tt.status, tt.code)
		})
	}
	if n := h.items(); n != 0 {
		t.Errorf("items written = %d, want 0", n)
	}
	if n := h.sfn.calls.Load(); n != 0 {
		t.Errorf("StartExecution calls = %d, want 0", n)
	}
}

func TestValidationErrorNamesEachField(t *testing.T) {
	h := newHarness(t)
	resp := h.post("k1", `{"sourceAccountId":"acc-alice","destinationAccountId":"acc-alice","amount":"5","currency":"eur","tip":1}`)
	p := wantProblem(t, resp, http.StatusBadRequest, "VALIDATION_ERROR")
	var fields []string
	for _, e := range p.Errors {
		if e.Message == "" {
			t.Errorf("field %s has no message", e.Field)
		}
		fields = append(fields, e.Field)
	}
	if got, want := strings.Join(fields, ","), "tip,destinationAccountId,amount,currency"; got != want {
		t.Errorf("fields = %s, want %s", got, want)
	}
}

func TestBase64BodyAndCharset(t *testing.T) {
	h := newHarness(t)
	req := postReq("b64", "application/json; charset=UTF-8", base64.StdEncoding.EncodeToString([]byte(aliceToBob)))
	req.IsBase64Encoded = true
	if resp := h.do(req); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("status = %d, body %s", resp.StatusCode, resp.Body)
	}
}

func TestKeysAreScopedToTheCaller(t *testing.T) {
	h := newHarness(t)
	alice := postReq("shared-key", "application/json", aliceToBob)
	alice.RequestContext.Identity.UserArn = "arn:aws:iam::123456789012:user/alice"
	bob := postReq("shared-key", "application/json", strings.Replace(aliceToBob, "1250", "99", 1))
	bob.RequestContext.Identity.UserArn = "arn:aws:iam::123456789012:user/bob"

	ra, rb := h.do(alice), h.do(bob)
	if ra.StatusCode != http.StatusAccepted || rb.StatusCode != http.StatusAccepted {
		t.Fatalf("statuses %d %d: the same key under two callers must be two transfers", ra.StatusCode, rb.StatusCode)
	}
	var ta, tb transfer.Resource
	decode(t, ra, &ta)
	decode(t, rb, &tb)
	if ta.TransferID == tb.TransferID {
		t.Fatal("two callers share a transfer")
	}
	if resp := h.get(ta.TransferID, "arn:aws:iam::123456789012:user/bob"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("bob reading alice's transfer: status %d, want 404", resp.StatusCode)
	}
	if resp := h.get(ta.TransferID, "arn:aws:iam::123456789012:user/alice"); resp.StatusCode != http.StatusOK {
		t.Errorf("alice reading her transfer: status %d", resp.StatusCode)
	}
	if resp := h.get(ta.TransferID, ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("anonymous reading alice's transfer: status %d, want 404", resp.StatusCode)
	}
	if n := h.sfn.created.Load(); n != 2 {
		t.Errorf("executions = %d, want 2", n)
	}
}

func TestGetUnknownOrMalformedIDIs404(t *testing.T) {
	h := newHarness(t)
	for _, id := range []string{"tr_" + strings.Repeat("a", 42), "nope", "tr_" + strings.Repeat("A", 42)} {
		wantProblem(t, h.get(id, ""), http.StatusNotFound, "TRANSFER_NOT_FOUND")
	}
}

// TestExpiredRecordFreesItsKey: once a transfer is settled, its record (and key) is retained for IDEMPOTENCY_TTL;
// after that the key starts a new transfer, even before DynamoDB has deleted the old record.
func TestExpiredRecordFreesItsKey(t *testing.T) {
	h := newHarness(t)
	var first, second transfer.Resource
	decode(t, h.post("reuse", aliceToBob), &first)
	h.clock.Advance(time.Minute)
	if err := ledger.NewLedger(h.db, h.table).SettleTransfer(context.Background(), first.TransferID, ledger.StatusFailed,
		ledger.Failure{Code: "INSUFFICIENT_FUNDS"}, 0, h.clock.Now()); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(7*24*time.Hour - time.Minute - time.Second)
	if resp := h.get(first.TransferID, ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("inside its retention: GET %d, want 200", resp.StatusCode)
	}
	h.clock.Advance(2 * time.Second)
	// The record is past its TTL but DynamoDB has not deleted it yet: it no longer counts.
	wantProblem(t, h.get(first.TransferID, ""), http.StatusNotFound, "TRANSFER_NOT_FOUND")
	resp := h.post("reuse", strings.Replace(aliceToBob, "1250", "7", 1))
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("status = %d, body %s", resp.StatusCode, resp.Body)
	}
	decode(t, resp, &second)
	if second.TransferID == first.TransferID {
		t.Error("a reused key after expiry must start a new transfer with a new id and execution name")
	}
}

// TestInProgressRecordNeverExpires: a transfer still in progress keeps its key however old it is: the record has no
// TTL attribute, a duplicate long after is a replay (never a new transfer), and GET still finds it.
func TestInProgressRecordNeverExpires(t *testing.T) {
	h := newHarness(t)
	var first transfer.Resource
	decode(t, h.post("old", aliceToBob), &first)
	h.clock.Advance(30 * 24 * time.Hour)
	resp := h.post("old", aliceToBob)
	var again transfer.Resource
	decode(t, resp, &again)
	if resp.StatusCode != http.StatusAccepted || resp.Headers["Idempotent-Replayed"] != "true" || again.TransferID != first.TransferID {
		t.Fatalf("a duplicate a month later: %d %s, want a 202 replay of %s", resp.StatusCode, resp.Body, first.TransferID)
	}
	if g := h.get(first.TransferID, ""); g.StatusCode != http.StatusOK {
		t.Errorf("GET = %d, want 200", g.StatusCode)
	}
	recs := h.records()
	if len(recs) != 1 || recs[0].ExpiresAt != 0 || recs[0].RetainUntil == 0 {
		t.Errorf("records = %+v, want one, with retainUntil and no expiresAt", recs)
	}
}

// TestDynamoDBRequestsPerSubmit counts the requests on the wire to DynamoDB.
func TestDynamoDBRequestsPerSubmit(t *testing.T) {
	h := newHarness(t)
	count := func(key string) int64 {
		before := h.wire.requests.Load()
		h.post(key, aliceToBob)
		return h.wire.requests.Load() - before
	}
	tests := []struct {
		name  string
		setup func()
		key   string
		want  int64
	}{
		{name: "new key", key: "count-1"},
		{name: "duplicate inside the window (409)", key: "count-1"},
		// The one case with a second request: the conditional claim that limits re-drives to one a window.
		{name: "duplicate of a running transfer after the window (202)", setup: func() { h.clock.Advance(time.Minute) }, key: "count-1", want: 2},
		{name: "duplicate with another payload (422)", key: "count-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.setup != nil {
				tt.setup()
			}
			if tt.name == "duplicate with another payload (422)" {
				before := h.wire.requests.Load()
				h.post(tt.key, strings.Replace(aliceToBob, "1250", "1", 1))
				if n := h.wire.requests.Load() - before; n != 1 {
					t.Fatalf("DynamoDB requests = %d, want 1", n)
				}
				return
			}
			want := max(tt.want, 1)
			if n := count(tt.key); n != want {
				t.Fatalf("DynamoDB requests = %d, want %d", n, want)
			}
		})
	}
}

// TestConcurrentSubmissions fires 200 concurrent POSTs over 20 keys at the handler.
func TestConcurrentSubmissions(t *testing.T) {
	h := newHarness(t)
	const requests, keys = 200, 20
	var wg sync.WaitGroup
	resps := make([]events.APIGatewayProxyResponse, requests)
	start := make(chan struct{})
	for i := range requests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			body := strings.Replace(aliceToBob, "1250", fmt.Sprint(1000+i%keys), 1)
			resps[i] = h.post(fmt.Sprintf("burst-%02d", i%keys), body)
		}()
	}
	close(start)
	wg.Wait()

	firsts := map[string]int{}
	tally := map[string]int{}
	for i, r := range resps {
		switch {
		case r.StatusCode == http.StatusAccepted && r.Headers["Idempotent-Replayed"] == "":
			var tr transfer.Resource
			decode(t, r, &tr)
			firsts[tr.TransferID]++
			tally["202 new"]++
		case r.StatusCode == http.StatusAccepted || r.StatusCode == http.StatusOK:
			if r.Headers["Idempotent-Replayed"] != "true" {
				t.Errorf("request %d: %d without Idempotent-Replayed", i, r.StatusCode)
			}
			tally["replay"]++
		case r.StatusCode == http.StatusConflict:
			tally["409"]++
		default:
			t.Errorf("request %d: unexpected status %d: %s", i, r.StatusCode, r.Body)
		}
	}
	t.Logf("answers: %v", tally)
	if len(firsts) != keys || tally["202 new"] != keys {
		t.Errorf("new transfers = %d (%d answers), want %d", len(firsts), tally["202 new"], keys)
	}
	if n := h.sfn.created.Load(); n != keys {
		t.Errorf("StartExecution calls that created an execution = %d, want %d", n, keys)
	}
	if n := h.items(); n != keys {
		t.Errorf("records = %d, want %d", n, keys)
	}
}

func postReq(key, contentType, body string) events.APIGatewayProxyRequest {
	r := events.APIGatewayProxyRequest{
		Resource: "/transfers", Path: "/transfers", HTTPMethod: http.MethodPost,
		Headers: map[string]string{}, Body: body,
	}
	if key != "" {
		r.Headers["idempotency-key"] = key
	}
	if contentType != "" {
		r.Headers["content-type"] = contentType
	}
	return r
}

func TestUnknownRoutes(t *testing.T) {
	h := newHarness(t)
	wantProblem(t, h.do(events.APIGatewayProxyRequest{Resource: "/nope", Path: "/nope", HTTPMethod: "GET"}), 404, "NOT_FOUND")
	wantProblem(t, h.do(events.APIGatewayProxyRequest{Resource: "/transfers", Path: "/transfers", HTTPMethod: "DELETE"}), 405, "METHOD_NOT_ALLOWED")
}
