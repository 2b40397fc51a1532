package loadbench

import "testing"

func TestComputeCost(t *testing.T) {
	c := ComputeCost(CostInputs{
		Transfers:              1_000_000,
		TransitionsPerTransfer: 3,
		Functions: []FunctionUse{
			{Name: "Orchestrator", InvocationsPerTransfer: 1, BilledMs: 10, MemoryMB: 256, Architecture: "arm64"},
			{Name: "Debit", InvocationsPerTransfer: 1, BilledMs: 20, MemoryMB: 512, Architecture: "arm64"},
			{Name: "Credit", InvocationsPerTransfer: 1, BilledMs: 100, MemoryMB: 1024},
		},
		WriteUnitsPerTransfer:  6,
		ReadUnitsPerTransfer:   2,
		APIRequestsPerTransfer: 1,
		EventsPerTransfer:      1,
	})
	// EventBridge: 1M outcome events × $1.00/1M = $1.00.
	// Transitions: 3M × $0.025/1,000 = $75. Lambda requests: 3M × $0.20/1M = $0.60.
	// arm64 GB-s: 1M × (0.010 × 0.25 + 0.020 × 0.5) = 12,500 GB-s × $0.0000133334 = $0.166… → 17 cents.
	// x86 GB-s: 1M × 0.1 × 1 = 100,000 GB-s × $0.0000166667 = $1.66667 → 167 cents.
	// WRU: 6M × $0.625/1M = $3.75. RRU: 2M × $0.125/1M = $0.25. REST: 1M × $3.50/1M = $3.50.
	want := map[string]int64{
		"Step Functions state transitions": 7500,
		"Lambda requests":                  60,
		"Lambda duration (arm64)":          17,
		"Lambda duration (x86_64)":         167,
		"DynamoDB write request units":     375,
		"DynamoDB read request units":      25,
		"API Gateway REST requests":        350,
		"EventBridge custom events":        100,
	}
	if len(c.Lines) != len(want) {
		t.Fatalf("%d lines, want %d: %+v", len(c.Lines), len(want), c.Lines)
	}
	var sum int64
	for _, l := range c.Lines {
		if l.Cents != want[l.Item] {
			t.Errorf("%s: %d cents, want %d (quantity %g)", l.Item, l.Cents, want[l.Item], l.Quantity)
		}
		sum += l.Cents
	}
	if c.TotalCents != sum || c.TotalCents != 8594 {
		t.Errorf("total %d cents, lines add up to %d, want 8594", c.TotalCents, sum)
	}
	if c.Region != "us-east-1" || c.Transfers != 1_000_000 || c.Formula == "" {
		t.Errorf("cost header = %+v", c)
	}
}

func TestComputeCostWithoutFunctionsHasNoDurationLine(t *testing.T) {
	c := ComputeCost(CostInputs{Transfers: 10})
	for _, l := range c.Lines {
		if l.Cents != 0 || l.Item == "Lambda duration (arm64)" || l.Item == "Lambda duration (x86_64)" {
			t.Errorf("line %+v", l)
		}
	}
}

func TestFormatCents(t *testing.T) {
	tests := []struct {
		cents int64
		want  string
	}{
		{0, "$0.00"}, {7, "$0.07"}, {7500, "$75.00"}, {123456, "$1,234.56"}, {100000000, "$1,000,000.00"}, {-250, "-$2.50"},
	}
	for _, tt := range tests {
		if got := FormatCents(tt.cents); got != tt.want {
			t.Errorf("FormatCents(%d) = %s, want %s", tt.cents, got, tt.want)
		}
	}
}
