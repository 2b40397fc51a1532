package e2e

import (
	"strings"
	"syscall"
	"testing"

	"github.com/transferflow/orchestrator/internal/metrics/metricstest"
)

// TestMetricsGoToStderrWithTheFlag: with --metrics, one transfer's records (the orchestrator's, the debit's and the
// credit's) come out on stderr among the logs, each valid EMF under the template's namespace; without it there are
// none. Either way stdout carries the ready line and nothing else.
func TestMetricsGoToStderrWithTheFlag(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		args []string
		want map[string]string // service → the metric its records publish
	}{
		{"with --metrics", []string{"--metrics"}, map[string]string{"orchestrator": "TransfersAccepted", "debit": "LegsApplied", "credit": "LegsApplied"}},
		{"without", nil, map[string]string{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // each has its own stack
			s := startStack(t, tt.args...)
			id := s.submitAccepted("submit", "e2e-metrics", transferBody("acc-alice", "acc-bob", 100, "EUR"))
			s.waitCompleted("transfer", id)
			// The record settles inside the CREDIT's transaction, before its handler writes its metrics: the
			// execution's end (the task's result reached the workflow) says the handler has returned.
			s.waitExecutionEnd(id, settle)
			s.stop(syscall.SIGTERM) // every line the stack wrote is in the buffers once it has exited

			if out := s.stdout.String(); strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, "ready ") {
				t.Errorf("stdout = %q, want the ready line alone", out)
			}
			lines, err := metricstest.ParseAll([]byte(s.stderr.String()), true)
			if err != nil {
				t.Fatal(err)
			}
			// A service may publish more than one record for the transfer: a slow attempt that the workflow retried
			// (on a loaded machine) adds its error record next to the success's.
			got := map[string]map[string]bool{}
			for _, l := range lines {
				if l.Namespace != "TransferOrchestrator/local" {
					t.Errorf("namespace %q, want the template's TransferOrchestrator/${AWS::StackName}", l.Namespace)
				}
				if l.Root["transferId"] != id {
					continue
				}
				svc := l.Root["Service"].(string)
				for name := range l.Metrics {
					if name != "RequestLatency" {
						if got[svc] == nil {
							got[svc] = map[string]bool{}
						}
						got[svc][name] = true
					}
				}
				if l.Root["requestId"] == nil {
					t.Errorf("%v: no requestId", l.Root)
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("records by service = %v, want %v\n%s", got, tt.want, tail(s.stderr.String(), 4000))
			}
			for svc, metric := range tt.want {
				if !got[svc][metric] {
					t.Errorf("%s published %v, want %s among them\n%s", svc, got[svc], metric, tail(s.stderr.String(), 6000))
				}
			}
		})
	}
}
