package sfnengine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// TestImportClosedExecution: an imported execution is a closed one like any other: described with its status, error,
// cause and dates, its history its start and its end, listed, and kept by the Store across a restart. Its name is
// taken, for StartExecution as for a second import; nothing of it is published. A status it could not end with, a
// name that is not valid and a state machine the engine does not have are refused.
func TestImportClosedExecution(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	opts := sfnengine.Options{Clock: sfnengine.NewManualClock(t0), Store: fileStore(t, t.TempDir())}
	eng := newEngine(t, opts)
	var published int
	eng.Subscribe(func(context.Context, []byte) { published++ })
	sm, err := eng.CreateStateMachine(ctx, sfnengine.CreateInput{Name: "held", RoleArn: testRoleArn,
		Definition: `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":60,"End":true}}}`})
	if err != nil {
		t.Fatal(err)
	}
	in := sfnengine.ClosedExecution{StateMachineArn: sm.Arn, Name: "fixture", Input: `{"a":1}`, Status: sfnengine.StatusTimedOut,
		Error: "States.Timeout", Cause: "the fixture's execution timed out", Ran: time.Minute}
	rec, err := eng.ImportClosedExecution(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	check := func(eng *sfnengine.Engine, when string) {
		t.Helper()
		d, err := eng.DescribeExecution(ctx, rec.Arn)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if d.Status != sfnengine.StatusTimedOut || d.Input != `{"a":1}` || d.Error == nil || *d.Error != "States.Timeout" ||
			d.Cause == nil || *d.Cause != in.Cause || !d.StartDate.Equal(t0.Add(-time.Minute)) || d.StopDate == nil || !d.StopDate.Equal(t0) {
			t.Errorf("%s: described %+v", when, d)
		}
		events, err := eng.History(ctx, rec.Arn)
		if err != nil {
			t.Fatal(err)
		}
		if len(events) != 2 || events[0].Type != sfnengine.EventExecutionStarted || events[1].Type != sfnengine.EventExecutionTimedOut ||
			events[1].Details["error"] != "States.Timeout" || events[0].Details["input"] != `{"a":1}` {
			t.Errorf("%s: history %+v", when, events)
		}
		list, err := eng.ListExecutions(ctx, sm.Arn, sfnengine.StatusTimedOut)
		if err != nil || len(list) != 1 || list[0].Arn != rec.Arn {
			t.Errorf("%s: ListExecutions TIMED_OUT: %v, %v", when, list, err)
		}
	}
	check(eng, "imported")
	if _, err := eng.StartExecution(ctx, sfnengine.StartInput{StateMachineArn: sm.Arn, Name: "fixture"}); !errors.Is(err, sfnengine.ErrExecutionAlreadyExists) {
		t.Errorf("StartExecution of the name: %v", err)
	}
	if _, err := eng.ImportClosedExecution(ctx, in); !errors.Is(err, sfnengine.ErrExecutionAlreadyExists) {
		t.Errorf("a second import: %v", err)
	}
	for name, bad := range map[string]sfnengine.ClosedExecution{
		"succeeded":     {StateMachineArn: sm.Arn, Name: "ok", Status: sfnengine.StatusSucceeded},
		"running":       {StateMachineArn: sm.Arn, Name: "run", Status: sfnengine.StatusRunning},
		"bad name":      {StateMachineArn: sm.Arn, Name: "a b", Status: sfnengine.StatusFailed},
		"other machine": {StateMachineArn: sm.Arn + "x", Name: "other", Status: sfnengine.StatusAborted},
	} {
		if _, err := eng.ImportClosedExecution(ctx, bad); err == nil {
			t.Errorf("%s: imported", name)
		}
	}
	if published != 0 {
		t.Errorf("%d status changes published for an import", published)
	}
	eng.Close()
	check(restoredEngine(t, opts), "after a restart")
}
