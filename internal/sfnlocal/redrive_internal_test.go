package sfnlocal

import (
	"context"
	"testing"
)

// TestFinishAfterTheLastStateExited: a stop or a timeout that comes after the machine ran to its end (the
// StateExited event of its last state recorded, runMachine returning no failure) does not close the execution
// ABORTED or TIMED_OUT: it succeeded, with its output. Closed otherwise, its redrive point would be its first state
// (no state stopped) and a redrive would run every state again, their Assign included.
func TestFinishAfterTheLastStateExited(t *testing.T) {
	ctx := context.Background()
	e := New(Options{})
	t.Cleanup(e.Close)
	sm, err := e.CreateStateMachine(ctx, CreateInput{Name: "m", RoleArn: "arn:aws:iam::123456789012:role/r",
		Definition: `{"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}}`})
	if err != nil {
		t.Fatal(err)
	}
	for _, stop := range []string{StatusAborted, StatusTimedOut} {
		t.Run(stop, func(t *testing.T) {
			e.mu.Lock()
			m := e.sms[sm.Arn]
			e.mu.Unlock()
			x := newExecution(e, m, e.executionArn("m", stop), stop, "{}", nil)
			x.cancel(&stopCause{status: stop, fail: &failure{Error: "Stopped"}})
			x.finish(&thread{}, "done", nil)
			rec := x.snapshot()
			if rec.Status != StatusSucceeded || rec.Output == nil || *rec.Output != `"done"` || rec.RedrivePoint() != nil {
				t.Fatalf("closed %s, output %v, redrive point %+v; want SUCCEEDED \"done\"", rec.Status, rec.Output, rec.RedrivePoint())
			}
			if h := rec.History; len(h) != 1 || h[0].Type != EventExecutionSucceeded {
				t.Fatalf("history %+v, want ExecutionSucceeded", h)
			}
			// A stop that ended the machine early (runMachine's stopped) still closes it with the stop's status.
			y := newExecution(e, m, e.executionArn("m", stop+"-early"), stop+"-early", "{}", nil)
			y.cancel(&stopCause{status: stop, fail: &failure{Error: "Stopped"}})
			y.finish(&thread{}, nil, stopped)
			if got := y.snapshot(); got.Status != stop {
				t.Fatalf("stopped early: closed %s, want %s", got.Status, stop)
			}
		})
	}
}
