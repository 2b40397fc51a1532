// Package clocktest is a settable clock for tests: its time moves only when a test advances it or the code under
// test sleeps on it, so that waits and timestamps are exact and instant. It is safe for concurrent use, since the
// code under test may read it from another goroutine.
package clocktest

import (
	"context"
	"sync"
	"time"
)

// Clock is a settable time source. The zero value starts at the zero time; New starts elsewhere.
type Clock struct {
	mu    sync.Mutex
	now   time.Time
	slept []time.Duration
}

// New returns a clock that reads start.
func New(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Sleep moves the clock by d at once and records d (Sleeps); it returns ctx's error, so that a cancelled context
// ends a wait as a real sleep would.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.slept = append(c.slept, d)
	c.now = c.now.Add(d)
	return ctx.Err()
}

// Sleeps returns the durations of every Sleep so far, in order.
func (c *Clock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.slept...)
}
