package transfer

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/transferflow/orchestrator/internal/metrics/metricstest"
)

// lastLines returns the EMF lines written since the n seen so far, and moves n past them.
func lastLines(t *testing.T, b *metricstest.Buffer, seen *int) []metricstest.Line {
	t.Helper()
	lines := b.Lines(t)
	out := lines[*seen:]
	*seen = len(lines)
	return out
}

// wantCount checks that l publishes metric as a Count of 1 under dims, and names the transfer transferID ("" for
// none).
func wantCount(t *testing.T, l metricstest.Line, metric string, dims []map[string]string, transferID string) {
	t.Helper()
	m, ok := l.Metrics[metric]
	if !ok || m.Unit != "Count" || m.Value != 1 {
		t.Fatalf("%s = %+v (published %v), want a Count of 1 in %v", metric, m, ok, l.Root)
	}
	if got := l.Dimensions(metric); !reflect.DeepEqual(got, dims) {
		t.Errorf("%s dimensions = %v, want %v", metric, got, dims)
	}
	if got, _ := l.Root["transferId"].(string); got != transferID {
		t.Errorf("%s transferId = %q, want %q", metric, got, transferID)
	}
	if len(l.Metrics) != 1 {
		t.Errorf("the record publishes %d metrics, want only %s: %v", len(l.Metrics), metric, l.Metrics)
	}
}

func dims(service string, kv ...string) []map[string]string {
	second := map[string]string{"Service": service}
	for i := 0; i < len(kv); i += 2 {
		second[kv[i]] = kv[i+1]
	}
	return []map[string]string{{"Service": service}, second}
}

// TestLegMetrics invokes the debit and credit functions through the Lambda runtime's adapter on Dynoxide and checks
// the one record of each invocation: a leg applied, the same leg replayed, and legs refused with the workflow error
// type Step Functions sees.
func TestLegMetrics(t *testing.T) {
	e := newLedgerEnv(t)
	e.account(t, "src", "EUR", 1000)
	e.account(t, "dst", "EUR", 0)
	id := e.transfer(t, "src", "dst", 300, "EUR")
	seen := 0
	one := func() metricstest.Line {
		t.Helper()
		lines := lastLines(t, e.metrics, &seen)
		if len(lines) != 1 {
			t.Fatalf("%d records, want one per invocation", len(lines))
		}
		return lines[0]
	}

	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "debit-req-1"})
	if _, err := e.invoke(ctx, legInput(e.record(t, id), "DEBIT")); err != nil {
		t.Fatal(err)
	}
	l := one()
	wantCount(t, l, MetricLegsApplied, dims("debit", "Leg", "DEBIT"), id)
	if l.Root["requestId"] != "debit-req-1" || l.Namespace != "TransferOrchestrator/test" {
		t.Errorf("requestId %v, namespace %q", l.Root["requestId"], l.Namespace)
	}

	e.leg(t, id, "DEBIT")
	wantCount(t, one(), MetricLegsReplayed, dims("debit", "Leg", "DEBIT"), id)

	e.leg(t, id, "CREDIT")
	wantCount(t, one(), MetricLegsApplied, dims("credit", "Leg", "CREDIT"), id)

	failed := e.transfer(t, "src", "dst", 400, "EUR")
	e.leg(t, failed, "DEBIT")
	one()
	e.leg(t, failed, "REFUND")
	wantCount(t, one(), MetricLegsApplied, dims("credit", "Leg", "REFUND"), failed)

	overdraft := e.transfer(t, "src", "dst", 5000, "EUR")
	if _, err := e.invoke(context.Background(), legInput(e.record(t, overdraft), "DEBIT")); err == nil {
		t.Fatal("an overdraft was applied")
	}
	l = one()
	wantCount(t, l, MetricLegErrors, dims("debit", "ErrorType", "InsufficientFunds"), overdraft)
	if l.Root["Leg"] != "DEBIT" {
		t.Errorf("Leg = %v, want DEBIT as a property of the error", l.Root["Leg"])
	}

	// A CREDIT sent to the debit function is refused before its input is trusted: no leg or transfer id is written.
	in := legInput(e.record(t, id), "CREDIT")
	in.TransferID = "tr_" + strings.Repeat("x", 5000)
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.debit().Invoke(context.Background(), b); err == nil {
		t.Fatal("the debit function applied a CREDIT")
	}
	l = one()
	wantCount(t, l, MetricLegErrors, dims("debit", "ErrorType", "InvalidLegInput"), "")
	if _, ok := l.Root["Leg"]; ok {
		t.Errorf("an invalid input's leg was written: %v", l.Root["Leg"])
	}

	if raw := string(e.metrics.Bytes()); strings.Contains(strings.ToLower(raw), "balance") {
		t.Errorf("a record carries a balance: %s", raw)
	}
}

// TestReconcilerMetrics: each invocation counts a run by its trigger; each transfer settled counts a settlement by
// status and code; each workflow the sweep starts again counts a re-drive.
func TestReconcilerMetrics(t *testing.T) {
	e, r, x := newReconcilerEnv(t)
	e.account(t, "src", "EUR", 1000)
	e.account(t, "dst", "EUR", 0)
	seen := 0

	timedOut := e.transfer(t, "src", "dst", 100, "EUR")
	e.leg(t, timedOut, "DEBIT")
	completed := e.transfer(t, "src", "dst", 200, "EUR")
	e.leg(t, completed, "DEBIT")
	e.olderCredit(t, completed)    // the record stays IN_PROGRESS for the reconciler to settle
	lastLines(t, e.metrics, &seen) // the legs' own records

	for _, tt := range []struct {
		id, status, wantStatus, wantCode string
	}{
		{timedOut, "TIMED_OUT", "FAILED", CodeTimedOut},
		{completed, "FAILED", "COMPLETED", "NONE"},
	} {
		if err := r.Handle(context.Background(), x.statusEvent(t, e.record(t, tt.id), tt.status, reconcilerMachine)); err != nil {
			t.Fatal(err)
		}
		lines := lastLines(t, e.metrics, &seen)
		if len(lines) != 2 {
			t.Fatalf("%s: %d records, want a run and a settlement", tt.status, len(lines))
		}
		wantCount(t, lines[0], MetricReconcilerRuns, dims("timeout-reconciler", "Trigger", "status-change"), "")
		wantCount(t, lines[1], MetricSettlements, []map[string]string{{"Service": "timeout-reconciler"},
			{"Service": "timeout-reconciler", "Status": tt.wantStatus, "Code": tt.wantCode}}, tt.id)
		if lines[1].Root["trigger"] != "status-change" {
			t.Errorf("settlement trigger = %v", lines[1].Root["trigger"])
		}
	}

	// The same event again settles nothing: a run, and no settlement.
	if err := r.Handle(context.Background(), x.statusEvent(t, e.record(t, timedOut), "TIMED_OUT", reconcilerMachine)); err != nil {
		t.Fatal(err)
	}
	if lines := lastLines(t, e.metrics, &seen); len(lines) != 1 || lines[0].Metrics[MetricReconcilerRuns].Value != 1 {
		t.Fatalf("a repeated event: %d records, want its run only", len(lines))
	}

	// The sweep: one transfer whose workflow never started is re-driven, one whose workflow ended is settled.
	orphan := e.transfer(t, "src", "dst", 10, "EUR")
	ended := e.transfer(t, "src", "dst", 20, "EUR")
	e.leg(t, ended, "DEBIT")
	x.status[e.record(t, ended).ExecutionArn] = sfntypes.ExecutionStatusAborted
	lastLines(t, e.metrics, &seen)
	r.Now = func() time.Time { return ledgerT0.Add(5 * time.Minute) }
	if err := r.Handle(context.Background(), events.CloudWatchEvent{DetailType: DetailTypeScheduled}); err != nil {
		t.Fatal(err)
	}
	lines := lastLines(t, e.metrics, &seen)
	if len(lines) != 3 {
		t.Fatalf("sweep: %d records, want a run, a re-drive and a settlement", len(lines))
	}
	wantCount(t, lines[0], MetricReconcilerRuns, dims("timeout-reconciler", "Trigger", "sweep"), "")
	byID := map[string]metricstest.Line{}
	for _, l := range lines[1:] {
		byID[l.Root["transferId"].(string)] = l
	}
	wantCount(t, byID[orphan], MetricRedrives, []map[string]string{{"Service": "timeout-reconciler"}}, orphan)
	wantCount(t, byID[ended], MetricSettlements, []map[string]string{{"Service": "timeout-reconciler"},
		{"Service": "timeout-reconciler", "Status": "FAILED", "Code": CodeAborted}}, ended)
	if byID[ended].Root["trigger"] != "sweep" {
		t.Errorf("settlement trigger = %v", byID[ended].Root["trigger"])
	}
	if _, ok := x.started[orphan]; !ok {
		t.Error("the orphan was not re-driven")
	}

	// An event of another kind is not a run.
	if err := r.Handle(context.Background(), events.CloudWatchEvent{DetailType: "Something Else"}); err != nil {
		t.Fatal(err)
	}
	if lines := lastLines(t, e.metrics, &seen); len(lines) != 0 {
		t.Errorf("an ignored event wrote %d records", len(lines))
	}
}

// TestMetricsNamespaceFromEnv: every function reads METRICS_NAMESPACE, defaults it and refuses a namespace
// CloudWatch would refuse, naming the variable.
func TestMetricsNamespaceFromEnv(t *testing.T) {
	loaders := map[string]func(getenv func(string) string) (string, error){
		"orchestrator": func(getenv func(string) string) (string, error) {
			c, err := LoadConfig(getenv)
			return c.MetricsNamespace, err
		},
		"ledger": func(getenv func(string) string) (string, error) {
			c, err := LoadLedgerConfig(getenv)
			return c.MetricsNamespace, err
		},
		"reconciler": func(getenv func(string) string) (string, error) {
			c, err := LoadReconcilerConfig(getenv)
			return c.MetricsNamespace, err
		},
	}
	tests := []struct {
		name, value, want, wantErr string
	}{
		{"unset", "", "TransferOrchestrator", ""},
		{"the template's", "TransferOrchestrator/prod-eu", "TransferOrchestrator/prod-eu", ""},
		{"reserved", "AWS/Lambda", "", `METRICS_NAMESPACE: namespace "AWS/Lambda" is reserved`},
		{"too long", strings.Repeat("n", 256), "", "METRICS_NAMESPACE: namespace"},
	}
	for fn, load := range loaders {
		for _, tt := range tests {
			t.Run(fn+"/"+tt.name, func(t *testing.T) {
				env := map[string]string{"TABLE_NAME": "t", "STATE_MACHINE_ARN": reconcilerMachine, "EVENT_BUS_NAME": "bus", "METRICS_NAMESPACE": tt.value}
				got, err := load(func(k string) string { return env[k] })
				if tt.wantErr != "" {
					if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
						t.Fatalf("err = %v, want %q", err, tt.wantErr)
					}
					return
				}
				if err != nil || got != tt.want {
					t.Fatalf("namespace %q, %v; want %q", got, err, tt.want)
				}
			})
		}
	}
}
