package ledger

import (
	"context"
	"math/rand/v2"
	"time"
)

// RetryPolicy is how ApplyLeg tries again a transaction that was cancelled by contention (TransactionConflict) or
// throttling: capped exponential backoff with full jitter (the wait after the n-th attempt is uniform in
// [0, min(Cap, Base×2^(n-1))]), for as long as the context's deadline leaves Reserve for one more attempt, or
// MaxAttempts attempts when the context has no deadline. The zero RetryPolicy is DefaultRetry.
type RetryPolicy struct {
	Base, Cap time.Duration
	// Reserve is the time a last attempt and the function's answer need before the deadline: ApplyLeg stops
	// retrying when a wait would end later than deadline - Reserve, and the workflow's Retry takes over.
	Reserve time.Duration
	// MaxAttempts bounds the attempts of a call whose context has no deadline; with one, the deadline does.
	MaxAttempts int
}

// DefaultRetry waits 10 ms, 20 ms, 40 ms … at most 1 s (each fully jittered), and keeps 1 s of a Lambda's time for
// the last attempt: a leg on a contended account takes longer instead of failing.
var DefaultRetry = RetryPolicy{Base: 10 * time.Millisecond, Cap: time.Second, Reserve: time.Second, MaxAttempts: 10}

// retrier is one ApplyLeg call's retry state.
type retrier struct {
	p        RetryPolicy
	deadline time.Time
	attempts int
}

func (p RetryPolicy) start(ctx context.Context) *retrier {
	if p == (RetryPolicy{}) {
		p = DefaultRetry // a Ledger not made by NewLedger
	}
	d, _ := ctx.Deadline()
	return &retrier{p: p, deadline: d, attempts: 1}
}

// wait sleeps before the next attempt and reports whether there is one: false once the deadline (or MaxAttempts,
// without a deadline) is reached, or ctx is done.
func (r *retrier) wait(ctx context.Context) bool {
	if r.deadline.IsZero() && r.attempts >= r.p.MaxAttempts {
		return false
	}
	d := r.p.backoff(r.attempts)
	if !r.deadline.IsZero() && time.Now().Add(d).After(r.deadline.Add(-r.p.Reserve)) {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
	}
	r.attempts++
	return true
}

// backoff is the wait after the n-th attempt (n >= 1): uniform in [0, min(Cap, Base×2^(n-1))].
func (p RetryPolicy) backoff(n int) time.Duration {
	ceiling := p.Cap
	if n-1 < 30 {
		if c := p.Base << (n - 1); c > 0 && c < ceiling {
			ceiling = c
		}
	}
	if ceiling <= 0 {
		return 0
	}
	return rand.N(ceiling + 1)
}
