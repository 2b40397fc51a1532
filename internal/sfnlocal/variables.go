package sfnlocal

import (
	"fmt"
	"slices"
	"sort"

	"github.com/transferflow/orchestrator/internal/asl"
	"github.com/transferflow/orchestrator/internal/jsonvalue"
)

// Limits of workflow variables, as AWS documents them: one variable, and all the variables one Assign sets, at most
// 256 KiB of JSON text; all the variables of an execution at most 10 MiB.
const (
	MaxVariableBytes      = MaxPayloadBytes
	MaxAssignBytes        = MaxPayloadBytes
	MaxTotalVariableBytes = 10 << 20
)

// scope holds the workflow variables of one level of an execution: the machine's own states share the root scope;
// each Parallel branch and each Map iteration runs in a scope of its own whose parent is the enclosing one. Reads
// go up the chain; an assignment sets the variable in the scope of the state that makes it, so that a branch's
// or an iteration's variables never leak out. A scope is written only by the goroutine running its states, and
// its parents are not written while it runs (the Parallel or Map state waits for it).
type scope struct {
	parent *scope
	vals   map[string]any
	sizes  map[string]int // the size of each value's JSON text
	total  int            // the sum of sizes, this scope and its parents
}

// newScope returns an empty scope under parent (nil for the machine's); its maps are made on the first assignment,
// so that an execution without variables costs one small allocation.
func newScope(parent *scope) *scope {
	s := &scope{parent: parent}
	if parent != nil {
		s.total = parent.total
	}
	return s
}

// lookup returns the value of a variable, from the innermost scope that has it.
func (s *scope) lookup(name string) (any, bool) {
	for ; s != nil; s = s.parent {
		if v, ok := s.vals[name]; ok {
			return v, true
		}
	}
	return nil, false
}

// assignment is one variable of an Assign, evaluated.
type assignment struct {
	name string
	val  any
	text string
}

// assign evaluates the limits of one Assign and sets its variables; it returns the assignedVariables of the
// state's StateExited event (each name and its value's JSON text).
func (s *scope) assign(state string, as []assignment) (map[string]any, *failure) {
	sum := 0
	total := s.total
	for _, a := range as {
		if len(a.text) > MaxVariableBytes {
			return nil, &failure{Error: ErrNameDataLimitExceeded, Cause: fmt.Sprintf(
				"The state '%s' assigned the variable '%s' a value of %d bytes, more than the %d bytes a variable may hold.",
				state, a.name, len(a.text), MaxVariableBytes)}
		}
		sum += len(a.text)
		total += len(a.text) - s.sizes[a.name]
	}
	if sum > MaxAssignBytes {
		return nil, &failure{Error: ErrNameDataLimitExceeded, Cause: fmt.Sprintf(
			"The state '%s' assigned variables of %d bytes in all, more than the %d bytes one Assign may hold.",
			state, sum, MaxAssignBytes)}
	}
	if total > MaxTotalVariableBytes {
		return nil, &failure{Error: ErrNameDataLimitExceeded, Cause: fmt.Sprintf(
			"The state '%s' would bring the execution's variables to %d bytes, more than the %d bytes an execution may hold.",
			state, total, MaxTotalVariableBytes)}
	}
	out := make(map[string]any, len(as))
	if s.vals == nil {
		s.vals, s.sizes = make(map[string]any, len(as)), make(map[string]int, len(as))
	}
	for _, a := range as {
		s.vals[a.name] = a.val
		s.sizes[a.name] = len(a.text)
		out[a.name] = a.text
	}
	s.total = total
	return out, nil
}

// text returns the scope's own variables as one JSON object, names sorted (a checkpoint's variables).
func (s *scope) text() string {
	if len(s.vals) == 0 {
		return ""
	}
	names := make([]string, 0, len(s.vals))
	for n := range s.vals {
		names = append(names, n)
	}
	sort.Strings(names)
	o := jsonvalue.NewObjectKeys(names)
	for i, n := range names {
		o.SetAt(i, s.vals[n])
	}
	return marshal(o)
}

// restoreScope builds a root scope from a checkpoint's variables.
func restoreScope(text string) (*scope, error) {
	s := newScope(nil)
	if text == "" {
		return s, nil
	}
	s.vals, s.sizes = map[string]any{}, map[string]int{}
	v, err := asl.Decode([]byte(text))
	if err != nil {
		return nil, fmt.Errorf("decode the checkpoint's variables: %w", err)
	}
	o, ok := v.(*jsonvalue.Object)
	if !ok {
		return nil, fmt.Errorf("decode the checkpoint's variables: not an object")
	}
	for i, k := range o.Keys() {
		val := o.Values()[i]
		n := len(marshal(val))
		s.vals[k], s.sizes[k] = val, n
		s.total += n
	}
	return s, nil
}

// assignments turns an evaluated Assign object into assignments.
func assignments(v any) []assignment {
	o, ok := v.(*jsonvalue.Object)
	if !ok {
		return nil
	}
	out := make([]assignment, 0, o.Len())
	for i, k := range o.Keys() {
		val := o.Values()[i]
		out = append(out, assignment{name: k, val: val, text: marshal(val)})
	}
	return out
}

// commitAssign sets the variables an Assign evaluated for the state (sr.pending), keeping the assignedVariables
// for its StateExited event.
func (x *execution) commitAssign(sr *stateRun) *failure {
	if sr.pending == nil {
		return nil
	}
	vars := sr.vars
	if vars == nil {
		vars = x.vars
	}
	assigned, fail := vars.assign(sr.st.Name, sr.pending)
	sr.pending = nil
	if fail != nil {
		return fail
	}
	sr.assigned = assigned
	return nil
}

// variable returns the value of a variable visible to the state, or, for "states", the reserved $states.
func (x *execution) variable(sr *stateRun, name string) (any, bool) {
	if name == "states" {
		return x.statesValue(sr), true
	}
	vars := sr.vars
	if vars == nil {
		vars = x.vars
	}
	return vars.lookup(name)
}

// statesValue builds $states for the state: input, result (once there is one), errorOutput (in a Catch) and
// context.
func (x *execution) statesValue(sr *stateRun) *jsonvalue.Object {
	keys := make([]string, 0, 4)
	vals := make([]any, 0, 4)
	keys, vals = append(keys, "input"), append(vals, sr.statesInput)
	if sr.hasResult {
		keys, vals = append(keys, "result"), append(vals, sr.result)
	}
	if sr.hasErrOut {
		keys, vals = append(keys, "errorOutput"), append(vals, sr.errOut)
	}
	keys, vals = append(keys, "context"), append(vals, x.contextObject(sr))
	o := jsonvalue.NewObjectKeys(keys)
	for i, v := range vals {
		o.SetAt(i, v)
	}
	return o
}

// mergeAssignments returns the assignments of a, then those of b, a name in both taking b's value.
func mergeAssignments(a, b []assignment) []assignment {
	if a == nil {
		return b
	}
	out := make([]assignment, 0, len(a)+len(b))
	for _, x := range a {
		if !slices.ContainsFunc(b, func(y assignment) bool { return y.name == x.name }) {
			out = append(out, x)
		}
	}
	return append(out, b...)
}
