package loadbench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/transferflow/orchestrator/localaws/lambdahost"
	"github.com/transferflow/orchestrator/localaws/samtemplate"
)

// relayFunction is the function that publishes the outcome events from the table's stream (template.yaml).
const relayFunction = "OutcomeRelayFunction"

// stackReports reads a stack's stderr (with --metrics) as it is written: the platform report of each invocation of
// the outcome relay, and the relay's "outcome event published" log lines, one per event. The relay runs off the
// table's stream, outside any execution history, so this is where its invocations, durations and events are counted.
type stackReports struct {
	mu        sync.Mutex
	partial   []byte
	relay     []time.Duration // billed durations, one per invocation
	relayMean []float64       // measured durations, ms
	published int
}

// Write implements io.Writer, line by line.
func (s *stackReports) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.partial = append(s.partial, p...)
	for {
		i := bytes.IndexByte(s.partial, '\n')
		if i < 0 {
			break
		}
		s.line(s.partial[:i])
		s.partial = s.partial[i+1:]
	}
	return len(p), nil
}

func (s *stackReports) line(b []byte) {
	if r, ok := lambdahost.ParseReport(b); ok {
		if r.Function == relayFunction {
			s.relay = append(s.relay, time.Duration(r.Record.Metrics.BilledDurationMs)*time.Millisecond)
			s.relayMean = append(s.relayMean, r.Record.Metrics.DurationMs)
		}
		return
	}
	var l struct{ Msg, Function string }
	if bytes.Contains(b, []byte(`"outcome event published"`)) && json.Unmarshal(b, &l) == nil &&
		l.Msg == "outcome event published" && l.Function == relayFunction {
		s.published++
	}
}

// awaitPublished waits until the relay has published n events, or within has passed.
func (s *stackReports) awaitPublished(ctx context.Context, n int, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		s.mu.Lock()
		got := s.published
		s.mu.Unlock()
		if got >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the outcome relay published %d events in %s, want %d", got, within, n)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// relayUse is the relay's share of n transfers: its invocations per transfer and their mean durations, and the
// events it published per transfer.
func (s *stackReports) relayUse(n int, fns []samtemplate.Function) (FunctionUse, float64, bool) {
	memoryMB, arch := 128, "x86_64"
	for _, f := range fns {
		if f.LogicalID != relayFunction {
			continue
		}
		if f.MemorySize > 0 {
			memoryMB = f.MemorySize
		}
		if len(f.Architectures) > 0 {
			arch = f.Architectures[0]
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if n == 0 || len(s.relay) == 0 {
		return FunctionUse{}, 0, false
	}
	var billed, mean float64
	for i, d := range s.relay {
		billed += float64(d / time.Millisecond)
		mean += s.relayMean[i]
	}
	k := float64(len(s.relay))
	return FunctionUse{Name: relayFunction, InvocationsPerTransfer: k / float64(n), MeanMs: mean / k, BilledMs: billed / k,
		MemoryMB: memoryMB, Architecture: arch,
		Source: "platform reports of the local stack's stream mapping, quiet transfers (batches of up to 10 within 1 s)"}, float64(s.published) / float64(n), true
}
