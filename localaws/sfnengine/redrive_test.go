package sfnengine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
	"github.com/transferflow/orchestrator/localaws/sfnengine/instantaws"
)

// flakyLambda answers each function by its handler; a function listed in failing fails with FunctionError until
// fixed. It counts the calls per function and payload.
type flakyLambda struct {
	mu      sync.Mutex
	failing map[string]bool
	calls   map[string]int
}

func newFlakyLambda(failing ...string) *flakyLambda {
	l := &flakyLambda{failing: map[string]bool{}, calls: map[string]int{}}
	for _, f := range failing {
		l.failing[f] = true
	}
	return l
}

func (l *flakyLambda) Invoke(_ context.Context, name string, payload []byte) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := name + " " + string(payload)
	l.calls[name]++
	l.calls[key]++
	if l.failing[name] || l.failing[key] {
		return nil, &sfnengine.FunctionError{Type: "DebitFailed", Message: "account " + name + " is locked"}
	}
	return []byte(`{"ok":"` + name + `"}`), nil
}

func (l *flakyLambda) fix(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.failing, name)
}

func (l *flakyLambda) count(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls[key]
}

// transferLike validates (Pass), debits and credits (Lambda tasks), then records the redrive count it ran with.
const transferLike = `{"StartAt":"Validate","States":{
  "Validate":{"Type":"Pass","Result":{"valid":true},"ResultPath":"$.validation","Next":"Debit"},
  "Debit":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"debit","Payload.$":"$"},
    "ResultSelector":{"by.$":"$.Payload.ok"},"ResultPath":"$.debit","Next":"Credit"},
  "Credit":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"credit","Payload.$":"$"},
    "ResultSelector":{"by.$":"$.Payload.ok"},"ResultPath":"$.credit","Next":"Done"},
  "Done":{"Type":"Pass","Parameters":{"transfer.$":"$","redriveCount.$":"$$.Execution.RedriveCount"},"End":true}}}`

func waitClosed(t *testing.T, eng *sfnengine.Engine, arn string) *sfnengine.ExecutionRecord {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rec, err := waitHistory(ctx, eng, arn)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestRedriveResumesAtTheFailedTask: a transfer whose debit Lambda failed is redriven once the Lambda is fixed; it
// resumes at the debit with the input the debit had (the validation's output kept, Validate not run again), credits,
// and succeeds. The history goes on after ExecutionFailed with ExecutionRedriven, and $$.Execution.RedriveCount is 1.
func TestRedriveResumesAtTheFailedTask(t *testing.T) {
	ctx := context.Background()
	lambda := newFlakyLambda("debit")
	var mu sync.Mutex
	var events []map[string]any
	subscriber := func(_ context.Context, b []byte) {
		var ev struct {
			Detail map[string]any `json:"detail"`
		}
		_ = json.Unmarshal(b, &ev)
		mu.Lock()
		events = append(events, ev.Detail)
		mu.Unlock()
	}
	eng := newEngine(t, sfnengine.Options{Lambda: lambda, Subscribers: []sfnengine.Subscriber{subscriber}})
	rec := run(t, eng, transferLike, `{"transferId":"tr_1"}`)
	if rec.Status != sfnengine.StatusFailed || rec.Error == nil || *rec.Error != "DebitFailed" {
		t.Fatalf("first run: %s %v, want FAILED DebitFailed", rec.Status, rec.Error)
	}
	d, err := eng.DescribeExecution(ctx, rec.Arn)
	if err != nil {
		t.Fatal(err)
	}
	if status, reason := eng.RedriveStatus(d); status != sfnengine.RedriveStatusRedrivable || reason != "" || d.RedriveCount() != 0 {
		t.Fatalf("failed execution: redrive status %s (%s), count %d; want REDRIVABLE, 0", status, reason, d.RedriveCount())
	}
	failedEvents := len(rec.History)

	lambda.fix("debit")
	date, err := eng.RedriveExecution(ctx, rec.Arn, "")
	if err != nil {
		t.Fatal(err)
	}
	got := waitClosed(t, eng, rec.Arn)
	if got.Status != sfnengine.StatusSucceeded {
		t.Fatalf("after the redrive: %s %v %v", got.Status, got.Error, got.Cause)
	}
	var out struct {
		Transfer     map[string]any `json:"transfer"`
		RedriveCount int            `json:"redriveCount"`
	}
	if err := json.Unmarshal([]byte(*got.Output), &out); err != nil {
		t.Fatal(err)
	}
	want := `{"credit":{"by":"credit"},"debit":{"by":"debit"},"transferId":"tr_1","validation":{"valid":true}}`
	if b, _ := json.Marshal(out.Transfer); string(b) != want || out.RedriveCount != 1 {
		t.Fatalf("output %s, want transfer %s and redriveCount 1", *got.Output, want)
	}
	if lambda.count("debit") != 2 || lambda.count("credit") != 1 {
		t.Fatalf("calls: debit %d, credit %d; want 2 and 1", lambda.count("debit"), lambda.count("credit"))
	}
	if got.RedriveCount() != 1 || got.RedriveDate() == nil || !got.RedriveDate().Equal(date) || !got.StartDate.Equal(rec.StartDate) {
		t.Fatalf("record: redriveCount %d, redriveDate %v (want %v), start %v (want %v)", got.RedriveCount(), got.RedriveDate(), date, got.StartDate, rec.StartDate)
	}
	h := got.History
	if len(h) <= failedEvents || h[failedEvents-1].Type != sfnengine.EventExecutionFailed {
		t.Fatalf("history %v: the old events are not kept", eventTypes(h))
	}
	redriven := h[failedEvents]
	if redriven.Type != sfnengine.EventExecutionRedriven || redriven.PreviousEventID != int64(failedEvents) ||
		redriven.DetailsKey != "executionRedrivenEventDetails" || jsonNumber(redriven.Details["redriveCount"]) != 1 {
		t.Fatalf("event after ExecutionFailed: %+v, want ExecutionRedriven {redriveCount 1} pointing back to it", redriven)
	}
	next := h[failedEvents+1]
	if next.Type != "TaskStateEntered" || next.Details["name"] != "Debit" || next.PreviousEventID != redriven.ID {
		t.Fatalf("first event after the redrive: %+v, want TaskStateEntered Debit", next)
	}
	if in := next.Details["input"].(string); !strings.Contains(in, `"validation":{"valid":true}`) {
		t.Fatalf("the debit's input after the redrive %s lost the validation", in)
	}
	if countEvents(h, "PassStateEntered") != 2 { // Validate once, Done once
		t.Fatalf("history %v: Validate ran again", eventTypes(h))
	}
	for i, e := range h {
		if e.ID != int64(i+1) {
			t.Fatalf("event %d has id %d", i, e.ID)
		}
	}
	d, err = eng.DescribeExecution(ctx, rec.Arn)
	if err != nil {
		t.Fatal(err)
	}
	if status, reason := eng.RedriveStatus(d); status != sfnengine.RedriveStatusNotRedrivable || reason != "Execution is SUCCEEDED and cannot be redriven" {
		t.Fatalf("succeeded after a redrive: %s (%s)", status, reason)
	}
	list, err := eng.ListExecutions(ctx, rec.StateMachineArn, "")
	if err != nil || len(list) != 1 || list[0].RedriveCount() != 1 || list[0].RedriveDate() == nil {
		t.Fatalf("ListExecutions: %v %+v", err, list)
	}
	// Status-change events: RUNNING, FAILED (redrivable), RUNNING again with the redrive, SUCCEEDED.
	mu.Lock()
	defer mu.Unlock()
	var seen []string
	for _, d := range events {
		seen = append(seen, fmt.Sprintf("%v/%v/%v/%v", d["status"], d["redriveCount"], d["redriveStatus"], d["redriveDate"] != nil))
	}
	want = "[RUNNING/0/NOT_REDRIVABLE/false FAILED/0/REDRIVABLE/false RUNNING/1/NOT_REDRIVABLE/true SUCCEEDED/1/NOT_REDRIVABLE/true]"
	if fmt.Sprint(seen) != want {
		t.Fatalf("status-change events %v\nwant %s", seen, want)
	}
}

func jsonNumber(v any) int {
	switch n := v.(type) {
	case float64:
		return int(n)
	case int:
		return n
	case int64:
		return int(n)
	case json.Number:
		i, _ := n.Int64()
		return int(i)
	}
	return -1
}

// TestRedriveRunsOnlyFailedBranchesAndIterations: a Parallel redrives only its branch that failed, a Map only its
// iteration that failed (with concurrency 1 and concurrent), and the outputs of those that had succeeded are kept.
func TestRedriveRunsOnlyFailedBranchesAndIterations(t *testing.T) {
	tests := []struct {
		name, def, failing string
		calls              map[string]int // after the redrive
		output             string
	}{
		{name: "parallel", failing: "arn:aws:lambda:us-east-1:123456789012:function:b",
			def: `{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[
			  {"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:a","End":true}}},
			  {"StartAt":"Later","States":{"Later":{"Type":"Wait","Seconds":1,"Next":"B"},
			    "B":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:b","End":true}}}]}}}`,
			calls:  map[string]int{"arn:aws:lambda:us-east-1:123456789012:function:a": 1, "arn:aws:lambda:us-east-1:123456789012:function:b": 2},
			output: `[{"ok":"arn:aws:lambda:us-east-1:123456789012:function:a"},{"ok":"arn:aws:lambda:us-east-1:123456789012:function:b"}]`},
		{name: "map one at a time", failing: `f {"n":2}`,
			def: `{"StartAt":"M","States":{"M":{"Type":"Map","MaxConcurrency":1,"ItemsPath":"$.items","End":true,
			  "ItemProcessor":{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke",
			    "Parameters":{"FunctionName":"f","Payload.$":"$"},"OutputPath":"$.Payload","End":true}}}}}}`,
			calls:  map[string]int{`f {"n":1}`: 1, `f {"n":2}`: 2, `f {"n":3}`: 1},
			output: `[{"ok":"f"},{"ok":"f"},{"ok":"f"}]`},
		{name: "map concurrent", failing: `f {"n":2}`,
			def: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.items","End":true,
			  "ItemProcessor":{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke",
			    "Parameters":{"FunctionName":"f","Payload.$":"$"},"OutputPath":"$.Payload","End":true}}}}}}`,
			output: `[{"ok":"f"},{"ok":"f"},{"ok":"f"}]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			lambda := newFlakyLambda(tc.failing)
			clock := sfnengine.NewManualClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
			eng := newEngine(t, sfnengine.Options{Lambda: lambda, Clock: clock})
			rec := start(t, eng, tc.def, `{"items":[{"n":1},{"n":2},{"n":3}]}`)
			if tc.name == "parallel" { // branch A succeeds before branch B fails, which would abort it
				for deadline := time.Now().Add(10 * time.Second); ; {
					h, err := eng.History(ctx, rec.Arn)
					if err != nil {
						t.Fatal(err)
					}
					if countEvents(h, "TaskStateExited") == 1 {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("branch A did not end: %v", eventTypes(h))
					}
					time.Sleep(time.Millisecond)
				}
				advanceWhenWaiting(t, clock, time.Second)
			}
			rec = waitClosed(t, eng, rec.Arn)
			if rec.Status != sfnengine.StatusFailed {
				t.Fatalf("first run: %s", rec.Status)
			}
			succeededBefore := countEvents(rec.History, "MapIterationSucceeded")
			lambda.fix(tc.failing)
			if _, err := eng.RedriveExecution(ctx, rec.Arn, ""); err != nil {
				t.Fatal(err)
			}
			if tc.name == "parallel" {
				advanceWhenWaiting(t, clock, time.Second)
			}
			got := waitClosed(t, eng, rec.Arn)
			if got.Status != sfnengine.StatusSucceeded || *got.Output != tc.output {
				t.Fatalf("after the redrive: %s %v, want SUCCEEDED %s", got.Status, got.Output, tc.output)
			}
			for key, n := range tc.calls {
				if lambda.count(key) != n {
					t.Errorf("%s called %d times, want %d", key, lambda.count(key), n)
				}
			}
			if tc.calls == nil { // concurrent: the iterations aborted by the failure run again, those that succeeded not
				for _, e := range rec.History {
					if e.Type == "MapIterationSucceeded" {
						key := fmt.Sprintf(`f {"n":%d}`, jsonNumber(e.Details["index"])+1)
						if n := lambda.count(key); n != 1 {
							t.Errorf("%s succeeded before the redrive and was called %d times", key, n)
						}
					}
				}
				if n := lambda.count(`f {"n":2}`); n != 2 {
					t.Errorf(`f {"n":2} called %d times, want 2`, n)
				}
			}
			after := got.History[len(rec.History):]
			if strings.HasPrefix(tc.name, "map") && countEvents(after, "MapIterationSucceeded")+succeededBefore != 3 {
				t.Errorf("iterations run after the redrive: %v, with %d succeeded before", eventTypes(after), succeededBefore)
			}
		})
	}
}

// TestRedriveAnExpressExecutionIsInvalidArn: an Express execution keeps nothing to redrive (AWS keeps no state of
// it); its ARN is refused as DescribeExecution refuses it, InvalidArn.
func TestRedriveAnExpressExecutionIsInvalidArn(t *testing.T) {
	ctx := context.Background()
	eng := newEngine(t, sfnengine.Options{})
	sm, err := eng.CreateStateMachine(ctx, sfnengine.CreateInput{Name: "x", RoleArn: testRoleArn, Type: sfnengine.TypeExpress,
		Definition: `{"StartAt":"F","States":{"F":{"Type":"Fail","Error":"Nope"}}}`})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := eng.StartExecution(ctx, sfnengine.StartInput{StateMachineArn: sm.Arn})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.RedriveExecution(ctx, rec.Arn, ""); !errors.Is(err, sfnengine.ErrInvalidArn) {
		t.Fatalf("redrive of an Express execution: %v, want ErrInvalidArn", err)
	}
}

// TestRedriveRefusals: every reason an execution cannot be redriven is ErrExecutionNotRedrivable with AWS's reason,
// the same as DescribeExecution's redriveStatusReason, and changes nothing.
func TestRedriveRefusals(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	failing := `{"StartAt":"F","States":{"F":{"Type":"Fail","Error":"Nope"}}}`
	loop := `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"},"B":{"Type":"Pass","Next":"A"}}}`
	tests := []struct {
		name    string
		opts    sfnengine.Options
		def     string
		typ     string
		prepare func(t *testing.T, eng *sfnengine.Engine, clock *sfnengine.ManualClock, rec *sfnengine.ExecutionRecord)
		reason  string
	}{
		{name: "succeeded", def: passOnly, reason: "Execution is SUCCEEDED and cannot be redriven"},
		{name: "running", def: `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":60,"End":true}}}`,
			reason: "Execution is RUNNING and cannot be redriven"},
		{name: "past 14 days", def: failing, reason: "Execution redrivable period exceeded",
			prepare: func(_ *testing.T, _ *sfnengine.Engine, clock *sfnengine.ManualClock, _ *sfnengine.ExecutionRecord) {
				clock.Advance(14*24*time.Hour + time.Second)
			}},
		{name: "history limit", def: loop, opts: sfnengine.Options{MaxHistoryEvents: 20},
			reason: "Execution history event limit exceeded"},
		{name: "state machine deleted", def: failing, reason: "State machine is in DELETING status.",
			prepare: func(t *testing.T, eng *sfnengine.Engine, _ *sfnengine.ManualClock, rec *sfnengine.ExecutionRecord) {
				if err := eng.DeleteStateMachine(ctx, rec.StateMachineArn); err != nil {
					t.Fatal(err)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clock := sfnengine.NewManualClock(t0)
			tc.opts.Clock = clock
			eng := newEngine(t, tc.opts)
			sm, err := eng.CreateStateMachine(ctx, sfnengine.CreateInput{Name: "m", Definition: tc.def, RoleArn: testRoleArn, Type: tc.typ})
			if err != nil {
				t.Fatal(err)
			}
			rec, err := eng.StartExecution(ctx, sfnengine.StartInput{StateMachineArn: sm.Arn})
			if err != nil {
				t.Fatal(err)
			}
			if tc.reason != "Execution is RUNNING and cannot be redriven" {
				waitClosed(t, eng, rec.Arn)
			} else {
				advanceWhenWaiting(t, clock, 0) // it is in its Wait
			}
			if tc.prepare != nil {
				tc.prepare(t, eng, clock, rec)
			}
			before, err := eng.History(ctx, rec.Arn)
			if err != nil {
				t.Fatal(err)
			}
			_, err = eng.RedriveExecution(ctx, rec.Arn, "token")
			if !errors.Is(err, sfnengine.ErrExecutionNotRedrivable) || !strings.HasSuffix(err.Error(), ": "+tc.reason) {
				t.Fatalf("redrive: %v, want ErrExecutionNotRedrivable: %s", err, tc.reason)
			}
			d, err := eng.DescribeExecution(ctx, rec.Arn)
			if err != nil {
				t.Fatal(err)
			}
			status, reason := eng.RedriveStatus(d)
			if status != sfnengine.RedriveStatusNotRedrivable || reason != tc.reason ||
				d.RedriveCount() != 0 || len(d.History) != len(before) {
				t.Fatalf("after the refusal: %s (%s), count %d, %d events (were %d)", status, reason,
					d.RedriveCount(), len(d.History), len(before))
			}
		})
	}
	t.Run("does not exist", func(t *testing.T) {
		eng := newEngine(t, sfnengine.Options{})
		_, err := eng.RedriveExecution(ctx, "arn:aws:states:us-east-1:123456789012:execution:m:nope", "")
		if !errors.Is(err, sfnengine.ErrExecutionDoesNotExist) {
			t.Fatalf("got %v, want ErrExecutionDoesNotExist", err)
		}
		_, err = eng.RedriveExecution(ctx, "not-an-arn", "")
		if !errors.Is(err, sfnengine.ErrInvalidArn) {
			t.Fatalf("got %v, want ErrInvalidArn", err)
		}
	})
}

const passOnly = `{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`

// TestRedriveAbortedAndTimedOut: an aborted execution redriven enters again the Wait it was stopped in; a timed-out
// one gets its timeout again from the redrive (AWS resets the machine's TimeoutSeconds on a redrive).
func TestRedriveAbortedAndTimedOut(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := sfnengine.NewManualClock(t0)
	eng := newEngine(t, sfnengine.Options{Clock: clock})
	def := `{"StartAt":"First","TimeoutSeconds":20,"States":{
	  "First":{"Type":"Pass","Result":"done","ResultPath":"$.first","Next":"Hold"},
	  "Hold":{"Type":"Wait","TimestampPath":"$.until","End":true}}}`
	sm, err := eng.CreateStateMachine(ctx, sfnengine.CreateInput{Name: "hold", Definition: def, RoleArn: testRoleArn})
	if err != nil {
		t.Fatal(err)
	}
	until := t0.Add(30 * time.Second).Format(time.RFC3339)

	t.Run("timed out", func(t *testing.T) {
		rec, err := eng.StartExecution(ctx, sfnengine.StartInput{StateMachineArn: sm.Arn, Name: "late", Input: `{"until":"` + until + `"}`})
		if err != nil {
			t.Fatal(err)
		}
		clock.MustAwaitWaiters(t, 2) // the execution's timeout and the Wait
		clock.Advance(20 * time.Second)
		if got := waitClosed(t, eng, rec.Arn); got.Status != sfnengine.StatusTimedOut {
			t.Fatalf("first run: %s, want TIMED_OUT", got.Status)
		}
		clock.Advance(5 * time.Second) // t0+25s: past the first run's deadline, 5 s before the Wait's end
		if _, err := eng.RedriveExecution(ctx, rec.Arn, ""); err != nil {
			t.Fatal(err)
		}
		// The redrive's timeout and Wait, and the first run's Wait timer, which stays pending until t0+30s as an
		// unread time.After does: with only two awaited, the clock could move before the new Wait reads it, and that
		// Wait would then wait 5 s past the advance.
		clock.MustAwaitWaiters(t, 3)
		clock.Advance(5 * time.Second)
		got := waitClosed(t, eng, rec.Arn)
		if got.Status != sfnengine.StatusSucceeded || *got.Output != `{"until":"`+until+`","first":"done"}` {
			t.Fatalf("after the redrive: %s %v", got.Status, got.Output)
		}
		if countEvents(got.History, "PassStateEntered") != 1 || countEvents(got.History, "WaitStateEntered") != 2 {
			t.Fatalf("history %v", eventTypes(got.History))
		}
	})
	t.Run("aborted", func(t *testing.T) {
		// Each step moves the clock only once the timers it means are pending, counted exactly: a timeout's timer
		// stops as its execution's goroutine ends, after the execution reads as closed, so a count of "at least n"
		// could be met by a timer about to go, and the clock could then move between a Wait's reading of it and its
		// timer (which would then never fire).
		awaitExactlyWaiters(t, clock, 0) // the first subtest's redrive has ended
		rec, err := eng.StartExecution(ctx, sfnengine.StartInput{StateMachineArn: sm.Arn, Name: "stopped",
			Input: `{"until":"` + clock.Now().Add(10*time.Second).Format(time.RFC3339) + `"}`})
		if err != nil {
			t.Fatal(err)
		}
		clock.MustAwaitWaiters(t, 2) // its timeout and its Wait: it is waiting
		if _, err := eng.StopExecution(ctx, rec.Arn, "Stopped", "by hand"); err != nil {
			t.Fatal(err)
		}
		if got := waitClosed(t, eng, rec.Arn); got.Status != sfnengine.StatusAborted {
			t.Fatalf("first run: %s, want ABORTED", got.Status)
		}
		awaitExactlyWaiters(t, clock, 1) // the stopped Wait's timer, pending as an unread time.After is
		if _, err := eng.RedriveExecution(ctx, rec.Arn, ""); err != nil {
			t.Fatal(err)
		}
		clock.MustAwaitWaiters(t, 3) // and the redrive's timeout and Wait
		clock.Advance(10 * time.Second)
		got := waitClosed(t, eng, rec.Arn)
		if got.Status != sfnengine.StatusSucceeded || got.Error != nil || got.RedriveCount() != 1 {
			t.Fatalf("after the redrive: %s %v, count %d", got.Status, got.Error, got.RedriveCount())
		}
	})
}

// TestRedriveAcrossRestart: an execution fails, the engine restarts on its FileStore, the execution is redriven
// there and succeeds; a second restart shows the redriven execution as it ended.
func TestRedriveAcrossRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	files := fileStore(t, dir)
	lambda := newFlakyLambda("debit")
	first := sfnengine.New(sfnengine.Options{Store: files, Lambda: lambda})
	rec := run(t, first, transferLike, `{"transferId":"tr_2"}`)
	first.Close()
	if rec.Status != sfnengine.StatusFailed {
		t.Fatalf("first run: %s", rec.Status)
	}

	lambda.fix("debit")
	second := sfnengine.New(sfnengine.Options{Store: files, Lambda: lambda})
	if err := second.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := second.RedriveExecution(ctx, rec.Arn, ""); err != nil {
		t.Fatal(err)
	}
	got := waitClosed(t, second, rec.Arn)
	second.Close()
	if got.Status != sfnengine.StatusSucceeded || !strings.Contains(*got.Output, `"validation":{"valid":true}`) {
		t.Fatalf("after the redrive: %s %v", got.Status, got.Output)
	}

	third := restoredEngine(t, sfnengine.Options{Store: files, Lambda: lambda})
	d, err := third.DescribeExecution(ctx, rec.Arn)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != sfnengine.StatusSucceeded || d.RedriveCount() != 1 || d.RedriveDate() == nil ||
		countEvents(d.History, sfnengine.EventExecutionRedriven) != 1 || len(d.History) != len(got.History) {
		t.Fatalf("after a restart: %s, count %d, date %v, history %v", d.Status, d.RedriveCount(), d.RedriveDate(), eventTypes(d.History))
	}
	if lambda.count("debit") != 2 || lambda.count("credit") != 1 {
		t.Fatalf("calls: debit %d, credit %d", lambda.count("debit"), lambda.count("credit"))
	}
	list, err := third.ListExecutions(ctx, rec.StateMachineArn, "")
	if err != nil || len(list) != 1 || list[0].RedriveCount() != 1 || list[0].RedriveDate() == nil ||
		!list[0].RedriveDate().Equal(*d.RedriveDate()) {
		t.Fatalf("ListExecutions after a restart: %v %+v", err, list)
	}
}

// TestRedrivenExecutionResumesAfterACrash: an engine stops while a redriven execution is running (no checkpoints);
// the next engine resumes it where the redrive did, not from its first state.
func TestRedrivenExecutionResumesAfterACrash(t *testing.T) {
	ctx := context.Background()
	files := fileStore(t, t.TempDir())
	clock := sfnengine.NewManualClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	def := `{"StartAt":"Once","States":{
	  "Once":{"Type":"Pass","Result":1,"ResultPath":"$.once","Next":"Work"},
	  "Work":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"work"},"ResultPath":null,"Next":"Hold"},
	  "Hold":{"Type":"Wait","Seconds":60,"End":true}}}`
	lambda := newFlakyLambda("work")
	first := sfnengine.New(sfnengine.Options{Store: files, Clock: clock, Lambda: lambda})
	sm, err := first.CreateStateMachine(ctx, sfnengine.CreateInput{Name: "gate", Definition: def, RoleArn: testRoleArn})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := first.StartExecution(ctx, sfnengine.StartInput{StateMachineArn: sm.Arn})
	if err != nil {
		t.Fatal(err)
	}
	if got := waitClosed(t, first, rec.Arn); got.Status != sfnengine.StatusFailed {
		t.Fatalf("first run: %s", got.Status)
	}
	lambda.fix("work")
	if _, err := first.RedriveExecution(ctx, rec.Arn, ""); err != nil {
		t.Fatal(err)
	}
	advanceWhenWaiting(t, clock, 0) // in Hold
	first.Close()

	clock = sfnengine.NewManualClock(clock.Now()) // without the first engine's pending timer
	second := restoredEngine(t, sfnengine.Options{Store: files, Clock: clock, Lambda: lambda})
	advanceWhenWaiting(t, clock, 60*time.Second)
	got := waitClosed(t, second, rec.Arn)
	if got.Status != sfnengine.StatusSucceeded || *got.Output != `{"once":1}` || got.RedriveCount() != 1 {
		t.Fatalf("after the restart: %s %v, count %d", got.Status, got.Output, got.RedriveCount())
	}
	// Once ran in the first run only; Work, where the redrive resumed, ran in each (the restart resumes there, as a
	// restart without checkpoints resumes at the first state).
	if n := countEvents(got.History, "PassStateEntered"); n != 1 || lambda.count("work") != 3 {
		t.Fatalf("Once entered %d times (want 1), work called %d times (want 3): %v", n, lambda.count("work"), eventTypes(got.History))
	}
}

// TestRedriveAndRetention: a redriven execution counts once toward MaxClosedExecutions, and its summary from before
// the redrive is not forgotten (with its Store record) when retention reaches it.
func TestRedriveAndRetention(t *testing.T) {
	ctx := context.Background()
	lambda := newFlakyLambda("debit")
	eng := newEngine(t, sfnengine.Options{Lambda: lambda, MaxClosedExecutions: 3})
	sm, err := eng.CreateStateMachine(ctx, sfnengine.CreateInput{Name: "kept", Definition: transferLike, RoleArn: testRoleArn})
	if err != nil {
		t.Fatal(err)
	}
	startNamed := func(name string) string {
		t.Helper()
		rec, err := eng.StartExecution(ctx, sfnengine.StartInput{StateMachineArn: sm.Arn, Name: name})
		if err != nil {
			t.Fatal(err)
		}
		waitClosed(t, eng, rec.Arn)
		return rec.Arn
	}
	x := startNamed("x") // FAILED
	a := startNamed("a") // FAILED
	lambda.fix("debit")
	if _, err := eng.RedriveExecution(ctx, a, ""); err != nil {
		t.Fatal(err)
	}
	if got := waitClosed(t, eng, a); got.Status != sfnengine.StatusSucceeded {
		t.Fatalf("redriven: %s", got.Status)
	}
	y := startNamed("y")
	for _, arn := range []string{x, a, y} { // three closed executions: all kept
		if _, err := eng.DescribeExecution(ctx, arn); err != nil {
			t.Fatalf("%s: %v", arn, err)
		}
	}
	startNamed("z")
	if _, err := eng.DescribeExecution(ctx, x); !errors.Is(err, sfnengine.ErrExecutionDoesNotExist) {
		t.Fatalf("the oldest of four: %v, want it forgotten", err)
	}
	if d, err := eng.DescribeExecution(ctx, a); err != nil || d.Status != sfnengine.StatusSucceeded {
		t.Fatalf("the redriven execution: %v %v", d, err)
	}
}

// TestRedriveTheTransferStateMachine: the project's own transfer state machine, whose debit Lambda fails with
// Lambda.ServiceException through all its retries, ends FAILED at Debit; once the Lambda works, a redrive runs the
// debit again (its retry counters fresh), then credit and settlement, and the transfer succeeds.
func TestRedriveTheTransferStateMachine(t *testing.T) {
	ctx := context.Background()
	_, def := transferDefinition(t)
	var mu sync.Mutex
	broken := true
	calls := map[string]int{}
	lambda := invokerFunc(func(_ context.Context, name string, _ []byte) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		calls[name]++
		if broken && name == "DebitFunctionArn" {
			return nil, &sfnengine.ServiceError{Name: "Lambda.ServiceException", Message: "the debit function is down"}
		}
		return instantaws.LegAnswer, nil
	})
	clock := sfnengine.NewManualClock(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	eng := newEngine(t, sfnengine.Options{Lambda: lambda, DynamoDB: instantaws.DynamoDB{}, EventBridge: instantaws.EventBridge{}, Clock: clock})
	sm, err := eng.CreateStateMachine(ctx, sfnengine.CreateInput{Name: "transfer", Definition: def, RoleArn: testRoleArn})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := eng.StartExecution(ctx, sfnengine.StartInput{StateMachineArn: sm.Arn, Name: "t1", Input: transferInput})
	if err != nil {
		t.Fatal(err)
	}
	runOut := func() *sfnengine.ExecutionRecord { // moves the clock through the retries' back-off until the end
		t.Helper()
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = eng.Wait(ctx, rec.Arn)
		}()
		for i := 0; ; i++ {
			select {
			case <-done:
				return waitClosed(t, eng, rec.Arn)
			default:
			}
			if n, grew := clock.Waiters(); n >= 2 { // the execution's timeout and a retry's back-off
				clock.Advance(21 * time.Second)
			} else {
				select {
				case <-grew:
				case <-done:
				case <-time.After(10 * time.Second):
					t.Fatal("the execution neither waits nor ends")
				}
			}
			if i > 1000 {
				t.Fatal("the execution does not end")
			}
		}
	}
	first := runOut()
	if first.Status != sfnengine.StatusFailed || *first.Error != "Lambda.ServiceException" {
		t.Fatalf("first run: %s %v", first.Status, first.Error)
	}
	if calls["DebitFunctionArn"] != 7 || calls["CreditFunctionArn"] != 0 {
		t.Fatalf("calls %v: want 7 debits (1 + 6 retries), no credit", calls)
	}
	mu.Lock()
	broken = false
	mu.Unlock()
	if _, err := eng.RedriveExecution(ctx, rec.Arn, ""); err != nil {
		t.Fatal(err)
	}
	got := runOut()
	if got.Status != sfnengine.StatusSucceeded {
		t.Fatalf("after the redrive: %s %v %v", got.Status, got.Error, got.Cause)
	}
	if calls["DebitFunctionArn"] != 8 || calls["CreditFunctionArn"] != 1 {
		t.Fatalf("calls %v: want one more debit and one credit", calls)
	}
	after := got.History[len(first.History):]
	if after[0].Type != sfnengine.EventExecutionRedriven || after[1].Type != "TaskStateEntered" || after[1].Details["name"] != "Debit" ||
		after[1].Details["input"] != transferInput {
		t.Fatalf("after the redrive: %s", eventTypes(after))
	}
	if findEvent(after, "TaskSucceeded") == nil || countEvents(after, "TaskStateEntered") != 2 { // Debit, Credit (which settles the record)
		t.Fatalf("after the redrive: %s", eventTypes(after))
	}
}

// TestConcurrentRedrivesWithOneToken: calls racing with the same clientToken all get the one redrive's date; calls
// with other tokens are refused while it runs.
func TestConcurrentRedrivesWithOneToken(t *testing.T) {
	ctx := context.Background()
	clock := sfnengine.NewManualClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	eng := newEngine(t, sfnengine.Options{Clock: clock})
	rec := createAndStart(t, eng, "waits", `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":60,"End":true}}}`, `{}`)
	advanceWhenWaiting(t, clock, 0)
	if _, err := eng.StopExecution(ctx, rec.Arn, "", ""); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, eng, rec.Arn)
	var wg sync.WaitGroup
	dates := make([]time.Time, 8)
	errs := make([]error, 8)
	for i := range dates {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dates[i], errs[i] = eng.RedriveExecution(ctx, rec.Arn, "same-token")
		}()
	}
	wg.Wait()
	for i := range dates {
		if errs[i] != nil || !dates[i].Equal(dates[0]) {
			t.Fatalf("call %d: %v %v (first %v)", i, dates[i], errs[i], dates[0])
		}
	}
	if _, err := eng.RedriveExecution(ctx, rec.Arn, "other-token"); !errors.Is(err, sfnengine.ErrExecutionNotRedrivable) {
		t.Fatalf("another token while redriven: %v", err)
	}
	d, err := eng.DescribeExecution(ctx, rec.Arn)
	if err != nil || d.RedriveCount() != 1 || countEvents(d.History, sfnengine.EventExecutionRedriven) != 1 {
		t.Fatalf("after 8 calls with one token: %v, count %d", err, d.RedriveCount())
	}
}

// TestRedriveKeepsNoOutputsPastThePayloadQuota: when the outputs of a Map's succeeded iterations come to more than
// the payload quota, none is kept for a redrive (the state could not succeed with them) and the redrive reruns
// every iteration; the failed execution's record carries none of them.
func TestRedriveKeepsNoOutputsPastThePayloadQuota(t *testing.T) {
	ctx := context.Background()
	lambda := newFlakyLambda("f")
	eng := newEngine(t, sfnengine.Options{Lambda: lambda})
	pad := strings.Repeat("p", 100_000)
	// Iterations 0-2 echo the 100 KB pad the ItemSelector gives each (300 KB in all); iteration 3 calls the failing
	// function.
	def := `{"StartAt":"M","States":{"M":{"Type":"Map","MaxConcurrency":1,"ItemsPath":"$.items","ResultPath":null,"End":true,
	  "ItemSelector":{"pad.$":"$.pad","i.$":"$$.Map.Item.Value"},
	  "ItemProcessor":{"StartAt":"Which","States":{
	    "Which":{"Type":"Choice","Choices":[{"Variable":"$.i","NumericEquals":4,"Next":"Call"}],"Default":"Echo"},
	    "Echo":{"Type":"Pass","End":true},
	    "Call":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f"},"ResultPath":null,"End":true}}}}}}`
	input := `{"pad":"` + pad + `","items":[1,2,3,4]}`
	rec := start(t, eng, def, input)
	rec = waitClosed(t, eng, rec.Arn)
	if rec.Status != sfnengine.StatusFailed || countEvents(rec.History, "MapIterationSucceeded") != 3 {
		t.Fatalf("first run: %s with %d iterations succeeded, want FAILED after 3", rec.Status, countEvents(rec.History, "MapIterationSucceeded"))
	}
	if at := rec.RedrivePoint(); at == nil || at.State != "M" || len(at.Succeeded) != 0 {
		t.Fatalf("redrive point %+v, want state M with no kept outputs", at)
	}
	lambda.fix("f")
	if _, err := eng.RedriveExecution(ctx, rec.Arn, ""); err != nil {
		t.Fatal(err)
	}
	got := waitClosed(t, eng, rec.Arn)
	after := got.History[len(rec.History):]
	if got.Status != sfnengine.StatusSucceeded || countEvents(after, "MapIterationStarted") != 4 {
		t.Fatalf("after the redrive: %s with %v, want SUCCEEDED with all 4 iterations run again", got.Status, eventTypes(after))
	}
}

// TestRedriveRunsTheDefinitionItStartedWith: an execution that failed is redriven after UpdateStateMachine changed
// the definition, and after a restart on a FileStore: it resumes on the definition it started with (its debit and
// credit Lambdas called, not the new definition's Pass), as AWS redrives "with the same state machine definition",
// and StateMachineForExecution describes that definition; an execution started after the update runs and describes
// the new one. A revision no execution started with is not kept.
func TestRedriveRunsTheDefinitionItStartedWith(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	files := fileStore(t, dir)
	lambda := newFlakyLambda("debit")
	first := sfnengine.New(sfnengine.Options{Store: files, Lambda: lambda})
	rec := run(t, first, transferLike, `{"transferId":"tr_3"}`)
	if rec.Status != sfnengine.StatusFailed {
		first.Close()
		t.Fatalf("first run: %s", rec.Status)
	}
	const replaced = `{"StartAt":"Debit","States":{"Debit":{"Type":"Pass","Result":"replaced","End":true}}}`
	const latest = `{"StartAt":"Debit","States":{"Debit":{"Type":"Pass","Result":"latest","End":true}}}`
	if _, err := first.UpdateStateMachine(ctx, rec.StateMachineArn, replaced, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := first.UpdateStateMachine(ctx, rec.StateMachineArn, latest, ""); err != nil {
		t.Fatal(err)
	}
	sm, err := first.DescribeStateMachine(ctx, rec.StateMachineArn)
	if err != nil {
		t.Fatal(err)
	}
	if len(sm.Revisions) != 1 || sm.Revisions[0].Definition != transferLike {
		t.Fatalf("revisions kept: %+v, want only the one the execution started with", sm.Revisions)
	}
	after, err := first.StartExecution(ctx, sfnengine.StartInput{StateMachineArn: rec.StateMachineArn})
	if err != nil {
		t.Fatal(err)
	}
	if got := waitClosed(t, first, after.Arn); got.Status != sfnengine.StatusSucceeded || *got.Output != `"latest"` {
		t.Fatalf("execution after the update: %s %v", got.Status, got.Output)
	}
	first.Close()

	lambda.fix("debit")
	second := restoredEngine(t, sfnengine.Options{Store: files, Lambda: lambda})
	requireRedrivable(t, second, rec.Arn, "after the update")
	for _, tc := range []struct{ arn, want string }{{rec.Arn, transferLike}, {after.Arn, latest}} {
		x, err := second.DescribeExecution(ctx, tc.arn)
		if err != nil {
			t.Fatal(err)
		}
		got, err := second.StateMachineForExecution(x)
		if err != nil || got.Definition != tc.want {
			t.Fatalf("StateMachineForExecution(%s): %v %s, want %s", tc.arn, err, got.Definition, tc.want)
		}
	}
	if _, err := second.RedriveExecution(ctx, rec.Arn, ""); err != nil {
		t.Fatal(err)
	}
	got := waitClosed(t, second, rec.Arn)
	if got.Status != sfnengine.StatusSucceeded || !strings.Contains(*got.Output, `"debit":{"by":"debit"}`) ||
		!strings.Contains(*got.Output, `"credit":{"by":"credit"}`) {
		t.Fatalf("after the redrive: %s %v", got.Status, got.Output)
	}
	if lambda.count("debit") != 2 || lambda.count("credit") != 1 {
		t.Fatalf("calls: debit %d, credit %d", lambda.count("debit"), lambda.count("credit"))
	}

	// With no execution of the state machine that started with it, a replaced revision is not kept.
	other, err := second.CreateStateMachine(ctx, sfnengine.CreateInput{Name: "unused", Definition: passOnly, RoleArn: testRoleArn})
	if err != nil {
		t.Fatal(err)
	}
	if other, err = second.UpdateStateMachine(ctx, other.Arn, replaced, ""); err != nil {
		t.Fatal(err)
	}
	if len(other.Revisions) != 0 {
		t.Fatalf("revisions of a state machine without executions: %+v", other.Revisions)
	}
}
