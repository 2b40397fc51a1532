package lambdahost

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"sync"
	"time"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// Report is one invocation's platform report, as Lambda writes it to a function's log group in the JSON log format
// (a "platform.report" event: AWS Lambda developer guide, "Telemetry API Event schema reference"), with the
// function's name, since locally every function logs to one stream. It has no memory or init figures: an in-process
// handler has none of its own.
type Report struct {
	Time     string       `json:"time"`
	Type     string       `json:"type"` // "platform.report"
	Function string       `json:"function"`
	Record   ReportRecord `json:"record"`
}

// ReportRecord is a platform report's record.
type ReportRecord struct {
	RequestID string        `json:"requestId"`
	Metrics   ReportMetrics `json:"metrics"`
	// Status is success, error or timeout.
	Status string `json:"status"`
}

// ReportMetrics are a report's figures: the handler's duration and what Lambda bills for it (rounded up to a whole
// millisecond).
type ReportMetrics struct {
	DurationMs       float64 `json:"durationMs"`
	BilledDurationMs int64   `json:"billedDurationMs"`
}

// reportType is a platform report's type.
const reportType = "platform.report"

// reporter writes each invocation's report as one JSON line.
type reporter struct {
	mu sync.Mutex
	w  io.Writer
}

// ReportTo writes a platform report of every invocation to w, one JSON line each (nil: none, the default).
func (inv *Invoker) ReportTo(w io.Writer) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	if w == nil {
		inv.reports = nil
		return
	}
	inv.reports = &reporter{w: w}
}

func (inv *Invoker) reporter() *reporter {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	return inv.reports
}

// report writes the report of one invocation of function that took d and ended with err.
func (r *reporter) report(now time.Time, function, requestID string, d time.Duration, err error) {
	status := "success"
	var fe *sfnengine.FunctionError
	switch {
	case errors.As(err, &fe) && fe.Type == "Sandbox.Timedout":
		status = "timeout"
	case err != nil:
		status = "error"
	}
	line, _ := json.Marshal(Report{Time: now.UTC().Format(time.RFC3339Nano), Type: reportType, Function: function,
		Record: ReportRecord{RequestID: requestID, Status: status, Metrics: ReportMetrics{
			DurationMs:       math.Round(float64(d)/float64(time.Microsecond)) / 1000,
			BilledDurationMs: max(1, int64(math.Ceil(float64(d)/float64(time.Millisecond)))),
		}}})
	r.mu.Lock()
	defer r.mu.Unlock()
	_, _ = r.w.Write(append(line, '\n'))
}

// ParseReport reads a platform report line; ok is false for any other line.
func ParseReport(line []byte) (Report, bool) {
	var r Report
	if json.Unmarshal(line, &r) != nil || r.Type != reportType || r.Function == "" {
		return Report{}, false
	}
	return r, true
}
