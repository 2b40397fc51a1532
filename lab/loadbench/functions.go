package loadbench

import (
	"math"
	"sort"
	"strings"
	"time"

	"github.com/transferflow/orchestrator/localaws/samtemplate"
)

// placeholders resolves the template's references to placeholder strings: the bench reads only the functions'
// MemorySize, Architectures and Events, which hold none.
type placeholders struct{}

// Ref implements samtemplate.Resolver.
func (placeholders) Ref(id string) (string, error) { return id, nil }

// GetAtt implements samtemplate.Resolver.
func (placeholders) GetAtt(id, attr string) (string, error) { return id + "." + attr, nil }

// handlesPOSTTransfers reports whether f is the function behind POST /transfers.
func handlesPOSTTransfers(f samtemplate.Function) bool {
	for _, e := range f.Events {
		if e.Type == samtemplate.EventAPI && strings.EqualFold(e.Method, "post") && e.Path == "/transfers" {
			return true
		}
	}
	return false
}

// functionUses are the Lambda functions one transfer invokes: the API's function (once, its duration being the
// POST's latency at concurrency 1 as the client saw it, an upper bound) and the workflow's functions, with their
// durations from the execution histories of h. Functions a transfer does not invoke (the reconciler on a happy
// path) are left out.
func functionUses(fns []samtemplate.Function, h histories, postP50 time.Duration) []FunctionUse {
	var out []FunctionUse
	for _, f := range fns {
		arch := "x86_64"
		if len(f.Architectures) > 0 {
			arch = f.Architectures[0]
		}
		mem := f.MemorySize
		if mem == 0 {
			mem = 128
		}
		use := FunctionUse{Name: f.LogicalID, MemoryMB: mem, Architecture: arch}
		switch ds := h.durations[f.LogicalID]; {
		case handlesPOSTTransfers(f):
			use.InvocationsPerTransfer = 1
			use.MeanMs, use.BilledMs = millis(postP50), billedMs([]time.Duration{postP50})
			use.Source = "POST p50 at c=1, client-observed (an upper bound: includes the gateway)"
		case len(ds) > 0 && h.n > 0:
			use.InvocationsPerTransfer = float64(len(ds)) / float64(h.n)
			use.MeanMs, use.BilledMs = meanMs(ds), billedMs(ds)
			use.Source = "execution histories, TaskStarted to TaskSucceeded (ms), closed loop c=1"
		default:
			continue
		}
		out = append(out, use)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func meanMs(ds []time.Duration) float64 {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return millis(sum / time.Duration(len(ds)))
}

// billedMs is the mean of ds as Lambda bills them: each rounded up to a whole millisecond, at least 1 ms.
func billedMs(ds []time.Duration) float64 {
	var sum float64
	for _, d := range ds {
		sum += max(1, math.Ceil(float64(d)/float64(time.Millisecond)))
	}
	return sum / float64(len(ds))
}
