package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestTransferContract runs every row of the POST /transfers table of docs/api.md against the running
// stack, and checks that a rejected request writes nothing: no transfer, no execution, no money moved.
func TestTransferContract(t *testing.T) {
	t.Parallel()
	// The debit answers 2 s late, so the duplicate below meets the transfer still in progress however loaded the
	// machine is (the workflow otherwise completes in about 15 ms).
	s := startStack(t, "--fault", "debit:delay=2s:times=1")
	valid := `{"sourceAccountId":"acc-alice","destinationAccountId":"acc-bob","amount":1250,"currency":"EUR","reference":"invoice 2026-118"}`
	jsonCT := map[string]string{"Content-Type": "application/json"}
	with := func(h map[string]string, k, v string) map[string]string {
		out := map[string]string{k: v}
		for hk, hv := range h {
			out[hk] = hv
		}
		return out
	}
	executions := func() int {
		t.Helper()
		return len(s.executions())
	}

	// The rejections: each is problem+json with its code, and nothing is written.
	rejections := []struct {
		name    string
		headers map[string]string
		body    string
		status  int
		code    string
	}{
		{"no key", jsonCT, valid, 400, "IDEMPOTENCY_KEY_MISSING"},
		{"malformed key", with(jsonCT, "Idempotency-Key", `"unterminated`), valid, 400, "IDEMPOTENCY_KEY_INVALID"},
		{"key too long", with(jsonCT, "Idempotency-Key", strings.Repeat("k", 256)), valid, 400, "IDEMPOTENCY_KEY_INVALID"},
		{"invalid JSON", with(jsonCT, "Idempotency-Key", "c-json"), `{"amount":`, 400, "VALIDATION_ERROR"},
		{"float amount", with(jsonCT, "Idempotency-Key", "c-float"), strings.Replace(valid, "1250", "12.5", 1), 400, "VALIDATION_ERROR"},
		{"unknown field", with(jsonCT, "Idempotency-Key", "c-field"), strings.Replace(valid, `"currency"`, `"fee":1,"currency"`, 1), 400, "VALIDATION_ERROR"},
		{"invalid UTF-8", with(jsonCT, "Idempotency-Key", "c-utf8"), strings.Replace(valid, "invoice", "inv\xffoice", 1), 400, "VALIDATION_ERROR"},
		{"lone surrogate", with(jsonCT, "Idempotency-Key", "c-surrogate"), strings.Replace(valid, "invoice", `inv\ud800oice`, 1), 400, "VALIDATION_ERROR"},
		{"line separator in reference", with(jsonCT, "Idempotency-Key", "c-ls"), strings.Replace(valid, "invoice", "inv\u2028oice", 1), 400, "VALIDATION_ERROR"},
		{"bidi override in reference", with(jsonCT, "Idempotency-Key", "c-rlo"), strings.Replace(valid, "invoice", `inv\u202eoice`, 1), 400, "VALIDATION_ERROR"},
		{"body too large", with(jsonCT, "Idempotency-Key", "c-large"), strings.Replace(valid, "invoice 2026-118", strings.Repeat("x", 17<<10), 1), 413, "PAYLOAD_TOO_LARGE"},
		{"wrong content type", map[string]string{"Content-Type": "text/plain", "Idempotency-Key": "c-ct"}, valid, 415, "UNSUPPORTED_MEDIA_TYPE"},
	}
	for _, tt := range rejections {
		t.Run(tt.name, func(t *testing.T) {
			r := s.raw(http.MethodPost, "/transfers", []byte(tt.body), tt.headers)
			if r.Status != tt.status || r.Header.Get("Content-Type") != "application/problem+json" || r.Body["code"] != tt.code {
				t.Fatalf("%d %s %s, want %d %s as problem+json", r.Status, r.Header.Get("Content-Type"), r.RawBody, tt.status, tt.code)
			}
			for _, f := range []string{"type", "title", "status", "detail"} {
				if r.Body[f] == nil {
					t.Errorf("problem without %s: %s", f, r.RawBody)
				}
			}
		})
	}
	if n := executions(); n != 0 {
		t.Fatalf("rejected requests started %d executions", n)
	}

	// The answers to a key: new, in progress (409), another payload (422), terminal (200), all without moving money twice.
	headers := with(jsonCT, "Idempotency-Key", `"contract-1"`) // the structured-field form
	first := s.raw(http.MethodPost, "/transfers", []byte(valid), headers)
	if first.Status != http.StatusAccepted || first.Header.Get("Location") != fmt.Sprintf("/transfers/%s", first.Body["transferId"]) ||
		first.Body["status"] != "IN_PROGRESS" || first.Body["executionArn"] == nil {
		t.Fatalf("new key: %d %v %s", first.Status, first.Header, first.RawBody)
	}
	id := first.Body["transferId"].(string)
	reordered := `{ "currency":"EUR", "reference":"invoice 2026-118", "amount":1250, "destinationAccountId":"acc-bob", "sourceAccountId":"acc-alice" }`
	if r := s.raw(http.MethodPost, "/transfers", []byte(reordered), with(jsonCT, "Idempotency-Key", "contract-1")); r.Status != http.StatusConflict ||
		r.Body["code"] != "REQUEST_IN_PROGRESS" || r.Header.Get("Retry-After") == "" {
		t.Errorf("same payload inside the reservation window: %d %v %s, want 409 with Retry-After", r.Status, r.Header, r.RawBody)
	}
	if r := s.raw(http.MethodPost, "/transfers", []byte(strings.Replace(valid, "1250", "1251", 1)), headers); r.Status != http.StatusUnprocessableEntity ||
		r.Body["code"] != "IDEMPOTENCY_KEY_REUSED" {
		t.Errorf("another payload: %d %s, want 422", r.Status, r.RawBody)
	}
	s.waitCompleted("transfer", id)
	replay := s.raw(http.MethodPost, "/transfers", []byte(reordered), headers)
	if replay.Status != http.StatusOK || replay.Header.Get("Idempotent-Replayed") != "true" || replay.Body["transferId"] != id ||
		replay.Body["status"] != "COMPLETED" {
		t.Errorf("terminal replay: %d %v %s", replay.Status, replay.Header, replay.RawBody)
	}
	if n := executions(); n != 1 {
		t.Errorf("executions = %d, want 1", n)
	}
	if a, b := s.balance("acc-alice"), s.balance("acc-bob"); a != 100000-1250 || b != 5000+1250 {
		t.Errorf("balances alice %d bob %d: the money must move once", a, b)
	}
	if r := s.do(http.MethodGet, "/transfers/tr_"+strings.Repeat("a", 42), nil, nil); r.Status != http.StatusNotFound || r.Body["code"] != "TRANSFER_NOT_FOUND" {
		t.Errorf("unknown transfer: %d %s", r.Status, r.RawBody)
	}
}

// TestWorkflowFailureIsExplained: a workflow that fails on an error nothing catches is settled by the reconciler
// from the ledger, and the transfer's failure message carries the execution's error and cause.
func TestWorkflowFailureIsExplained(t *testing.T) {
	t.Parallel()
	// An error type the Debit state neither retries nor catches fails the execution at once.
	s := startStack(t, "--fault", "debit:error=LedgerOffline")
	id := s.submitAccepted("submit", "e2e-workflow-failed", transferBody("acc-alice", "acc-bob", 400, "EUR"))
	tr := s.waitTerminal(id, settle)
	failure, _ := tr["failure"].(map[string]any)
	msg, _ := failure["message"].(string)
	if tr["status"] != "FAILED" || failure["code"] != "WORKFLOW_FAILED" || !strings.Contains(msg, "(LedgerOffline") {
		t.Fatalf("transfer = %v, want FAILED WORKFLOW_FAILED naming the execution's error", tr)
	}
	if a, b := s.balance("acc-alice"), s.balance("acc-bob"); a != 100000 || b != 5000 {
		t.Errorf("balances alice %d bob %d, want no money moved", a, b)
	}
}
