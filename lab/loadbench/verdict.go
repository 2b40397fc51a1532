package loadbench

import (
	"fmt"
	"strings"
)

// The performance targets.
const (
	TargetWorkflowRequests = 3.0   // DynamoDB requests per transfer in the workflow, at most
	TargetPOSTP99Ms        = 25.0  // POST p99 at half the peak offered load, below
	TargetRSSGrowthMB      = 100.0 // bin/local's RSS growth from 1,000 to 100,000 transfers, at most
	TargetEngineRatio      = 4.0   // engine executions/s over the npm engine's, at least
	// TargetRSSTransfers is how many transfers the RSS target is about.
	TargetRSSTransfers = 100_000
)

// Verdict statuses.
const (
	Pass = "PASS"
	Fail = "FAIL"
	Skip = "SKIP"
)

// RSS sample labels the verdict looks for.
const (
	labelStart     = "start"
	labelAfter1000 = "after 1,000 transfers"
	labelEnd       = "after the run"
)

func status(ok bool) string {
	if ok {
		return Pass
	}
	return Fail
}

// Verdicts judges r against the stack's performance targets.
func Verdicts(r Result) []Verdict {
	return []Verdict{
		failedVerdict(r),
		workflowVerdict(r),
		postVerdict(r),
		rssVerdict(r),
		engineVerdict(r),
	}
}

func failedVerdict(r Result) Verdict {
	v := Verdict{Name: "failed transfers", Target: "0 at every concurrency, in the burst and in the open loop"}
	bad, total := r.Burst.Bad()+r.Open.Bad()+r.Open.PeakBad, r.Burst.Transfers+r.Open.Transfers+r.Open.PeakTransfers
	for _, c := range r.Closed {
		bad += c.Bad()
		total += c.Transfers
	}
	if total == 0 {
		v.Status, v.Figure = Skip, "no transfers"
		return v
	}
	v.Figure = fmt.Sprintf("%s of %s", groupThousands(int64(bad)), groupThousands(int64(total)))
	v.Status = status(bad == 0)
	return v
}

func workflowVerdict(r Result) Verdict {
	v := Verdict{Name: "workflow DynamoDB requests", Target: fmt.Sprintf("≤ %g per transfer", TargetWorkflowRequests)}
	w := r.DynamoDB.Workflow
	if w.Samples == 0 {
		v.Status, v.Figure = Skip, "not measured"
		return v
	}
	v.Figure = fmt.Sprintf("%.2f per transfer", w.Requests)
	v.Status = status(w.Requests <= TargetWorkflowRequests+1e-9)
	return v
}

// peakCell is the many-accounts closed-loop cell with the highest completed/s.
func peakCell(cells []ClosedCell) (ClosedCell, bool) {
	var best ClosedCell
	found := false
	for _, c := range cells {
		if c.Pass == passMany && (!found || c.CompletedPerSec > best.CompletedPerSec) {
			best, found = c, true
		}
	}
	return best, found
}

func postVerdict(r Result) Verdict {
	v := Verdict{Name: "POST p99 at half the peak", Target: fmt.Sprintf("< %g ms", TargetPOSTP99Ms)}
	if r.Open.POST.N == 0 {
		v.Status, v.Figure = Skip, "not measured"
		return v
	}
	v.Figure = fmt.Sprintf("%.1f ms at %.0f/s", r.Open.POST.P99, r.Open.OfferedPerSec)
	v.Status = status(r.Open.POST.P99 < TargetPOSTP99Ms)
	return v
}

func rssVerdict(r Result) Verdict {
	v := Verdict{Name: "bin/local RSS growth", Target: fmt.Sprintf("≤ %g MB from 1,000 to %s transfers", TargetRSSGrowthMB, groupThousands(TargetRSSTransfers))}
	var from, to *RSSSample
	for i := range r.Memory {
		switch r.Memory[i].Label {
		case labelAfter1000:
			from = &r.Memory[i]
		case labelEnd:
			to = &r.Memory[i]
		}
	}
	if from == nil || to == nil || from.LocalMB == 0 || to.LocalMB == 0 {
		v.Status, v.Figure = Skip, "not measured"
		return v
	}
	growth := to.LocalMB - from.LocalMB
	v.Figure = fmt.Sprintf("%+.1f MB from %s to %s transfers", growth, groupThousands(from.Transfers), groupThousands(to.Transfers))
	if span := to.Transfers - from.Transfers; to.Transfers < TargetRSSTransfers && span > 0 {
		// A shorter run is judged on its growth projected linearly to the target's count.
		growth *= float64(TargetRSSTransfers-from.Transfers) / float64(span)
		v.Figure += fmt.Sprintf(", %+.0f MB projected linearly to %s", growth, groupThousands(TargetRSSTransfers))
	}
	v.Status = status(growth <= TargetRSSGrowthMB)
	return v
}

func engineVerdict(r Result) Verdict {
	v := Verdict{Name: "engine vs aws-local-stepfunctions", Target: fmt.Sprintf("≥ %g×", TargetEngineRatio)}
	if r.Engine == nil || len(r.Engine.Rows) == 0 {
		v.Status, v.Figure = Skip, "not measured"
		return v
	}
	worst := r.Engine.Rows[0]
	for _, row := range r.Engine.Rows[1:] {
		if row.Ratio < worst.Ratio {
			worst = row
		}
	}
	v.Figure = fmt.Sprintf("%.1f× (lowest, %s)", worst.Ratio, worst.Definition)
	v.Status = status(worst.Ratio >= TargetEngineRatio)
	return v
}

// VerdictLine renders the verdicts as the report's last line.
func VerdictLine(vs []Verdict) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprintf("%s %s %s (target %s)", v.Status, v.Name, v.Figure, v.Target)
	}
	return "verdicts: " + strings.Join(parts, " | ")
}
