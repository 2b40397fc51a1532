// Package metricstest reads CloudWatch Embedded Metric Format lines back for tests and checks each against AWS's
// "Specification: Embedded metric format" and its JSON schema. It decodes with encoding/json and shares no code with
// the writer in package metrics, so a writer bug is not hidden by the same bug in the check.
package metricstest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/transferflow/orchestrator/internal/syncio"
)

// Line is one checked EMF record.
type Line struct {
	Namespace string
	// Timestamp is _aws.Timestamp, in milliseconds since the Unix epoch.
	Timestamp int64
	// Root holds every root member but _aws, as encoding/json decodes it (strings, float64s, ...).
	Root map[string]any
	// Metrics are the metrics the line's directives name, by name.
	Metrics map[string]Metric
}

// Metric is a metric as a line publishes it.
type Metric struct {
	Unit          string
	Value         float64
	DimensionSets [][]string
}

// Dimensions returns the metric's dimension sets with the line's values: for each set, dimension name to value.
func (l Line) Dimensions(metric string) []map[string]string {
	var out []map[string]string
	for _, set := range l.Metrics[metric].DimensionSets {
		m := map[string]string{}
		for _, k := range set {
			m[k], _ = l.Root[k].(string)
		}
		out = append(out, m)
	}
	return out
}

// digitsRe is a JSON integer that is not negative.
var digitsRe = regexp.MustCompile(`^[0-9]+$`)

// unitRe is the schema's pattern for a MetricDefinition's Unit.
var unitRe = regexp.MustCompile(`^(Seconds|Microseconds|Milliseconds|Bytes|Kilobytes|Megabytes|Gigabytes|Terabytes|Bits|Kilobits|Megabits|Gigabits|Terabits|Percent|Count|Bytes\/Second|Kilobytes\/Second|Megabytes\/Second|Gigabytes\/Second|Terabytes\/Second|Bits\/Second|Kilobits\/Second|Megabits\/Second|Gigabits\/Second|Terabits\/Second|Count\/Second|None)$`)

// Parse checks one line (a trailing newline allowed) and returns it. The rules are the specification's: one JSON
// object and nothing else; root member names unique; _aws an object with exactly an integer Timestamp and a
// non-empty CloudWatchMetrics array; each directive exactly Namespace (1 to 1024 characters), Dimensions (at least
// one set, each of at most 30 keys of 1 to 250 characters naming root members with string values of at most 1024
// characters) and Metrics (1 to 100 definitions, each a Name naming a root member that is a number or an array of
// at most 100 numbers, and optionally a Unit of the schema's list and a StorageResolution of 1 or 60).
func Parse(line []byte) (Line, error) {
	line = bytes.TrimSuffix(line, []byte("\n"))
	if bytes.ContainsAny(line, "\n") {
		return Line{}, errors.New("more than one line")
	}
	raw, err := members(line)
	if err != nil {
		return Line{}, err
	}
	var aws struct {
		Timestamp         json.RawMessage
		CloudWatchMetrics []json.RawMessage
	}
	awsRaw, ok := raw["_aws"]
	if !ok {
		return Line{}, errors.New("no _aws member")
	}
	if err := strictDecode(awsRaw, &aws, "Timestamp", "CloudWatchMetrics"); err != nil {
		return Line{}, fmt.Errorf("_aws: %w", err)
	}
	l := Line{Root: map[string]any{}, Metrics: map[string]Metric{}}
	if !digitsRe.Match(aws.Timestamp) {
		return Line{}, fmt.Errorf("_aws.Timestamp %s is not an integer of milliseconds", aws.Timestamp)
	}
	if l.Timestamp, err = strconv.ParseInt(string(aws.Timestamp), 10, 64); err != nil || l.Timestamp <= 0 {
		return Line{}, fmt.Errorf("_aws.Timestamp %s is not a positive integer of milliseconds", aws.Timestamp)
	}
	if len(aws.CloudWatchMetrics) == 0 {
		return Line{}, errors.New("_aws.CloudWatchMetrics is empty")
	}
	for k, v := range raw {
		if k == "_aws" {
			continue
		}
		var x any
		if err := json.Unmarshal(v, &x); err != nil {
			return Line{}, fmt.Errorf("member %s: %w", k, err)
		}
		l.Root[k] = x
	}
	for i, d := range aws.CloudWatchMetrics {
		if err := l.directive(d); err != nil {
			return Line{}, fmt.Errorf("_aws.CloudWatchMetrics[%d]: %w", i, err)
		}
	}
	return l, nil
}

func (l *Line) directive(raw json.RawMessage) error {
	var d struct {
		Namespace  string
		Dimensions [][]string
		Metrics    []json.RawMessage
	}
	if err := strictDecode(raw, &d, "Namespace", "Dimensions", "Metrics"); err != nil {
		return err
	}
	if d.Namespace == "" || len(d.Namespace) > 1024 {
		return fmt.Errorf("Namespace %q must be 1 to 1024 characters", d.Namespace)
	}
	if l.Namespace != "" && l.Namespace != d.Namespace {
		return fmt.Errorf("Namespace %q differs from an earlier directive's %q", d.Namespace, l.Namespace)
	}
	l.Namespace = d.Namespace
	if len(d.Dimensions) == 0 {
		return errors.New("Dimensions is empty")
	}
	for _, set := range d.Dimensions {
		if len(set) > 30 {
			return fmt.Errorf("a DimensionSet of %d keys", len(set))
		}
		for _, k := range set {
			v, ok := l.Root[k].(string)
			switch {
			case k == "" || len(k) > 250:
				return fmt.Errorf("dimension key %q must be 1 to 250 characters", k)
			case !ok:
				return fmt.Errorf("dimension %q is not a root member with a string value", k)
			case len(v) > 1024:
				return fmt.Errorf("dimension %q has more than 1024 characters", k)
			}
		}
	}
	if len(d.Metrics) == 0 || len(d.Metrics) > 100 {
		return fmt.Errorf("%d MetricDefinitions, want 1 to 100", len(d.Metrics))
	}
	for _, raw := range d.Metrics {
		var def struct {
			Name              string
			Unit              *string
			StorageResolution json.RawMessage
		}
		if err := strictDecode(raw, &def, "Name", "Unit", "StorageResolution"); err != nil {
			return err
		}
		if def.Unit != nil && !unitRe.MatchString(*def.Unit) {
			return fmt.Errorf("metric %s: Unit %q is not a CloudWatch unit", def.Name, *def.Unit)
		}
		if r := string(def.StorageResolution); r != "" && r != "1" && r != "60" {
			return fmt.Errorf("metric %s: StorageResolution %s is neither 1 nor 60", def.Name, r)
		}
		value, err := numeric(l.Root[def.Name])
		if err != nil {
			return fmt.Errorf("metric %q: %w", def.Name, err)
		}
		m := l.Metrics[def.Name]
		m.Value = value
		if def.Unit != nil {
			m.Unit = *def.Unit
		}
		m.DimensionSets = append(m.DimensionSets, d.Dimensions...)
		l.Metrics[def.Name] = m
	}
	return nil
}

// numeric returns a metric target's value (the first, for an array).
func numeric(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case []any:
		if len(x) == 0 || len(x) > 100 {
			return 0, fmt.Errorf("an array of %d values, want 1 to 100", len(x))
		}
		for _, e := range x {
			if _, ok := e.(float64); !ok {
				return 0, fmt.Errorf("array element %v is not a number", e)
			}
		}
		return x[0].(float64), nil
	}
	return 0, fmt.Errorf("value %v is not a number", v)
}

// members splits one JSON object into its members, refusing duplicate names and anything after the object.
func members(b []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	out := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name := tok.(string)
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("member %q appears twice", name)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("member %q: %w", name, err)
		}
		out[name] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON object")
	}
	return out, nil
}

// strictDecode decodes an object into v, refusing members other than allowed ("objects defined by this
// specification MUST NOT contain any additional members") and members in another case.
func strictDecode(raw json.RawMessage, v any, allowed ...string) error {
	m, err := members(raw)
	if err != nil {
		return err
	}
	for k := range m {
		if !slices.Contains(allowed, k) {
			return fmt.Errorf("member %q is not one of %s", k, strings.Join(allowed, ", "))
		}
	}
	return json.Unmarshal(raw, v)
}

// ParseAll checks every line of out and returns them; lines that are not EMF records (log lines of the same
// stream) are skipped when skipOthers, and are an error otherwise.
func ParseAll(out []byte, skipOthers bool) ([]Line, error) {
	var lines []Line
	for i, raw := range bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n")) {
		if len(raw) == 0 {
			continue
		}
		if skipOthers && !bytes.Contains(raw, []byte(`"_aws"`)) {
			continue
		}
		l, err := Parse(raw)
		if err != nil {
			return nil, fmt.Errorf("line %d %s: %w", i+1, raw, err)
		}
		lines = append(lines, l)
	}
	return lines, nil
}

// Buffer collects the lines of any number of emitters; it is safe for concurrent use.
type Buffer struct {
	syncio.Buffer
}

// Lines checks every line written so far and returns them; a line that breaks the specification fails t.
func (b *Buffer) Lines(t testing.TB) []Line {
	t.Helper()
	lines, err := ParseAll(b.Bytes(), false)
	if err != nil {
		t.Fatalf("metrics: %v", err)
	}
	return lines
}
