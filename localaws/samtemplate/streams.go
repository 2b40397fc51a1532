package samtemplate

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"gopkg.in/yaml.v3"
)

// StreamSource is the Properties of a function's DynamoDB event: the AWS::Lambda::EventSourceMapping that SAM
// makes of it, reading the table's stream and invoking the function with batches of its records. Intrinsics are
// resolved and the properties the template leaves out have Lambda's defaults ("Lambda parameters for Amazon DynamoDB
// event source mappings", AWS Lambda developer guide); values outside Lambda's ranges are refused, as
// CreateEventSourceMapping refuses them.
type StreamSource struct {
	// StreamARN is Stream, the stream's ARN (typically !GetAtt Table.StreamArn), as the Resolver gives it.
	StreamARN string
	// StartingPosition is TRIM_HORIZON or LATEST.
	StartingPosition string
	// BatchSize is the most records an invocation gets: 100 by default, 1 to 10,000.
	BatchSize int
	// MaximumBatchingWindowInSeconds is how long records are gathered for a fuller batch: 0 by default, at most 300.
	MaximumBatchingWindowInSeconds int
	// BisectBatchOnFunctionError splits a batch the function failed in two before retrying.
	BisectBatchOnFunctionError bool
	// MaximumRetryAttempts is how many times a failed batch is retried: -1 (the default) until its records expire,
	// else 0 to 10,000.
	MaximumRetryAttempts int
	// MaximumRecordAgeInSeconds is the age past which records are not sent to the function: -1 (the default) for
	// no limit but the stream's retention, else 60 to 604,800.
	MaximumRecordAgeInSeconds int
	// ParallelizationFactor is how many batches of a shard are in flight at once: 1 by default, at most 10.
	ParallelizationFactor int
	// TumblingWindowInSeconds is the tumbling window's length, 0 for none (the default).
	TumblingWindowInSeconds int
	// ReportBatchItemFailures is set when FunctionResponseTypes lists ReportBatchItemFailures: the function's
	// batchItemFailures are read.
	ReportBatchItemFailures bool
	// Filters are the patterns of FilterCriteria.Filters, decoded: each Pattern may be written as a JSON string, as
	// CloudFormation has it, or as a YAML mapping.
	Filters []map[string]any
	// OnFailure is DestinationConfig.OnFailure.Destination: the ARN of the queue or topic that a discarded batch is
	// described to, "" for none.
	OnFailure string
	// Enabled is false when the template disables the mapping (it is enabled by default).
	Enabled bool
}

// maxFilters is Lambda's default quota of filters per event source mapping.
const maxFilters = 5

// streamSource reads a DynamoDB event's Properties.
func (t *Template) streamSource(props *yaml.Node, env Env, r Resolver) (*StreamSource, error) {
	if props == nil {
		return nil, errors.New("no Properties")
	}
	v, err := t.toJSONValue(props, env, r)
	if err != nil {
		return nil, err
	}
	p, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("Properties: want a mapping")
	}
	// KmsKeyArn (the filters' encryption) and MetricsConfig (CloudWatch metrics) have no local meaning.
	known := []string{"Stream", "StartingPosition", "BatchSize", "MaximumBatchingWindowInSeconds", "BisectBatchOnFunctionError",
		"MaximumRetryAttempts", "MaximumRecordAgeInSeconds", "ParallelizationFactor", "TumblingWindowInSeconds",
		"FunctionResponseTypes", "FilterCriteria", "DestinationConfig", "Enabled", "KmsKeyArn", "MetricsConfig"}
	for k := range p {
		if !slices.Contains(known, k) {
			return nil, fmt.Errorf("%s: not read by the local stack (it reads %v)", k, known)
		}
	}
	s := &StreamSource{}
	if _, ok := p["Stream"]; !ok {
		return nil, errors.New("no Stream")
	}
	// A resolver that does not model streams (local invoke's) gives "": the event is read all the same, and only
	// a consumer that runs the mapping needs the ARN.
	if s.StreamARN, err = stringProp(p, "Stream"); err != nil {
		return nil, err
	}
	if s.StartingPosition, err = stringProp(p, "StartingPosition"); err != nil {
		return nil, err
	}
	if s.StartingPosition != "TRIM_HORIZON" && s.StartingPosition != "LATEST" {
		return nil, fmt.Errorf("StartingPosition %q: want TRIM_HORIZON or LATEST", s.StartingPosition)
	}
	for _, f := range []struct {
		name          string
		to            *int
		def, min, max int
	}{
		{"BatchSize", &s.BatchSize, 100, 1, 10000},
		{"MaximumBatchingWindowInSeconds", &s.MaximumBatchingWindowInSeconds, 0, 0, 300},
		{"MaximumRetryAttempts", &s.MaximumRetryAttempts, -1, -1, 10000},
		{"MaximumRecordAgeInSeconds", &s.MaximumRecordAgeInSeconds, -1, -1, 604800},
		{"ParallelizationFactor", &s.ParallelizationFactor, 1, 1, 10},
		{"TumblingWindowInSeconds", &s.TumblingWindowInSeconds, 0, 0, 900},
	} {
		n, err := intProp(p, f.name, f.def)
		if err != nil {
			return nil, err
		}
		if n < f.min || n > f.max {
			return nil, fmt.Errorf("%s %d: want %d to %d", f.name, n, f.min, f.max)
		}
		*f.to = n
	}
	if a := s.MaximumRecordAgeInSeconds; a != -1 && a < 60 {
		return nil, fmt.Errorf("MaximumRecordAgeInSeconds %d: want -1 or 60 to 604800", a)
	}
	if s.BisectBatchOnFunctionError, err = boolProp(p, "BisectBatchOnFunctionError", false); err != nil {
		return nil, err
	}
	if s.Enabled, err = boolProp(p, "Enabled", true); err != nil {
		return nil, err
	}
	if v, ok := p["FunctionResponseTypes"]; ok {
		list, ok := v.([]any)
		if !ok {
			return nil, errors.New("FunctionResponseTypes: want a list")
		}
		for _, e := range list {
			if e != "ReportBatchItemFailures" {
				return nil, fmt.Errorf("FunctionResponseTypes: %v is not ReportBatchItemFailures", e)
			}
			s.ReportBatchItemFailures = true
		}
	}
	if s.Filters, err = filters(p["FilterCriteria"]); err != nil {
		return nil, err
	}
	if s.OnFailure, err = onFailure(p["DestinationConfig"]); err != nil {
		return nil, err
	}
	return s, nil
}

func stringProp(p map[string]any, name string) (string, error) {
	switch v := p[name].(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	default:
		return "", fmt.Errorf("%s: want a string, not %v", name, v)
	}
}

// intProp reads an integer written as a number or, as a !Ref to a parameter gives it, a string.
func intProp(p map[string]any, name string, def int) (int, error) {
	switch v := p[name].(type) {
	case nil:
		return def, nil
	case float64:
		if v != float64(int(v)) {
			return 0, fmt.Errorf("%s %v: want an integer", name, v)
		}
		return int(v), nil
	case string:
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, fmt.Errorf("%s %q: want an integer", name, v)
		}
		return n, nil
	default:
		return 0, fmt.Errorf("%s %v: want an integer", name, v)
	}
}

func boolProp(p map[string]any, name string, def bool) (bool, error) {
	switch v := p[name].(type) {
	case nil:
		return def, nil
	case bool:
		return v, nil
	case string:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, fmt.Errorf("%s %q: want true or false", name, v)
		}
		return b, nil
	default:
		return false, fmt.Errorf("%s %v: want true or false", name, v)
	}
}

// filters reads FilterCriteria: {Filters: [{Pattern: …}, …]}.
func filters(v any) ([]map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	fc, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("FilterCriteria: want a mapping")
	}
	list, ok := fc["Filters"].([]any)
	if !ok && fc["Filters"] != nil {
		return nil, errors.New("FilterCriteria.Filters: want a list")
	}
	if len(list) > maxFilters {
		return nil, fmt.Errorf("FilterCriteria.Filters: %d filters, Lambda allows %d", len(list), maxFilters)
	}
	var out []map[string]any
	for i, f := range list {
		m, ok := f.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("FilterCriteria.Filters[%d]: want a mapping with Pattern", i)
		}
		var pattern map[string]any
		switch p := m["Pattern"].(type) {
		case string:
			if err := json.Unmarshal([]byte(p), &pattern); err != nil {
				return nil, fmt.Errorf("FilterCriteria.Filters[%d].Pattern: not a JSON object: %w", i, err)
			}
		case map[string]any:
			pattern = p
		default:
			return nil, fmt.Errorf("FilterCriteria.Filters[%d].Pattern: want a JSON string or a mapping", i)
		}
		out = append(out, pattern)
	}
	return out, nil
}

// onFailure reads DestinationConfig: {OnFailure: {Destination: ARN, Type: SQS|SNS}}. (Type is SAM's, for the
// policy it adds; the ARN says what the destination is.)
func onFailure(v any) (string, error) {
	if v == nil {
		return "", nil
	}
	dc, ok := v.(map[string]any)
	if !ok {
		return "", errors.New("DestinationConfig: want a mapping")
	}
	for k := range dc {
		if k != "OnFailure" {
			return "", fmt.Errorf("DestinationConfig.%s: a stream's event source mapping has only OnFailure", k)
		}
	}
	of, ok := dc["OnFailure"].(map[string]any)
	if !ok {
		return "", errors.New("DestinationConfig.OnFailure: want a mapping")
	}
	if _, ok := of["Destination"]; !ok {
		return "", errors.New("DestinationConfig.OnFailure: no Destination")
	}
	dest, err := stringProp(of, "Destination")
	if err != nil {
		return "", fmt.Errorf("DestinationConfig.OnFailure.%w", err)
	}
	return dest, nil
}
