package sfnengine

import (
	"slices"
	"sync"
	"time"
)

// Clock is the engine's source of time. Wait states, Retry back-off and timeouts use After; event timestamps and
// the context object use Now. Tests inject a ManualClock so nothing sleeps.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// SystemClock is the real wall clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// After returns time.After(d).
func (SystemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// ManualClock is a Clock that only moves when Advance is called, for tests.
type ManualClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []manualWaiter
	changed chan struct{}
}

// manualWaiter is a pending timer: After's channel, or AfterFunc's function.
type manualWaiter struct {
	at time.Time
	ch chan time.Time
	fn *func()
}

// afterFuncClock is a Clock that also runs a function once d has passed, with no goroutine waiting meanwhile;
// stop cancels it and reports whether it did. The engine uses it, when the Clock has it, for execution timeouts.
type afterFuncClock interface {
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// AfterFunc runs f in its own goroutine once d has passed (time.AfterFunc).
func (SystemClock) AfterFunc(d time.Duration, f func()) (stop func() bool) {
	return time.AfterFunc(d, f).Stop
}

// NewManualClock returns a ManualClock reading start.
func NewManualClock(start time.Time) *ManualClock {
	return &ManualClock{now: start, changed: make(chan struct{})}
}

// Now returns the clock's current time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After returns a channel that receives once the clock has been advanced by d.
func (c *ManualClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, manualWaiter{at: c.now.Add(d), ch: ch})
	close(c.changed)
	c.changed = make(chan struct{})
	return ch
}

// AfterFunc runs f once the clock has been advanced by d; the timer counts in Waiters until it fires or is stopped.
func (c *ManualClock) AfterFunc(d time.Duration, f func()) (stop func() bool) {
	fn := &f
	c.mu.Lock()
	c.waiters = append(c.waiters, manualWaiter{at: c.now.Add(d), fn: fn})
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
	if d <= 0 {
		c.Advance(0)
	}
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		i := slices.IndexFunc(c.waiters, func(w manualWaiter) bool { return w.fn == fn })
		if i < 0 {
			return false
		}
		c.waiters = slices.Delete(c.waiters, i, i+1)
		return true
	}
}

// Advance moves the clock forward by d and fires every timer that is due. AfterFunc functions run after the clock
// is unlocked, in the calling goroutine.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	kept := c.waiters[:0]
	var due []func()
	for _, w := range c.waiters {
		switch {
		case w.at.After(c.now):
			kept = append(kept, w)
		case w.fn != nil:
			due = append(due, *w.fn)
		default:
			w.ch <- c.now
		}
	}
	clear(c.waiters[len(kept):])
	c.waiters = kept
	c.mu.Unlock()
	for _, f := range due {
		f()
	}
}

// Waiters returns how many timers are pending, and a channel closed when that number next grows. Tests use it to
// advance the clock only once the engine is waiting.
func (c *ManualClock) Waiters() (int, <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters), c.changed
}

// AwaitWaiters returns once at least n timers are pending, or once timeout has passed in real time, with the number
// pending then. Tests use it to advance the clock only once the engine is waiting on it.
func (c *ManualClock) AwaitWaiters(n int, timeout time.Duration) int {
	deadline := time.After(timeout)
	for {
		got, grew := c.Waiters()
		if got >= n {
			return got
		}
		select {
		case <-grew:
		case <-deadline:
			got, _ = c.Waiters()
			return got
		}
	}
}

// MustAwaitWaiters is AwaitWaiters for a test: it waits up to 30 seconds for n pending timers and fails the test
// when fewer are pending then.
func (c *ManualClock) MustAwaitWaiters(t interface {
	Helper()
	Fatalf(format string, args ...any)
}, n int) {
	t.Helper()
	if got := c.AwaitWaiters(n, 30*time.Second); got < n {
		t.Fatalf("the engine has %d timers pending, want %d", got, n)
	}
}
