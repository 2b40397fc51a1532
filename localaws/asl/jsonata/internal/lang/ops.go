package lang

import (
	"math"
	"slices"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/ast"
	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// maxRange is the largest sequence the range operator builds (JSONata's limit; its message says 1e6).
const maxRange = 1e7

// evalBinary evaluates a binary operator; and/or evaluate their right side only when needed.
func (ev *evaluator) evalBinary(n *ast.Node, input any, env *frame) (any, error) {
	op, _ := n.Value.(string)
	lhs, err := ev.eval(n.LHS, input, env)
	if err != nil {
		return nil, err
	}
	switch op {
	case "and":
		if !truthy(lhs) {
			return false, nil
		}
		rhs, err := ev.eval(n.RHS, input, env)
		if err != nil {
			return nil, err
		}
		return truthy(rhs), nil
	case "or":
		if truthy(lhs) {
			return true, nil
		}
		rhs, err := ev.eval(n.RHS, input, env)
		if err != nil {
			return nil, err
		}
		return truthy(rhs), nil
	}
	rhs, err := ev.eval(n.RHS, input, env)
	if err != nil {
		return nil, err
	}
	r, err := binary(op, lhs, rhs)
	if err != nil {
		if e, ok := err.(*value.Error); ok {
			e.Position = n.Position
			if e.Token == "" {
				e.Token = op
			}
		}
		return nil, err
	}
	return r, nil
}

// binary applies an operator other than and/or to two evaluated operands.
func binary(op string, lhs, rhs any) (any, error) {
	switch op {
	case "+", "-", "*", "/", "%":
		l, lok, err := numeric(lhs)
		if err != nil {
			return nil, err
		}
		if lhs != nil && !lok {
			return nil, &value.Error{Code: "T2001", Token: op, Value: lhs}
		}
		r, rok, err := numeric(rhs)
		if err != nil {
			return nil, err
		}
		if rhs != nil && !rok {
			return nil, &value.Error{Code: "T2002", Token: op, Value: rhs}
		}
		if lhs == nil || rhs == nil {
			return nil, nil
		}
		switch op {
		case "+":
			return l + r, nil
		case "-":
			return l - r, nil
		case "*":
			return l * r, nil
		case "/":
			return l / r, nil
		}
		return math.Mod(l, r), nil
	case "=", "!=":
		if lhs == nil || rhs == nil {
			return false, nil
		}
		eq := value.Equal(lhs, rhs)
		if op == "!=" {
			return !eq, nil
		}
		return eq, nil
	case "<", "<=", ">", ">=":
		return compare(op, lhs, rhs)
	case "&":
		var l, r string
		var err error
		if lhs != nil {
			if l, err = stringify(lhs); err != nil {
				return nil, err
			}
		}
		if rhs != nil {
			if r, err = stringify(rhs); err != nil {
				return nil, err
			}
		}
		return l + r, nil
	case "..":
		return rangeOf(lhs, rhs)
	case "in":
		if lhs == nil || rhs == nil {
			return false, nil
		}
		if a, ok := rhs.(*value.Array); ok {
			for _, x := range a.Items {
				if x != nil && sameValue(x, lhs) {
					return true, nil
				}
			}
			return false, nil
		}
		return sameValue(rhs, lhs), nil
	}
	return nil, &value.Error{Code: "S0204", Token: op}
}

// compare evaluates <, <=, >, >=: both sides numbers or both strings; undefined on either side is undefined.
func compare(op string, lhs, rhs any) (any, error) {
	comparable := func(v any) bool {
		switch v.(type) {
		case nil, string, float64:
			return true
		}
		return false
	}
	if !comparable(lhs) || !comparable(rhs) {
		bad := lhs
		switch lhs.(type) {
		case string, float64:
			bad = rhs
		}
		return nil, &value.Error{Code: "T2010", Token: op, Value: bad}
	}
	if lhs == nil || rhs == nil {
		return nil, nil
	}
	var c int
	switch l := lhs.(type) {
	case float64:
		r, ok := rhs.(float64)
		if !ok {
			return nil, &value.Error{Code: "T2009", Token: op, Value: lhs, Value2: rhs}
		}
		if math.IsNaN(l) || math.IsNaN(r) {
			return false, nil
		}
		switch {
		case l < r:
			c = -1
		case l > r:
			c = 1
		}
	case string:
		r, ok := rhs.(string)
		if !ok {
			return nil, &value.Error{Code: "T2009", Token: op, Value: lhs, Value2: rhs}
		}
		c = value.CompareStrings(l, r)
	}
	switch op {
	case "<":
		return c < 0, nil
	case "<=":
		return c <= 0, nil
	case ">":
		return c > 0, nil
	}
	return c >= 0, nil
}

// rangeOf evaluates lhs..rhs.
func rangeOf(lhs, rhs any) (any, error) {
	l, lok := lhs.(float64)
	if lhs != nil && (!lok || l != math.Trunc(l) || math.IsInf(l, 0)) {
		return nil, &value.Error{Code: "T2003", Value: lhs}
	}
	r, rok := rhs.(float64)
	if rhs != nil && (!rok || r != math.Trunc(r) || math.IsInf(r, 0)) {
		return nil, &value.Error{Code: "T2004", Value: rhs}
	}
	if lhs == nil || rhs == nil || l > r {
		return nil, nil
	}
	size := r - l + 1
	if size > maxRange {
		return nil, &value.Error{Code: "D2014", Value: size}
	}
	items := make([]any, int(size))
	for i := range items {
		items[i] = l + float64(i)
	}
	return &value.Array{Items: items, Sequence: true}, nil
}

// evalGroup evaluates an object constructor {k: v, …} against a value (or a tuple stream): items are grouped by key,
// and each value expression is evaluated once per key against the items of its group.
func (ev *evaluator) evalGroup(n *ast.Node, input any, env *frame) (any, error) {
	ts, reduce := input.(tuples)
	var items []any
	if !reduce {
		switch t := input.(type) {
		case *value.Array:
			items = t.Items
		default:
			items = []any{input}
		}
		if len(items) == 0 {
			items = []any{nil}
		}
	} else if len(ts) == 0 {
		ts = tuples{{}}
	}
	type group struct {
		key   string
		pair  int
		items []any
		ts    tuples
	}
	var groups []*group
	var byKey map[string]int
	count := len(items)
	if reduce {
		count = len(ts)
	}
	for i := 0; i < count; i++ {
		var item any
		scope := env
		if reduce {
			item = ts[i].at
			scope = tupleFrame(env, &ts[i])
		} else {
			item = items[i]
		}
		for p, pair := range n.Pairs {
			k, err := ev.eval(pair[0], item, scope)
			if err != nil {
				return nil, err
			}
			if k == nil {
				continue
			}
			key, ok := k.(string)
			if !ok {
				return nil, &value.Error{Code: "T1003", Position: n.Position, Value: k}
			}
			if byKey == nil {
				byKey = map[string]int{}
			}
			if gi, ok := byKey[key]; ok {
				g := groups[gi]
				if g.pair != p {
					return nil, &value.Error{Code: "D1009", Position: n.Position, Value: key}
				}
				if reduce {
					g.ts = append(g.ts, ts[i])
				} else {
					g.items = append(g.items, item)
				}
				continue
			}
			byKey[key] = len(groups)
			g := &group{key: key, pair: p}
			if reduce {
				g.ts = tuples{ts[i]}
			} else {
				g.items = []any{item}
			}
			groups = append(groups, g)
		}
	}
	out := value.NewObject(len(groups))
	for _, g := range groups {
		var ctx any
		scope := env
		if reduce {
			t := reduceTuples(g.ts)
			ctx = t.at
			scope = tupleFrame(env, &t)
		} else if len(g.items) == 1 {
			ctx = g.items[0]
		} else {
			ctx = appendAll(g.items)
		}
		v, err := ev.eval(n.Pairs[g.pair][1], ctx, scope)
		if err != nil {
			return nil, err
		}
		if v != nil {
			out.Set(g.key, v)
		}
	}
	return out, nil
}

// appendAll joins the items of a group as $append would: arrays are spliced.
func appendAll(items []any) any {
	out := make([]any, 0, len(items))
	for _, x := range items {
		if x == nil {
			continue
		}
		out = appendFlat(out, x)
	}
	return &value.Array{Items: out, Sequence: true}
}

// reduceTuples merges the tuples of a group: every variable becomes the $append of its values.
func reduceTuples(ts tuples) tuple {
	if len(ts) == 1 {
		return ts[0]
	}
	at := []any{ts[0].at}
	vals := map[string][]any{}
	var order []string
	for i, t := range ts {
		if i > 0 {
			at = append(at, t.at)
		}
		for _, b := range t.vars {
			if _, ok := vals[b.name]; !ok {
				order = append(order, b.name)
			}
			vals[b.name] = append(vals[b.name], b.val)
		}
	}
	out := tuple{at: appendAll(at)}
	for _, name := range order {
		vs := vals[name]
		if len(vs) == 1 {
			out.vars = append(out.vars, binding{name, vs[0]})
		} else {
			out.vars = append(out.vars, binding{name, appendAll(vs)})
		}
	}
	return out
}

// evalSort sorts items (or a tuple stream) by the order-by terms of a ^(…) step; the sort is stable.
func (ev *evaluator) evalSort(n *ast.Node, items []any, ts tuples, env *frame) ([]any, tuples, error) {
	count := len(items)
	if ts != nil {
		count = len(ts)
	}
	// The keys of every item are computed once, then compared.
	keys := make([][]any, count)
	for i := 0; i < count; i++ {
		ctx, scope := any(nil), env
		if ts != nil {
			ctx, scope = ts[i].at, tupleFrame(env, &ts[i])
		} else {
			ctx = items[i]
		}
		keys[i] = make([]any, len(n.Terms))
		for j, term := range n.Terms {
			k, err := ev.eval(term.Expr, ctx, scope)
			if err != nil {
				return nil, nil, err
			}
			keys[i][j] = k
		}
	}
	// Type errors are found in a first pass, so that the sort itself cannot fail.
	for j := range n.Terms {
		var first any
		for i := 0; i < count; i++ {
			k := keys[i][j]
			switch k.(type) {
			case nil:
				continue
			case string, float64:
			default:
				return nil, nil, &value.Error{Code: "T2008", Position: n.Position, Value: k}
			}
			if first == nil {
				first = k
				continue
			}
			_, fs := first.(string)
			_, ks := k.(string)
			if fs != ks {
				return nil, nil, &value.Error{Code: "T2007", Position: n.Position, Value: first, Value2: k}
			}
		}
	}
	order := make([]int, count)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		for j, term := range n.Terms {
			c := compareKeys(keys[a][j], keys[b][j])
			if c == 0 {
				continue
			}
			if term.Descending && keys[a][j] != nil && keys[b][j] != nil {
				c = -c
			}
			return c
		}
		return 0
	})
	if ts != nil {
		out := make(tuples, count)
		for i, o := range order {
			out[i] = ts[o]
		}
		return nil, out, nil
	}
	out := make([]any, count)
	for i, o := range order {
		out[i] = items[o]
	}
	return out, nil, nil
}

// compareKeys orders two order-by keys of the same type; undefined sorts last.
func compareKeys(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	switch x := a.(type) {
	case float64:
		y := b.(float64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case string:
		return value.CompareStrings(x, b.(string))
	}
	return 0
}
