package sfnengine

import (
	"fmt"
	"slices"
	"sort"

	"github.com/transferflow/orchestrator/localaws/asl"
	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
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

// check evaluates the limits of one Assign without setting its variables (set does, once the state's StateExited
// event is recorded): it returns the assignedVariables of that event (each name and its value's JSON text) and the
// size of the variables once set, for set.
func (s *scope) check(state string, as []assignment) (map[string]any, int, *failure) {
	sum := 0
	total := s.total
	for _, a := range as {
		if len(a.text) > MaxVariableBytes {
			return nil, 0, &failure{Error: ErrNameDataLimitExceeded, Cause: fmt.Sprintf(
				"The state '%s' assigned the variable '%s' a value of %d bytes, more than the %d bytes a variable may hold.",
				state, a.name, len(a.text), MaxVariableBytes)}
		}
		sum += len(a.text)
		total += len(a.text) - s.sizes[a.name]
	}
	if sum > MaxAssignBytes {
		return nil, 0, &failure{Error: ErrNameDataLimitExceeded, Cause: fmt.Sprintf(
			"The state '%s' assigned variables of %d bytes in all, more than the %d bytes one Assign may hold.",
			state, sum, MaxAssignBytes)}
	}
	if total > MaxTotalVariableBytes {
		return nil, 0, &failure{Error: ErrNameDataLimitExceeded, Cause: fmt.Sprintf(
			"The state '%s' would bring the execution's variables to %d bytes, more than the %d bytes an execution may hold.",
			state, total, MaxTotalVariableBytes)}
	}
	out := make(map[string]any, len(as))
	for _, a := range as {
		out[a.name] = a.text
	}
	return out, total, nil
}

// set sets the variables of an Assign that check accepted; total is what check returned.
func (s *scope) set(as []assignment, total int) {
	if s.vals == nil {
		s.vals, s.sizes = make(map[string]any, len(as)), make(map[string]int, len(as))
	}
	for _, a := range as {
		s.vals[a.name] = a.val
		s.sizes[a.name] = len(a.text)
	}
	s.total = total
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
// for its StateExited event. TestState, which records no event, uses it; a state of an execution checks its
// Assign with checkAssign and sets the variables with exitState, only once its StateExited event is recorded.
func (x *execution) commitAssign(sr *stateRun) *failure {
	if fail := x.checkAssign(sr); fail != nil {
		return fail
	}
	x.setAssign(sr)
	return nil
}

// checkAssign evaluates the limits of the Assign the state evaluated (sr.pending) and keeps the assignedVariables
// for its StateExited event (sr.assigned), and the variables' size once set (sr.assignTotal), without setting them.
func (x *execution) checkAssign(sr *stateRun) *failure {
	if sr.pending == nil {
		return nil
	}
	assigned, total, fail := x.scopeOf(sr).check(sr.st.Name, sr.pending)
	if fail != nil {
		sr.pending = nil
		return fail
	}
	sr.assigned, sr.assignTotal = assigned, total
	return nil
}

// setAssign sets the variables of the Assign checkAssign accepted.
func (x *execution) setAssign(sr *stateRun) {
	if sr.pending == nil {
		return
	}
	x.scopeOf(sr).set(sr.pending, sr.assignTotal)
	sr.pending = nil
}

// exitState records the state's StateExited event and then sets the variables its Assign evaluated (checked by
// checkAssign): both, or, when the event is not recorded because the execution is closing (stopped, timed out, past
// its history quota), neither. It then returns stopped: the state did not exit, and a redrive runs it again with the
// variables as they were before it, as AWS redrives a state without its StateExited event.
func (x *execution) exitState(sr *stateRun, th *thread, text string) *failure {
	if x.emit(th, true, sr.sp.exitedType, "stateExitedEventDetails", exitedDetails(sr, text)) == 0 {
		sr.pending = nil
		return stopped
	}
	x.setAssign(sr)
	return nil
}

// scopeOf returns the scope the state runs in.
func (x *execution) scopeOf(sr *stateRun) *scope {
	if sr.vars != nil {
		return sr.vars
	}
	return x.vars
}

// variable returns the value of a variable visible to the state, or, for "states", the reserved $states.
func (x *execution) variable(sr *stateRun, name string) (any, bool) {
	if name == "states" {
		return x.statesValue(sr), true
	}
	return x.scopeOf(sr).lookup(name)
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
