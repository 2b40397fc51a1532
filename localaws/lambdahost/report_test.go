package lambdahost

import (
	"bufio"
	"bytes"
	"context"
	"testing"
)

// TestReports: with ReportTo, every invocation writes one platform report, named by function and request id, with
// its status (success, error, timeout) and a billed duration of at least a millisecond, rounded up; other lines are
// not reports; without ReportTo nothing is written.
func TestReports(t *testing.T) {
	inv := newInvoker()
	var buf bytes.Buffer
	inv.ReportTo(&buf)
	for _, mode := range []string{"", "typed", "slow"} {
		_, _ = inv.Invoke(context.Background(), "EchoFunction", []byte(`{"mode":"`+mode+`"}`))
	}
	var got []Report
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		r, ok := ParseReport(sc.Bytes())
		if !ok {
			t.Fatalf("not a report: %s", sc.Text())
		}
		got = append(got, r)
	}
	if len(got) != 3 {
		t.Fatalf("%d reports, want 3", len(got))
	}
	for i, want := range []string{"success", "error", "timeout"} {
		r := got[i]
		if r.Function != "EchoFunction" || r.Record.Status != want || r.Record.RequestID == "" || r.Type != "platform.report" ||
			r.Record.Metrics.BilledDurationMs < 1 || float64(r.Record.Metrics.BilledDurationMs) < r.Record.Metrics.DurationMs {
			t.Errorf("report %d: %+v, want status %s", i, r, want)
		}
	}
	if got[2].Record.Metrics.DurationMs < 200 {
		t.Errorf("timed-out invocation reported %.3f ms, want at least its 200 ms timeout", got[2].Record.Metrics.DurationMs)
	}
	if _, ok := ParseReport([]byte(`{"time":"t","level":"INFO","msg":"hello","function":"EchoFunction"}`)); ok {
		t.Error("a log line parsed as a report")
	}

	inv.ReportTo(nil)
	buf.Reset()
	_, _ = inv.Invoke(context.Background(), "EchoFunction", []byte(`{}`))
	if buf.Len() != 0 {
		t.Errorf("reports after ReportTo(nil): %s", buf.String())
	}
}
