package localstack

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/transferflow/orchestrator/internal/lambdalocal"
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
	inv := lambdalocal.New(Region, AccountID, func() string { return "id" }, slog.New(slog.DiscardHandler),
		lambdalocal.Function{Name: "Busy", NewHandler: func() lambda.Handler { return lambda.NewHandler(busy) }, Timeout: time.Minute},
		lambdalocal.Function{Name: "Disabled", NewHandler: func() lambda.Handler { return lambda.NewHandler(busy) }, Timeout: time.Minute})
	if err := inv.SetConcurrency(lambdalocal.Concurrency{Account: 1, Reserved: map[string]int{"Disabled": 0}}); err != nil {
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
