package transfer

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/transferflow/orchestrator/internal/apigw"
	"github.com/transferflow/orchestrator/internal/ledger"
	"github.com/transferflow/orchestrator/internal/metrics"
)

// The functions' metrics, as docs/metrics.md lists them. template.yaml's alarms and dashboard name them, so they
// are a contract: a metric, dimension or value renamed here is an alarm that never fires.
const (
	MetricTransfersAccepted  = "TransfersAccepted"
	MetricTransfersReplayed  = "TransfersReplayed"
	MetricTransfersRejected  = "TransfersRejected"
	MetricRedrives           = "Redrives"
	MetricRequestLatency     = "RequestLatency"
	MetricLegsApplied        = "LegsApplied"
	MetricLegsReplayed       = "LegsReplayed"
	MetricLegErrors          = "LegErrors"
	MetricReconcilerRuns     = "ReconcilerRuns"
	MetricSettlements        = "Settlements"
	MetricHistoryCacheHits   = "HistoryCacheHits"
	MetricHistoryCacheMisses = "HistoryCacheMisses"
)

// Values of the Service dimension: which function wrote the record.
const (
	ServiceOrchestrator = "orchestrator"
	ServiceDebit        = "debit"
	ServiceCredit       = "credit"
	ServiceReconciler   = "timeout-reconciler"
)

// Values of the reconciler's Trigger dimension.
const (
	TriggerStatusChange = "status-change"
	TriggerSweep        = "sweep"
)

// RouteOther is the Route of a request to no route the API serves (404 and 405 answers).
const RouteOther = "other"

// codeNone is the Code of a settlement without a failure code (COMPLETED).
const codeNone = "NONE"

// Dimension sets: every metric under Service alone, breakdowns under Service and one more dimension.
var (
	byService      = [][]string{{"Service"}}
	byRoute        = [][]string{{"Service"}, {"Service", "Route"}}
	byCode         = [][]string{{"Service"}, {"Service", "Code"}}
	byLeg          = [][]string{{"Service"}, {"Service", "Leg"}}
	byErrorType    = [][]string{{"Service"}, {"Service", "ErrorType"}}
	byTrigger      = [][]string{{"Service"}, {"Service", "Trigger"}}
	bySettledState = [][]string{{"Service"}, {"Service", "Status", "Code"}}
)

// metricsEmitter writes one CloudWatch Embedded Metric Format record (*metrics.Emitter satisfies it).
type metricsEmitter interface {
	Emit(ctx context.Context, r metrics.Record) error
}

// emit writes r to m, when there is one. A record that cannot be written is logged and the invocation goes on: a
// transfer never fails for its metrics.
func emit(ctx context.Context, m metricsEmitter, logger *slog.Logger, r metrics.Record) {
	if m == nil {
		return
	}
	if err := m.Emit(ctx, r); err != nil {
		logger.WarnContext(ctx, "metrics record not written", "error", err.Error())
	}
}

func count(name string, sets [][]string) metrics.Metric {
	return metrics.Metric{Name: name, Unit: metrics.Count, Value: 1, DimensionSets: sets}
}

// outcome is what an API request did, for its metrics.
type outcome struct {
	// route is the route template the request matched ("POST /transfers"), RouteOther for none.
	route string
	// transferID is the transfer a submission accepted or replayed.
	transferID string
	accepted   bool
	replayed   bool
	redriven   bool
	// historyCache says where a history request found its page: historyCacheHit, historyCacheMiss (Step Functions
	// was asked) or "" (it did not get that far).
	historyCache string
}

const (
	historyCacheHit  = "hit"
	historyCacheMiss = "miss"
)

// requestRecord is the one record of an API request: its latency by route, and whether it accepted a transfer,
// replayed one (and re-drove its workflow), or was rejected, by the problem's code.
func requestRecord(r apigw.Response, resp events.APIGatewayProxyResponse, oc outcome, latency time.Duration) metrics.Record {
	route := oc.route
	if route == "" {
		route = RouteOther
	}
	rec := metrics.Record{
		Dimensions: []metrics.Dimension{{Name: "Service", Value: ServiceOrchestrator}, {Name: "Route", Value: route}},
		Metrics: []metrics.Metric{{Name: MetricRequestLatency, Unit: metrics.Milliseconds,
			Value: float64(latency.Microseconds()) / 1000, DimensionSets: byRoute}},
		Properties: []metrics.Property{{Name: "statusCode", Value: strconv.Itoa(resp.StatusCode)}},
	}
	switch {
	case resp.StatusCode >= 400:
		code := "INTERNAL_ERROR" // apigw.Encode's answer when a body cannot be encoded
		if p, ok := r.Body.(*apigw.Problem); ok && p.Status == resp.StatusCode {
			code = p.Code
		}
		rec.Dimensions = append(rec.Dimensions, metrics.Dimension{Name: "Code", Value: code})
		rec.Metrics = append(rec.Metrics, count(MetricTransfersRejected, byCode))
	case oc.accepted:
		rec.Metrics = append(rec.Metrics, count(MetricTransfersAccepted, byService))
	case oc.replayed:
		rec.Metrics = append(rec.Metrics, count(MetricTransfersReplayed, byService))
		if oc.redriven {
			rec.Metrics = append(rec.Metrics, count(MetricRedrives, byService))
		}
	}
	switch oc.historyCache {
	case historyCacheHit:
		rec.Metrics = append(rec.Metrics, count(MetricHistoryCacheHits, byService))
	case historyCacheMiss:
		rec.Metrics = append(rec.Metrics, count(MetricHistoryCacheMisses, byService))
	}
	if oc.transferID != "" {
		rec.Properties = append(rec.Properties, metrics.Property{Name: "transferId", Value: oc.transferID})
	}
	return rec
}

// legRecord is the record of one leg invocation: LegsApplied or LegsReplayed by leg, or LegErrors by the workflow
// error type returned. The leg and transfer id are written only once the input is known to be well formed.
func legRecord(service string, in LegInput, replayed bool, err error) metrics.Record {
	rec := metrics.Record{Dimensions: []metrics.Dimension{{Name: "Service", Value: service}}}
	var invalid *InvalidLegInput
	if !errors.As(err, &invalid) {
		rec.Dimensions = append(rec.Dimensions, metrics.Dimension{Name: "Leg", Value: in.Leg})
		rec.Properties = []metrics.Property{{Name: "transferId", Value: in.TransferID}}
	}
	switch {
	case err != nil:
		rec.Dimensions = append(rec.Dimensions, metrics.Dimension{Name: "ErrorType", Value: errorType(err)})
		rec.Metrics = []metrics.Metric{count(MetricLegErrors, byErrorType)}
	case replayed:
		rec.Metrics = []metrics.Metric{count(MetricLegsReplayed, byLeg)}
	default:
		rec.Metrics = []metrics.Metric{count(MetricLegsApplied, byLeg)}
	}
	return rec
}

// errorType is the name Lambda reports for err, and so the name Step Functions matches: the Go type's name, without
// the pointer.
func errorType(err error) string {
	t := reflect.TypeOf(err)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Name() == "" {
		return "error"
	}
	return t.Name()
}

// runRecord counts one reconciler invocation by what triggered it.
func runRecord(trigger string) metrics.Record {
	return metrics.Record{
		Dimensions: []metrics.Dimension{{Name: "Service", Value: ServiceReconciler}, {Name: "Trigger", Value: trigger}},
		Metrics:    []metrics.Metric{count(MetricReconcilerRuns, byTrigger)},
	}
}

// settlementRecord counts one transfer the reconciler settled, by the status and failure code it settled with.
func settlementRecord(transferID, status, code, trigger string) metrics.Record {
	if code == "" {
		code = codeNone
	}
	return metrics.Record{
		Dimensions: []metrics.Dimension{{Name: "Service", Value: ServiceReconciler}, {Name: "Status", Value: status}, {Name: "Code", Value: code}},
		Metrics:    []metrics.Metric{count(MetricSettlements, bySettledState)},
		Properties: []metrics.Property{{Name: "transferId", Value: transferID}, {Name: "trigger", Value: trigger}},
	}
}

// redriveRecord counts one workflow the sweep started again.
func redriveRecord(rec ledger.Transfer) metrics.Record {
	return metrics.Record{
		Dimensions: []metrics.Dimension{{Name: "Service", Value: ServiceReconciler}},
		Metrics:    []metrics.Metric{count(MetricRedrives, byService)},
		Properties: []metrics.Property{{Name: "transferId", Value: rec.TransferID}},
	}
}
