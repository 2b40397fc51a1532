// Package sfnmock reads the mock configuration files of AWS Step Functions Local's mocked service integrations
// (MockConfigFile.json): for each state machine, test cases that name, for some of its Task states, a mocked
// response; and the mocked responses, which give for each invocation of the state (its retries included) either the
// result (Return) or the error (Throw) the Task gets instead of calling its service. The local engine (package
// sfnengine) runs an execution started with the state machine ARN <arn>#<TestCase> with that test case's responses.
//
// Load and Parse validate the whole file: a malformed one is refused with an *Error naming the file, the JSON path
// in it and what is wrong, so that a test suite never runs against a mock configuration it misread.
package sfnmock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Env is the environment variable Step Functions Local reads the mock configuration file's path from.
const Env = "SFN_MOCK_CONFIG"

// The top-level members of a mock configuration file and the members of its objects.
const (
	keyStateMachines   = "StateMachines"
	keyMockedResponses = "MockedResponses"
	keyTestCases       = "TestCases"
	keyReturn          = "Return"
	keyThrow           = "Throw"
	keyError           = "Error"
	keyCause           = "Cause"
)

// Config is a validated mock configuration.
type Config struct {
	file     string
	machines map[string]map[string]*TestCase // state machine name -> test case name -> test case
}

// TestCase is one test case of a state machine: the mocked response of each of its mocked Task states.
type TestCase struct {
	name   string
	states map[string]*Response
}

// Response is a mocked response: what each invocation of a mocked Task state gets, by invocation index from 0.
type Response struct {
	name  string
	spans []span // sorted, contiguous from 0
}

// span is the outcome of the invocations from..to (inclusive).
type span struct {
	from, to int
	key      string
	outcome  Outcome
}

// Outcome is one invocation's mocked outcome: Return's JSON text, or, when Throw is set, the error and its cause.
type Outcome struct {
	// Return is the JSON text of the result the Task gets; nil when the invocation throws.
	Return json.RawMessage
	// Throw is set when the invocation fails with Error and Cause.
	Throw bool
	Error string
	Cause string
}

// Error is a problem of a mock configuration file: File is its name, Path the JSON path of the member at fault
// (empty for the file as a whole), Problem what is wrong with it.
type Error struct {
	File    string
	Path    string
	Problem string
}

// Error returns "mock configuration FILE: PATH: PROBLEM".
func (e *Error) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("mock configuration %s: %s", e.File, e.Problem)
	}
	return fmt.Sprintf("mock configuration %s: %s: %s", e.File, e.Path, e.Problem)
}

// Load reads and validates the mock configuration file at path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Problem: fmt.Sprintf("cannot be read: %v", err)}
	}
	return Parse(path, data)
}

// Parse validates a mock configuration; name is what errors call it (its file's path).
func Parse(name string, data []byte) (*Config, error) {
	p := parser{file: name}
	top, ok := p.object(nil, data)
	if !ok {
		return nil, p.err
	}
	if !p.only(nil, top, "a mock configuration", keyStateMachines, keyMockedResponses) {
		return nil, p.err
	}
	responses := map[string]*Response{}
	if raw, ok := top[keyMockedResponses]; ok {
		path := []string{keyMockedResponses}
		obj, ok := p.object(path, raw)
		if !ok {
			return nil, p.err
		}
		for _, name := range sortedKeys(obj) {
			r, ok := p.response(append(path, name), name, obj[name])
			if !ok {
				return nil, p.err
			}
			responses[name] = r
		}
	}
	c := &Config{file: name, machines: map[string]map[string]*TestCase{}}
	if raw, ok := top[keyStateMachines]; ok {
		path := []string{keyStateMachines}
		obj, ok := p.object(path, raw)
		if !ok {
			return nil, p.err
		}
		for _, sm := range sortedKeys(obj) {
			cases, ok := p.machine(append(path, sm), obj[sm], responses)
			if !ok {
				return nil, p.err
			}
			c.machines[sm] = cases
		}
	}
	return c, nil
}

// File returns the name the configuration was loaded from.
func (c *Config) File() string { return c.file }

// HasStateMachine reports whether the configuration has test cases for the state machine called name.
func (c *Config) HasStateMachine(name string) bool {
	_, ok := c.machines[name]
	return ok
}

// TestCases returns the names of the state machine's test cases, sorted.
func (c *Config) TestCases(stateMachine string) []string {
	return sortedKeys(c.machines[stateMachine])
}

// TestCase returns the state machine's test case called name, or nil when it has none.
func (c *Config) TestCase(stateMachine, name string) *TestCase {
	return c.machines[stateMachine][name]
}

// Name returns the test case's name.
func (t *TestCase) Name() string { return t.name }

// Response returns the mocked response of the Task state called state, or nil when the test case does not mock it
// (the state then calls its service).
func (t *TestCase) Response(state string) *Response { return t.states[state] }

// Name returns the mocked response's name.
func (r *Response) Name() string { return r.name }

// Invocations returns how many invocations the response gives an outcome for.
func (r *Response) Invocations() int { return r.spans[len(r.spans)-1].to + 1 }

// At returns the outcome of the invocation with the index i (0 for the first call, 1 for the first retry, …);
// ok is false past the last invocation the response gives.
func (r *Response) At(i int) (o Outcome, ok bool) {
	j := sort.Search(len(r.spans), func(j int) bool { return r.spans[j].to >= i })
	if i < 0 || j == len(r.spans) {
		return Outcome{}, false
	}
	return r.spans[j].outcome, true
}

// parser validates a file, keeping its first problem.
type parser struct {
	file string
	err  *Error
}

// fail records a problem of the member at path and returns it.
func (p *parser) fail(path []string, format string, args ...any) error {
	p.err = &Error{File: p.file, Path: jsonPath(path), Problem: fmt.Sprintf(format, args...)}
	return p.err
}

// only reports whether obj, the member at path, has no members but allowed; what names it in the problem.
func (p *parser) only(path []string, obj map[string]json.RawMessage, what string, allowed ...string) bool {
	for _, k := range sortedKeys(obj) {
		if !slices.Contains(allowed, k) {
			p.fail(append(slices.Clip(path), k), "is not a member of %s (%s)", what, strings.Join(allowed, ", "))
			return false
		}
	}
	return true
}

// object decodes raw as a JSON object.
func (p *parser) object(path []string, raw []byte) (map[string]json.RawMessage, bool) {
	if len(path) == 0 && !json.Valid(raw) {
		var v any
		err := json.Unmarshal(raw, &v)
		p.fail(path, "is not JSON: %v", err)
		return nil, false
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		p.fail(path, "must be a JSON object, not %s", kind(raw))
		return nil, false
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		p.fail(path, "must be a JSON object: %v", err)
		return nil, false
	}
	return obj, true
}

// machine validates StateMachines.<name>: {"TestCases": {<test case>: {<state>: <response name>}}}.
func (p *parser) machine(path []string, raw []byte, responses map[string]*Response) (map[string]*TestCase, bool) {
	obj, ok := p.object(path, raw)
	if !ok {
		return nil, false
	}
	if !p.only(path, obj, "a state machine's mock configuration", keyTestCases) {
		return nil, false
	}
	casesRaw, ok := obj[keyTestCases]
	if !ok {
		p.fail(path, "has no TestCases")
		return nil, false
	}
	path = append(path, keyTestCases)
	cases, ok := p.object(path, casesRaw)
	if !ok {
		return nil, false
	}
	out := map[string]*TestCase{}
	for _, name := range sortedKeys(cases) {
		cpath := append(slices.Clip(path), name)
		states, ok := p.object(cpath, cases[name])
		if !ok {
			return nil, false
		}
		tc := &TestCase{name: name, states: map[string]*Response{}}
		for _, state := range sortedKeys(states) {
			spath := append(slices.Clip(cpath), state)
			var ref string
			if err := json.Unmarshal(states[state], &ref); err != nil {
				p.fail(spath, "must be the name of a mocked response (a string), not %s", kind(states[state]))
				return nil, false
			}
			r, ok := responses[ref]
			if !ok {
				p.fail(spath, "names the mocked response %q, which MockedResponses does not define", ref)
				return nil, false
			}
			tc.states[state] = r
		}
		out[name] = tc
	}
	return out, true
}

// indexKey is an invocation key: an index ("0") or an inclusive range ("1-2").
var indexKey = regexp.MustCompile(`^([0-9]+)(?:-([0-9]+))?$`)

// response validates MockedResponses.<name>: {"<index or range>": {"Return": …} or {"Throw": {…}}}.
func (p *parser) response(path []string, name string, raw []byte) (*Response, bool) {
	obj, ok := p.object(path, raw)
	if !ok {
		return nil, false
	}
	if len(obj) == 0 {
		p.fail(path, "gives no invocation: a mocked response needs one for invocation \"0\" at least")
		return nil, false
	}
	r := &Response{name: name}
	for _, key := range sortedKeys(obj) {
		ipath := append(slices.Clip(path), key)
		m := indexKey.FindStringSubmatch(key)
		if m == nil {
			p.fail(ipath, `is not an invocation index ("0", "1", …) or an inclusive range of them ("1-2")`)
			return nil, false
		}
		from, err1 := strconv.Atoi(m[1])
		to, err2 := from, error(nil)
		if m[2] != "" {
			to, err2 = strconv.Atoi(m[2])
		}
		if err1 != nil || err2 != nil {
			p.fail(ipath, "is not an invocation index: the number is too large")
			return nil, false
		}
		if to < from {
			p.fail(ipath, "is not an inclusive range: %d is less than %d", to, from)
			return nil, false
		}
		o, ok := p.outcome(ipath, obj[key])
		if !ok {
			return nil, false
		}
		r.spans = append(r.spans, span{from: from, to: to, key: key, outcome: o})
	}
	sort.Slice(r.spans, func(i, j int) bool { return r.spans[i].from < r.spans[j].from })
	next := 0
	for _, s := range r.spans {
		switch {
		case s.from > next:
			p.fail(path, "gives no outcome for invocation %d: the invocations must be numbered from 0 without gaps", next)
			return nil, false
		case s.from < next:
			p.fail(append(path, s.key), "gives invocation %d again", s.from)
			return nil, false
		}
		next = s.to + 1
	}
	return r, true
}

// outcome validates one invocation: exactly one of Return (any JSON) and Throw ({"Error": string, "Cause": string}).
func (p *parser) outcome(path []string, raw []byte) (Outcome, bool) {
	obj, ok := p.object(path, raw)
	if !ok {
		return Outcome{}, false
	}
	if !p.only(path, obj, "a mocked invocation", keyReturn, keyThrow) {
		return Outcome{}, false
	}
	ret, hasReturn := obj[keyReturn]
	throw, hasThrow := obj[keyThrow]
	switch {
	case hasReturn && hasThrow:
		p.fail(path, "has both Return and Throw: an invocation either returns or throws")
		return Outcome{}, false
	case hasReturn:
		return Outcome{Return: bytes.TrimSpace(ret)}, true
	case !hasThrow:
		p.fail(path, "has neither Return nor Throw")
		return Outcome{}, false
	}
	tpath := append(path, keyThrow)
	t, ok := p.object(tpath, throw)
	if !ok {
		return Outcome{}, false
	}
	if !p.only(tpath, t, "Throw", keyError, keyCause) {
		return Outcome{}, false
	}
	o := Outcome{Throw: true}
	errRaw, ok := t[keyError]
	if !ok {
		p.fail(tpath, "has no Error: the error name the Task fails with, which Retry and Catch match")
		return Outcome{}, false
	}
	if err := json.Unmarshal(errRaw, &o.Error); err != nil || o.Error == "" {
		p.fail(append(tpath, keyError), "must be a non-empty string, not %s", kind(errRaw))
		return Outcome{}, false
	}
	if causeRaw, ok := t[keyCause]; ok {
		if err := json.Unmarshal(causeRaw, &o.Cause); err != nil {
			p.fail(append(tpath, keyCause), "must be a string, not %s", kind(causeRaw))
			return Outcome{}, false
		}
	}
	return o, true
}

// identifier is a path segment written without quotes.
var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// jsonPath writes a path as dotted segments, quoting those that are not identifiers: MockedResponses.R."0-1".
func jsonPath(path []string) string {
	parts := make([]string, len(path))
	for i, s := range path {
		if identifier.MatchString(s) {
			parts[i] = s
		} else {
			parts[i] = strconv.Quote(s)
		}
	}
	return strings.Join(parts, ".")
}

// kind names the JSON type of raw for a message, with the value when it is short.
func kind(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	name := "a number"
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		name = "a string"
	case 't', 'f':
		name = "a boolean"
	case 'n':
		return "null"
	}
	if len(raw) <= 40 {
		return name + " (" + string(raw) + ")"
	}
	return name
}

// sortedKeys returns m's keys sorted, so that the first problem reported does not depend on map order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
