package loadbench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/localaws/samtemplate"
)

// TestStackReportsCountTheRelay: the relay's platform reports and published-event lines are counted from a stack's
// stderr, however the writes split the lines; other functions' reports and other lines are not.
func TestStackReportsCountTheRelay(t *testing.T) {
	var s stackReports
	lines := []string{
		`{"time":"t","type":"platform.report","function":"OutcomeRelayFunction","record":{"requestId":"a","metrics":{"durationMs":1.2,"billedDurationMs":2},"status":"success"}}`,
		`{"time":"t","type":"platform.report","function":"CreditFunction","record":{"requestId":"b","metrics":{"durationMs":5,"billedDurationMs":5},"status":"success"}}`,
		`{"time":"t","level":"INFO","msg":"outcome event published","function":"OutcomeRelayFunction","transferId":"tr_1"}`,
		`{"time":"t","level":"INFO","msg":"outcome event published","function":"OutcomeRelayFunction","transferId":"tr_2"}`,
		`{"time":"t","level":"INFO","msg":"outcome event published","function":"SomethingElse"}`,
		`{"time":"t","type":"platform.report","function":"OutcomeRelayFunction","record":{"requestId":"c","metrics":{"durationMs":3.5,"billedDurationMs":4},"status":"success"}}`,
		`not json`,
	}
	var all string
	for _, l := range lines {
		all += l + "\n"
	}
	for i := 0; i < len(all); i += 7 { // arbitrary splits
		_, _ = fmt.Fprint(&s, all[i:min(i+7, len(all))])
	}
	if err := s.awaitPublished(context.Background(), 2, time.Second); err != nil {
		t.Fatal(err)
	}
	fns := []samtemplate.Function{{LogicalID: relayFunction, MemorySize: 256, Architectures: []string{"arm64"}}}
	use, events, ok := s.relayUse(2, fns)
	if !ok || use.InvocationsPerTransfer != 1 || use.BilledMs != 3 || use.MeanMs != 2.35 || use.MemoryMB != 256 ||
		use.Architecture != "arm64" || events != 1 {
		t.Errorf("relay use %+v, events %v, ok %v", use, events, ok)
	}
	if err := s.awaitPublished(context.Background(), 3, 100*time.Millisecond); err == nil {
		t.Error("awaitPublished(3) returned with 2 published")
	}
}
