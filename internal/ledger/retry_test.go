package ledger

import (
	"testing"
	"time"
)

// TestBackoffIsCappedFullJitter: the n-th wait is uniform in [0, min(Cap, Base×2^(n-1))]: never above that
// ceiling, and spread over it (not a fixed delay).
func TestBackoffIsCappedFullJitter(t *testing.T) {
	p := RetryPolicy{Base: 10 * time.Millisecond, Cap: time.Second}
	for n := 1; n <= 40; n++ {
		ceiling := p.Cap
		if n <= 7 {
			ceiling = p.Base << (n - 1)
		}
		var lowest, highest time.Duration = ceiling, 0
		for range 2000 {
			d := p.backoff(n)
			if d < 0 || d > ceiling {
				t.Fatalf("backoff(%d) = %v, outside [0, %v]", n, d, ceiling)
			}
			lowest, highest = min(lowest, d), max(highest, d)
		}
		if lowest > ceiling/4 || highest < ceiling*3/4 {
			t.Errorf("backoff(%d) spans [%v, %v] of [0, %v]: not fully jittered", n, lowest, highest, ceiling)
		}
	}
}
