package sfnengine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

const passDefinition = `{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`

// storeKinds are the stores the retention tests run with: closed executions live in the MemoryStore or on disk.
var storeKinds = []struct {
	name  string
	store func(t *testing.T) (sfnengine.Store, func() int)
}{
	{name: "memory", store: func(*testing.T) (sfnengine.Store, func() int) { return sfnengine.NewMemoryStore(), nil }},
	{name: "files", store: func(t *testing.T) (sfnengine.Store, func() int) {
		dir := t.TempDir()
		s := fileStore(t, dir)
		return s, func() int { return len(logFiles(t, dir)) }
	}},
}

// forEachStore runs test as a subtest for each kind of store, with the store, a function counting its log files (nil
// for the MemoryStore) and a manual clock at 2026-01-01.
func forEachStore(t *testing.T, test func(t *testing.T, store sfnengine.Store, files func() int, clock *sfnengine.ManualClock)) {
	for _, kind := range storeKinds {
		t.Run(kind.name, func(t *testing.T) {
			store, files := kind.store(t)
			test(t, store, files, sfnengine.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
		})
	}
}

// startNamed starts an execution called name of the state machine and waits for it to close.
func startNamed(t *testing.T, eng *sfnengine.Engine, smArn, name string) *sfnengine.ExecutionRecord {
	t.Helper()
	ctx := context.Background()
	rec, err := eng.StartExecution(ctx, sfnengine.StartInput{StateMachineArn: smArn, Name: name, Input: `{"n":"` + name + `"}`})
	if err != nil {
		t.Fatal(err)
	}
	if rec, err = waitHistory(ctx, eng, rec.Arn); err != nil {
		t.Fatal(err)
	}
	return rec
}

func listNames(t *testing.T, eng *sfnengine.Engine, smArn, status string) []string {
	t.Helper()
	recs, err := eng.ListExecutions(context.Background(), smArn, status)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range recs {
		names = append(names, r.Name)
	}
	return names
}

// TestHistoryRetention closes two executions half an hour apart with a retention of one hour. Once the first is
// older than that, every call answers for it as for an execution that never existed, its name can be used again,
// and the store no longer has it; the second is still served in full.
func TestHistoryRetention(t *testing.T) {
	forEachStore(t, func(t *testing.T, store sfnengine.Store, files func() int, clock *sfnengine.ManualClock) {
		ctx := context.Background()
		eng := newEngine(t, sfnengine.Options{Store: store, Clock: clock, HistoryRetention: time.Hour})
		sm, err := eng.CreateStateMachine(ctx, sfnengine.CreateInput{Name: "retained", Definition: passDefinition, RoleArn: testRoleArn})
		if err != nil {
			t.Fatal(err)
		}
		old := startNamed(t, eng, sm.Arn, "old")
		clock.Advance(30 * time.Minute)
		recent := startNamed(t, eng, sm.Arn, "recent")
		clock.Advance(30 * time.Minute)
		if got, err := eng.DescribeExecution(ctx, old.Arn); err != nil || got.Status != sfnengine.StatusSucceeded || len(got.History) != 4 {
			t.Fatalf("an execution exactly one hour old: %v, %v", got, err)
		}
		clock.Advance(time.Second)

		for name, call := range map[string]func() error{
			"DescribeExecution": func() error { _, err := eng.DescribeExecution(ctx, old.Arn); return err },
			"History":           func() error { _, err := eng.History(ctx, old.Arn); return err },
			"Wait":              func() error { _, err := eng.Wait(ctx, old.Arn); return err },
			"StopExecution":     func() error { _, err := eng.StopExecution(ctx, old.Arn, "", ""); return err },
		} {
			if err := call(); !errors.Is(err, sfnengine.ErrExecutionDoesNotExist) {
				t.Errorf("%s of an execution past retention: %v, want ErrExecutionDoesNotExist", name, err)
			}
		}
		if names := listNames(t, eng, sm.Arn, ""); len(names) != 1 || names[0] != "recent" {
			t.Errorf("ListExecutions = %v, want [recent]", names)
		}
		if files != nil && files() != 1 {
			t.Errorf("%d execution logs on disk, want 1", files())
		}
		got, err := eng.DescribeExecution(ctx, recent.Arn)
		if err != nil || got.Status != sfnengine.StatusSucceeded || *got.Output != `{"n":"recent"}` || len(got.History) != 4 {
			t.Fatalf("recent execution: %+v, %v", got, err)
		}
		again := startNamed(t, eng, sm.Arn, "old")
		if again.Status != sfnengine.StatusSucceeded || !again.StartDate.After(old.StartDate) {
			t.Errorf("the name of an execution past retention could not be used again: %+v", again)
		}
	})
}

// TestMaxClosedExecutions keeps the three newest of five closed executions, and restores them alone.
func TestMaxClosedExecutions(t *testing.T) {
	forEachStore(t, func(t *testing.T, store sfnengine.Store, files func() int, clock *sfnengine.ManualClock) {
		ctx := context.Background()
		opts := sfnengine.Options{Store: store, Clock: clock, MaxClosedExecutions: 3}
		eng := newEngine(t, opts)
		sm, err := eng.CreateStateMachine(ctx, sfnengine.CreateInput{Name: "capped", Definition: passDefinition, RoleArn: testRoleArn})
		if err != nil {
			t.Fatal(err)
		}
		var arns []string
		for _, name := range []string{"e1", "e2", "e3", "e4", "e5"} {
			arns = append(arns, startNamed(t, eng, sm.Arn, name).Arn)
			clock.Advance(time.Second)
		}
		if names := listNames(t, eng, sm.Arn, sfnengine.StatusSucceeded); len(names) != 3 || names[0] != "e5" || names[2] != "e3" {
			t.Errorf("ListExecutions = %v, want [e5 e4 e3]", names)
		}
		for i, arn := range arns {
			_, err := eng.DescribeExecution(ctx, arn)
			if gone := errors.Is(err, sfnengine.ErrExecutionDoesNotExist); gone != (i < 2) {
				t.Errorf("e%d: %v", i+1, err)
			}
		}
		if files != nil && files() != 3 {
			t.Errorf("%d execution logs on disk, want 3", files())
		}
		eng.Close()
		opts.MaxClosedExecutions = 2
		restarted := restoredEngine(t, opts)
		if names := listNames(t, restarted, sm.Arn, ""); len(names) != 2 || names[0] != "e5" || names[1] != "e4" {
			t.Errorf("ListExecutions after a restart with a cap of 2 = %v, want [e5 e4]", names)
		}
	})
}

// TestClosedExecutionsServedFromStore checks every read of closed executions, whose records the engine no longer
// holds, next to a running one: statuses, filters, histories and Wait.
func TestClosedExecutionsServedFromStore(t *testing.T) {
	forEachStore(t, func(t *testing.T, store sfnengine.Store, files func() int, clock *sfnengine.ManualClock) {
		ctx := context.Background()
		eng := newEngine(t, sfnengine.Options{Store: store, Clock: clock})
		sm, err := eng.CreateStateMachine(ctx, sfnengine.CreateInput{Name: "mixed", RoleArn: testRoleArn, Definition: `{"StartAt":"C","States":{
		  "C":{"Type":"Choice","Choices":[{"Variable":"$.n","StringEquals":"bad","Next":"F"},{"Variable":"$.n","StringEquals":"slow","Next":"W"}],"Default":"P"},
		  "W":{"Type":"Wait","Seconds":60,"Next":"P"},
		  "F":{"Type":"Fail","Error":"Bad","Cause":"bad input"},
		  "P":{"Type":"Pass","End":true}}}`})
		if err != nil {
			t.Fatal(err)
		}
		good := startNamed(t, eng, sm.Arn, "good")
		clock.Advance(time.Second)
		bad := startNamed(t, eng, sm.Arn, "bad")
		clock.Advance(time.Second)
		slow, err := eng.StartExecution(ctx, sfnengine.StartInput{StateMachineArn: sm.Arn, Name: "slow", Input: `{"n":"slow"}`})
		if err != nil {
			t.Fatal(err)
		}
		clock.MustAwaitWaiters(t, 1)
		for status, want := range map[string]string{"": "slow,bad,good", sfnengine.StatusSucceeded: "good",
			sfnengine.StatusFailed: "bad", sfnengine.StatusRunning: "slow"} {
			if got := strings.Join(listNames(t, eng, sm.Arn, status), ","); got != want {
				t.Errorf("ListExecutions(%q) = %s, want %s", status, got, want)
			}
		}
		got, err := eng.DescribeExecution(ctx, bad.Arn)
		if err != nil || got.Status != sfnengine.StatusFailed || *got.Error != "Bad" || *got.Cause != "bad input" ||
			got.Input != `{"n":"bad"}` || !got.StopDate.Equal(*bad.StopDate) || historyShape(got.History) != historyShape(bad.History) {
			t.Fatalf("failed execution read back as %+v, %v", got, err)
		}
		if _, err := eng.StartExecution(ctx, sfnengine.StartInput{StateMachineArn: sm.Arn, Name: "good", Input: `{"n":"good"}`}); !errors.Is(err, sfnengine.ErrExecutionAlreadyExists) {
			t.Errorf("starting a closed name again: %v", err)
		}
		if stop, err := eng.StopExecution(ctx, good.Arn, "X", ""); err != nil || !stop.Equal(*good.StopDate) {
			t.Errorf("stopping a closed execution: %v, %v", stop, err)
		}
		clock.Advance(time.Minute)
		done, err := waitHistory(ctx, eng, slow.Arn)
		if err != nil || done.Status != sfnengine.StatusSucceeded || len(done.History) != 8 {
			t.Fatalf("slow execution: %+v, %v", done, err)
		}
		again, err := waitHistory(ctx, eng, slow.Arn)
		if err != nil || historyShape(again.History) != historyShape(done.History) {
			t.Fatalf("Wait on a closed execution: %v\n%s", err, historyShape(again.History))
		}
	})
}
