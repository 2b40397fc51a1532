package sfnengine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// versionedWork is a JSONata machine that assigns a variable, calls the Lambda work, and outputs its version's name
// with the variable.
func versionedWork(version string) string {
	return `{"QueryLanguage":"JSONata","StartAt":"Count","States":{
	  "Count":{"Type":"Pass","Assign":{"n":"{% 41 + 1 %}"},"Next":"Work"},
	  "Work":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Arguments":{"FunctionName":"work","Payload":{}},"Next":"Done"},
	  "Done":{"Type":"Pass","Output":{"version":"` + version + `","n":"{% $n %}"},"End":true}}}`
}

// TestRedriveOfAVersionExecution: an execution started through an alias that routes to version 1 fails; the state
// machine is then updated (version 2 was published before the execution started, and another definition after it
// failed); the engine restarts on its FileStore. The redrive runs version 1, the version the execution ran (a version
// is immutable, so a later update does not make the execution unredrivable), with the workflow variable assigned
// before the failure.
func TestRedriveOfAVersionExecution(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clock := sfnengine.NewManualClock(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	files := fileStore(t, dir)
	lambda := newFlakyLambda("work")
	first := sfnengine.New(sfnengine.Options{Store: files, Clock: clock, Lambda: lambda, CheckpointEveryState: true})
	sm := mustCreate(t, first, sfnengine.CreateInput{Name: "versioned", Definition: versionedWork("v1"),
		CreateOptions: sfnengine.CreateOptions{Publish: true}})
	alias, err := first.CreateStateMachineAlias(ctx, "prod", "", []sfnengine.Route{{VersionArn: sm.Arn + ":1", Weight: 100}})
	if err != nil {
		t.Fatal(err)
	}
	mustPublish(t, first, sm.Arn, versionedWork("v2"))
	clock.Advance(time.Second)
	rec, err := first.StartExecution(ctx, sfnengine.StartInput{StateMachineArn: alias.Arn, Name: "run"})
	if err != nil {
		t.Fatal(err)
	}
	if got := waitClosed(t, first, rec.Arn); got.Status != sfnengine.StatusFailed {
		t.Fatalf("first run: %s", got.Status)
	}
	clock.Advance(time.Second)
	if _, err := first.UpdateStateMachine(ctx, sm.Arn, versionedWork("v3"), ""); err != nil {
		t.Fatal(err)
	}
	first.Close()

	lambda.fix("work")
	files2 := fileStore(t, dir)
	second := restoredEngine(t, sfnengine.Options{Store: files2, Clock: clock, Lambda: lambda, CheckpointEveryState: true})
	requireRedrivable(t, second, rec.Arn, "of the version's execution after an update")
	if _, err := second.RedriveExecution(ctx, rec.Arn, ""); err != nil {
		t.Fatal(err)
	}
	got := waitClosed(t, second, rec.Arn)
	if got.Status != sfnengine.StatusSucceeded || got.Output == nil || *got.Output != `{"version":"v1","n":42}` {
		t.Fatalf("after the redrive: %s %v, want SUCCEEDED {\"version\":\"v1\",\"n\":42}", got.Status, got.Output)
	}
	if got.StateMachineVersionArn != sm.Arn+":1" || got.StateMachineAliasArn != alias.Arn || got.RedriveCount() != 1 {
		t.Fatalf("after the redrive: version %s, alias %s, count %d", got.StateMachineVersionArn, got.StateMachineAliasArn, got.RedriveCount())
	}
}

// TestRedrivenMapResumesAfterACrashWithCheckpoints: a Map whose second iteration failed is redriven; the engine, with
// checkpoints on, stops while the redriven iteration runs; the next engine resumes at the Map's checkpoint and, as
// the redrive did, runs only the iterations that had not succeeded: the first, which succeeded before the redrive,
// is not run again.
func TestRedrivenMapResumesAfterACrashWithCheckpoints(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	files := fileStore(t, dir)
	var mu sync.Mutex
	phase := "fail"
	calls := map[string]int{}
	blocked := make(chan struct{}, 1)
	lambda := invokerFunc(func(ctx context.Context, _ string, payload []byte) ([]byte, error) {
		mu.Lock()
		calls[string(payload)]++
		p := phase
		mu.Unlock()
		if string(payload) == `{"n":2}` {
			switch p {
			case "fail":
				return nil, &sfnengine.FunctionError{Type: "Locked", Message: "locked"}
			case "block":
				blocked <- struct{}{}
				<-ctx.Done()
				return nil, ctx.Err()
			}
		}
		return payload, nil
	})
	const def = `{"StartAt":"M","States":{"M":{"Type":"Map","MaxConcurrency":1,"ItemsPath":"$.items","End":true,
	  "ItemProcessor":{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke",
	    "Parameters":{"FunctionName":"f","Payload.$":"$"},"OutputPath":"$.Payload","End":true}}}}}}`
	first := sfnengine.New(sfnengine.Options{Store: files, Lambda: lambda, CheckpointEveryState: true})
	rec := run(t, first, def, `{"items":[{"n":1},{"n":2},{"n":3}]}`)
	if rec.Status != sfnengine.StatusFailed {
		t.Fatalf("first run: %s", rec.Status)
	}
	mu.Lock()
	phase = "block"
	mu.Unlock()
	if _, err := first.RedriveExecution(ctx, rec.Arn, ""); err != nil {
		t.Fatal(err)
	}
	<-blocked
	first.Close()

	mu.Lock()
	phase = "succeed"
	mu.Unlock()
	files2 := fileStore(t, dir)
	second := restoredEngine(t, sfnengine.Options{Store: files2, Lambda: lambda, CheckpointEveryState: true})
	got := waitClosed(t, second, rec.Arn)
	if got.Status != sfnengine.StatusSucceeded || *got.Output != `[{"n":1},{"n":2},{"n":3}]` {
		t.Fatalf("after the restart: %s %v", got.Status, got.Output)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls[`{"n":1}`] != 1 || calls[`{"n":2}`] != 3 || calls[`{"n":3}`] != 1 {
		t.Fatalf("calls %v: want n=1 once (it succeeded before the redrive), n=2 three times, n=3 once", calls)
	}
}

// TestNestedSyncStartOfAnExpressAlias: startExecution.sync:2 given a version or an alias ARN of an EXPRESS state
// machine runs the child as StartSyncExecution does, as it does for the state machine's own ARN (the Express child
// was started as an asynchronous Express execution, whose ARN Wait refuses: the task failed).
func TestNestedSyncStartOfAnExpressAlias(t *testing.T) {
	ctx := context.Background()
	eng := newEngine(t, sfnengine.Options{})
	child := mustCreate(t, eng, sfnengine.CreateInput{Name: "express-child", Definition: childDefinition,
		Type: sfnengine.TypeExpress, CreateOptions: sfnengine.CreateOptions{Publish: true}})
	alias, err := eng.CreateStateMachineAlias(ctx, "live", "", []sfnengine.Route{{VersionArn: child.Arn + ":1", Weight: 100}})
	if err != nil {
		t.Fatal(err)
	}
	for _, arn := range []string{child.Arn, child.Arn + ":1", alias.Arn} {
		t.Run(arn[strings.LastIndexByte(arn, ':')+1:], func(t *testing.T) {
			rec := run(t, eng, parentDefinition("startExecution.sync:2", arn), `{"n":3,"decline":false,"name":"c"}`)
			var out map[string]any
			if err := json.Unmarshal([]byte(*rec.Output), &out); err != nil {
				t.Fatal(err)
			}
			if out["Status"] != "SUCCEEDED" || !jsonEqual(out["Output"], map[string]any{"doubled": 6.0}) || out["err"] != nil {
				t.Fatalf("output %s, want the child's description with Output {\"doubled\":6}", *rec.Output)
			}
		})
	}
}

// TestRedriveRefusalsOfVersionsAndRecreatedMachines: an execution of a version that was deleted since cannot be
// redriven; nor one whose state machine was deleted and created again with the same name (the execution ran the
// deleted one: the redrive ran the new definition).
func TestRedriveRefusalsOfVersionsAndRecreatedMachines(t *testing.T) {
	ctx := context.Background()
	failing := `{"StartAt":"F","States":{"F":{"Type":"Fail","Error":"Nope"}}}`
	tests := []struct {
		name    string
		version bool
		prepare func(t *testing.T, eng *sfnengine.Engine, clock *sfnengine.ManualClock, sm sfnengine.StateMachine)
		reason  string
	}{
		{name: "version deleted", version: true, reason: "State machine version the execution ran has been deleted",
			prepare: func(t *testing.T, eng *sfnengine.Engine, _ *sfnengine.ManualClock, sm sfnengine.StateMachine) {
				if err := eng.DeleteStateMachineVersion(ctx, sm.Arn+":1"); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "state machine created again", reason: "State machine is in DELETING status.",
			prepare: func(t *testing.T, eng *sfnengine.Engine, clock *sfnengine.ManualClock, sm sfnengine.StateMachine) {
				if err := eng.DeleteStateMachine(ctx, sm.Arn); err != nil {
					t.Fatal(err)
				}
				clock.Advance(time.Second)
				mustCreate(t, eng, sfnengine.CreateInput{Name: sm.Name,
					Definition: `{"StartAt":"F","States":{"F":{"Type":"Pass","Result":"new","End":true}}}`})
			}},
		{name: "version of a state machine created again", version: true, reason: "State machine is in DELETING status.",
			prepare: func(t *testing.T, eng *sfnengine.Engine, clock *sfnengine.ManualClock, sm sfnengine.StateMachine) {
				if err := eng.DeleteStateMachine(ctx, sm.Arn); err != nil {
					t.Fatal(err)
				}
				clock.Advance(time.Second)
				mustCreate(t, eng, sfnengine.CreateInput{Name: sm.Name, CreateOptions: sfnengine.CreateOptions{Publish: true},
					Definition: `{"StartAt":"F","States":{"F":{"Type":"Pass","Result":"new","End":true}}}`})
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clock := sfnengine.NewManualClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
			eng := newEngine(t, sfnengine.Options{Clock: clock})
			sm := mustCreate(t, eng, sfnengine.CreateInput{Name: "m", Definition: failing,
				CreateOptions: sfnengine.CreateOptions{Publish: tc.version}})
			target := sm.Arn
			if tc.version {
				target += ":1"
			}
			rec, err := eng.StartExecution(ctx, sfnengine.StartInput{StateMachineArn: target})
			if err != nil {
				t.Fatal(err)
			}
			waitClosed(t, eng, rec.Arn)
			tc.prepare(t, eng, clock, sm)
			_, err = eng.RedriveExecution(ctx, rec.Arn, "")
			if !errors.Is(err, sfnengine.ErrExecutionNotRedrivable) || !strings.HasSuffix(err.Error(), ": "+tc.reason) {
				t.Fatalf("redrive: %v, want ErrExecutionNotRedrivable: %s", err, tc.reason)
			}
			d, err := eng.DescribeExecution(ctx, rec.Arn)
			if err != nil {
				t.Fatal(err)
			}
			if status, reason := eng.RedriveStatus(d); status != sfnengine.RedriveStatusNotRedrivable || reason != tc.reason {
				t.Fatalf("redrive status %s (%s), want NOT_REDRIVABLE (%s)", status, reason, tc.reason)
			}
		})
	}
}

// TestRestoreOfAnExecutionOfARecreatedStateMachine: a running execution whose state machine is deleted and created
// again with the same name, then the engine restarts: the execution cannot run again (the definition it ran is
// gone) and is closed ABORTED, as one whose state machine is gone; it did not resume with the new definition.
func TestRestoreOfAnExecutionOfARecreatedStateMachine(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clock := sfnengine.NewManualClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	files := fileStore(t, dir)
	waitThen := func(result string) string {
		return `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":60,"Next":"P"},"P":{"Type":"Pass","Result":"` + result + `","End":true}}}`
	}
	first := sfnengine.New(sfnengine.Options{Store: files, Clock: clock, CheckpointEveryState: true})
	sm := mustCreate(t, first, sfnengine.CreateInput{Name: "m", Definition: waitThen("old")})
	rec, err := first.StartExecution(ctx, sfnengine.StartInput{StateMachineArn: sm.Arn})
	if err != nil {
		t.Fatal(err)
	}
	clock.MustAwaitWaiters(t, 1)
	if err := first.DeleteStateMachine(ctx, sm.Arn); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	mustCreate(t, first, sfnengine.CreateInput{Name: "m", Definition: waitThen("new")})
	first.Close()
	before, _ := clock.Waiters()

	files2 := fileStore(t, dir)
	second := restoredEngine(t, sfnengine.Options{Store: files2, Clock: clock, CheckpointEveryState: true})
	d, err := second.DescribeExecution(ctx, rec.Arn)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status == sfnengine.StatusRunning { // let a wrongly resumed execution end, to show what it ran
		clock.MustAwaitWaiters(t, before+1)
		clock.Advance(time.Minute)
		d = waitClosed(t, second, rec.Arn)
	}
	if d.Status != sfnengine.StatusAborted || d.Error == nil || *d.Error != "States.Runtime" {
		t.Fatalf("after the restart: %s %v %v, want ABORTED States.Runtime", d.Status, d.Error, d.Output)
	}
}

// TestJSONataToleratedFailures: a JSONata Distributed Map's ToleratedFailureCount and ToleratedFailurePercentage
// may be expressions (of the input, of variables); their values are the Map Run's thresholds. They were accepted and
// never evaluated: the Map Run had no threshold and its first failed item failed it.
func TestJSONataToleratedFailures(t *testing.T) {
	ctx := context.Background()
	def := func(field string) string {
		return `{"QueryLanguage":"JSONata","StartAt":"Init","States":{
		  "Init":{"Type":"Pass","Assign":{"pct":50},"Next":"Charge"},
		  "Charge":{"Type":"Map","Items":"{% $states.input.items %}",` + field + `,"End":true,
		    "ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{
		      "P":{"Type":"Choice","Choices":[{"Condition":"{% $states.input = 'bad' %}","Next":"Bad"}],"Default":"Ok"},
		      "Bad":{"Type":"Fail","Error":"BadItem","Cause":"bad item"},"Ok":{"Type":"Pass","End":true}}}}}}`
	}
	tests := []struct {
		name, field      string
		count            int64
		pct              float64
		hasCount, hasPct bool
		wantStatus       string
	}{
		{name: "count from the input", field: `"ToleratedFailureCount":"{% $states.input.tolerate %}"`, count: 1, hasCount: true,
			wantStatus: sfnengine.StatusSucceeded},
		{name: "percentage from a variable", field: `"ToleratedFailurePercentage":"{% $pct %}"`, pct: 50, hasPct: true,
			wantStatus: sfnengine.StatusSucceeded},
		{name: "count exceeded", field: `"ToleratedFailureCount":"{% $states.input.tolerate - 1 %}"`, count: 0, hasCount: true,
			wantStatus: sfnengine.StatusFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			eng := newEngine(t, sfnengine.Options{})
			rec := createAndStart(t, eng, "tolerant", def(tc.field), `{"items":["a","bad","c"],"tolerate":1}`)
			got := waitClosed(t, eng, rec.Arn)
			if got.Status != tc.wantStatus {
				t.Fatalf("status %s %v %v, want %s", got.Status, got.Error, got.Cause, tc.wantStatus)
			}
			runs, err := eng.ListMapRuns(ctx, rec.Arn)
			if err != nil || len(runs) != 1 {
				t.Fatalf("ListMapRuns: %v %+v", err, runs)
			}
			r := runs[0]
			if r.HasToleratedFailureCount != tc.hasCount || r.ToleratedFailureCount != tc.count ||
				r.HasToleratedFailurePercentage != tc.hasPct || r.ToleratedFailurePercentage != tc.pct {
				t.Fatalf("map run thresholds: count %v %d, percentage %v %v", r.HasToleratedFailureCount, r.ToleratedFailureCount,
					r.HasToleratedFailurePercentage, r.ToleratedFailurePercentage)
			}
		})
	}
}
