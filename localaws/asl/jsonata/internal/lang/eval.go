package lang

import (
	"context"
	"math"
	"time"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/ast"
	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// evaluator is the state of one evaluation.
type evaluator struct {
	lib      *Library
	bindings map[string]any
	lookupFn func(name string) (any, bool)
	now      time.Time
	sigs     map[*ast.Node]*signature
	root     any // the input, as $$ reads it

	depth, maxDepth int
	ctx             context.Context
	done            <-chan struct{}
	ticks           uint
}

// binding is one variable of a frame or a tuple.
type binding struct {
	name string
	val  any
}

// frame is a scope of variables. A frame made from a tuple shares the tuple's bindings until it binds a variable.
type frame struct {
	parent *frame
	vars   []binding
	shared bool
}

// bind sets a variable of the frame.
func (f *frame) bind(name string, v any) {
	if f.shared {
		vars := make([]binding, len(f.vars), len(f.vars)+1)
		copy(vars, f.vars)
		f.vars, f.shared = vars, false
	}
	for i := range f.vars {
		if f.vars[i].name == name {
			f.vars[i].val = v
			return
		}
	}
	f.vars = append(f.vars, binding{name, v})
}

// lookup finds a variable in the frames, then in the evaluation's bindings, then in the library.
func (ev *evaluator) lookup(f *frame, name string) (any, bool) {
	for ; f != nil; f = f.parent {
		for i := len(f.vars) - 1; i >= 0; i-- {
			if f.vars[i].name == name {
				return f.vars[i].val, true
			}
		}
	}
	if v, ok := ev.bindings[name]; ok {
		return v, true
	}
	if ev.lookupFn != nil {
		if v, ok := ev.lookupFn(name); ok {
			return v, true
		}
	}
	if b, ok := ev.lib.byName[name]; ok {
		return b, true
	}
	return nil, false
}

// tuple is an item of a tuple stream: the context item (@) with the variables bound along the path (focus, index,
// ancestor labels).
type tuple struct {
	at   any
	vars []binding
}

// tuples is a tuple stream, which paths with @, # or % bindings pass between their steps.
type tuples []tuple

// withVar returns vars with name bound to v, never changing vars itself (tuples share them).
func withVar(vars []binding, name string, v any) []binding {
	for i := range vars {
		if vars[i].name == name {
			out := make([]binding, len(vars))
			copy(out, vars)
			out[i].val = v
			return out
		}
	}
	return append(vars[:len(vars):len(vars)], binding{name, v})
}

// tupleFrame returns a frame holding a tuple's variables.
func tupleFrame(env *frame, t *tuple) *frame {
	return &frame{parent: env, vars: t.vars, shared: true}
}

// errStack and errTimeout are the errors of an evaluation stopped by its limits.
func errStack() error {
	return &value.Error{Code: "U1001", Message: "Stack overflow error: Check for non-terminating recursive function.  Consider rewriting as tail-recursive."}
}

func errTimeout() error {
	return &value.Error{Code: "U1001", Message: "Expression evaluation timeout: Check for infinite loop"}
}

// eval evaluates a node: the node itself, then its predicates and group-by, then the sequence rules (an empty
// sequence is undefined, a sequence of one item is that item unless it must stay an array).
func (ev *evaluator) eval(n *ast.Node, input any, env *frame) (any, error) {
	ev.depth++
	if ev.depth > ev.maxDepth {
		ev.depth--
		return nil, errStack()
	}
	if ev.done != nil {
		ev.ticks++
		if ev.ticks&63 == 0 {
			select {
			case <-ev.done:
				ev.depth--
				return nil, errTimeout()
			default:
			}
		}
	}
	r, err := ev.evalNode(n, input, env)
	if err == nil {
		for _, p := range n.Predicates {
			pe := p
			if p.Kind == ast.Filter {
				pe = p.Expr
			}
			if r, err = ev.evalFilter(pe, r, env); err != nil {
				break
			}
		}
	}
	if err == nil && n.Group != nil && n.Kind != ast.Path {
		r, err = ev.evalGroup(n.Group, r, env)
	}
	ev.depth--
	if err != nil {
		return nil, err
	}
	if a, ok := r.(*value.Array); ok && a.Sequence {
		if n.KeepArray && !a.KeepSingleton {
			a = &value.Array{Items: a.Items, Sequence: true, KeepSingleton: true, Cons: a.Cons}
			r = a
		}
		switch len(a.Items) {
		case 0:
			return nil, nil
		case 1:
			if !a.KeepSingleton {
				return a.Items[0], nil
			}
		}
	}
	return r, nil
}

// evalNode evaluates a node by its kind.
func (ev *evaluator) evalNode(n *ast.Node, input any, env *frame) (any, error) {
	switch n.Kind {
	case ast.Path:
		return ev.evalPath(n, input, env)
	case ast.Binary:
		return ev.evalBinary(n, input, env)
	case ast.Negate:
		v, err := ev.eval(n.Expr, input, env)
		if err != nil || v == nil {
			return nil, err
		}
		f, ok, err := numeric(v)
		if err != nil {
			return nil, at(err, n)
		}
		if !ok {
			return nil, &value.Error{Code: "D1002", Position: n.Position, Token: "-", Value: v}
		}
		return -f, nil
	case ast.Name:
		name, _ := n.Value.(string)
		return lookupField(input, name), nil
	case ast.String, ast.Number, ast.Literal:
		return n.Value, nil
	case ast.Wildcard:
		return wildcard(input), nil
	case ast.Descendant:
		if input == nil {
			return nil, nil
		}
		out := newSeq(0)
		out.Items = descendants(input, out.Items)
		if len(out.Items) == 1 {
			return out.Items[0], nil
		}
		return out, nil
	case ast.Parent:
		if n.Slot == nil {
			return nil, nil
		}
		v, _ := ev.lookup(env, n.Slot.Label)
		return v, nil
	case ast.Condition:
		c, err := ev.eval(n.Cond, input, env)
		if err != nil {
			return nil, err
		}
		if truthy(c) {
			return ev.eval(n.Then, input, env)
		}
		if n.Else != nil {
			return ev.eval(n.Else, input, env)
		}
		return nil, nil
	case ast.Block:
		scope := &frame{parent: env}
		var r any
		for _, x := range n.Exprs {
			var err error
			if r, err = ev.eval(x, input, scope); err != nil {
				return nil, err
			}
		}
		return r, nil
	case ast.Bind:
		v, err := ev.eval(n.RHS, input, env)
		if err != nil {
			return nil, err
		}
		name, _ := n.LHS.Value.(string)
		env.bind(name, v)
		return v, nil
	case ast.Regex:
		if r := n.Regex(); r != nil {
			return r, nil
		}
		return nil, nil
	case ast.Variable:
		name, _ := n.Value.(string)
		switch name {
		case "":
			if a, ok := input.(*value.Array); ok && a.OuterWrapper && len(a.Items) > 0 {
				return a.Items[0], nil
			}
			return input, nil
		case "$":
			return ev.root, nil
		}
		v, _ := ev.lookup(env, name)
		return v, nil
	case ast.Call:
		return ev.evalCall(n, input, env, nil, false)
	case ast.Partial:
		return ev.evalPartial(n, input, env)
	case ast.Lambda:
		sig := ev.sigs[n]
		if sig == nil && n.Signature != nil { // a lambda of an expression given to $eval
			sig = compileSignature(n.Signature)
		}
		return &lambda{node: n, input: input, env: env, sig: sig}, nil
	case ast.Apply:
		return ev.evalApply(n, input, env)
	case ast.Transform:
		return &transform{node: n, env: env}, nil
	case ast.Array:
		return ev.evalArray(n, input, env)
	case ast.Object:
		return ev.evalGroup(n, input, env)
	}
	return nil, nil
}

// at sets the position of an error that has none.
func at(err error, n *ast.Node) error {
	if e, ok := err.(*value.Error); ok && e.Position == 0 {
		e.Position = n.Position
	}
	return err
}

// numeric reports whether v is a number; an infinite number is the error D1001 (JSONata's numbers are finite).
func numeric(v any) (float64, bool, error) {
	f, ok := v.(float64)
	if !ok || math.IsNaN(f) {
		return 0, false, nil
	}
	if math.IsInf(f, 0) {
		return 0, false, &value.Error{Code: "D1001", Value: f}
	}
	return f, true, nil
}

// lookupField reads a field of an object, or of every object of an array (flattening arrays one level).
func lookupField(input any, name string) any {
	switch t := input.(type) {
	case *value.Object:
		v, _ := t.Get(name)
		return v
	case *value.Array:
		out := newSeq(0)
		for _, x := range t.Items {
			r := lookupField(x, name)
			if r == nil {
				continue
			}
			out.Items = appendFlat(out.Items, r)
		}
		return out
	}
	return nil
}

// wildcard returns the values of an object's fields (arrays flattened).
func wildcard(input any) any {
	out := newSeq(0)
	if a, ok := input.(*value.Array); ok && a.OuterWrapper && len(a.Items) > 0 {
		input = a.Items[0]
	}
	var values []any
	switch t := input.(type) {
	case *value.Object:
		values = t.Values()
	case *value.Array: // an array's fields are its items
		values = t.Items
	}
	{
		for _, v := range values {
			if v == nil {
				continue
			}
			if a, ok := v.(*value.Array); ok {
				out.Items = flattenInto(out.Items, a)
			} else {
				out.Items = append(out.Items, v)
			}
		}
	}
	return out
}

// flattenInto appends the items of nested arrays, at any depth.
func flattenInto(items []any, v any) []any {
	if a, ok := v.(*value.Array); ok {
		for _, x := range a.Items {
			items = flattenInto(items, x)
		}
		return items
	}
	return append(items, v)
}

// descendants appends v and every value below it (arrays themselves excluded).
func descendants(v any, out []any) []any {
	switch t := v.(type) {
	case *value.Array:
		for _, x := range t.Items {
			out = descendants(x, out)
		}
		return out
	case *value.Object:
		out = append(out, v)
		for _, x := range t.Values() {
			if x != nil {
				out = descendants(x, out)
			}
		}
		return out
	}
	return append(out, v)
}

// evalArray evaluates an array constructor: a value that is an array is spliced in, unless it comes from a nested
// array constructor.
func (ev *evaluator) evalArray(n *ast.Node, input any, env *frame) (any, error) {
	items := make([]any, 0, len(n.Exprs))
	for _, x := range n.Exprs {
		v, err := ev.eval(x, input, env)
		if err != nil {
			return nil, err
		}
		if v == nil {
			continue
		}
		if x.Kind == ast.Array {
			items = append(items, v)
		} else {
			items = appendFlat(items, v)
		}
	}
	return &value.Array{Items: items, Cons: n.ConsArray}, nil
}

// evalPath evaluates a path, step by step, on a sequence or, once a step binds variables, on a tuple stream.
func (ev *evaluator) evalPath(n *ast.Node, input any, env *frame) (any, error) {
	if len(n.Steps) == 0 {
		return nil, nil
	}
	var in *value.Array
	if a, ok := input.(*value.Array); ok && n.Steps[0].Kind != ast.Variable {
		in = a
	} else {
		// Unlike other sequences, a path's input holds an undefined input as an item: a constructor as the first
		// step is evaluated even without input.
		in = &value.Array{Items: []any{input}, Sequence: true}
	}
	var res *value.Array
	var ts tuples
	isTuple, haveTuples := false, false
	for i, step := range n.Steps {
		if step.Tuple {
			isTuple = true
		}
		var err error
		switch {
		case i == 0 && step.ConsArray:
			var r any
			if r, err = ev.eval(step, in, env); err == nil {
				if a, ok := r.(*value.Array); ok {
					res = a
				} else {
					res = seqOf(r)
				}
			}
		case isTuple:
			var src tuples
			if haveTuples {
				src = ts
			} else {
				src = make(tuples, len(in.Items))
				for j, x := range in.Items {
					src[j] = tuple{at: x}
				}
				if step.Kind == ast.Sort {
					src = nil
				}
			}
			ts, err = ev.evalTupleStep(step, in, src, haveTuples, env)
			haveTuples = true
		default:
			res, err = ev.evalStep(step, in, env, i == len(n.Steps)-1)
		}
		if err != nil {
			return nil, err
		}
		if !isTuple && (res == nil || len(res.Items) == 0) {
			break
		}
		if !step.Focused && res != nil { // a step with @ (even @$) leaves the context as it was
			in = res
		}
	}
	var out any
	if isTuple {
		if n.Tuple {
			out = ts
		} else {
			seq := newSeq(len(ts))
			for _, t := range ts {
				seq.Items = append(seq.Items, t.at)
			}
			res = seq
			out = seq
		}
	} else if res != nil {
		out = res
	}
	if n.KeepSingletonArray && res != nil && out == any(res) {
		if res.Cons && !res.Sequence {
			res = &value.Array{Items: []any{res}, Sequence: true, KeepSingleton: true}
		} else if !res.KeepSingleton {
			c := *res
			c.KeepSingleton = true
			res = &c
		}
		out = res
	}
	if n.Group != nil {
		var err error
		if isTuple {
			out, err = ev.evalGroup(n.Group, ts, env)
		} else {
			out, err = ev.evalGroup(n.Group, out, env)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// evalStep evaluates a step of a path against every item of its input and flattens the results into a sequence.
func (ev *evaluator) evalStep(step *ast.Node, in *value.Array, env *frame, last bool) (*value.Array, error) {
	if step.Kind == ast.Sort {
		r, _, err := ev.evalSort(step, in.Items, nil, env)
		if err != nil {
			return nil, err
		}
		out := &value.Array{Items: r, Sequence: true}
		for _, st := range step.Stages {
			if st.Kind != ast.Filter {
				continue
			}
			f, err := ev.evalFilter(st.Expr, out, env)
			if err != nil {
				return nil, err
			}
			out = asSeq(f)
		}
		return out, nil
	}
	results := make([]any, 0, len(in.Items))
	for _, item := range in.Items {
		r, err := ev.eval(step, item, env)
		if err != nil {
			return nil, err
		}
		for _, st := range step.Stages {
			if st.Kind != ast.Filter {
				continue
			}
			if r, err = ev.evalFilter(st.Expr, r, env); err != nil {
				return nil, err
			}
		}
		if r != nil {
			results = append(results, r)
		}
	}
	if last && len(results) == 1 {
		if a, ok := results[0].(*value.Array); ok && !a.Sequence {
			return a, nil
		}
	}
	out := newSeq(len(results))
	for _, r := range results {
		if a, ok := r.(*value.Array); ok && !a.Cons {
			out.Items = append(out.Items, a.Items...)
		} else if _, ok := r.(tuples); !ok {
			out.Items = append(out.Items, r)
		}
	}
	return out, nil
}

// asSeq returns v as an array: undefined is empty, a single value a sequence of one.
func asSeq(v any) *value.Array {
	if a, ok := v.(*value.Array); ok {
		return a
	}
	return seqOf(v)
}

// evalTupleStep evaluates a step on a tuple stream: every result carries the bindings of the tuple it came from, plus
// the step's own (focus @, index #, ancestor for %).
func (ev *evaluator) evalTupleStep(step *ast.Node, in *value.Array, src tuples, have bool, env *frame) (tuples, error) {
	if step.Kind == ast.Sort {
		var out tuples
		if have {
			_, sorted, err := ev.evalSort(step, nil, src, env)
			if err != nil {
				return nil, err
			}
			out = sorted
		} else {
			sorted, _, err := ev.evalSort(step, in.Items, nil, env)
			if err != nil {
				return nil, err
			}
			out = make(tuples, len(sorted))
			for i, x := range sorted {
				out[i] = tuple{at: x}
				if step.IndexVar != "" {
					out[i].vars = []binding{{step.IndexVar, float64(i)}}
				}
			}
		}
		return ev.evalStages(step.Stages, out, env)
	}
	out := make(tuples, 0, len(src))
	for i := range src {
		t := &src[i]
		r, err := ev.eval(step, t.at, tupleFrame(env, t))
		if err != nil {
			return nil, err
		}
		if r == nil {
			continue
		}
		if more, ok := r.(tuples); ok {
			for _, m := range more {
				vars := t.vars
				for _, b := range m.vars {
					vars = withVar(vars, b.name, b.val)
				}
				out = append(out, tuple{at: m.at, vars: vars})
			}
			continue
		}
		var items []any
		if a, ok := r.(*value.Array); ok {
			items = a.Items
		} else {
			items = []any{r}
		}
		for j, x := range items {
			nt := tuple{at: x, vars: t.vars}
			if step.Focus != "" {
				nt.vars = withVar(nt.vars, step.Focus, x)
				nt.at = t.at
			}
			if step.IndexVar != "" {
				nt.vars = withVar(nt.vars, step.IndexVar, float64(j))
			}
			if step.Ancestor != nil {
				nt.vars = withVar(nt.vars, step.Ancestor.Label, t.at)
			}
			out = append(out, nt)
		}
	}
	return ev.evalStages(step.Stages, out, env)
}

// evalStages applies a tuple step's predicates and # index bindings in written order.
func (ev *evaluator) evalStages(stages []*ast.Node, ts tuples, env *frame) (tuples, error) {
	for _, st := range stages {
		switch st.Kind {
		case ast.Filter:
			r, err := ev.evalFilter(st.Expr, ts, env)
			if err != nil {
				return nil, err
			}
			ts, _ = r.(tuples)
		case ast.Index:
			name, _ := st.Value.(string)
			next := make(tuples, len(ts))
			for i, t := range ts {
				next[i] = tuple{at: t.at, vars: withVar(t.vars, name, float64(i))}
			}
			ts = next
		}
	}
	return ts, nil
}

// evalFilter applies a predicate [expr] to a value: a number selects by index (negative from the end), anything else
// keeps the items for which it is true (or whose index is among the numbers it gives).
func (ev *evaluator) evalFilter(pred *ast.Node, input any, env *frame) (any, error) {
	if ts, ok := input.(tuples); ok {
		return ev.filterTuples(pred, ts, env)
	}
	var items []any
	switch t := input.(type) {
	case nil:
	case *value.Array:
		items = t.Items
	default:
		items = []any{input}
	}
	out := newSeq(0)
	if pred.Kind == ast.Number {
		f, _ := pred.Value.(float64)
		if i, ok := index(f, len(items)); ok {
			if a, ok := items[i].(*value.Array); ok {
				return a, nil
			}
			out.Items = append(out.Items, items[i])
		}
		return out, nil
	}
	for i, item := range items {
		r, err := ev.eval(pred, item, env)
		if err != nil {
			return nil, err
		}
		keep, err := selects(r, i, len(items))
		if err != nil {
			return nil, at(err, pred)
		}
		if keep {
			out.Items = append(out.Items, item)
		}
	}
	return out, nil
}

// filterTuples is evalFilter on a tuple stream: the predicate sees each tuple's bindings.
func (ev *evaluator) filterTuples(pred *ast.Node, ts tuples, env *frame) (any, error) {
	out := tuples{}
	if pred.Kind == ast.Number {
		f, _ := pred.Value.(float64)
		if i, ok := index(f, len(ts)); ok {
			out = append(out, ts[i])
		}
		return out, nil
	}
	for i := range ts {
		r, err := ev.eval(pred, ts[i].at, tupleFrame(env, &ts[i]))
		if err != nil {
			return nil, err
		}
		keep, err := selects(r, i, len(ts))
		if err != nil {
			return nil, at(err, pred)
		}
		if keep {
			out = append(out, ts[i])
		}
	}
	return out, nil
}

// index turns a predicate's number into a position (rounded down; negative counts from the end).
func index(f float64, n int) (int, bool) {
	f = math.Floor(f)
	if f < 0 {
		f += float64(n)
	}
	if f < 0 || f >= float64(n) || math.IsNaN(f) {
		return 0, false
	}
	return int(f), true
}

// selects reports whether a predicate's value r keeps the item at position i of n.
func selects(r any, i, n int) (bool, error) {
	if f, ok, err := numeric(r); err != nil {
		return false, err
	} else if ok {
		j, ok := index(f, n)
		return ok && j == i, nil
	}
	if a, ok := r.(*value.Array); ok {
		all := true
		for _, x := range a.Items {
			_, isNum, err := numeric(x)
			if err != nil {
				return false, err
			}
			if !isNum {
				all = false
				break
			}
		}
		if all {
			for _, x := range a.Items {
				if j, ok := index(x.(float64), n); ok && j == i {
					return true, nil
				}
			}
			return false, nil
		}
	}
	return truthy(r), nil
}
