package heaptrim_test

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/transferflow/orchestrator/localaws/internal/heaptrim"
)

// sink keeps the burst reachable until the burst is over.
var sink [][]byte

// burst allocates n bytes in 1 MiB blocks, keeps them alive together, then drops them.
func burst(n int) {
	for i := 0; i < n>>20; i++ {
		b := make([]byte, 1<<20)
		for j := 0; j < len(b); j += 4096 {
			b[j] = 1 // touch every page, as real data would
		}
		sink = append(sink, b)
	}
	sink = nil
}

// TestTrimAfterABurst runs the process as the local stack does (Go's default GOGC=100), allocates a 256 MiB burst, and checks
// that the Trimmer leaves a busy process alone, then gives the burst back once the process is quiet: the memory the
// runtime holds falls back within twice what it held before the burst. Without the trim it stays at the burst's size
// (the next collection is twice the burst's live heap away, and the scavenger keeps memory up to that goal).
func TestTrimAfterABurst(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	// A live heap of the local stack's order when idle (tens of megabytes); the runtime's own structures grow by a
	// few megabytes with a 256 MiB heap, which a test binary's 4 MiB would not absorb.
	ballast := make([]byte, 32<<20)
	for j := 0; j < len(ballast); j += 4096 {
		ballast[j] = 1
	}
	defer runtime.KeepAlive(ballast)
	tr := heaptrim.New(heaptrim.Options{})
	tr.Check()
	runtime.GC()
	tr.Check() // settle: the baseline is what is held after a trim of an idle process
	baseline := heaptrim.Held()

	burst(256 << 20)
	if tr.Check() {
		t.Fatal("trimmed while the process was allocating")
	}
	high := heaptrim.Held()
	if !tr.Check() {
		t.Fatalf("no trim once quiet: held %d MiB after the burst, %d MiB before", high>>20, baseline>>20)
	}
	after := heaptrim.Held()
	t.Logf("held: %d MiB before the burst, %d MiB after it, %d MiB after the trim", baseline>>20, high>>20, after>>20)
	if high < baseline+128<<20 {
		t.Fatalf("the burst did not raise the held memory (%d MiB → %d MiB): the test measures nothing", baseline>>20, high>>20)
	}
	if after > 2*baseline {
		t.Fatalf("held %d MiB after the trim, want at most twice the %d MiB before the burst", after>>20, baseline>>20)
	}
	if tr.Check() {
		t.Fatal("trimmed again with nothing to give back")
	}
}
