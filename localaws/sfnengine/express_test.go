package sfnengine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// countingLambda answers every call with {}, counts them and signals each on called.
type countingLambda struct {
	calls  atomic.Int64
	called chan struct{}
}

func (l *countingLambda) Invoke(context.Context, string, []byte) ([]byte, error) {
	l.calls.Add(1)
	l.called <- struct{}{}
	return []byte(`{}`), nil
}

// TestExpressExecutionsKeepNoState: Express executions run (their tasks are called) but, as on AWS, nothing of them
// is kept: nothing is written to the Store, even with checkpoints on, no status-change event is published, and an
// engine restarted on the same directory knows none of them. The state machine itself is kept.
func TestExpressExecutionsKeepNoState(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store := fileStore(t, dir)
	var events atomic.Int64
	lambda := &countingLambda{called: make(chan struct{}, 2)}
	eng := sfnengine.New(sfnengine.Options{Store: store, CheckpointEveryState: true, Lambda: lambda,
		Subscribers: []sfnengine.Subscriber{func(context.Context, []byte) { events.Add(1) }}})
	sm, err := eng.CreateStateMachine(ctx, sfnengine.CreateInput{Name: "x", RoleArn: "arn:aws:iam::123456789012:role/r", Type: sfnengine.TypeExpress,
		Definition: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f"},"Next":"P"},"P":{"Type":"Pass","End":true}}}`})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := eng.StartSyncExecution(ctx, sfnengine.StartInput{StateMachineArn: sm.Arn, Input: `{"k":"v"}`})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != sfnengine.StatusSucceeded || lambda.calls.Load() != 1 {
		t.Fatalf("status %s, %d calls", rec.Status, lambda.calls.Load())
	}
	if _, err := eng.StartExecution(ctx, sfnengine.StartInput{StateMachineArn: sm.Arn}); err != nil {
		t.Fatal(err)
	}
	<-lambda.called
	select { // the asynchronous execution calls its task
	case <-lambda.called:
	case <-time.After(30 * time.Second):
		t.Fatal("the execution started by StartExecution did not run")
	}
	eng.Close()
	if n := events.Load(); n != 0 {
		t.Errorf("%d status-change events, want none", n)
	}
	files, err := os.ReadDir(filepath.Join(dir, "executions"))
	if err != nil || len(files) != 0 {
		t.Fatalf("executions directory: %v, %v: want it empty", files, err)
	}
	if _, err := eng.DescribeExecution(ctx, rec.Arn); !errors.Is(err, sfnengine.ErrInvalidArn) {
		t.Fatalf("DescribeExecution = %v, want ErrInvalidArn", err)
	}

	again := sfnengine.New(sfnengine.Options{Store: store})
	defer again.Close()
	if err := again.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	if d, err := again.DescribeStateMachine(ctx, sm.Arn); err != nil || d.Type != sfnengine.TypeExpress {
		t.Fatalf("restored state machine = %+v, %v", d, err)
	}
	if _, err := again.ListExecutions(ctx, sm.Arn, ""); !errors.Is(err, sfnengine.ErrStateMachineTypeNotSupported) {
		t.Fatalf("ListExecutions = %v", err)
	}
}

// TestStartSyncExecutionCallerGoesAway: when the caller's context ends, the execution is stopped and the call
// returns the context's error.
func TestStartSyncExecutionCallerGoesAway(t *testing.T) {
	clock := sfnengine.NewManualClock(time.Unix(1_700_000_000, 0))
	eng := sfnengine.New(sfnengine.Options{Clock: clock})
	defer eng.Close()
	ctx := context.Background()
	sm, err := eng.CreateStateMachine(ctx, sfnengine.CreateInput{Name: "w", RoleArn: "arn:aws:iam::123456789012:role/r", Type: sfnengine.TypeExpress,
		Definition: `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":60,"End":true}}}`})
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := eng.StartSyncExecution(cctx, sfnengine.StartInput{StateMachineArn: sm.Arn})
		done <- err
	}()
	for n, grew := clock.Waiters(); n < 2; n, grew = clock.Waiters() {
		<-grew
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestExpressHasNoHistoryQuota: an Express execution is not bound by the 25,000-event history quota of Standard
// executions (it has no history), so a loop longer than that succeeds.
func TestExpressHasNoHistoryQuota(t *testing.T) {
	eng := sfnengine.New(sfnengine.Options{MaxHistoryEvents: 100})
	defer eng.Close()
	ctx := context.Background()
	def := `{"StartAt":"Init","States":{
	  "Init":{"Type":"Pass","Result":{"i":0},"Next":"Loop"},
	  "Loop":{"Type":"Pass","Parameters":{"i.$":"States.MathAdd($.i, 1)"},"Next":"Check"},
	  "Check":{"Type":"Choice","Choices":[{"Variable":"$.i","NumericLessThan":200,"Next":"Loop"}],"Default":"Done"},
	  "Done":{"Type":"Succeed"}}}`
	for _, typ := range []string{sfnengine.TypeStandard, sfnengine.TypeExpress} {
		sm, err := eng.CreateStateMachine(ctx, sfnengine.CreateInput{Name: "loop-" + typ, RoleArn: "arn:aws:iam::123456789012:role/r", Type: typ, Definition: def})
		if err != nil {
			t.Fatal(err)
		}
		var rec *sfnengine.ExecutionRecord
		if typ == sfnengine.TypeExpress {
			rec, err = eng.StartSyncExecution(ctx, sfnengine.StartInput{StateMachineArn: sm.Arn})
		} else if rec, err = eng.StartExecution(ctx, sfnengine.StartInput{StateMachineArn: sm.Arn}); err == nil {
			rec, err = eng.Wait(ctx, rec.Arn)
		}
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{sfnengine.TypeStandard: sfnengine.StatusFailed, sfnengine.TypeExpress: sfnengine.StatusSucceeded}[typ]
		if rec.Status != want {
			t.Errorf("%s: status %s, want %s", typ, rec.Status, want)
		}
	}
}
