package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/transferflow/orchestrator/internal/jsonstring"
)

// Unit is a CloudWatch metric unit.
type Unit string

// The units this project publishes; any other unit CloudWatch knows (Unit("Bytes/Second")) is accepted too.
const (
	Count        Unit = "Count"
	Milliseconds Unit = "Milliseconds"
	Seconds      Unit = "Seconds"
	None         Unit = "None"
)

// units are the values the EMF schema allows for a MetricDefinition's Unit: CloudWatch's standard units.
var units = map[Unit]bool{
	"Seconds": true, "Microseconds": true, "Milliseconds": true, "Bytes": true, "Kilobytes": true, "Megabytes": true,
	"Gigabytes": true, "Terabytes": true, "Bits": true, "Kilobits": true, "Megabits": true, "Gigabits": true,
	"Terabits": true, "Percent": true, "Count": true, "Bytes/Second": true, "Kilobytes/Second": true,
	"Megabytes/Second": true, "Gigabytes/Second": true, "Terabytes/Second": true, "Bits/Second": true,
	"Kilobits/Second": true, "Megabits/Second": true, "Gigabits/Second": true, "Terabits/Second": true,
	"Count/Second": true, "None": true,
}

// Limits of the specification and of CloudWatch that Emit enforces.
const (
	// MaxMetricsPerDirective is how many metrics one metric directive may name.
	MaxMetricsPerDirective = 100
	// MaxDimensionsPerSet is how many dimension keys one dimension set may hold.
	MaxDimensionsPerSet = 30
	// MaxRecordBytes bounds one record. CloudWatch Logs takes events of up to 1 MB today and took 256 KB before;
	// the smaller bound holds wherever the line is read.
	MaxRecordBytes = 256 << 10

	maxNameLen           = 255  // a namespace or metric name (CloudWatch's Metric)
	maxDimensionKeyLen   = 250  // a dimension key (the EMF schema's DimensionReference)
	maxDimensionValueLen = 1024 // a dimension value (the EMF specification's target members)
)

// ErrInvalid reports a record that breaks a rule of the specification; nothing was written.
var ErrInvalid = errors.New("metrics: invalid record")

// Dimension is a root member that dimension sets may name; its value becomes part of the metric's identity, so it
// must come from a small set of values (never an id).
type Dimension struct {
	Name  string
	Value string
}

// Property is a root member that is neither a metric nor a dimension: searchable in CloudWatch Logs Insights, free
// of CloudWatch cost, so the place for high-cardinality values such as ids.
type Property struct {
	Name  string
	Value string
}

// Metric is one value to publish.
type Metric struct {
	Name  string
	Unit  Unit // empty leaves it out: CloudWatch then assumes None
	Value float64
	// DimensionSets are the sets of dimension names the value is published under, each a separate CloudWatch metric
	// (an empty set publishes it without dimensions). Metrics with equal sets share one metric directive.
	DimensionSets [][]string
}

// Record is one EMF document: a log line with its metrics, their dimensions and other properties.
type Record struct {
	Dimensions []Dimension
	Metrics    []Metric
	Properties []Property
}

// Emitter writes records under one namespace to one writer. It is safe for concurrent use. A nil *Emitter discards
// every record.
type Emitter struct {
	w         io.Writer
	namespace string
	// Now stamps the records (time.Now from New); tests set it before the first Emit.
	Now func() time.Time

	mu  sync.Mutex
	buf []byte
}

// New returns an Emitter that writes records in namespace to w; on Lambda, w is os.Stdout. The namespace is checked
// by Emit (see CheckNamespace).
func New(w io.Writer, namespace string) *Emitter {
	return &Emitter{w: w, namespace: namespace, Now: time.Now}
}

// Emit writes r as one line with one Write call. When ctx carries a Lambda context, the record gets the invocation's
// requestId as a property, as the function's log lines do. A record that breaks the specification is an ErrInvalid
// error and is not written; ctx does not cancel a write.
func (e *Emitter) Emit(ctx context.Context, r Record) error {
	if e == nil {
		return nil
	}
	var requestID string
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		requestID = lc.AwsRequestID
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	b, err := appendRecord(e.buf[:0], e.namespace, e.Now(), r, requestID)
	if err != nil {
		return err
	}
	e.buf = b
	if _, err := e.w.Write(b); err != nil {
		return fmt.Errorf("metrics: write record: %w", err)
	}
	return nil
}

// CheckNamespace reports whether ns can be a CloudWatch namespace: 1 to 255 printable ASCII characters, not starting
// with a colon, and not in the AWS/ namespaces, which are reserved for AWS's own metrics.
func CheckNamespace(ns string) error {
	switch {
	case !printableASCII(ns, maxNameLen):
		return fmt.Errorf("namespace %q must be 1 to %d printable ASCII characters", ns, maxNameLen)
	case strings.HasPrefix(ns, ":"):
		return fmt.Errorf("namespace %q must not start with a colon", ns)
	case strings.HasPrefix(ns, "AWS/"):
		return fmt.Errorf("namespace %q is reserved for AWS (AWS/...)", ns)
	}
	return nil
}

// appendRecord appends r, stamped at ts, as one EMF line to b. The metric directives come first, inside _aws, then
// the dimensions, metrics and properties as root members, each group in the order given.
func appendRecord(b []byte, namespace string, ts time.Time, r Record, requestID string) ([]byte, error) {
	if err := CheckNamespace(namespace); err != nil {
		return b, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if err := r.check(requestID); err != nil {
		return b, err
	}
	b = append(b, `{"_aws":{"Timestamp":`...)
	b = strconv.AppendInt(b, ts.UnixMilli(), 10)
	b = append(b, `,"CloudWatchMetrics":[`...)
	first := true
	for i, m := range r.Metrics {
		if r.sharesEarlierDirective(i) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, `{"Namespace":`...)
		b = appendString(b, namespace)
		b = append(b, `,"Dimensions":[`...)
		for j, set := range m.DimensionSets {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, '[')
			for k, name := range set {
				if k > 0 {
					b = append(b, ',')
				}
				b = appendString(b, name)
			}
			b = append(b, ']')
		}
		b = append(b, `],"Metrics":[`...)
		n := 0
		for _, o := range r.Metrics[i:] {
			if !equalSets(o.DimensionSets, m.DimensionSets) {
				continue
			}
			if n++; n > MaxMetricsPerDirective {
				return b, fmt.Errorf("%w: more than %d metrics share the dimension sets %v", ErrInvalid, MaxMetricsPerDirective, m.DimensionSets)
			}
			if n > 1 {
				b = append(b, ',')
			}
			b = append(b, `{"Name":`...)
			b = appendString(b, o.Name)
			if o.Unit != "" {
				b = append(b, `,"Unit":`...)
				b = appendString(b, string(o.Unit))
			}
			b = append(b, '}')
		}
		b = append(b, "]}"...)
	}
	b = append(b, "]}"...)
	for _, d := range r.Dimensions {
		b = appendMember(b, d.Name)
		b = appendString(b, d.Value)
	}
	for _, m := range r.Metrics {
		b = appendMember(b, m.Name)
		b = strconv.AppendFloat(b, m.Value, 'g', -1, 64)
	}
	for _, p := range r.Properties {
		b = appendMember(b, p.Name)
		b = appendString(b, p.Value)
	}
	if requestID != "" {
		b = appendMember(b, "requestId")
		b = appendString(b, requestID)
	}
	b = append(b, "}\n"...)
	if len(b) > MaxRecordBytes {
		return b[:0], fmt.Errorf("%w: %d bytes, more than %d", ErrInvalid, len(b), MaxRecordBytes)
	}
	return b, nil
}

// check validates everything but the namespace and the directive sizes, which appendRecord checks as it goes.
func (r Record) check(requestID string) error {
	if len(r.Metrics) == 0 {
		return fmt.Errorf("%w: no metrics", ErrInvalid)
	}
	var names [16]string // root member names so far; a larger record spills to the heap
	seen := append(names[:0], "_aws")
	if requestID != "" {
		seen = append(seen, "requestId")
	}
	var err error
	for _, d := range r.Dimensions {
		if !printableASCII(d.Name, maxDimensionKeyLen) {
			return fmt.Errorf("%w: dimension name %q must be 1 to %d printable ASCII characters", ErrInvalid, d.Name, maxDimensionKeyLen)
		}
		if !printableASCII(d.Value, maxDimensionValueLen) || strings.TrimSpace(d.Value) == "" {
			return fmt.Errorf("%w: dimension %s=%q must be 1 to %d printable ASCII characters, not all spaces", ErrInvalid, d.Name, d.Value, maxDimensionValueLen)
		}
		if seen, err = member(seen, "dimension", d.Name); err != nil {
			return err
		}
	}
	for _, m := range r.Metrics {
		if !printableASCII(m.Name, maxNameLen) {
			return fmt.Errorf("%w: metric name %q must be 1 to %d printable ASCII characters", ErrInvalid, m.Name, maxNameLen)
		}
		if seen, err = member(seen, "metric", m.Name); err != nil {
			return err
		}
		if math.IsNaN(m.Value) || math.IsInf(m.Value, 0) {
			return fmt.Errorf("%w: metric %s: %v is not a number JSON can carry", ErrInvalid, m.Name, m.Value)
		}
		if m.Unit != "" && !units[m.Unit] {
			return fmt.Errorf("%w: metric %s: %q is not a CloudWatch unit", ErrInvalid, m.Name, m.Unit)
		}
		if len(m.DimensionSets) == 0 {
			return fmt.Errorf("%w: metric %s has no dimension set", ErrInvalid, m.Name)
		}
		for _, set := range m.DimensionSets {
			if len(set) > MaxDimensionsPerSet {
				return fmt.Errorf("%w: metric %s: a dimension set of %d keys, more than %d", ErrInvalid, m.Name, len(set), MaxDimensionsPerSet)
			}
			for k, name := range set {
				if !r.hasDimension(name) {
					return fmt.Errorf("%w: metric %s: dimension set %v names %q, which is not a dimension of the record", ErrInvalid, m.Name, set, name)
				}
				if slices.Contains(set[:k], name) {
					return fmt.Errorf("%w: metric %s: dimension set %v names %q twice", ErrInvalid, m.Name, set, name)
				}
			}
		}
	}
	for _, p := range r.Properties {
		if p.Name == "" {
			return fmt.Errorf("%w: a property without a name", ErrInvalid)
		}
		if seen, err = member(seen, "property", p.Name); err != nil {
			return err
		}
	}
	return nil
}

// member adds name to the root member names seen, refusing one seen before.
func member(seen []string, kind, name string) ([]string, error) {
	if slices.Contains(seen, name) {
		return seen, fmt.Errorf("%w: %s %q is the name of another root member", ErrInvalid, kind, name)
	}
	return append(seen, name), nil
}

// sharesEarlierDirective reports whether a metric before the i-th has its dimension sets, so the i-th is written in
// that metric's directive.
func (r Record) sharesEarlierDirective(i int) bool {
	for _, m := range r.Metrics[:i] {
		if equalSets(m.DimensionSets, r.Metrics[i].DimensionSets) {
			return true
		}
	}
	return false
}

func (r Record) hasDimension(name string) bool {
	for _, d := range r.Dimensions {
		if d.Name == name {
			return true
		}
	}
	return false
}

func equalSets(a, b [][]string) bool {
	return slices.EqualFunc(a, b, func(x, y []string) bool { return slices.Equal(x, y) })
}

func printableASCII(s string, maxLen int) bool {
	if s == "" || len(s) > maxLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

func appendMember(b []byte, name string) []byte {
	b = append(b, ',')
	b = appendString(b, name)
	return append(b, ':')
}

// appendString appends s as a JSON string, escaped as encoding/json escapes it.
func appendString(b []byte, s string) []byte { return jsonstring.Append(b, s) }
