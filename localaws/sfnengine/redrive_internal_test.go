package sfnengine

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

// TestForgetPartialAfterASucceededAttempt: what a failed attempt of a top-level Parallel or Map keeps for a redrive
// (the branches that succeeded, a Distributed Map's Map Run) is dropped once a later attempt of the same state
// succeeds; were that state's StateExited event then dropped by a stop, a redrive runs the state again rather than
// reuse the failed attempt. What another state kept, and what a nested state would keep, are left alone.
func TestForgetPartialAfterASucceededAttempt(t *testing.T) {
	ctx := context.Background()
	e := New(Options{})
	t.Cleanup(e.Close)
	sm, err := e.CreateStateMachine(ctx, CreateInput{Name: "m", RoleArn: "arn:aws:iam::123456789012:role/r",
		Definition: `{"StartAt":"P","States":{
		  "P":{"Type":"Parallel","Branches":[
		    {"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}},
		    {"StartAt":"N","States":{"N":{"Type":"Parallel","Branches":[
		      {"StartAt":"B","States":{"B":{"Type":"Pass","End":true}}}],"End":true}}}],"Next":"Q"},
		  "Q":{"Type":"Parallel","Branches":[{"StartAt":"C","States":{"C":{"Type":"Pass","End":true}}}],"End":true}}}`})
	if err != nil {
		t.Fatal(err)
	}
	e.mu.Lock()
	m := e.sms[sm.Arn]
	e.mu.Unlock()
	p, q := m.def.States["P"], m.def.States["Q"]
	nested := p.Branches[1].States["N"]
	x := newExecution(e, m, e.executionArn("m", "x"), "x", "{}", nil)
	keep := func(st string) {
		x.keepSucceeded(m.def.States[st], []any{"one", "two"}, func(i int) bool { return i == 0 })
		x.extra.partial.mapRun = "arn:aws:states:us-east-1:123456789012:mapRun:m/" + st + ":1"
	}
	stoppedIn := func(st string) *RedrivePoint {
		x.stoppedAt(st, map[string]any{})
		return x.redrivePoint()
	}

	keep("P")
	if rp := stoppedIn("P"); len(rp.Succeeded) != 1 || rp.MapRunArn == "" {
		t.Fatalf("after a failed attempt of P: %+v, want its succeeded branch and Map Run", rp)
	}
	x.forgetPartial(q) // another state's success
	x.forgetPartial(nested)
	if rp := stoppedIn("P"); len(rp.Succeeded) != 1 || rp.MapRunArn == "" {
		t.Fatalf("after Q and a nested state succeeded: %+v, want P's succeeded branch and Map Run kept", rp)
	}
	x.forgetPartial(p)
	if rp := stoppedIn("P"); rp.Succeeded != nil || rp.MapRunArn != "" {
		t.Fatalf("after an attempt of P succeeded: %+v, want nothing reused", rp)
	}
}
