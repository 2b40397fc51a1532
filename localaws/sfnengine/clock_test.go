package sfnengine_test

import (
	"context"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// TestManualClockAfterFunc checks that a function timer counts as a waiter, fires once when due and not when
// stopped, and may read the clock as it runs.
func TestManualClockAfterFunc(t *testing.T) {
	clock := sfnengine.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	fired := map[string]int{}
	clock.AfterFunc(time.Minute, func() { fired["due"]++; _ = clock.Now() })
	stop := clock.AfterFunc(time.Minute, func() { fired["stopped"]++ })
	if n, _ := clock.Waiters(); n != 2 {
		t.Fatalf("%d waiters, want 2", n)
	}
	if !stop() || stop() {
		t.Fatal("stop should report true once")
	}
	clock.Advance(59 * time.Second)
	if len(fired) != 0 {
		t.Fatalf("fired early: %v", fired)
	}
	clock.Advance(time.Second)
	clock.Advance(time.Hour)
	if fired["due"] != 1 || fired["stopped"] != 0 {
		t.Fatalf("fired %v, want due once", fired)
	}
	if n, _ := clock.Waiters(); n != 0 {
		t.Fatalf("%d waiters left", n)
	}
}

// TestTimeoutTimerLeavesWithExecution checks that a closed execution's timeout timer is stopped: nothing waits on
// the clock for an execution that is over (with the system clock, the timer would keep the execution reachable).
func TestTimeoutTimerLeavesWithExecution(t *testing.T) {
	clock := sfnengine.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	eng := newEngine(t, sfnengine.Options{Clock: clock})
	rec := run(t, eng, `{"StartAt":"P","TimeoutSeconds":60,"States":{"P":{"Type":"Pass","End":true}}}`, `{}`)
	if rec.Status != sfnengine.StatusSucceeded {
		t.Fatalf("status %s", rec.Status)
	}
	awaitExactlyWaiters(t, clock, 0) // the timeout's timer stops as the execution's goroutine ends
	timedOut := start(t, eng, `{"StartAt":"W","TimeoutSeconds":60,"States":{"W":{"Type":"Wait","Seconds":3600,"End":true}}}`, `{}`)
	clock.MustAwaitWaiters(t, 2)
	clock.Advance(time.Minute)
	got, err := waitHistory(context.Background(), eng, timedOut.Arn)
	if err != nil || got.Status != sfnengine.StatusTimedOut {
		t.Fatalf("execution past its TimeoutSeconds: %v, %v", got, err)
	}
}
