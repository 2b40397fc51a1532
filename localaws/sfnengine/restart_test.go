package sfnengine_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// startOnlyStore is a FileStore that keeps only the first save of each execution, the one StartExecution makes:
// every later save (checkpoints, the close) is lost, as when the process is killed right after StartExecution
// answered, before the execution's first state.
type startOnlyStore struct {
	*sfnengine.FileStore
	mu    sync.Mutex
	saved map[string]bool
}

func (s *startOnlyStore) SaveExecution(ctx context.Context, rec *sfnengine.ExecutionRecord, events []byte) error {
	s.mu.Lock()
	first := !s.saved[rec.Arn]
	s.saved[rec.Arn] = true
	s.mu.Unlock()
	if !first {
		return nil
	}
	return s.FileStore.SaveExecution(ctx, rec, events)
}

// TestStartedExecutionRunsAfterACrashBeforeItsFirstState: an execution whose engine crashed between
// StartExecution's answer and its first checkpoint is in the store RUNNING, without a checkpoint and without
// events; the next engine runs it from its first state to its end (it used to be closed ABORTED,
// and the transfer it carried ended FAILED because the platform crashed).
func TestStartedExecutionRunsAfterACrashBeforeItsFirstState(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	files := fileStore(t, dir)
	var calls atomic.Int64
	lambda := invokerFunc(func(_ context.Context, _ string, payload []byte) ([]byte, error) {
		calls.Add(1)
		return []byte(`{"debited":true}`), nil
	})
	def := `{"StartAt":"Debit","TimeoutSeconds":600,"States":{
	  "Debit":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"debit","Payload.$":"$"},
	    "ResultSelector":{"debited.$":"$.Payload.debited"},"ResultPath":"$.debit","Next":"Done"},
	  "Done":{"Type":"Pass","Result":"settled","ResultPath":"$.status","End":true}}}`
	opts := sfnengine.Options{Store: &startOnlyStore{FileStore: files, saved: map[string]bool{}}, Lambda: lambda,
		CheckpointEveryState: true}
	first := sfnengine.New(opts)
	rec := start(t, first, def, `{"transferId":"tr_1"}`)
	if _, err := first.Wait(ctx, rec.Arn); err != nil {
		t.Fatal(err)
	}
	first.Close()

	// What the crash left on disk: the start, nothing else.
	stored, err := files.Execution(ctx, rec.Arn)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Status != sfnengine.StatusRunning || stored.Checkpoint != nil || len(stored.History) != 0 ||
		stored.Input != `{"transferId":"tr_1"}` {
		t.Fatalf("stored after the crash: %s, checkpoint %v, %d events, input %s; want RUNNING with its input only",
			stored.Status, stored.Checkpoint, len(stored.History), stored.Input)
	}

	second := sfnengine.New(sfnengine.Options{Store: files, Lambda: lambda, CheckpointEveryState: true})
	defer second.Close()
	if err := second.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	done, err := waitHistory(wctx, second, rec.Arn)
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != sfnengine.StatusSucceeded || done.Output == nil ||
		*done.Output != `{"transferId":"tr_1","debit":{"debited":true},"status":"settled"}` {
		t.Fatalf("restarted execution ended %s with output %v, want SUCCEEDED", done.Status, done.Output)
	}
	if got := eventTypes(done.History); got != "ExecutionStarted,TaskStateEntered,TaskScheduled,TaskStarted,TaskSucceeded,TaskStateExited,PassStateEntered,PassStateExited,ExecutionSucceeded" {
		t.Fatalf("history of the restarted execution: %s", got)
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("the debit ran %d times, want 2: once before the crash, once after", n)
	}
	reread := fileStore(t, dir)
	if r, err := reread.Execution(ctx, rec.Arn); err != nil || r.Status != sfnengine.StatusSucceeded {
		t.Fatalf("stored after the restart: %v %v, want SUCCEEDED", r, err)
	}
}

// eventTypes joins the events' types with commas.
func eventTypes(events []sfnengine.Event) string {
	types := make([]string, len(events))
	for i, e := range events {
		types[i] = e.Type
	}
	return strings.Join(types, ",")
}

// failingStore refuses every execution save.
type failingStore struct{ *sfnengine.MemoryStore }

func (failingStore) SaveExecution(context.Context, *sfnengine.ExecutionRecord, []byte) error {
	return errors.New("disk full")
}

// TestStartExecutionFailsWhenTheStartIsNotSaved: StartExecution answers only once the start is saved; when the save
// fails it is an error and no execution exists, so no caller is told that an execution started which a restart
// would not find.
func TestStartExecutionFailsWhenTheStartIsNotSaved(t *testing.T) {
	ctx := context.Background()
	eng := newEngine(t, sfnengine.Options{Store: failingStore{sfnengine.NewMemoryStore()}})
	sm, err := eng.CreateStateMachine(ctx, sfnengine.CreateInput{Name: "unsaved",
		Definition: `{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`, RoleArn: testRoleArn})
	if err != nil {
		t.Fatal(err)
	}
	_, err = eng.StartExecution(ctx, sfnengine.StartInput{StateMachineArn: sm.Arn, Name: "x1"})
	if err == nil {
		t.Fatal("StartExecution succeeded with a store that saves nothing")
	}
	arn := "arn:aws:states:us-east-1:123456789012:execution:unsaved:x1"
	if _, err := eng.DescribeExecution(ctx, arn); !errors.Is(err, sfnengine.ErrExecutionDoesNotExist) {
		t.Fatalf("DescribeExecution after a failed start: %v, want ExecutionDoesNotExist", err)
	}
}
