package sfnengine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

func TestRestoreFromStore(t *testing.T) {
	newFile := func(t *testing.T) sfnengine.Store {
		return fileStore(t, t.TempDir())
	}
	tests := []struct {
		name  string
		store func(t *testing.T) sfnengine.Store
	}{
		{name: "memory", store: func(*testing.T) sfnengine.Store { return sfnengine.NewMemoryStore() }},
		{name: "files", store: newFile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			store := tt.store(t)
			clock := sfnengine.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			first := sfnengine.New(sfnengine.Options{Store: store, Clock: clock})
			done := run(t, first, `{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`, `{"a":1}`)
			running := start(t, first, `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":60,"End":true}}}`, `{}`)
			first.Close()

			second := sfnengine.New(sfnengine.Options{Store: store, Clock: clock})
			defer second.Close()
			if err := second.Restore(ctx); err != nil {
				t.Fatal(err)
			}
			got, err := second.DescribeExecution(ctx, done.Arn)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != sfnengine.StatusSucceeded || *got.Output != `{"a":1}` || len(got.History) != len(done.History) {
				t.Fatalf("restored %s %v with %d events, want SUCCEEDED with %d", got.Status, got.Output, len(got.History), len(done.History))
			}
			if got.History[len(got.History)-1].Type != sfnengine.EventExecutionSucceeded {
				t.Fatalf("last restored event %s", got.History[len(got.History)-1].Type)
			}
			r, err := second.DescribeExecution(ctx, running.Arn)
			if err != nil {
				t.Fatal(err)
			}
			// Without checkpoints the interrupted execution starts again from its first state.
			if r.Status != sfnengine.StatusRunning || r.StopDate != nil {
				t.Fatalf("interrupted execution restored as %s, want RUNNING again", r.Status)
			}
			if _, err := second.DescribeStateMachine(ctx, done.StateMachineArn); err != nil {
				t.Fatalf("state machine not restored: %v", err)
			}
		})
	}
}

func TestRunningExecutionResumesAfterRestart(t *testing.T) {
	store := fileStore(t, t.TempDir())
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := sfnengine.NewManualClock(t0)
	opts := sfnengine.Options{Store: store, Clock: clock, CheckpointEveryState: true}
	def := `{"StartAt":"A","TimeoutSeconds":600,"States":{
	  "A":{"Type":"Pass","Result":1,"ResultPath":"$.a","Next":"W"},
	  "W":{"Type":"Wait","Seconds":60,"Next":"B"},
	  "B":{"Type":"Pass","Result":2,"ResultPath":"$.b","End":true}}}`
	first := sfnengine.New(opts)
	rec := start(t, first, def, `{"in":0}`)
	// Wait until the execution sits in W (its Wait timer and the execution timer are pending), then stop the engine.
	clock.MustAwaitWaiters(t, 2)
	first.Close()

	done, _ := resumePastWait(t, opts, clock.Now(), rec.Arn)
	if done.Status != sfnengine.StatusSucceeded || *done.Output != `{"in":0,"a":1,"b":2}` {
		t.Fatalf("resumed execution ended %s with %v", done.Status, done.Output)
	}
	var types []string
	for i, e := range done.History {
		if e.ID != int64(i+1) {
			t.Fatalf("event %d has id %d", i, e.ID)
		}
		types = append(types, e.Type)
	}
	want := "ExecutionStarted,PassStateEntered,PassStateExited,WaitStateEntered,WaitStateExited,PassStateEntered,PassStateExited,ExecutionSucceeded"
	if got := strings.Join(types, ","); got != want {
		t.Fatalf("history %s, want %s", got, want)
	}
	if done.History[3].PreviousEventID != 3 {
		t.Fatalf("resumed WaitStateEntered points back to %d, want 3", done.History[3].PreviousEventID)
	}
	if done.Checkpoint != nil {
		t.Fatal("a closed execution keeps its checkpoint")
	}
}

// resumePastWait restores the execution arn, which sits in a 60-second Wait with its execution timeout pending, on a
// new engine with opts and a new clock at now (the stopped engine's timers stay pending on the old one); it passes
// the Wait and returns the execution once it has ended, and the new clock.
func resumePastWait(t *testing.T, opts sfnengine.Options, now time.Time, arn string) (*sfnengine.ExecutionRecord, *sfnengine.ManualClock) {
	t.Helper()
	ctx := context.Background()
	clock := sfnengine.NewManualClock(now)
	opts.Clock = clock
	eng := restoredEngine(t, opts)
	clock.MustAwaitWaiters(t, 2)
	clock.Advance(60 * time.Second)
	done, err := waitHistory(ctx, eng, arn)
	if err != nil {
		t.Fatal(err)
	}
	return done, clock
}

// loopDefinition counts $.i from 0 to n in a Pass/Choice loop: 4 events and 2 checkpoints per turn. With waitAt
// in (0, n) it waits 60 seconds once, when $.i reaches it.
func loopDefinition(n, waitAt int) string {
	return fmt.Sprintf(`{"StartAt":"Init","TimeoutSeconds":3600,"States":{
	  "Init":{"Type":"Pass","Result":0,"ResultPath":"$.i","Next":"Inc"},
	  "Inc":{"Type":"Pass","Parameters":{"i.$":"States.MathAdd($.i, 1)"},"Next":"Check"},
	  "Check":{"Type":"Choice","Choices":[
	    {"Variable":"$.i","NumericEquals":%d,"Next":"W"},
	    {"Variable":"$.i","NumericLessThan":%d,"Next":"Inc"}],"Default":"Done"},
	  "W":{"Type":"Wait","Seconds":60,"Next":"Inc"},
	  "Done":{"Type":"Succeed"}}}`, waitAt, n)
}

// logFiles returns the execution logs of a FileStore directory.
func logFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "executions", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestCheckpointsAppend runs a loop of 1,500 turns (6,000 events, 3,000 checkpoints) with a checkpoint before every
// state. Each checkpoint appends what is new, so the store writes the final log once, byte for byte; the format
// that rewrote the whole record at each checkpoint wrote 189 MB for 500 turns, and about 2 GB for these.
func TestCheckpointsAppend(t *testing.T) {
	dir := t.TempDir()
	store := fileStore(t, dir)
	eng := newEngine(t, sfnengine.Options{Store: store, CheckpointEveryState: true})
	rec := run(t, eng, loopDefinition(1500, 0), `{}`)
	if rec.Status != sfnengine.StatusSucceeded || *rec.Output != `{"i":1500}` {
		t.Fatalf("loop ended %s with %v", rec.Status, rec.Output)
	}
	logs := logFiles(t, dir)
	if len(logs) != 1 {
		t.Fatalf("%d execution logs", len(logs))
	}
	logSize := fileSize(t, logs[0])
	machines, _ := filepath.Glob(filepath.Join(dir, "statemachines", "*.json"))
	written := sfnengine.BytesWritten(store) - fileSize(t, machines[0])
	events := int64(len(rec.History))
	t.Logf("%d events, log %d bytes, %d bytes written", events, logSize, written)
	if written != logSize {
		t.Errorf("wrote %d bytes for a log of %d: something was written twice", written, logSize)
	}
	if logSize > 400*events {
		t.Errorf("log of %d bytes for %d events: more than 400 bytes an event", logSize, events)
	}
}

// TestResumeIgnoresUncommittedTail interrupts a loop in its Wait state, then leaves in its log what a process killed
// in the middle of a state leaves: the events of that state after the last checkpoint, and a torn last line. The
// restarted engine resumes at the checkpoint, cuts that tail off and produces the history an uninterrupted run
// produces; a third engine reads the same history back.
func TestResumeIgnoresUncommittedTail(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store := fileStore(t, dir)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := sfnengine.NewManualClock(t0)
	first := sfnengine.New(sfnengine.Options{Store: store, Clock: clock, CheckpointEveryState: true})
	rec := start(t, first, loopDefinition(300, 150), `{}`)
	clock.MustAwaitWaiters(t, 2) // the Wait state's and the execution's timeout
	first.Close()

	logs := logFiles(t, dir)
	if len(logs) != 1 {
		t.Fatalf("%d execution logs", len(logs))
	}
	f, err := os.OpenFile(logs[0], os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The log ends with the checkpoint before W and W's WaitStateEntered event: add what W would add, then half a line.
	tail := `{"id":999,"previousEventId":998,"timestamp":1767225600.000,"type":"WaitStateExited","stateExitedEventDetails":{"name":"W"}}` + "\n" +
		`{"id":1000,"previousEventId":999,"timestamp":1767225600.000,"type":"PassStat`
	if _, err := f.WriteString(tail); err != nil {
		t.Fatal(err)
	}
	f.Close()

	done, clock2 := resumePastWait(t, sfnengine.Options{Store: fileStore(t, dir), CheckpointEveryState: true}, clock.Now(), rec.Arn)
	if done.Status != sfnengine.StatusSucceeded || *done.Output != `{"i":300}` {
		t.Fatalf("resumed loop ended %s with %v", done.Status, done.Output)
	}

	ref := sfnengine.NewManualClock(t0)
	refEng := newEngine(t, sfnengine.Options{Clock: ref})
	refRec := start(t, refEng, loopDefinition(300, 150), `{}`)
	ref.MustAwaitWaiters(t, 2)
	ref.Advance(60 * time.Second)
	want, err := waitHistory(ctx, refEng, refRec.Arn)
	if err != nil {
		t.Fatal(err)
	}
	if got, w := historyShape(done.History), historyShape(want.History); got != w {
		t.Fatalf("resumed history differs from an uninterrupted one:\n%s\nwant\n%s", got, w)
	}

	store3 := fileStore(t, dir)
	third := restoredEngine(t, sfnengine.Options{Store: store3, Clock: clock2})
	again, err := third.DescribeExecution(ctx, rec.Arn)
	if err != nil {
		t.Fatal(err)
	}
	if got, w := historyShape(again.History), historyShape(done.History); got != w || again.Status != sfnengine.StatusSucceeded {
		t.Fatalf("history read back after the restart (%s):\n%s\nwant\n%s", again.Status, got, w)
	}
}

// historyShape renders ids, links, types and state names, one event a line.
func historyShape(events []sfnengine.Event) string {
	var b strings.Builder
	for i, e := range events {
		fmt.Fprintf(&b, "%d %d<-%d %s %v\n", i+1, e.ID, e.PreviousEventID, e.Type, e.Details["name"])
	}
	return b.String()
}

// TestRestoreOneFileFormat restores testdata/filestore-v1, a data directory written by the FileStore that kept one
// JSON file per execution (a closed execution, and one checkpointed in a Wait state): both are served as before,
// the waiting one resumes, and the files are converted to logs.
func TestRestoreOneFileFormat(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "filestore-v1"))); err != nil {
		t.Fatal(err)
	}
	store := fileStore(t, dir)
	clock := sfnengine.NewManualClock(time.Date(2026, 3, 1, 12, 0, 1, 0, time.UTC))
	eng := restoredEngine(t, sfnengine.Options{Store: store, Clock: clock, CheckpointEveryState: true})
	done, err := eng.DescribeExecution(ctx, "arn:aws:states:us-east-1:123456789012:execution:v1:done")
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != sfnengine.StatusSucceeded || *done.Output != `{"wait":false,"a":"é \u2028 \"q\"","b":2}` || len(done.History) != 8 ||
		done.History[7].Type != sfnengine.EventExecutionSucceeded || done.History[1].Timestamp.UnixMilli() != 1772366400000 {
		t.Fatalf("closed execution restored as %s %v with %d events", done.Status, done.Output, len(done.History))
	}
	clock.MustAwaitWaiters(t, 1)
	clock.Advance(time.Minute)
	waited, err := waitHistory(ctx, eng, "arn:aws:states:us-east-1:123456789012:execution:v1:waiting")
	if err != nil {
		t.Fatal(err)
	}
	if waited.Status != sfnengine.StatusSucceeded || *waited.Output != `{"wait":true,"a":"é \u2028 \"q\"","b":2}` {
		t.Fatalf("waiting execution ended %s with %v", waited.Status, waited.Output)
	}
	for i, e := range waited.History {
		if e.ID != int64(i+1) {
			t.Fatalf("event %d has id %d:\n%s", i, e.ID, historyShape(waited.History))
		}
	}
	if old, _ := filepath.Glob(filepath.Join(dir, "executions", "*.json")); len(old) != 0 || len(logFiles(t, dir)) != 2 {
		t.Errorf("after the restore: %d files of the old format, %d logs", len(old), len(logFiles(t, dir)))
	}
}
