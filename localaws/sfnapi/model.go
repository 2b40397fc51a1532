package sfnapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// Quotas of the Step Functions API, as its model (botocore stepfunctions 2016-11-23, service-2.json) and the service
// quotas page state them.
const (
	// MaxNameLength is the longest state machine or execution name, in characters.
	MaxNameLength = 80
	// MaxArnLength is the longest ARN a request may carry, in characters.
	MaxArnLength = 256
	// MaxDefinitionLength is the longest definition, in characters.
	MaxDefinitionLength = 1_048_576
	// MaxInputBytes is the largest execution input, in bytes of UTF-8.
	MaxInputBytes = 262_144
	// MaxRequestBytes is the largest request body the local API reads. It is larger than any request the model's
	// constraints admit (a definition of MaxDefinitionLength characters, each written as a six-byte JSON escape,
	// is 6 MiB), so that an over-long member gets AWS's ValidationException naming it, while a larger body is
	// refused before it is read. AWS's own hard quota is 1 MB per request; its answer to a larger one is not recorded.
	MaxRequestBytes = 8 << 20
)

// member is one request member's constraints in the Step Functions API model. Strings are measured in characters
// (Unicode code points), as the model's length constraints are, unless utf8Bytes is set; integers by value.
type member struct {
	name      string
	kind      memberKind
	required  bool
	min, max  int
	utf8Bytes bool // max is a size in bytes of UTF-8 (the execution input)
	sensitive bool // the value is not quoted in messages
	enum      []string
}

type memberKind int

const (
	kindString memberKind = iota
	kindInt
)

func arnMember(name string, required bool) member {
	return member{name: name, required: required, min: 1, max: MaxArnLength}
}

var (
	nameMember       = member{name: "name", min: 1, max: MaxNameLength}
	definitionMember = member{name: "definition", min: 1, max: MaxDefinitionLength, sensitive: true}
	typeMember       = member{name: "type", enum: []string{"STANDARD", "EXPRESS"}}
	pageSize         = member{name: "maxResults", kind: kindInt, min: 0, max: 1000}
	pageToken        = member{name: "nextToken", min: 1, max: 1024}
	// versionDescriptionMember is a version's description (CreateStateMachine, UpdateStateMachine).
	versionDescriptionMember = member{name: "versionDescription", max: 256, sensitive: true}
	// mapRunArn is a LongArn in the model: up to 2,000 characters.
	mapRunArn = member{name: "mapRunArn", min: 1, max: 2000}
)

func required(m member) member {
	m.required = true
	return m
}

// models are the constraints of each operation's request members, in the model's member order. A member that is
// not listed is not checked here.
var models = map[string][]member{
	"CreateStateMachine": {required(nameMember), required(definitionMember), arnMember("roleArn", true), typeMember,
		versionDescriptionMember},
	"DescribeStateMachine": {arnMember("stateMachineArn", true)},
	"ListStateMachines":    {pageSize, pageToken},
	"DeleteStateMachine":   {arnMember("stateMachineArn", true)},
	"UpdateStateMachine": {arnMember("stateMachineArn", true), definitionMember, arnMember("roleArn", false),
		versionDescriptionMember},
	"ValidateStateMachineDefinition": {required(definitionMember), typeMember,
		{name: "severity", enum: []string{"ERROR", "WARNING"}}, {name: "maxResults", kind: kindInt, min: 0, max: 100}},
	"StartExecution": {arnMember("stateMachineArn", true), nameMember,
		{name: "input", max: MaxInputBytes, utf8Bytes: true, sensitive: true}, {name: "traceHeader", max: 256}},
	"StartSyncExecution": {arnMember("stateMachineArn", true), nameMember,
		{name: "input", max: MaxInputBytes, utf8Bytes: true, sensitive: true}, {name: "traceHeader", max: 256},
		{name: "includedData", enum: []string{"ALL_DATA", "METADATA_ONLY"}}},
	"TestState": {required(definitionMember), arnMember("roleArn", false),
		{name: "input", max: MaxInputBytes, utf8Bytes: true, sensitive: true},
		{name: "inspectionLevel", enum: []string{"INFO", "DEBUG", "TRACE"}},
		{name: "variables", max: MaxInputBytes, utf8Bytes: true, sensitive: true}, {name: "stateName", min: 1, max: MaxNameLength},
		{name: "context", max: MaxInputBytes, utf8Bytes: true, sensitive: true}},
	"DescribeExecution":                {arnMember("executionArn", true)},
	"DescribeStateMachineForExecution": {arnMember("executionArn", true)},
	// stateMachineArn or mapRunArn: exactly one of them (listExecutions).
	"ListExecutions": {arnMember("stateMachineArn", false), mapRunArn,
		{name: "statusFilter", enum: []string{"RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED", "PENDING_REDRIVE"}},
		pageSize, {name: "nextToken", min: 1, max: 3096},
		{name: "redriveFilter", enum: []string{"REDRIVEN", "NOT_REDRIVEN"}}},
	"StopExecution": {arnMember("executionArn", true), {name: "error", max: 256, sensitive: true},
		{name: "cause", max: 32768, sensitive: true}},
	"GetExecutionHistory": {arnMember("executionArn", true), pageSize, pageToken},
	"RedriveExecution":    {arnMember("executionArn", true), {name: "clientToken", min: 1, max: 64}},
	"ListMapRuns":         {arnMember("executionArn", true), pageSize, pageToken},
	"DescribeMapRun":      {required(mapRunArn)},
	"UpdateMapRun": {required(mapRunArn), {name: "maxConcurrency", kind: kindInt, min: 0, max: math.MaxInt32},
		{name: "toleratedFailureCount", kind: kindInt, min: 0, max: math.MaxInt32}},
}

// validate checks a request body against the operation's member constraints, as AWS does before anything else,
// and returns every violation in one ValidationException ("N validation errors detected: …; …"). A member whose JSON
// type is wrong is a SerializationException.
func validate(op string, body json.RawMessage) error {
	ms := models[op]
	if len(ms) == 0 {
		return nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return errorf(codeSerialization, "cannot decode the request: %v", err)
	}
	var violations []string
	for _, m := range ms {
		raw, ok := fields[m.name]
		if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			if m.required {
				violations = append(violations, fmt.Sprintf("Value null at '%s' failed to satisfy constraint: Member must not be null", m.name))
			}
			continue
		}
		v, err := m.check(raw)
		if err != nil {
			return err
		}
		violations = append(violations, v...)
	}
	switch len(violations) {
	case 0:
		return nil
	case 1:
		return errorf(codeValidation, "1 validation error detected: %s", violations[0])
	default:
		return errorf(codeValidation, "%d validation errors detected: %s", len(violations), strings.Join(violations, "; "))
	}
}

// check returns the member's violations by raw, its JSON value.
func (m member) check(raw json.RawMessage) ([]string, error) {
	var out []string
	if m.kind == kindInt {
		var n int64
		if err := json.Unmarshal(raw, &n); err != nil {
			return nil, errorf(codeSerialization, "cannot decode the request: member %s is not an integer", m.name)
		}
		if n < int64(m.min) {
			out = append(out, fmt.Sprintf("Value '%d' at '%s' failed to satisfy constraint: Member must have value greater than or equal to %d", n, m.name, m.min))
		}
		if n > int64(m.max) {
			out = append(out, fmt.Sprintf("Value '%d' at '%s' failed to satisfy constraint: Member must have value less than or equal to %d", n, m.name, m.max))
		}
		return out, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, errorf(codeSerialization, "cannot decode the request: member %s is not a string", m.name)
	}
	value := "Value '" + s + "' at '" + m.name + "'"
	if m.sensitive {
		value = "Value at '" + m.name + "'"
	}
	switch {
	case m.utf8Bytes && len(s) > m.max:
		out = append(out, fmt.Sprintf("%s failed to satisfy constraint: Member must have size less than or equal to %d bytes in UTF-8 encoding", value, m.max))
	case m.utf8Bytes:
	case m.min > 0 && utf8.RuneCountInString(s) < m.min:
		out = append(out, fmt.Sprintf("%s failed to satisfy constraint: Member must have length greater than or equal to %d", value, m.min))
	case m.max > 0 && len(s) > m.max && utf8.RuneCountInString(s) > m.max:
		out = append(out, fmt.Sprintf("%s failed to satisfy constraint: Member must have length less than or equal to %d", value, m.max))
	}
	if len(m.enum) > 0 && !contains(m.enum, s) {
		out = append(out, fmt.Sprintf("%s failed to satisfy constraint: Member must satisfy enum value set: [%s]", value, strings.Join(m.enum, ", ")))
	}
	return out, nil
}

func contains(set []string, s string) bool {
	for _, v := range set {
		if v == s {
			return true
		}
	}
	return false
}
