// Package heaptrim gives back to the operating system the memory a burst of allocation left behind, once the burst
// is over.
//
// The Go runtime keeps the heap it grew: garbage is collected only when the heap reaches its goal (with Go's default
// GOGC=100, as the local stack runs, twice the live heap after the previous collection), and the
// background scavenger returns free pages only down to a little above that goal. After one large execution the
// process therefore keeps hundreds of megabytes it no longer uses until the next collection, which an idle process
// may not reach until the runtime's forced collection two minutes later. A Trimmer watches the heap and, when
// it has grown well past what it was after the previous trim and the process has gone quiet, collects and returns
// every free page (debug.FreeOSMemory). A busy process is left alone: a trim costs a full collection, and pages given
// back during a burst would be faulted in again at once.
package heaptrim

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Defaults of Options.
const (
	DefaultInterval = 5 * time.Second
	DefaultQuiet    = 32 << 20
	DefaultFloor    = 16 << 20
)

// Options configures a Trimmer. Zero values select the defaults.
type Options struct {
	// Quiet is the most the process may allocate between two checks and still count as quiet (default 32 MiB).
	Quiet uint64
	// Floor is the least growth of the held memory, since the previous trim, that is worth a trim; the growth must
	// also be at least half of what was held after that trim (default 16 MiB).
	Floor uint64
}

// Trimmer decides when to return memory to the operating system. It is not safe for concurrent use: one goroutine
// calls Check, or Run.
type Trimmer struct {
	opts    Options
	samples []metrics.Sample
	allocs  uint64 // bytes allocated since the start, at the previous check
	base    uint64 // memory held after the previous trim
	trims   int
}

// Metric names read by Held and Check.
const (
	metricTotal    = "/memory/classes/total:bytes"
	metricReleased = "/memory/classes/heap/released:bytes"
	metricAllocs   = "/gc/heap/allocs:bytes"
)

// New returns a Trimmer; its first Check counts as after a burst.
func New(opts Options) *Trimmer {
	if opts.Quiet == 0 {
		opts.Quiet = DefaultQuiet
	}
	if opts.Floor == 0 {
		opts.Floor = DefaultFloor
	}
	t := &Trimmer{opts: opts, samples: []metrics.Sample{{Name: metricTotal}, {Name: metricReleased}, {Name: metricAllocs}}}
	_, t.allocs = t.read()
	return t
}

// read returns the memory the runtime holds from the operating system (mapped and not released: what the Go side
// adds to the resident set) and the bytes allocated since the start.
func (t *Trimmer) read() (held, allocs uint64) {
	metrics.Read(t.samples)
	total, released := t.samples[0].Value.Uint64(), t.samples[1].Value.Uint64()
	return total - released, t.samples[2].Value.Uint64()
}

// Held returns the memory the Go runtime holds from the operating system: everything it mapped (heap, stacks, its
// own structures) less the heap pages it has released.
func Held() uint64 {
	s := []metrics.Sample{{Name: metricTotal}, {Name: metricReleased}}
	metrics.Read(s)
	return s[0].Value.Uint64() - s[1].Value.Uint64()
}

// Check trims when the held memory has grown since the previous trim by at least the larger of Floor and half of
// what was held after it, and the process allocated less than Quiet since the previous Check. It reports whether it
// trimmed.
func (t *Trimmer) Check() bool {
	held, allocs := t.read()
	quiet := allocs-t.allocs < t.opts.Quiet
	t.allocs = allocs
	if !quiet || held < t.base+max(t.base/2, t.opts.Floor) {
		return false
	}
	debug.FreeOSMemory()
	t.trims++
	t.base, t.allocs = t.read()
	return true
}

// Run calls Check every interval (DefaultInterval when it is not positive) until ctx is done.
func (t *Trimmer) Run(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = DefaultInterval
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			t.Check()
		}
	}
}
