package loadbench

import (
	"strings"
	"testing"
)

// passing is a result that meets every target.
func passing() Result {
	return Result{
		Closed: []ClosedCell{
			{Pass: passMany, Concurrency: 1, Outcomes: Outcomes{Transfers: 10, Completed: 10}, CompletedPerSec: 50},
			{Pass: passMany, Concurrency: 32, Outcomes: Outcomes{Transfers: 10, Completed: 10}, CompletedPerSec: 400},
			{Pass: passHot, Concurrency: 32, Outcomes: Outcomes{Transfers: 10, Completed: 10}, CompletedPerSec: 900},
		},
		Burst:    Burst{Outcomes: Outcomes{Transfers: 20, Completed: 20}},
		Open:     OpenLoop{OfferedPerSec: 200, POST: Latency{N: 100, P99: 12.5}},
		DynamoDB: DynamoDBUse{Workflow: Phase{Samples: 3, Requests: 3}},
		Store:    []StoreCell{{Concurrency: 1, RequestsPerSec: 100, Efficiency: 0.1}, {Concurrency: 32, RequestsPerSec: 1000, Efficiency: 0.85}},
		Memory: []RSSSample{
			{Label: labelStart, LocalMB: 20}, {Label: labelAfter1000, Transfers: 1000, LocalMB: 100},
			{Label: labelEnd, Transfers: 101000, LocalMB: 150},
		},
		Engine: &EngineResult{Rows: []EngineRow{{Definition: "transfer", Ratio: 5}, {Definition: "ten", Ratio: 4.2}}},
	}
}

func TestVerdicts(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Result)
		index  int
		status string
		figure string
	}{
		{name: "no failures", index: 0, status: Pass, figure: "0 of 50"},
		{name: "a failed transfer in a cell", change: func(r *Result) { r.Closed[2].Failed = 1 }, index: 0, status: Fail, figure: "1 of 50"},
		{name: "a transfer left in progress in the burst", change: func(r *Result) { r.Burst.NotTerminal = 1 }, index: 0, status: Fail, figure: "1 of 50"},
		{name: "three workflow requests", index: 1, status: Pass, figure: "3.00 per transfer"},
		{name: "five workflow requests", change: func(r *Result) { r.DynamoDB.Workflow.Requests = 5 }, index: 1, status: Fail, figure: "5.00 per transfer"},
		{name: "POST p99", index: 2, status: Pass, figure: "12.5 ms at 200/s"},
		{name: "POST p99 too slow", change: func(r *Result) { r.Open.POST.P99 = 25 }, index: 2, status: Fail},
		{name: "RSS growth", index: 3, status: Pass, figure: "+50.0 MB from 1,000 to 101,000 transfers"},
		{name: "a short run is projected", change: func(r *Result) { r.Memory[2].Transfers = 3000 }, index: 3, status: Fail,
			figure: "+50.0 MB from 1,000 to 3,000 transfers, +2475 MB projected linearly to 100,000"},
		{name: "engine: the lowest ratio decides", index: 4, status: Pass, figure: "4.2× (lowest, ten)"},
		{name: "no engine", change: func(r *Result) { r.Engine = nil }, index: 4, status: Skip},
		{name: "open loop rejected", change: func(r *Result) { r.Open.Rejected = 7 }, index: 0, status: Fail},
		{name: "peak again failed", change: func(r *Result) { r.Open.PeakBad = 1 }, index: 0, status: Fail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := passing()
			if tt.change != nil {
				tt.change(&r)
			}
			v := Verdicts(r)[tt.index]
			if v.Status != tt.status || (tt.figure != "" && v.Figure != tt.figure) {
				t.Errorf("verdict %s = %s %q, want %s %q", v.Name, v.Status, v.Figure, tt.status, tt.figure)
			}
		})
	}
}

func TestVerdictLine(t *testing.T) {
	line := VerdictLine(Verdicts(passing()))
	if !strings.HasPrefix(line, "verdicts: PASS failed transfers 0 of 50 (target 0 at every concurrency, in the burst and in the open loop) | ") {
		t.Errorf("line = %s", line)
	}
	if strings.Count(line, "PASS") != 5 || strings.Contains(line, "\n") {
		t.Errorf("line = %s, want five PASS on one line", line)
	}
}
