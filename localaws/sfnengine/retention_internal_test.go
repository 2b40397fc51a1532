package sfnengine

import (
	"context"
	"fmt"
	"testing"
)

// TestRetentionForgetsMapRunsAndRedriveTokens: what the engine keeps per execution beside its summary (the owner of
// each of its Map Runs, its redrive clientTokens) goes when retention forgets the execution; an Express execution's
// Map Runs are not kept once it closes (nothing can describe it). Both were kept for the engine's life: an engine
// bounded by MaxClosedExecutions grew by an entry per Map Run.
func TestRetentionForgetsMapRunsAndRedriveTokens(t *testing.T) {
	ctx := context.Background()
	e := New(Options{MaxClosedExecutions: 2})
	t.Cleanup(e.Close)
	const def = `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.items","End":true,
	  "ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},
	    "StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}}}}`
	failing := `{"StartAt":"F","States":{"F":{"Type":"Fail","Error":"X"}}}`
	std, err := e.CreateStateMachine(ctx, CreateInput{Name: "std", Definition: def, RoleArn: "arn:aws:iam::123456789012:role/r"})
	if err != nil {
		t.Fatal(err)
	}
	fail, err := e.CreateStateMachine(ctx, CreateInput{Name: "fail", Definition: failing, RoleArn: "arn:aws:iam::123456789012:role/r"})
	if err != nil {
		t.Fatal(err)
	}
	expressDef := `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.items","End":true,
	  "ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"EXPRESS"},
	    "StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}}}}`
	exp, err := e.CreateStateMachine(ctx, CreateInput{Name: "exp", Definition: expressDef, Type: TypeExpress,
		RoleArn: "arn:aws:iam::123456789012:role/r"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		rec, err := e.StartExecution(ctx, StartInput{StateMachineArn: std.Arn, Input: `{"items":[1,2]}`})
		if err != nil {
			t.Fatal(err)
		}
		if done, err := e.Wait(ctx, rec.Arn); err != nil || done.Status != StatusSucceeded {
			t.Fatalf("execution %d: %v %+v", i, err, done)
		}
		rec, err = e.StartExecution(ctx, StartInput{StateMachineArn: fail.Arn})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Wait(ctx, rec.Arn); err != nil {
			t.Fatal(err)
		}
		if _, err := e.RedriveExecution(ctx, rec.Arn, fmt.Sprint("token", i)); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Wait(ctx, rec.Arn); err != nil {
			t.Fatal(err)
		}
		if out, err := e.StartSyncExecution(ctx, StartInput{StateMachineArn: exp.Arn, Input: `{"items":[1,2]}`}); err != nil || out.Status != StatusSucceeded {
			t.Fatalf("express execution %d: %v %+v", i, err, out)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.closed) > 2 || len(e.mapRunExec) > 2 || len(e.redrives) > 2 || len(e.mapRuns) != 0 {
		t.Fatalf("kept %d summaries, the owners of %d Map Runs and the tokens of %d executions, %d running Map Runs; want at most 2, 2, 2, 0",
			len(e.closed), len(e.mapRunExec), len(e.redrives), len(e.mapRuns))
	}
}
