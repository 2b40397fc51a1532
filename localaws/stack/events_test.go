package stack

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/transferflow/orchestrator/localaws/eventpattern"
	"github.com/transferflow/orchestrator/localaws/lambdahost"
	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// messages is a slog handler that hands every record's message to a channel.
type messages chan string

func (m messages) Enabled(context.Context, slog.Level) bool      { return true }
func (m messages) Handle(_ context.Context, r slog.Record) error { m <- r.Message; return nil }
func (m messages) WithAttrs([]slog.Attr) slog.Handler            { return m }
func (m messages) WithGroup(string) slog.Handler                 { return m }

// TestThrottledAsyncEventIsRetried: an event for a function at its concurrency cap is not dropped after Lambda's
// two retries: it is retried, as Lambda's async queue retries a throttle, until the function has room; and the
// retries of an event that stays throttled end when the stack stops.
func TestThrottledAsyncEventIsRetried(t *testing.T) {
	saved := asyncThrottle
	asyncThrottle.first, asyncThrottle.max = time.Millisecond, 4*time.Millisecond
	t.Cleanup(func() { asyncThrottle = saved })

	entered, release, got := make(chan string, 10), make(chan struct{}), make(chan string, 10)
	busy := func(ctx context.Context, in struct{ Hold bool }) error {
		if in.Hold {
			entered <- "held"
			<-release
		} else {
			got <- "event"
		}
		return nil
	}
	inv := lambdahost.New(Region, AccountID, func() string { return "id" }, slog.New(slog.DiscardHandler),
		lambdahost.Function{Name: "Busy", NewHandler: func() lambda.Handler { return lambda.NewHandler(busy) }, Timeout: time.Minute},
		lambdahost.Function{Name: "Disabled", NewHandler: func() lambda.Handler { return lambda.NewHandler(busy) }, Timeout: time.Minute})
	if err := inv.SetConcurrency(lambdahost.Concurrency{Account: 1, Reserved: map[string]int{"Disabled": 0}}); err != nil {
		t.Fatal(err)
	}
	logs := make(messages, 1000)
	s := &stack{invoker: inv, logger: slog.New(logs), stopping: make(chan struct{})}

	// Busy's only slot is taken, so the event is throttled until it is given back.
	held := make(chan error, 1)
	go func() { _, err := inv.Invoke(context.Background(), "Busy", []byte(`{"Hold":true}`)); held <- err }()
	<-entered
	delivered := make(chan struct{})
	go func() { s.invokeAsync("rule", "Busy", []byte(`{}`)); close(delivered) }()
	for range 5 { // more throttles than the two retries of a failed event
		if m := <-logs; m != "event delivery throttled; retrying" {
			t.Fatalf("log %q, want the throttle retried", m)
		}
	}
	close(release)
	<-delivered
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("the event reached the function %d times, want once", len(got))
	}
	for len(logs) > 0 {
		if m := <-logs; m != "event delivery throttled; retrying" {
			t.Errorf("log %q", m)
		}
	}

	// Disabled (reserved 0) never runs: its event is retried until the stack stops.
	stopped := make(chan struct{})
	go func() { s.invokeAsync("rule", "Disabled", []byte(`{}`)); close(stopped) }()
	<-logs
	close(s.stopping)
	<-stopped
}

// TestPublishesAgreesWithDelivery: the engine is told to build a status-change event exactly when a rule would
// deliver it: for the template's reconciler rule (status and state machine), only FAILED, TIMED_OUT and ABORTED
// executions of that state machine; a rule testing a field the probe lacks wants every event.
func TestPublishesAgreesWithDelivery(t *testing.T) {
	const sm, other = "arn:aws:states:us-east-1:000000000000:stateMachine:transfer", "arn:aws:states:us-east-1:000000000000:stateMachine:other"
	compile := func(p string) *eventpattern.Pattern {
		var m map[string]any
		if err := json.Unmarshal([]byte(p), &m); err != nil {
			t.Fatal(err)
		}
		c, err := eventpattern.Compile(m)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	reconciler := newRule("ExecutionEnded", "TimeoutReconciler", compile(`{"source":["aws.states"],"detail-type":["Step Functions Execution Status Change"],
		"detail":{"status":["FAILED","TIMED_OUT","ABORTED"],"stateMachineArn":["`+sm+`"]}}`))
	byError := newRule("ByError", "TimeoutReconciler", compile(`{"detail":{"error":[{"prefix":"States."}]}}`))
	full := func(machine, status string) []byte {
		b, _ := json.Marshal(map[string]any{"version": "0", "id": "1", "detail-type": sfnengine.StatusChangeDetailType, "source": "aws.states",
			"account": AccountID, "region": Region, "resources": []string{machine + ":e"}, "time": "2026-11-23T00:00:00Z",
			"detail": map[string]any{"executionArn": machine + ":e", "stateMachineArn": machine, "status": status, "input": "{}", "error": "States.Timeout"}})
		return b
	}
	for _, rules := range [][]rule{{reconciler}, {reconciler, byError}, nil} {
		s := &stack{rules: rules}
		wanted := 0
		for _, machine := range []string{sm, other} {
			for _, status := range []string{"RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED", "PENDING_REDRIVE"} {
				want := false
				for _, r := range rules {
					if ok, err := r.pattern.MatchJSON(full(machine, status)); err != nil || ok {
						want = true
					}
				}
				if got := s.publishes(machine, status); got != want {
					t.Errorf("rules %d: publishes(%s, %s) = %v, a rule delivers it: %v", len(rules), machine, status, got, want)
				}
				if want {
					wanted++
				}
			}
		}
		if len(rules) == 1 && wanted != 3 {
			t.Errorf("the reconciler rule wants %d of 12 events, want 3", wanted)
		}
	}
}

// TestEventsKeptFollowTheExecutionsKept: the log groups keep as many events as the stack keeps closed executions,
// 1,000 in memory and 10,000 with --data-dir by default, the bus's own default when executions are unbounded.
func TestEventsKeptFollowTheExecutionsKept(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want int
	}{
		{nil, DefaultHistoryMaxExecutionsInMemory},
		{[]string{"--data-dir", t.TempDir()}, DefaultHistoryMaxExecutions},
		{[]string{"--history-max-executions", "250"}, 250},
		{[]string{"--history-max-executions", "0"}, 0},
	} {
		c, err := ParseFlags(tt.args, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if got := eventsKept(c); got != tt.want {
			t.Errorf("%v: events kept %d, want %d", tt.args, got, tt.want)
		}
	}
}

// TestStatusChangeDropFault: --fault status-change:drop:times=N drops the next N status-change events before the
// rules (the functions never see them), then delivery resumes; without times every event is dropped; malformed
// specs are refused.
func TestStatusChangeDropFault(t *testing.T) {
	got := make(chan string, 10)
	recv := func(ctx context.Context, in struct{ N string }) error { got <- in.N; return nil }
	inv := lambdahost.New(Region, AccountID, func() string { return "id" }, slog.New(slog.DiscardHandler),
		lambdahost.Function{Name: "Reconciler", NewHandler: func() lambda.Handler { return lambda.NewHandler(recv) }, Timeout: time.Minute})
	p, err := eventpattern.Compile(map[string]any{"source": []any{"aws.states"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		spec      string
		delivered []string
	}{
		{"status-change:drop:times=2", []string{"3", "4"}},
		{"status-change:drop", nil},
	} {
		t.Run(tt.spec, func(t *testing.T) {
			c, err := ParseFlags([]string{"--fault", tt.spec}, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			s := &stack{invoker: inv, logger: slog.New(slog.DiscardHandler), stopping: make(chan struct{}),
				rules: []rule{newRule("rule", "Reconciler", p)}}
			s.drops.Store(int64(c.StatusChangeDrops))
			for _, n := range []string{"1", "2", "3", "4"} {
				s.deliver(context.Background(), []byte(`{"source":"aws.states","N":"`+n+`"}`))
			}
			s.wg.Wait()
			close(got)
			var seen []string
			for n := range got {
				seen = append(seen, n)
			}
			got = make(chan string, 10)
			slices.Sort(seen)
			if !slices.Equal(seen, tt.delivered) {
				t.Errorf("delivered %v, want %v", seen, tt.delivered)
			}
		})
	}
	for _, bad := range []string{"status-change:keep", "status-change:drop:times=0", "status-change:drop:n=2", "status-change:drop:times=2:x"} {
		if _, err := ParseFlags([]string{"--fault", bad}, io.Discard); err == nil {
			t.Errorf("--fault %s accepted", bad)
		}
	}
}
