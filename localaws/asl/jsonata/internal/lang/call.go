package lang

import (
	"time"
	"unicode/utf16"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/ast"
	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/parse"
	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// lambda is a function defined in the expression, with the scope and context item it closes over. A thunk (a tail
// call the parser wrapped) is a lambda too: apply runs it in a loop instead of nesting.
type lambda struct {
	node  *ast.Node
	input any
	env   *frame
	sig   *signature
}

// Arity implements value.Function.
func (l *lambda) Arity() int { return len(l.node.Params) }

// partial is a partial application f(a, ?, c): the arguments bound so far and the positions still open.
type partial struct {
	fn    any
	args  []any
	holes []int
}

// Arity implements value.Function: one parameter per placeholder.
func (p *partial) Arity() int { return len(p.holes) }

// transform is the function a transform expression | pattern | update, delete | evaluates to.
type transform struct {
	node *ast.Node
	env  *frame
}

// Arity implements value.Function.
func (t *transform) Arity() int { return 1 }

// native is a function made by the evaluator itself: a composition f ~> g, the next() of a regex match.
type native struct {
	arity int
	fn    func(ev *evaluator, args []any) (any, error)
}

// Arity implements value.Function.
func (n *native) Arity() int { return n.arity }

// callCtx is the value.Context a built-in receives.
type callCtx struct {
	ev    *evaluator
	input any
	env   *frame
}

// Call implements value.Context.
func (c *callCtx) Call(fn value.Function, args []any) (any, error) {
	return c.ev.apply(fn, args, c.input, c.env)
}

// Input implements value.Context.
func (c *callCtx) Input() any { return c.input }

// Environment implements value.Context.
func (c *callCtx) Environment(name string) any {
	v, _ := c.ev.lookup(c.env, name)
	return v
}

// Now implements value.Context.
func (c *callCtx) Now() time.Time { return c.ev.now }

// procName is the name a call's errors carry: the function's variable name.
func procName(n *ast.Node) string {
	switch n.Kind {
	case ast.Path:
		if len(n.Steps) > 0 {
			s, _ := n.Steps[0].Value.(string)
			return s
		}
	case ast.Variable, ast.Name:
		s, _ := n.Value.(string)
		return s
	}
	return ""
}

// isNameStep reports whether a call's procedure is a field name (foo() written for $foo()).
func isNameStep(n *ast.Node) bool {
	if n.Kind == ast.Path && len(n.Steps) > 0 {
		return n.Steps[0].Kind == ast.Name
	}
	return n.Kind == ast.Name
}

// evalProcedure evaluates the procedure of a call or a partial application and returns it with the name its errors
// carry. A field name that is undefined while a variable of that name is defined (foo() written for $foo()) is the
// error code: T1005 for a call, T1007 for a partial application.
func (ev *evaluator) evalProcedure(n *ast.Node, input any, env *frame, code string) (any, string, error) {
	proc, err := ev.eval(n.Procedure, input, env)
	if err != nil {
		return nil, "", err
	}
	name := procName(n.Procedure)
	if proc == nil && isNameStep(n.Procedure) {
		if v, _ := ev.lookup(env, name); v != nil {
			return nil, "", &value.Error{Code: code, Position: n.Position, Token: name}
		}
	}
	return proc, name, nil
}

// evalCall evaluates a function call; with applied, the left side of ~> is the first argument.
func (ev *evaluator) evalCall(n *ast.Node, input any, env *frame, lhs any, applied bool) (any, error) {
	proc, name, err := ev.evalProcedure(n, input, env, "T1005")
	if err != nil {
		return nil, err
	}
	args := make([]any, 0, len(n.Args)+1)
	if applied {
		args = append(args, lhs)
	}
	for _, a := range n.Args {
		v, err := ev.eval(a, input, env)
		if err != nil {
			return nil, err
		}
		args = append(args, v)
	}
	r, err := ev.apply(proc, args, input, env)
	if err != nil {
		if e, ok := err.(*value.Error); ok {
			if e.Position == 0 {
				e.Position = n.Position
			}
			if e.Token == "" {
				e.Token = name
			}
		}
		return nil, err
	}
	return r, nil
}

// apply applies a function to arguments, running tail calls (thunks) in a loop so that tail recursion does not nest.
func (ev *evaluator) apply(fn any, args []any, input any, env *frame) (any, error) {
	r, err := ev.applyInner(fn, args, input, env)
	for err == nil {
		th, ok := r.(*lambda)
		if !ok || !th.node.Thunk || th.node.Body == nil || th.node.Body.Kind != ast.Call {
			break
		}
		call := th.node.Body
		var next any
		if next, err = ev.eval(call.Procedure, th.input, th.env); err != nil {
			break
		}
		targs := make([]any, 0, len(call.Args))
		for _, a := range call.Args {
			var v any
			if v, err = ev.eval(a, th.input, th.env); err != nil {
				break
			}
			targs = append(targs, v)
		}
		if err != nil {
			break
		}
		if ev.done != nil {
			select {
			case <-ev.done:
				return nil, errTimeout()
			default:
			}
		}
		r, err = ev.applyInner(next, targs, input, env)
		if e, ok := err.(*value.Error); ok {
			if e.Token == "" {
				e.Token = procName(call.Procedure)
			}
			if e.Position == 0 {
				e.Position = call.Position
			}
		}
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// applyInner applies a function once; a lambda's tail call comes back as a thunk.
func (ev *evaluator) applyInner(fn any, args []any, input any, env *frame) (any, error) {
	switch f := fn.(type) {
	case *lambda:
		if f.sig != nil {
			var err error
			if args, err = f.sig.validate(args, input); err != nil {
				return nil, err
			}
		}
		scope := &frame{parent: f.env, vars: make([]binding, len(f.node.Params))}
		for i, p := range f.node.Params {
			scope.vars[i] = binding{p, argAt(args, i)}
		}
		if f.node.Body == nil {
			return nil, nil
		}
		return ev.eval(f.node.Body, f.input, scope)
	case *value.Builtin:
		sig := ev.lib.signatureOf(f)
		if sig != nil {
			var err error
			if args, err = sig.validate(args, input); err != nil {
				return nil, err
			}
		}
		if f.Impl == nil {
			return nil, nil
		}
		return f.Impl(&callCtx{ev: ev, input: input, env: env}, args)
	case *partial:
		full := make([]any, len(f.args))
		copy(full, f.args)
		for i, h := range f.holes {
			full[h] = argAt(args, i)
		}
		return ev.apply(f.fn, full, input, env)
	case *value.Regex:
		s, ok := argAt(args, 0).(string)
		if !ok {
			return nil, nil
		}
		return ev.regexMatch(f, s, 0)
	case *transform:
		return ev.runTransform(f, args)
	case *native:
		return f.fn(ev, args)
	}
	return nil, &value.Error{Code: "T1006"}
}

// evalPartial evaluates f(a, ?, c) into a function of the placeholders.
func (ev *evaluator) evalPartial(n *ast.Node, input any, env *frame) (any, error) {
	p := &partial{args: make([]any, len(n.Args))}
	for i, a := range n.Args {
		if a.Kind == ast.Placeholder {
			p.holes = append(p.holes, i)
			continue
		}
		v, err := ev.eval(a, input, env)
		if err != nil {
			return nil, err
		}
		p.args[i] = v
	}
	proc, name, err := ev.evalProcedure(n, input, env, "T1007")
	if err != nil {
		return nil, err
	}
	if _, ok := proc.(value.Function); !ok {
		return nil, &value.Error{Code: "T1008", Position: n.Position, Token: name}
	}
	// A partial of a lambda without a signature binds the fixed parameters as the lambda would; arguments beyond
	// its parameters are dropped.
	if l, ok := proc.(*lambda); ok && len(n.Args) > len(l.node.Params) {
		p.args = p.args[:len(l.node.Params)]
		holes := p.holes[:0]
		for _, h := range p.holes {
			if h < len(l.node.Params) {
				holes = append(holes, h)
			}
		}
		p.holes = holes
	}
	p.fn = proc
	return p, nil
}

// evalApply evaluates lhs ~> rhs: a call on the right gets lhs as its first argument; two functions compose.
func (ev *evaluator) evalApply(n *ast.Node, input any, env *frame) (any, error) {
	lhs, err := ev.eval(n.LHS, input, env)
	if err != nil {
		return nil, err
	}
	if n.RHS.Kind == ast.Call {
		return ev.evalCall(n.RHS, input, env, lhs, true)
	}
	fn, err := ev.eval(n.RHS, input, env)
	if err != nil {
		return nil, err
	}
	if _, ok := fn.(value.Function); !ok {
		return nil, &value.Error{Code: "T2006", Position: n.Position, Value: fn}
	}
	if _, ok := lhs.(value.Function); ok {
		first, second := lhs, fn
		return &native{arity: 1, fn: func(ev *evaluator, args []any) (any, error) {
			x, err := ev.apply(first, []any{argAt(args, 0)}, nil, env)
			if err != nil {
				return nil, err
			}
			return ev.apply(second, []any{x}, nil, env)
		}}, nil
	}
	return ev.apply(fn, []any{lhs}, input, env)
}

// runTransform applies a transform to its argument: a copy (made by $clone) is changed where the pattern matches.
func (ev *evaluator) runTransform(t *transform, args []any) (any, error) {
	obj := argAt(args, 0)
	switch obj.(type) {
	case nil:
		return nil, nil
	case *value.Object, *value.Array:
	default:
		return nil, &value.Error{Code: "T0410", Index: 1, Value: obj}
	}
	clone, _ := ev.lookup(t.env, "clone")
	if _, ok := clone.(value.Function); !ok {
		return nil, &value.Error{Code: "T2013", Position: t.node.Position}
	}
	result, err := ev.apply(clone, []any{obj}, nil, t.env)
	if err != nil {
		return nil, err
	}
	matches, err := ev.eval(t.node.Pattern, result, t.env)
	if err != nil {
		return nil, err
	}
	if matches == nil {
		return result, nil
	}
	list := []any{matches}
	if a, ok := matches.(*value.Array); ok {
		list = a.Items
	}
	for _, m := range list {
		target, _ := m.(*value.Object)
		if t.node.Update != nil {
			upd, err := ev.eval(t.node.Update, m, t.env)
			if err != nil {
				return nil, err
			}
			if upd != nil {
				u, ok := upd.(*value.Object)
				if !ok {
					return nil, &value.Error{Code: "T2011", Position: t.node.Update.Position, Value: upd}
				}
				if target != nil {
					for i, k := range u.Keys() {
						target.Set(k, u.Values()[i])
					}
				}
			}
		}
		if t.node.Delete != nil {
			del, err := ev.eval(t.node.Delete, m, t.env)
			if err != nil {
				return nil, err
			}
			if del == nil {
				continue
			}
			names := []any{del}
			if a, ok := del.(*value.Array); ok {
				names = a.Items
			}
			for _, x := range names {
				if _, ok := x.(string); !ok {
					return nil, &value.Error{Code: "T2012", Position: t.node.Delete.Position, Value: del}
				}
			}
			if target != nil {
				for _, x := range names {
					target.Delete(x.(string))
				}
			}
		}
	}
	return result, nil
}

// regexMatch runs a regex on s from byte offset from and returns JSONata's match object: match, start, end (in
// UTF-16 code units, as JavaScript counts), groups, and next() for the following match.
func (ev *evaluator) regexMatch(r *value.Regex, s string, from int) (any, error) {
	if r.Pattern == nil || from > len(s) {
		return nil, nil
	}
	loc := r.Pattern.FindStringSubmatchIndex(s[from:])
	if loc == nil {
		return nil, nil
	}
	start, end := from+loc[0], from+loc[1]
	groups := make([]any, 0, len(loc)/2-1)
	for g := 2; g+1 < len(loc); g += 2 {
		if loc[g] < 0 {
			groups = append(groups, "")
			continue
		}
		groups = append(groups, s[from+loc[g]:from+loc[g+1]])
	}
	o := value.NewObject(5)
	o.Set("match", s[start:end])
	o.Set("start", float64(utf16Len(s[:start])))
	o.Set("end", float64(utf16Len(s[:end])))
	o.Set("groups", &value.Array{Items: groups})
	o.Set("next", &native{arity: 0, fn: func(ev *evaluator, _ []any) (any, error) {
		if end >= len(s) {
			return nil, nil
		}
		nx, err := ev.regexMatch(r, s, end)
		if err != nil || nx == nil {
			return nx, err
		}
		if m, _ := nx.(*value.Object).Get("match"); m == "" {
			return nil, &value.Error{Code: "D1004", Value: r.Source}
		}
		return nx, nil
	}})
	return o, nil
}

// utf16Len is the length of s in UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if utf16.RuneLen(r) == 2 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// Builtins returns the functions that need the evaluator itself: $eval (parses and evaluates its argument) and
// $clone (used by the transform operator).
func Builtins() []*value.Builtin {
	return []*value.Builtin{
		{Name: "eval", Signature: "<sx?:x>", Impl: builtinEval},
		{Name: "clone", Signature: "<(oa)-:o>", Impl: func(_ value.Context, args []any) (any, error) {
			return deepClone(argAt(args, 0)), nil
		}},
	}
}

// builtinEval is $eval(expr, context): expr parsed and evaluated in the caller's scope.
func builtinEval(c value.Context, args []any) (any, error) {
	src, ok := argAt(args, 0).(string)
	if !ok {
		return nil, nil
	}
	cc, ok := c.(*callCtx)
	if !ok {
		return nil, nil
	}
	root, err := parse.Parse(src)
	if err != nil {
		return nil, &value.Error{Code: "D3120", Value: errText(err)}
	}
	input := cc.input
	if len(args) > 1 && args[1] != nil {
		input = args[1]
		if a, ok := input.(*value.Array); ok && !a.Sequence {
			input = &value.Array{Items: []any{a}, Sequence: true, OuterWrapper: true}
		}
	}
	r, err := cc.ev.eval(root, input, cc.env)
	if err != nil {
		if e, ok := err.(*value.Error); ok && e.Code == "U1001" {
			return nil, err
		}
		return nil, &value.Error{Code: "D3121", Value: errText(err)}
	}
	if _, ok := r.(tuples); ok {
		return nil, nil
	}
	return r, nil
}

// errText is an error's message without its code.
func errText(err error) string {
	if e, ok := err.(*value.Error); ok {
		return e.Text()
	}
	return err.Error()
}
