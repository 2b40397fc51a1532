package transfer_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/internal/ledger"
	"github.com/transferflow/orchestrator/internal/transfer"
)

// TestStartFaults proves that no Step Functions failure turns into a duplicate execution or a lost reservation: the
// first answer is 503 (safe to retry), the record stays, and a retry with the same key after the reservation window
// re-drives the start under the same execution name, ending with exactly one execution.
func TestStartFaults(t *testing.T) {
	tests := []struct {
		name  string
		fault sfnFault
		// createdByFirst is how many executions exist after the failed first request.
		createdByFirst int64
	}{
		{name: "start fails before reaching the service", fault: sfnDrop, createdByFirst: 0},
		{name: "start succeeds but its reply is lost", fault: sfnLoseReply, createdByFirst: 1},
		{name: "start hangs past its deadline", fault: sfnHang, createdByFirst: 0},
		{name: "start is throttled", fault: sfnThrottle, createdByFirst: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, withoutRetries)
			h.h.StartTimeout = 300 * time.Millisecond
			h.sfn.setFault(func(int64) sfnFault { return tt.fault })

			resp := h.post("fault-key", aliceToBob)
			wantProblem(t, resp, http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE")
			if got := resp.Headers["Retry-After"]; got != "10" {
				t.Errorf("Retry-After = %q, want the reservation window's 10 seconds", got)
			}
			if n := h.sfn.created.Load(); n != tt.createdByFirst {
				t.Fatalf("executions after the failed start = %d, want %d", n, tt.createdByFirst)
			}
			if n := h.items(); n != 1 {
				t.Fatalf("records = %d, want the reservation kept", n)
			}

			h.sfn.setFault(nil)
			// Retrying too early meets the reservation window.
			wantProblem(t, h.post("fault-key", aliceToBob), http.StatusConflict, "REQUEST_IN_PROGRESS")
			h.clock.Advance(10 * time.Second)
			wantReplay(t, h.post("fault-key", aliceToBob), http.StatusAccepted) // the retry
			// And again: still one execution.
			h.post("fault-key", aliceToBob)
			if n := h.sfn.created.Load(); n != 1 {
				t.Errorf("executions = %d, want exactly 1", n)
			}
		})
	}
}

// TestLostReplyRetriedBySDK uses the SDK's default retries: the retried StartExecution carries the same name and
// input, so Step Functions answers with the execution the lost reply created, and the client sees one 202.
func TestLostReplyRetriedBySDK(t *testing.T) {
	h := newHarness(t)
	h.sfn.setFault(func(call int64) sfnFault {
		if call == 1 {
			return sfnLoseReply
		}
		return sfnOK
	})
	resp := h.post("lost-reply", aliceToBob)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("status %d body %s", resp.StatusCode, resp.Body)
	}
	if calls, created := h.sfn.calls.Load(), h.sfn.created.Load(); calls != 2 || created != 1 {
		t.Errorf("StartExecution calls = %d, executions = %d; want 2 calls and 1 execution", calls, created)
	}
}

// TestDynamoDBThrottled: a throttled reservation answers 503 with Retry-After and leaves nothing half-written.
func TestDynamoDBThrottled(t *testing.T) {
	h := newHarness(t, withoutRetries)
	h.wire.setIntercept(func(target string) *http.Response {
		if strings.HasSuffix(target, ".PutItem") || strings.HasSuffix(target, ".GetItem") {
			return throttled()
		}
		return nil
	})
	resp := h.post("throttled", aliceToBob)
	wantProblem(t, resp, http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE")
	if resp.Headers["Retry-After"] == "" {
		t.Error("no Retry-After")
	}
	wantProblem(t, h.get("tr_"+strings.Repeat("a", 42), ""), http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE")
	h.wire.setIntercept(nil)
	if n := h.items(); n != 0 {
		t.Errorf("records = %d, want 0", n)
	}
	if n := h.sfn.calls.Load(); n != 0 {
		t.Errorf("StartExecution calls = %d, want 0", n)
	}
	// The same key then goes through.
	if resp := h.post("throttled", aliceToBob); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("retry: status %d body %s", resp.StatusCode, resp.Body)
	}
}

// TestLogsCarryTheTransferIDButNoRequestBody checks what the handler logs.
func TestLogsCarryTheTransferIDButNoRequestBody(t *testing.T) {
	h := newHarness(t)
	var tr transfer.Resource
	decode(t, h.post("secret-ish-key", aliceToBob), &tr)
	logs := h.logs.String()
	if !strings.Contains(logs, `"transferId":"`+tr.TransferID+`"`) {
		t.Errorf("logs lack the transfer id: %s", logs)
	}
	for _, leak := range []string{"invoice 2026-118", "secret-ish-key", "1250"} {
		if strings.Contains(logs, leak) {
			t.Errorf("logs contain %q: %s", leak, logs)
		}
	}
}

// TestLostReservationReplyStartsTheWorkflow loses the reply of the reservation's PutItem on the wire, after Dynoxide
// committed it. The SDK retries the same PutItem, whose condition now fails against the item its first attempt
// wrote: the request recognises its own reservation (same transfer id and payload) and starts the workflow at once,
// instead of answering 409 to itself and leaving the transfer to the sweep.
func TestLostReservationReplyStartsTheWorkflow(t *testing.T) {
	h := newHarness(t) // the SDK's default retries
	h.wire.loseNextReply("DynamoDB_20120810.PutItem")
	resp := h.post("lost-put", aliceToBob)
	if h.wire.lostReplies() != 1 {
		t.Fatalf("lost replies = %d, want 1: the fault was not injected", h.wire.lostReplies())
	}
	if resp.StatusCode != http.StatusAccepted || resp.Headers["Idempotent-Replayed"] != "" {
		t.Fatalf("status %d %v %s, want a first 202", resp.StatusCode, resp.Headers, resp.Body)
	}
	var got transfer.Resource
	decode(t, resp, &got)
	if n := h.sfn.created.Load(); n != 1 || h.sfn.input(got.TransferID) == "" {
		t.Errorf("executions created = %d, want 1 for %s", n, got.TransferID)
	}
	if recs := h.records(); len(recs) != 1 || recs[0].TransferID != got.TransferID {
		t.Errorf("records = %+v, want the one transfer", recs)
	}
	// A genuine duplicate is still a duplicate.
	wantProblem(t, h.post("lost-put", aliceToBob), http.StatusConflict, "REQUEST_IN_PROGRESS")
}

// TestReplaysStartAtMostOncePerWindow: a replay of a settled transfer never calls StartExecution; duplicates of a
// transfer in flight re-drive the start at most once a reservation window, however many arrive at once.
func TestReplaysStartAtMostOncePerWindow(t *testing.T) {
	h := newHarness(t)
	var settled, inFlight transfer.Resource
	decode(t, h.post("replay-terminal", aliceToBob), &settled)
	decode(t, h.post("replay-running", aliceToBob), &inFlight)
	if err := ledger.NewLedger(h.db, h.table).SettleTransfer(context.Background(), settled.TransferID, ledger.StatusFailed,
		ledger.Failure{Code: "INSUFFICIENT_FUNDS"}, 0, h.clock.Now()); err != nil {
		t.Fatal(err)
	}
	calls := h.sfn.calls.Load()
	h.clock.Advance(time.Minute)
	for range 5 {
		if resp := h.post("replay-terminal", aliceToBob); resp.StatusCode != http.StatusOK {
			t.Fatalf("terminal replay: %d %s", resp.StatusCode, resp.Body)
		}
	}
	if n := h.sfn.calls.Load() - calls; n != 0 {
		t.Errorf("terminal replays called StartExecution %d times, want 0", n)
	}

	burst := func() {
		t.Helper()
		var wg sync.WaitGroup
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp := h.post("replay-running", aliceToBob)
				if resp.StatusCode != http.StatusAccepted || resp.Headers["Idempotent-Replayed"] != "true" || resp.Headers["Retry-After"] == "" {
					t.Errorf("in-flight replay: %d %v", resp.StatusCode, resp.Headers)
				}
			}()
		}
		wg.Wait()
	}
	for round := 1; round <= 2; round++ {
		before := h.sfn.calls.Load()
		burst()
		if n := h.sfn.calls.Load() - before; n != 1 {
			t.Errorf("round %d: 20 concurrent replays called StartExecution %d times, want 1", round, n)
		}
		h.clock.Advance(9 * time.Second)
		before = h.sfn.calls.Load()
		burst()
		if n := h.sfn.calls.Load() - before; n != 0 {
			t.Errorf("round %d, inside the window: StartExecution called %d times, want 0", round, n)
		}
		h.clock.Advance(time.Second) // the window since the last re-drive has passed
	}
	if n := h.sfn.created.Load(); n != 2 {
		t.Errorf("executions = %d, want 2", n)
	}
}

// TestFailedRedriveReleasesItsClaim: when the duplicate that claimed the re-drive fails to start the workflow, it
// answers 503 and gives the claim back, so the client's retry a second later re-drives instead of being told
// "in progress" with nothing started.
func TestFailedRedriveReleasesItsClaim(t *testing.T) {
	h := newHarness(t, withoutRetries)
	h.sfn.setFault(func(call int64) sfnFault {
		if call == 1 {
			return sfnDrop // the first start never reaches the service
		}
		if call == 2 {
			return sfnThrottle // nor does the first re-drive
		}
		return sfnOK
	})
	wantProblem(t, h.post("redrive-fails", aliceToBob), http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE")
	h.clock.Advance(11 * time.Second)
	wantProblem(t, h.post("redrive-fails", aliceToBob), http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE")
	h.clock.Advance(time.Second)
	resp := h.post("redrive-fails", aliceToBob)
	if resp.StatusCode != http.StatusAccepted || h.sfn.calls.Load() != 3 || h.sfn.created.Load() != 1 {
		t.Fatalf("the retry after the failed re-drive: %d, %d start calls, %d executions; want 202 after a third call that starts it",
			resp.StatusCode, h.sfn.calls.Load(), h.sfn.created.Load())
	}
}
