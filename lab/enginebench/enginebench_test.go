package enginebench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRun runs the comparison at a tiny scale (ENGINEBENCH_EXECUTIONS, default 20) and logs the table; it checks
// that both engines complete every execution with the same output, not how fast.
func TestRun(t *testing.T) {
	opts := Options{Executions: 20, Concurrency: 4}
	if s := os.Getenv("ENGINEBENCH_EXECUTIONS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("ENGINEBENCH_EXECUTIONS=%q: %v", s, err)
		}
		opts.Executions, opts.Concurrency = n, defaultConcurrency
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	res, err := Run(ctx, opts)
	if errors.Is(err, ErrNotInstalled) {
		t.Skipf("the Node side is not installed (run `make bench-engine-deps`): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 {
		t.Fatalf("got %d rows, want 2", len(res.Rows))
	}
	t.Logf("%d executions per definition per engine, %d in flight; Node %s, aws-local-stepfunctions %s",
		opts.Executions, opts.Concurrency, res.NodeVersion, res.NodePackageVersion)
	for _, r := range res.Rows {
		if r.GoPerSec <= 0 || r.NodePerSec <= 0 {
			t.Errorf("%s: no rate measured: %+v", r.Definition, r)
		}
		t.Log(fmt.Sprintf("%-36s Go %9.0f/s  Node %8.0f/s  ratio %5.1fx", r.Definition, r.GoPerSec, r.NodePerSec, r.Ratio))
	}
}

// TestRunWithoutNodeSide checks that Run installs nothing and says which command does.
func TestRunWithoutNodeSide(t *testing.T) {
	dir := t.TempDir()
	_, err := Run(context.Background(), Options{Executions: 1, NodeDir: dir})
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "npm --prefix "+dir+" install") {
		t.Fatalf("got %v, want ErrNotInstalled naming the npm command", err)
	}
}

// BenchmarkGo is the Go side of the comparison: executions of each definition, 16 in flight, on an engine set up
// as Run sets it up. Profile it with -cpuprofile or -memprofile.
func BenchmarkGo(b *testing.B) {
	root, err := moduleRoot()
	if err != nil {
		b.Fatal(err)
	}
	defs, err := definitions(root)
	if err != nil {
		b.Fatal(err)
	}
	for _, d := range defs {
		b.Run(d.machineName, func(b *testing.B) {
			ctx := context.Background()
			g, err := newGoEngine(ctx, d)
			if err != nil {
				b.Fatal(err)
			}
			defer g.close()
			b.ReportAllocs()
			b.ResetTimer()
			if _, err := g.run(ctx, b.N, defaultConcurrency); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "executions/s")
		})
	}
}
