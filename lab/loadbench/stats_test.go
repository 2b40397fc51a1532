package loadbench

import (
	"math/rand/v2"
	"testing"
	"time"
)

func ms(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }

func TestPercentile(t *testing.T) {
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = ms(float64(i + 1))
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{name: "none", sorted: nil, p: 50, want: 0},
		{name: "one value is every percentile", sorted: []time.Duration{ms(7)}, p: 99, want: ms(7)},
		{name: "p50 of 1..100 is 50", sorted: hundred, p: 50, want: ms(50)},
		{name: "p99 of 1..100 is 99", sorted: hundred, p: 99, want: ms(99)},
		{name: "p100 is the maximum", sorted: hundred, p: 100, want: ms(100)},
		{name: "nearest rank rounds up", sorted: []time.Duration{ms(1), ms(2), ms(3)}, p: 50, want: ms(2)},
		{name: "p99 of 10 values is the largest", sorted: hundred[:10], p: 99, want: ms(10)},
		{name: "a tiny p is the minimum", sorted: hundred, p: 0.001, want: ms(1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Percentile(tt.sorted, tt.p); got != tt.want {
				t.Errorf("Percentile(p%g) = %s, want %s", tt.p, got, tt.want)
			}
		})
	}
}

func TestSummarizeSorts(t *testing.T) {
	ds := make([]time.Duration, 1000)
	for i := range ds {
		ds[i] = time.Duration(i+1) * time.Microsecond * 10 // 0.01 ms … 10 ms
	}
	rand.Shuffle(len(ds), func(i, j int) { ds[i], ds[j] = ds[j], ds[i] })
	got := Summarize(ds)
	want := Latency{N: 1000, P50: 5, P99: 9.9, Max: 10}
	if got != want {
		t.Errorf("Summarize = %+v, want %+v", got, want)
	}
	if z := Summarize(nil); z != (Latency{}) {
		t.Errorf("Summarize(nil) = %+v", z)
	}
}

func TestPerSecond(t *testing.T) {
	if got := perSecond(50, 2*time.Second); got != 25 {
		t.Errorf("perSecond = %g", got)
	}
	if got := perSecond(5, 0); got != 0 {
		t.Errorf("perSecond without time = %g", got)
	}
}
