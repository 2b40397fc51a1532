package sfnlocal_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/internal/sfnlocal"
)

func TestRestoreFromStore(t *testing.T) {
	newFile := func(t *testing.T) sfnlocal.Store {
		s, err := sfnlocal.NewFileStore(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	tests := []struct {
		name  string
		store func(t *testing.T) sfnlocal.Store
	}{
		{name: "memory", store: func(*testing.T) sfnlocal.Store { return sfnlocal.NewMemoryStore() }},
		{name: "files", store: newFile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			store := tt.store(t)
			clock := sfnlocal.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			first := sfnlocal.New(sfnlocal.Options{Store: store, Clock: clock})
			done := run(t, first, `{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`, `{"a":1}`)
			running := start(t, first, `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":60,"End":true}}}`, `{}`)
			first.Close()

			second := sfnlocal.New(sfnlocal.Options{Store: store, Clock: clock})
			defer second.Close()
			if err := second.Restore(ctx); err != nil {
				t.Fatal(err)
			}
			got, err := second.DescribeExecution(ctx, done.Arn)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != sfnlocal.StatusSucceeded || *got.Output != `{"a":1}` || len(got.History) != len(done.History) {
				t.Fatalf("restored %s %v with %d events, want SUCCEEDED with %d", got.Status, got.Output, len(got.History), len(done.History))
			}
			if got.History[len(got.History)-1].Type != sfnlocal.EventExecutionSucceeded {
				t.Fatalf("last restored event %s", got.History[len(got.History)-1].Type)
			}
			r, err := second.DescribeExecution(ctx, running.Arn)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != sfnlocal.StatusAborted {
				t.Fatalf("interrupted execution restored as %s, want ABORTED", r.Status)
			}
			if _, err := second.DescribeStateMachine(ctx, done.StateMachineArn); err != nil {
				t.Fatalf("state machine not restored: %v", err)
			}
		})
	}
}

func TestRunningExecutionResumesAfterRestart(t *testing.T) {
	ctx := context.Background()
	store, err := sfnlocal.NewFileStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := sfnlocal.NewManualClock(t0)
	opts := sfnlocal.Options{Store: store, Clock: clock, CheckpointEveryState: true}
	def := `{"StartAt":"A","TimeoutSeconds":600,"States":{
	  "A":{"Type":"Pass","Result":1,"ResultPath":"$.a","Next":"W"},
	  "W":{"Type":"Wait","Seconds":60,"Next":"B"},
	  "B":{"Type":"Pass","Result":2,"ResultPath":"$.b","End":true}}}`
	first := sfnlocal.New(opts)
	rec := start(t, first, def, `{"in":0}`)
	// Wait until the execution sits in W (its Wait timer and the execution timer are pending), then stop the engine.
	waitForTimers(t, clock, 2)
	first.Close()

	// A new clock at the same time: the first engine's timers stay pending on the old one.
	clock2 := sfnlocal.NewManualClock(clock.Now())
	opts.Clock = clock2
	second := sfnlocal.New(opts)
	defer second.Close()
	if err := second.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	waitForTimers(t, clock2, 2)
	clock2.Advance(60 * time.Second)
	done, err := second.Wait(ctx, rec.Arn)
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != sfnlocal.StatusSucceeded || *done.Output != `{"in":0,"a":1,"b":2}` {
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

// waitForTimers waits until at least n timers are pending on clock.
func waitForTimers(t *testing.T, clock *sfnlocal.ManualClock, n int) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		got, changed := clock.Waiters()
		if got >= n {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("%d timers pending, want %d", got, n)
		}
	}
}
