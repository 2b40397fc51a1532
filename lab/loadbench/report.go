package loadbench

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// table is a plain-text table: each column as wide as its widest cell, numbers right-aligned. A row with a single
// cell is a heading that spans the table.
type table struct {
	rows [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// line adds a spanning line right under the previous row.
func (t *table) line(s string) { t.rows = append(t.rows, []string{s}) }

// heading adds a spanning line: blank before it unless it is the first.
func (t *table) heading(s string) {
	if len(t.rows) > 0 {
		t.rows = append(t.rows, []string{""})
	}
	t.rows = append(t.rows, []string{s})
}

// render writes the table. Column widths are computed over the rows between two headings, so each section lines up
// on its own.
func (t *table) render(w io.Writer) {
	start := 0
	for i := 0; i <= len(t.rows); i++ {
		if i < len(t.rows) && len(t.rows[i]) > 1 {
			continue
		}
		renderBlock(w, t.rows[start:i])
		if i < len(t.rows) {
			fmt.Fprintln(w, t.rows[i][0])
		}
		start = i + 1
	}
}

func renderBlock(w io.Writer, rows [][]string) {
	var widths []int
	numeric := map[int]bool{}
	for _, r := range rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
				numeric[i] = true
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range rows[min(1, len(rows)):] { // the first row is the header
		for i, c := range r {
			if c != "" && c != "-" && !isNumber(c) {
				numeric[i] = false
			}
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if numeric[i] && i > 0 {
				b.WriteString(pad + c)
			} else {
				b.WriteString(c + pad)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// isNumber reports whether s reads as a figure: digits with separators, signs, units and the like.
func isNumber(s string) bool {
	s = strings.TrimSuffix(strings.TrimSuffix(s, "×"), "%")
	s = strings.TrimPrefix(strings.TrimPrefix(s, "$"), "+")
	digits := false
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits = true
		case r != '.' && r != ',' && r != '-':
			return false
		}
	}
	return digits
}

func f0(x float64) string { return groupThousands(int64(x + 0.5)) }
func f1(x float64) string { return fmt.Sprintf("%.1f", x) }
func f2(x float64) string { return fmt.Sprintf("%.2f", x) }
func n0(n int) string     { return groupThousands(int64(n)) }

// Report writes r as the plain-text table, ending with the verdict line.
func Report(w io.Writer, r Result) {
	t := &table{}
	b := r.Build
	t.heading(fmt.Sprintf("transferflow bench: scale %s, %s, %d CPUs, %s, %s UTC, %.0f s",
		r.Scale.Name, b.OS, b.CPUs, b.GoVersion, r.StartedAt.UTC().Format("2006-01-02 15:04"), r.Seconds))
	t.heading(fmt.Sprintf("stack %s in %s (%s); store %s; DynamoDB %s", b.LocalBin, b.LocalDir, orDash(b.Git), b.Store, b.DynamoDB))

	t.heading("THROUGHPUT AND LATENCY  (closed loop: POST, poll GET until terminal; e2e = the transfer's completedAt - createdAt; ms)")
	t.add("run", "accounts", "c", "transfers", "completed/s", "failed", "POST p50", "p99", "max", "e2e p50", "p99", "polls/transfer")
	for _, c := range r.Closed {
		t.add("closed "+c.Pass, n0(c.Accounts), n0(c.Concurrency), n0(c.Transfers), f1(c.CompletedPerSec), n0(c.Bad()),
			f1(c.POST.P50), f1(c.POST.P99), f1(c.POST.Max), f1(c.EndToEnd.P50), f1(c.EndToEnd.P99), f1(c.PollsPerTransfer))
	}
	if bu := r.Burst; bu.Transfers > 0 {
		t.add("burst, no wait", n0(bu.Accounts), n0(bu.Clients), n0(bu.Transfers), f1(bu.CompletedPerSec), n0(bu.Bad()),
			f1(bu.POST.P50), f1(bu.POST.P99), f1(bu.POST.Max), f1(bu.EndToEnd.P50), f1(bu.EndToEnd.P99), "-")
	}
	if o := r.Open; o.Transfers > 0 {
		t.add(fmt.Sprintf("open %.0f/s (½ peak)", o.OfferedPerSec), "-", "-", n0(o.Transfers), f1(o.CompletedPerSec), n0(o.Bad()),
			f1(o.POST.P50), f1(o.POST.P99), f1(o.POST.Max), f1(o.EndToEnd.P50), f1(o.EndToEnd.P99), "-")
	}
	if bu := r.Burst; bu.Transfers > 0 {
		t.line(fmt.Sprintf("burst: %s transfers submitted in %.2f s, drained %.2f s after the first POST (its last updatedAt)",
			n0(bu.Transfers), bu.SubmitSeconds, bu.DrainSeconds))
	}
	if o := r.Open; o.Transfers > 0 {
		t.line(fmt.Sprintf("open loop: half the peak of %.0f/s (c=%d, measured again just before; %.0f/s in the closed loop), latencies from each request's scheduled time; POSTs in flight at most: %d",
			o.PeakPerSec, o.PeakConcurrency, o.ClosedLoopPeakPerSec, o.InFlightMax))
	}
	if hasCPU(r.Closed) || r.Open.PeakCPU != nil {
		t.heading(fmt.Sprintf("CPU PER TRANSFER  (closed loop; ms of user + system time per completed transfer, /proc/PID/stat; ceiling = %d CPUs ÷ total)", b.CPUs))
		t.add("run", "accounts", "c", "bin/local", "DynamoDB server", "load generator", "total", "cores busy", "ceiling/s", "completed/s")
		row := func(run, accounts string, c int, u *CPUShare, perSec float64) {
			t.add(run, accounts, n0(c), f2(u.LocalMs), f2(u.StoreMs), f2(u.GeneratorMs),
				f2(u.LocalMs+u.StoreMs+u.GeneratorMs), f2(u.Cores), f1(u.CeilingPerSec), f1(perSec))
		}
		for _, c := range r.Closed {
			if c.CPU != nil {
				row("closed "+c.Pass, n0(c.Accounts), c.Concurrency, c.CPU, c.CompletedPerSec)
			}
		}
		if o := r.Open; o.PeakCPU != nil {
			row("peak again (before the open loop)", "-", o.PeakConcurrency, o.PeakCPU, o.PeakPerSec)
		}
	}

	d := r.DynamoDB
	t.heading("DYNAMODB  (quiet stack: POST requests counted up to its answer, the workflow's after it; per unit)")
	t.add("unit", "samples", "requests", "WRU", "RRU", "by operation")
	for _, row := range []struct {
		name string
		p    Phase
	}{{"new POST", d.NewPOST}, {"replay", d.Replay}, {"workflow", d.Workflow}, {"transfer", d.Transfer}} {
		t.add(row.name, n0(row.p.Samples), f2(row.p.Requests), f2(row.p.WriteUnits), f2(row.p.ReadUnits), byOperation(row.p))
	}
	wf := r.Workflow
	t.line(fmt.Sprintf("workflow: %.2f transitions, %.2f Lambda invocations per transfer (%d execution histories); capacity: %s",
		wf.TransitionsPerTransfer, wf.LambdaInvocationsPerTransfer, wf.Samples, d.CapacitySource))

	if len(r.Store) > 0 {
		t.heading("STORE LIMIT  (a transfer's requests, new ids, straight to DynamoDB; and the clients' polls as GetItem; efficiency = stack transfers/s × (requests + polls)/transfer ÷ direct requests/s; request: one request's time, ms)")
		t.add("c", "direct requests/s", "direct transfers/s", "stack transfers/s", "efficiency", "request p50", "p99", "p99.9", "max", "store CPU/transfer", "errors")
		for _, s := range r.Store {
			cpu := "-"
			if s.StoreCPUMsPerTransfer > 0 {
				cpu = f2(s.StoreCPUMsPerTransfer) + " ms"
			}
			t.add(n0(s.Concurrency), f0(s.RequestsPerSec), f1(s.TransfersPerSec), f1(s.StackTransfersPerSec), f2(s.Efficiency),
				f1(s.Request.P50), f1(s.Request.P99), f1(s.RequestP999Ms), f1(s.Request.Max), cpu, errorList(s.Errors))
		}
	}

	if len(r.Memory) > 0 {
		t.heading("MEMORY  (VmRSS)")
		t.add("when", "transfers", "bin/local MB", "DynamoDB server MB")
		for _, m := range r.Memory {
			store := "-"
			if m.StoreMB > 0 {
				store = f1(m.StoreMB)
			}
			t.add(m.Label, groupThousands(m.Transfers), f1(m.LocalMB), store)
		}
	}

	if e := r.Engine; e != nil {
		t.heading(fmt.Sprintf("ENGINE  (executions/s; node %s, aws-local-stepfunctions %s)", e.NodeVersion, e.NodePackageVersion))
		t.add("definition", "go/s", "node/s", "ratio")
		for _, row := range e.Rows {
			t.add(row.Definition, f0(row.GoPerSec), f0(row.NodePerSec), f1(row.Ratio)+"×")
		}
	}

	c := r.Cost
	t.heading(fmt.Sprintf("COST OF %s TRANSFERS ON AWS  (%s list prices)", groupThousands(c.Transfers), c.Region))
	t.add("item", "per transfer", "unit", "price", "cost", "from")
	for _, l := range c.Lines {
		t.add(l.Item, fmt.Sprintf("%.4g", l.Quantity), l.Unit, l.Price, FormatCents(l.Cents), l.Source)
	}
	t.add("total", "", "", "", FormatCents(c.TotalCents), "")
	t.line(c.Formula)
	if fs := r.Workflow.Functions; len(fs) > 0 {
		t.heading("LAMBDA  (the functions a transfer invokes)")
		t.add("function", "invocations/transfer", "mean ms", "billed ms", "MB", "architecture", "duration from")
		for _, f := range fs {
			t.add(f.Name, f2(f.InvocationsPerTransfer), f2(f.MeanMs), f2(f.BilledMs), n0(f.MemoryMB), f.Architecture, f.Source)
		}
	}
	for i, n := range r.Notes {
		if i == 0 {
			t.heading("note: " + n)
		} else {
			t.line("note: " + n)
		}
	}
	t.heading(VerdictLine(r.Verdicts))
	t.render(w)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func byOperation(p Phase) string {
	var parts []string
	for _, op := range slices.Sorted(maps.Keys(p.ByOperation)) {
		parts = append(parts, fmt.Sprintf("%s %.2g", op, p.ByOperation[op]))
	}
	for _, typ := range slices.Sorted(maps.Keys(p.Errors)) {
		parts = append(parts, fmt.Sprintf("(%s %.2g)", typ, p.Errors[typ]))
	}
	if p.Estimated > 0 {
		parts = append(parts, fmt.Sprintf("[%.2g estimated]", p.Estimated))
	}
	if p.Unreported > 0 {
		parts = append(parts, fmt.Sprintf("[%.2g unreported]", p.Unreported))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

func errorList(errs map[string]int) string {
	if len(errs) == 0 {
		return "0"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(errs)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, errs[k]))
	}
	return strings.Join(parts, ", ")
}

// WriteJSON writes r, indented, to path (creating its folder).
func WriteJSON(path string, r Result) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write result: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write result: %w", err)
	}
	return nil
}

// hasCPU reports whether any cell measured its CPU.
func hasCPU(cells []ClosedCell) bool {
	for _, c := range cells {
		if c.CPU != nil {
			return true
		}
	}
	return false
}
