package e2e

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/transferflow/orchestrator/internal/ledger"
	"github.com/transferflow/orchestrator/lab/chaos"
	"github.com/transferflow/orchestrator/localaws/ddbserver"
)

// TestChaosQuick is `make chaos-quick`, part of `make test` (docs/reliability.md): the chaos campaign at a small
// scale, 300 transfers and 2 kill -9s, every fault kind on in one of its three epochs, against the stack built by
// TestMain. The seed is random unless CHAOS_SEED is set; it is logged, and a failure names it, so that
// `CHAOS_SEED=… make chaos-quick` replays the run's schedule.
//
// It is the suite's longest test (about 40 s, most of it spent waiting out the timeouts its faults provoke), so the
// campaign starts in the test's serial part, before t.Parallel: a parallel test waits for a free -parallel slot, and
// queued behind the others the campaign would end the suite 10 s later. The test then waits for it in parallel.
func TestChaosQuick(t *testing.T) {
	if _, err := ddbserver.BinaryPath(); errors.Is(err, ddbserver.ErrBinaryNotFound) && os.Getenv("CI") == "" {
		t.Skipf("chaos campaign skipped: %v; `make test` installs Dynoxide", err)
	}
	cfg, err := chaos.LoadConfig(func(k string) string {
		switch k {
		case "CHAOS_TRANSFERS":
			return "300"
		case "CHAOS_KILLS":
			return "2"
		case "CHAOS_CLIENTS":
			return "48"
		case "CHAOS_QUIESCE":
			return "4m"
		}
		return os.Getenv(k)
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg.LocalBin, cfg.Dir = binary, root
	var progress strings.Builder
	cfg.Progress = &progress
	t.Logf("chaos seed %d", cfg.Seed)
	type result struct {
		s   chaos.Summary
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := chaos.Run(context.Background(), cfg)
		done <- result{s, err}
	}()
	t.Parallel()
	r := <-done
	s, err := r.s, r.err
	if err != nil {
		t.Fatalf("campaign (seed %d): %v\n%s", cfg.Seed, err, progress.String())
	}
	var out strings.Builder
	s.Write(&out)
	t.Log("\n" + progress.String() + out.String())
	if s.Kills != 2 {
		t.Errorf("%d kills, want 2", s.Kills)
	}
	for _, k := range chaos.FaultKinds {
		if s.Faults[k] == 0 {
			t.Errorf("fault %s never on", k)
		}
	}
	if s.Accepted == 0 || s.Executions == 0 {
		t.Errorf("%d keys accepted, %d executions: the campaign did not run", s.Accepted, s.Executions)
	}
	// Most planned transfers can complete: a campaign whose transfers all fail (say, out of accounts its clients do
	// not own) would check the invariants of nothing.
	if completed := s.Outcomes[ledger.StatusCompleted]; completed < s.Accepted/4 {
		t.Errorf("%d transfers COMPLETED of %d accepted (%v): the campaign moved next to no money", completed, s.Accepted, s.Outcomes)
	}
	if len(s.Violations) > 0 {
		t.Fatalf("%d violations; replay with CHAOS_SEED=%s make chaos-quick:\n%s", len(s.Violations),
			strconv.FormatUint(cfg.Seed, 10), out.String())
	}
}
