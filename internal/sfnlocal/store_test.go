package sfnlocal_test

import (
	"context"
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
