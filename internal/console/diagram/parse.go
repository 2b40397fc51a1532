package diagram

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxJSONNesting and maxStateNesting bound how deep the JSON text and the Parallel and Map states may nest, so that
// a hostile definition can neither exhaust the stack nor produce a drawing too deep to read.
const (
	maxJSONNesting  = 256
	maxStateNesting = 32
)

// Graph is a parsed state machine: its states in the order the definition lists them, with their transitions, and
// the machines nested in Parallel and Map states. A Graph is not changed after Parse and may be shared.
type Graph struct {
	root  *machine
	count int
}

// machine is one States object with its StartAt: the whole definition, a Parallel branch or a Map's processor.
type machine struct {
	startAt string
	states  []*state
	byName  map[string]*state
}

// state is one state of a machine, reduced to what the drawing shows.
type state struct {
	name      string
	typ       string
	next      string
	end       bool
	deflt     string
	choices   []rule
	catches   []catcher
	retries   []retrier
	branches  []*machine
	processor *machine
	order     int // position in a depth-first walk of the definition
}

// rule is a Choice rule: where it goes and the condition, shortened for the edge and whole for its title.
type rule struct {
	next  string
	label string
	title string
}

// catcher is one Catch entry.
type catcher struct {
	errors []string
	next   string
}

// retrier is one Retry entry.
type retrier struct {
	errors      []string
	maxAttempts int
}

var stateTypes = map[string]bool{
	"Task": true, "Pass": true, "Choice": true, "Wait": true, "Succeed": true, "Fail": true, "Parallel": true, "Map": true,
}

// Parse reads an Amazon States Language definition (the JSON text) into a Graph. It checks what the drawing relies
// on: every state has a known Type, every StartAt, Next, Default, Choice rule and Catch names a state of its own
// States, Parallel states have Branches and Map states an ItemProcessor or Iterator. An error names the state and
// the field that is wrong. Fields the drawing does not show are not checked.
func Parse(definition []byte) (*Graph, error) {
	v, err := decodeJSON(definition)
	if err != nil {
		return nil, fmt.Errorf("definition is not JSON: %w", err)
	}
	obj, ok := v.(*object)
	if !ok {
		return nil, fmt.Errorf("definition is %s, want an object", kindOf(v))
	}
	g := &Graph{}
	root, err := g.parseMachine(obj, 0)
	if err != nil {
		return nil, err
	}
	g.root = root
	return g, nil
}

func (g *Graph) parseMachine(obj *object, depth int) (*machine, error) {
	if depth > maxStateNesting {
		return nil, fmt.Errorf("Parallel and Map states nest more than %d deep", maxStateNesting)
	}
	startAt, ok, err := obj.str("StartAt")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errors.New("StartAt is missing")
	}
	sv, ok := obj.vals["States"]
	if !ok {
		return nil, errors.New("States is missing")
	}
	states, ok := sv.(*object)
	if !ok {
		return nil, fmt.Errorf("States is %s, want an object", kindOf(sv))
	}
	if len(states.keys) == 0 {
		return nil, errors.New("States is empty")
	}
	if len(states.dups) > 0 {
		return nil, fmt.Errorf("state %q appears twice in States", states.dups[0])
	}
	m := &machine{startAt: startAt, byName: make(map[string]*state, len(states.keys))}
	for _, name := range states.keys {
		if name == "" {
			return nil, errors.New("a state name is empty")
		}
		so, ok := states.vals[name].(*object)
		if !ok {
			return nil, fmt.Errorf("state %q is %s, want an object", name, kindOf(states.vals[name]))
		}
		s, err := g.parseState(name, so, depth)
		if err != nil {
			return nil, fmt.Errorf("state %q: %w", name, err)
		}
		m.states = append(m.states, s)
		m.byName[name] = s
	}
	if m.byName[startAt] == nil {
		return nil, fmt.Errorf("StartAt %q is not a state of its States", startAt)
	}
	for _, s := range m.states {
		if err := m.checkTargets(s); err != nil {
			return nil, fmt.Errorf("state %q: %w", s.name, err)
		}
	}
	return m, nil
}

// checkTargets reports the first transition of s that names no state of m.
func (m *machine) checkTargets(s *state) error {
	missing := func(field, target string) error {
		if target == "" || m.byName[target] != nil {
			return nil
		}
		return fmt.Errorf("%s %q is not a state of its States", field, target)
	}
	if err := missing("Next", s.next); err != nil {
		return err
	}
	if err := missing("Default", s.deflt); err != nil {
		return err
	}
	for i, r := range s.choices {
		if err := missing(fmt.Sprintf("Choices[%d].Next", i), r.next); err != nil {
			return err
		}
	}
	for i, c := range s.catches {
		if err := missing(fmt.Sprintf("Catch[%d].Next", i), c.next); err != nil {
			return err
		}
	}
	return nil
}

func (g *Graph) parseState(name string, obj *object, depth int) (*state, error) {
	s := &state{name: name, order: g.count}
	g.count++
	typ, ok, err := obj.str("Type")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errors.New("Type is missing")
	}
	if !stateTypes[typ] {
		return nil, fmt.Errorf("Type %q is not a state type", typ)
	}
	s.typ = typ
	if s.next, _, err = obj.str("Next"); err != nil {
		return nil, err
	}
	if s.deflt, _, err = obj.str("Default"); err != nil {
		return nil, err
	}
	if v, ok := obj.vals["End"]; ok {
		b, isBool := v.(bool)
		if !isBool {
			return nil, fmt.Errorf("End is %s, want a boolean", kindOf(v))
		}
		s.end = b
	}
	if s.choices, err = parseChoices(obj); err != nil {
		return nil, err
	}
	if s.catches, err = parseCatches(obj); err != nil {
		return nil, err
	}
	if s.retries, err = parseRetries(obj); err != nil {
		return nil, err
	}
	switch typ {
	case "Parallel":
		items, err := obj.objects("Branches")
		if err != nil {
			return nil, err
		}
		if len(items) == 0 {
			return nil, errors.New("Branches is missing or empty")
		}
		for i, b := range items {
			m, err := g.parseMachine(b, depth+1)
			if err != nil {
				return nil, fmt.Errorf("Branches[%d]: %w", i, err)
			}
			s.branches = append(s.branches, m)
		}
	case "Map":
		field := "ItemProcessor"
		v, ok := obj.vals[field]
		if !ok {
			field = "Iterator"
			v, ok = obj.vals[field]
		}
		if !ok {
			return nil, errors.New("neither ItemProcessor nor Iterator is given")
		}
		po, ok := v.(*object)
		if !ok {
			return nil, fmt.Errorf("%s is %s, want an object", field, kindOf(v))
		}
		m, err := g.parseMachine(po, depth+1)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", field, err)
		}
		s.processor = m
	}
	return s, nil
}

// parseChoices reads a Choice state's rules: each one's target and a short text of its condition.
func parseChoices(obj *object) ([]rule, error) {
	return parseEach(obj, "Choices", func(r *object) (rule, error) {
		next, err := r.required("Next")
		title := condition(r, 0)
		return rule{next: next, label: shorten(title, maxLabelRunes), title: shorten(title, maxTitleRunes)}, err
	})
}

// parseCatches reads a state's Catch: each catcher's errors and target.
func parseCatches(obj *object) ([]catcher, error) {
	return parseEach(obj, "Catch", func(c *object) (catcher, error) {
		errs, err := c.strs("ErrorEquals")
		if err != nil {
			return catcher{}, err
		}
		next, err := c.required("Next")
		return catcher{errors: errs, next: next}, err
	})
}

// parseRetries reads a state's Retry: each retrier's errors and attempts (3 when MaxAttempts is absent).
func parseRetries(obj *object) ([]retrier, error) {
	return parseEach(obj, "Retry", func(r *object) (retrier, error) {
		errs, err := r.strs("ErrorEquals")
		attempts := 3
		if v, ok := r.vals["MaxAttempts"].(json.Number); ok {
			if n, err := strconv.Atoi(v.String()); err == nil {
				attempts = n
			}
		}
		return retrier{errors: errs, maxAttempts: attempts}, err
	})
}

// parseEach reads the array of objects at key with parse, one item each, an error naming the item (key[i]).
func parseEach[T any](obj *object, key string, parse func(*object) (T, error)) ([]T, error) {
	items, err := obj.objects(key)
	if err != nil {
		return nil, err
	}
	var out []T
	for i, o := range items {
		v, err := parse(o)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", key, i, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// required is the string at key, which must be there.
func (o *object) required(key string) (string, error) {
	v, ok, err := o.str(key)
	if err == nil && !ok {
		err = fmt.Errorf("%s is missing", key)
	}
	return v, err
}

// operators maps a Choice rule's comparison to the short form its edge label shows.
var operators = map[string]string{
	"StringEquals": "==", "StringLessThan": "<", "StringGreaterThan": ">", "StringLessThanEquals": "<=",
	"StringGreaterThanEquals": ">=", "StringMatches": "matches",
	"NumericEquals": "==", "NumericLessThan": "<", "NumericGreaterThan": ">", "NumericLessThanEquals": "<=",
	"NumericGreaterThanEquals": ">=",
	"BooleanEquals":            "==",
	"TimestampEquals":          "==", "TimestampLessThan": "<", "TimestampGreaterThan": ">",
	"TimestampLessThanEquals": "<=", "TimestampGreaterThanEquals": ">=",
	"IsNull": "is null", "IsPresent": "is present", "IsNumeric": "is numeric", "IsString": "is string",
	"IsBoolean": "is boolean", "IsTimestamp": "is timestamp",
}

// condition writes a Choice rule as a short expression: a JSONata Condition as written, a comparison as its
// variable, operator and value, and And, Or and Not around their rules.
func condition(r *object, depth int) string {
	if depth > 4 {
		return "…"
	}
	if c, ok := r.vals["Condition"].(string); ok {
		c = strings.TrimSpace(c)
		c = strings.TrimPrefix(c, "{%")
		c = strings.TrimSuffix(c, "%}")
		return strings.TrimSpace(c)
	}
	for _, op := range []string{"And", "Or"} {
		if items, err := r.objects(op); err == nil && len(items) > 0 {
			parts := make([]string, len(items))
			for i, it := range items {
				parts[i] = condition(it, depth+1)
			}
			return "(" + strings.Join(parts, " "+strings.ToLower(op)+" ") + ")"
		}
	}
	if n, ok := r.vals["Not"].(*object); ok {
		return "not " + condition(n, depth+1)
	}
	variable, _, _ := r.str("Variable")
	for _, key := range r.keys {
		base := strings.TrimSuffix(key, "Path")
		sym, ok := operators[base]
		if !ok {
			continue
		}
		val := literal(r.vals[key])
		if strings.HasPrefix(base, "Is") {
			if val == "false" {
				return variable + " " + strings.Replace(sym, "is ", "is not ", 1)
			}
			return variable + " " + sym
		}
		return variable + " " + sym + " " + val
	}
	if variable != "" {
		return variable
	}
	return "rule"
}

// literal writes a JSON value compactly for a label.
func literal(v any) string {
	switch t := v.(type) {
	case string:
		return strconv.Quote(t)
	case json.Number:
		return t.String()
	case bool:
		return strconv.FormatBool(t)
	case nil:
		return "null"
	case *object:
		return "{…}"
	default:
		return "[…]"
	}
}

// object is a JSON object that remembers the order of its keys, which the layout uses to break ties the way the
// definition lists its states.
type object struct {
	keys []string
	vals map[string]any
	dups []string
}

// str returns the string member key, whether it is present, and an error when it is not a string.
func (o *object) str(key string) (string, bool, error) {
	v, ok := o.vals[key]
	if !ok {
		return "", false, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", true, fmt.Errorf("%s is %s, want a string", key, kindOf(v))
	}
	return s, true, nil
}

// objects returns the array of objects member key (nil when absent).
func (o *object) objects(key string) ([]*object, error) { return arrayOf[*object](o, key, "an object") }

// strs returns the array of strings member key (nil when absent).
func (o *object) strs(key string) ([]string, error) { return arrayOf[string](o, key, "a string") }

// arrayOf returns member key of o as an array whose items are all of type T (nil when absent); want names T in the
// error about an item of another kind.
func arrayOf[T any](o *object, key, want string) ([]T, error) {
	v, ok := o.vals[key]
	if !ok {
		return nil, nil
	}
	arr, isArr := v.([]any)
	if !isArr {
		return nil, fmt.Errorf("%s is %s, want an array", key, kindOf(v))
	}
	out := make([]T, len(arr))
	for i, it := range arr {
		x, isT := it.(T)
		if !isT {
			return nil, fmt.Errorf("%s[%d] is %s, want %s", key, i, kindOf(it), want)
		}
		out[i] = x
	}
	return out, nil
}

func kindOf(v any) string {
	switch v.(type) {
	case *object:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	default:
		return "null"
	}
}

// decodeJSON reads one JSON value whose objects keep their key order.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			return nil, errors.New("text follows the JSON value")
		}
		return nil, err
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxJSONNesting {
		return nil, fmt.Errorf("nested more than %d deep", maxJSONNesting)
	}
	tok, err := dec.Token()
	if err == io.EOF {
		return nil, io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	switch d {
	case '{':
		o := &object{vals: map[string]any{}}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key, ok := kt.(string)
			if !ok {
				return nil, fmt.Errorf("object key %v is not a string", kt)
			}
			v, err := decodeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			if _, seen := o.vals[key]; seen {
				o.dups = append(o.dups, key)
			} else {
				o.keys = append(o.keys, key)
			}
			o.vals[key] = v
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return o, nil
	case '[':
		arr := []any{}
		for dec.More() {
			v, err := decodeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return arr, nil
	default:
		return nil, fmt.Errorf("unexpected %v", d)
	}
}
