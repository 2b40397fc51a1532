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
// that our engine and the Node side complete every execution with the same output, not how fast. moto is the
// third column when its virtual environment is installed (make bench-engine-deps); its wrong answers are logged as
// such, not failed on.
func TestRun(t *testing.T) {
	opts := Options{Executions: 20, Concurrency: 4, Moto: true}
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
	t.Logf("%d executions per definition per engine, %d in flight; Node %s, aws-local-stepfunctions %s, moto %s",
		opts.Executions, opts.Concurrency, res.NodeVersion, res.NodePackageVersion, orNone(res.MotoVersion))
	for _, r := range res.Rows {
		if r.GoPerSec <= 0 || r.NodePerSec <= 0 || r.APIPerSec <= 0 {
			t.Errorf("%s: no rate measured: %+v", r.Definition, r)
		}
		t.Log(fmt.Sprintf("%-36s Go %9.0f/s  Node %8.0f/s  ratio %5.1fx", r.Definition, r.GoPerSec, r.NodePerSec, r.Ratio))
		moto := fmt.Sprintf("moto %8.0f/s  ratio %5.1fx", r.MotoPerSec, r.MotoRatio)
		if r.MotoNote != "" {
			moto = "moto " + r.MotoNote
		}
		t.Log(fmt.Sprintf("%-36s through the SDK client: Go %7.0f/s  %s", "", r.APIPerSec, moto))
	}
}

// orNone is s, or "(not run)" when it is empty.
func orNone(s string) string {
	if s == "" {
		return "(not run)"
	}
	return s
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

// TestMotoVerdictTimesOnlyRightAnswers: moto's time counts only for runs whose answer is our engine's; a different
// output or a failed execution leaves a note saying so, and no later run is counted.
func TestMotoVerdictTimesOnlyRightAnswers(t *testing.T) {
	const want = `{"n":3,"msg":"n=3"}`
	tests := []struct {
		name string
		out  string
		err  error
		secs float64
		note string
	}{
		{"right twice", `{"msg":"n=3","n":3.0}`, nil, 2, ""},
		{"other output", `{"n":3,"msg":"n=3.0"}`, nil, 0, `wrong: output {"n":3,"msg":"n=3.0"}, want ` + want},
		{"failed execution", "", &wrongAnswer{status: "FAILED", error: "States.Runtime", cause: "x"}, 0,
			"wrong: the execution ended FAILED States.Runtime x"},
		{"harness error", "", errors.New("connection refused"), 0, "failed: connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v motoVerdict
			v.judge(tt.out, tt.err, want, 1)
			v.judge(want, nil, want, 1)
			if v.secs != tt.secs || v.note != tt.note {
				t.Fatalf("secs %v, note %q; want %v, %q", v.secs, v.note, tt.secs, tt.note)
			}
		})
	}
}
