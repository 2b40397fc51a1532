package loadbench

import (
	"math"
	"slices"
	"sync"
	"time"
)

// Latency is a summary of durations in milliseconds: the count, the 50th and 99th percentiles (nearest rank) and
// the maximum.
type Latency struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50Ms"`
	P99 float64 `json:"p99Ms"`
	Max float64 `json:"maxMs"`
}

// Percentile returns the p-th percentile (0 < p <= 100) of sorted by the nearest-rank method: the smallest value
// such that at least p percent of the values are less than or equal to it. It returns 0 for no values.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// Summarize sorts ds in place and summarizes them.
func Summarize(ds []time.Duration) Latency {
	if len(ds) == 0 {
		return Latency{}
	}
	slices.Sort(ds)
	return Latency{N: len(ds), P50: millis(Percentile(ds, 50)), P99: millis(Percentile(ds, 99)), Max: millis(ds[len(ds)-1])}
}

// millis is d in milliseconds, to the microsecond.
func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// durations collects durations from concurrent goroutines.
type durations struct {
	mu sync.Mutex
	ds []time.Duration
}

func (r *durations) add(d time.Duration) {
	r.mu.Lock()
	r.ds = append(r.ds, d)
	r.mu.Unlock()
}

func (r *durations) summary() Latency {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Summarize(slices.Clone(r.ds))
}

// perSecond is n per elapsed, 0 for no time.
func perSecond(n int, elapsed time.Duration) float64 {
	if elapsed <= 0 {
		return 0
	}
	return float64(n) / elapsed.Seconds()
}
