package metrics_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/transferflow/orchestrator/internal/metrics"
	"github.com/transferflow/orchestrator/internal/metrics/metricstest"
)

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 123e6, time.UTC)

func newEmitter(w *bytes.Buffer, namespace string) *metrics.Emitter {
	e := metrics.New(w, namespace)
	e.Now = func() time.Time { return t0 }
	return e
}

// rejected is the record the orchestrator writes for a rejected request: two metrics under different dimension
// sets, so two metric directives, and a property.
var rejected = metrics.Record{
	Dimensions: []metrics.Dimension{{"Service", "orchestrator"}, {"Route", "POST /transfers"}, {"Code", "VALIDATION_ERROR"}},
	Metrics: []metrics.Metric{
		{Name: "RequestLatency", Unit: metrics.Milliseconds, Value: 12.5, DimensionSets: [][]string{{"Service"}, {"Service", "Route"}}},
		{Name: "TransfersRejected", Unit: metrics.Count, Value: 1, DimensionSets: [][]string{{"Service"}, {"Service", "Code"}}},
	},
	Properties: []metrics.Property{{"transferId", "tr_aaaaaaaaaaaaaaaaaaaaaaaaaabbbbbbbbbbbbbbbb"}},
}

// TestExactLine pins the whole line: _aws.Timestamp in milliseconds, one directive per distinct list of dimension
// sets, member values at the root in the order dimensions, metrics, properties, requestId; one line, newline-ended.
func TestExactLine(t *testing.T) {
	var buf bytes.Buffer
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "7f0e5c2a-req"})
	if err := newEmitter(&buf, "TransferOrchestrator/prod").Emit(ctx, rejected); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/rejected.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != string(want) {
		t.Fatalf("line\n got %s\nwant %s", got, want)
	}
	l, err := metricstest.Parse(buf.Bytes())
	if err != nil {
		t.Fatalf("the line breaks the specification: %v", err)
	}
	if l.Timestamp != t0.UnixMilli() || l.Namespace != "TransferOrchestrator/prod" || l.Root["requestId"] != "7f0e5c2a-req" {
		t.Errorf("parsed %+v", l)
	}
	wantRejected := metricstest.Metric{Unit: "Count", Value: 1, DimensionSets: [][]string{{"Service"}, {"Service", "Code"}}}
	if got := l.Metrics["TransfersRejected"]; !reflect.DeepEqual(got, wantRejected) {
		t.Errorf("TransfersRejected = %+v, want %+v", got, wantRejected)
	}
}

// TestAWSExample writes the example document of AWS's specification and compares it, as JSON values, with the one
// printed there (testdata/aws-example.json). The example's "StorageResolution": 60 is left out: Emit does not write
// it, and the specification makes 60 the default when it is absent.
func TestAWSExample(t *testing.T) {
	var buf bytes.Buffer
	e := metrics.New(&buf, "lambda-function-metrics")
	e.Now = func() time.Time { return time.UnixMilli(1574109732004) }
	err := e.Emit(context.Background(), metrics.Record{
		Dimensions: []metrics.Dimension{{"functionVersion", "$LATEST"}},
		Metrics:    []metrics.Metric{{Name: "time", Unit: metrics.Milliseconds, Value: 100, DimensionSets: [][]string{{"functionVersion"}}}},
		Properties: []metrics.Property{{"requestId", "989ffbf8-9ace-4817-a57c-e4dd734019ee"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("testdata/aws-example.json")
	if err != nil {
		t.Fatal(err)
	}
	var want, got map[string]any
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	for _, d := range want["_aws"].(map[string]any)["CloudWatchMetrics"].([]any) {
		for _, m := range d.(map[string]any)["Metrics"].([]any) {
			delete(m.(map[string]any), "StorageResolution")
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

func metricsNamed(n int, sets [][]string) []metrics.Metric {
	ms := make([]metrics.Metric, n)
	for i := range ms {
		ms[i] = metrics.Metric{Name: fmt.Sprintf("M%03d", i), Unit: metrics.Count, Value: float64(i), DimensionSets: sets}
	}
	return ms
}

func dimensionsNamed(n int) ([]metrics.Dimension, []string) {
	ds := make([]metrics.Dimension, n)
	names := make([]string, n)
	for i := range ds {
		names[i] = fmt.Sprintf("D%02d", i)
		ds[i] = metrics.Dimension{Name: names[i], Value: "v"}
	}
	return ds, names
}

// TestSpecificationLimits: a record at each limit is written and reads back as valid; one past it is ErrInvalid and
// nothing is written.
func TestSpecificationLimits(t *testing.T) {
	service := []metrics.Dimension{{"Service", "debit"}}
	bySvc := [][]string{{"Service"}}
	dims30, names30 := dimensionsNamed(30)
	dims31, names31 := dimensionsNamed(31)
	one := func(m metrics.Metric) []metrics.Metric {
		m.Name, m.DimensionSets = "LegsApplied", bySvc
		if m.Unit == "" {
			m.Unit = metrics.Count
		}
		return []metrics.Metric{m}
	}
	tests := []struct {
		name  string
		rec   metrics.Record
		valid bool
		msg   string
	}{
		{"100 metrics in a directive", metrics.Record{Dimensions: service, Metrics: metricsNamed(100, bySvc)}, true, ""},
		{"101 metrics in a directive", metrics.Record{Dimensions: service, Metrics: metricsNamed(101, bySvc)}, false, "more than 100 metrics"},
		{"101 metrics in two directives", metrics.Record{Dimensions: service,
			Metrics: append(metricsNamed(100, bySvc), metrics.Metric{Name: "Other", Value: 1, DimensionSets: [][]string{{}}})}, true, ""},
		{"30 dimensions in a set", metrics.Record{Dimensions: dims30, Metrics: metricsNamed(1, [][]string{names30})}, true, ""},
		{"31 dimensions in a set", metrics.Record{Dimensions: dims31, Metrics: metricsNamed(1, [][]string{names31})}, false, "31 keys, more than 30"},
		{"an empty dimension set", metrics.Record{Metrics: metricsNamed(1, [][]string{{}})}, true, ""},
		{"no dimension set", metrics.Record{Dimensions: service, Metrics: metricsNamed(1, nil)}, false, "has no dimension set"},
		{"a set naming a missing dimension", metrics.Record{Dimensions: service, Metrics: metricsNamed(1, [][]string{{"Service", "Leg"}})}, false, `names "Leg", which is not a dimension`},
		{"a set naming a dimension twice", metrics.Record{Dimensions: service, Metrics: metricsNamed(1, [][]string{{"Service", "Service"}})}, false, "twice"},
		{"NaN", metrics.Record{Dimensions: service, Metrics: one(metrics.Metric{Value: math.NaN()})}, false, "not a number"},
		{"infinity", metrics.Record{Dimensions: service, Metrics: one(metrics.Metric{Value: math.Inf(1)})}, false, "not a number"},
		{"a unit CloudWatch does not know", metrics.Record{Dimensions: service, Metrics: one(metrics.Metric{Value: 1, Unit: "Transfers"})}, false, "not a CloudWatch unit"},
		{"another CloudWatch unit", metrics.Record{Dimensions: service, Metrics: one(metrics.Metric{Value: 1, Unit: "Bytes/Second"})}, true, ""},
		{"an empty dimension value", metrics.Record{Dimensions: []metrics.Dimension{{"Service", ""}}, Metrics: one(metrics.Metric{Value: 1})}, false, "must be 1 to 1024"},
		{"a blank dimension value", metrics.Record{Dimensions: []metrics.Dimension{{"Service", "  "}}, Metrics: one(metrics.Metric{Value: 1})}, false, "not all spaces"},
		{"a dimension value of 1024 characters", metrics.Record{Dimensions: []metrics.Dimension{{"Service", strings.Repeat("x", 1024)}}, Metrics: one(metrics.Metric{Value: 1})}, true, ""},
		{"a dimension value of 1025 characters", metrics.Record{Dimensions: []metrics.Dimension{{"Service", strings.Repeat("x", 1025)}}, Metrics: one(metrics.Metric{Value: 1})}, false, "must be 1 to 1024"},
		{"a dimension value with a newline", metrics.Record{Dimensions: []metrics.Dimension{{"Service", "a\nb"}}, Metrics: one(metrics.Metric{Value: 1})}, false, "printable ASCII"},
		{"a metric named as a dimension", metrics.Record{Dimensions: service, Metrics: []metrics.Metric{{Name: "Service", Value: 1, DimensionSets: bySvc}}}, false, `metric "Service" is the name of another root member`},
		{"a property named _aws", metrics.Record{Dimensions: service, Metrics: one(metrics.Metric{Value: 1}), Properties: []metrics.Property{{"_aws", "x"}}}, false, `property "_aws"`},
		{"no metrics", metrics.Record{Dimensions: service}, false, "no metrics"},
		{"a record over 256 KiB", metrics.Record{Dimensions: service, Metrics: one(metrics.Metric{Value: 1}),
			Properties: []metrics.Property{{"big", strings.Repeat("x", metrics.MaxRecordBytes)}}}, false, "more than 262144"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := newEmitter(&buf, "TransferOrchestrator").Emit(context.Background(), tt.rec)
			if tt.valid {
				if err != nil {
					t.Fatal(err)
				}
				if _, err := metricstest.Parse(buf.Bytes()); err != nil {
					t.Fatalf("written, but breaks the specification: %v\n%s", err, buf.String())
				}
				return
			}
			if !errors.Is(err, metrics.ErrInvalid) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %v, want ErrInvalid saying %q", err, tt.msg)
			}
			if buf.Len() != 0 {
				t.Errorf("an invalid record wrote %q", buf.String())
			}
		})
	}
}

func TestCheckNamespace(t *testing.T) {
	tests := []struct {
		ns string
		ok bool
	}{
		{"TransferOrchestrator", true},
		{"TransferOrchestrator/prod-eu", true},
		{strings.Repeat("n", 255), true},
		{strings.Repeat("n", 256), false},
		{"", false},
		{"AWS/Lambda", false},
		{":x", false},
		{"Transfer\tOrchestrator", false},
		{"Überweisung", false},
	}
	for _, tt := range tests {
		if err := metrics.CheckNamespace(tt.ns); (err == nil) != tt.ok {
			t.Errorf("CheckNamespace(%q) = %v, want ok=%v", tt.ns, err, tt.ok)
		}
	}
	var buf bytes.Buffer
	if err := newEmitter(&buf, "AWS/Lambda").Emit(context.Background(), rejected); !errors.Is(err, metrics.ErrInvalid) || buf.Len() != 0 {
		t.Errorf("Emit under a reserved namespace: %v, wrote %q", err, buf.String())
	}
}

// TestPropertiesAreEscaped: property values are any text; each comes back from the line as it was, invalid UTF-8
// replaced as encoding/json replaces it.
func TestPropertiesAreEscaped(t *testing.T) {
	values := []string{`quote " backslash \ slash /`, "tab\t newline\n cr\r nul\x00 unit-separator\x1f", "é ü 日本 🙂", "bad \xff utf-8", "<html>&amp;", "\u2028\u2029"}
	rec := metrics.Record{Dimensions: []metrics.Dimension{{"Service", "credit"}},
		Metrics: []metrics.Metric{{Name: "LegsApplied", Unit: metrics.Count, Value: 1, DimensionSets: [][]string{{"Service"}}}}}
	for i, v := range values {
		rec.Properties = append(rec.Properties, metrics.Property{Name: fmt.Sprintf("p%d", i), Value: v})
	}
	var buf bytes.Buffer
	if err := newEmitter(&buf, "TransferOrchestrator").Emit(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	l, err := metricstest.Parse(buf.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	for i, v := range values {
		want, _ := json.Marshal(v) // encoding/json's reading of v
		var w string
		_ = json.Unmarshal(want, &w)
		if got := l.Root[fmt.Sprintf("p%d", i)]; got != w {
			t.Errorf("p%d = %q, want %q", i, got, w)
		}
	}
}

// recordingWriter keeps each Write as it came and notes any Write that began while another was under way.
type recordingWriter struct {
	busy     atomic.Bool
	overlaps atomic.Int64
	mu       sync.Mutex
	writes   [][]byte
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	if !w.busy.CompareAndSwap(false, true) {
		w.overlaps.Add(1)
	}
	w.mu.Lock()
	w.writes = append(w.writes, bytes.Clone(p))
	w.mu.Unlock()
	w.busy.Store(false)
	return len(p), nil
}

// TestConcurrentEmitsWriteWholeLines: records emitted from many goroutines at once each arrive as one whole line in
// one Write, and no two Writes overlap.
func TestConcurrentEmitsWriteWholeLines(t *testing.T) {
	w := &recordingWriter{}
	e := metrics.New(w, "TransferOrchestrator")
	const goroutines, each = 8, 200
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				rec := metrics.Record{
					Dimensions: []metrics.Dimension{{"Service", "debit"}, {"Leg", "DEBIT"}},
					Metrics:    []metrics.Metric{{Name: "LegsApplied", Unit: metrics.Count, Value: 1, DimensionSets: [][]string{{"Service"}, {"Service", "Leg"}}}},
					Properties: []metrics.Property{{"transferId", fmt.Sprintf("g%d-%d", g, i)}},
				}
				if err := e.Emit(context.Background(), rec); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := w.overlaps.Load(); n != 0 {
		t.Errorf("%d writes overlapped", n)
	}
	if len(w.writes) != goroutines*each {
		t.Fatalf("%d writes, want %d", len(w.writes), goroutines*each)
	}
	seen := map[string]bool{}
	for _, p := range w.writes {
		if bytes.Count(p, []byte("\n")) != 1 || p[len(p)-1] != '\n' {
			t.Fatalf("a write is not one line: %q", p)
		}
		l, err := metricstest.Parse(p)
		if err != nil {
			t.Fatalf("%v: %s", err, p)
		}
		seen[l.Root["transferId"].(string)] = true
	}
	if len(seen) != goroutines*each {
		t.Errorf("%d distinct records, want %d", len(seen), goroutines*each)
	}
}

func TestNilEmitterDiscards(t *testing.T) {
	var e *metrics.Emitter
	if err := e.Emit(context.Background(), rejected); err != nil {
		t.Errorf("nil Emitter: %v", err)
	}
}

// TestWithoutLambdaContextNoRequestID: outside an invocation (the sweep's own goroutines, tests) no requestId is
// added, and a record may then carry its own.
func TestWithoutLambdaContextNoRequestID(t *testing.T) {
	var buf bytes.Buffer
	rec := rejected
	rec.Properties = []metrics.Property{{"requestId", "from-the-caller"}}
	if err := newEmitter(&buf, "TransferOrchestrator").Emit(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	l, err := metricstest.Parse(buf.Bytes())
	if err != nil || l.Root["requestId"] != "from-the-caller" {
		t.Errorf("requestId = %v (%v)", l.Root["requestId"], err)
	}
	buf.Reset()
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "r-1"})
	if err := newEmitter(&buf, "TransferOrchestrator").Emit(ctx, rec); !errors.Is(err, metrics.ErrInvalid) {
		t.Errorf("a record's own requestId inside an invocation: %v, want ErrInvalid", err)
	}
}
