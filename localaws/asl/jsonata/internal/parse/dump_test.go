package parse

import (
	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/ast"
	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// dump writes a processed tree as the JSON-like map the npm package jsonata's ast() gives for it (its property names, the
// properties that are set), so that the two can be compared (TestReferenceParser).
func dump(n *ast.Node) any {
	if n == nil {
		return nil
	}
	m := map[string]any{}
	set := func(k string, v any) {
		switch v := v.(type) {
		case nil:
			return
		case bool:
			if !v {
				return
			}
		case string:
			if v == "" && k != "value" {
				return
			}
		case []any:
			if v == nil {
				return
			}
		}
		m[k] = v
	}
	nodes := func(ns []*ast.Node) any {
		if ns == nil {
			return nil
		}
		out := make([]any, len(ns))
		for i, x := range ns {
			out[i] = dump(x)
		}
		return out
	}
	pairs := func(ps [][2]*ast.Node) any {
		out := make([]any, len(ps))
		for i, p := range ps {
			out[i] = []any{dump(p[0]), dump(p[1])}
		}
		return out
	}
	slot := func(s *ast.Slot) any {
		if s == nil {
			return nil
		}
		return map[string]any{"label": s.Label, "level": float64(s.Level), "index": float64(s.Index)}
	}
	leafValue := func() any {
		switch v := n.Value.(type) {
		case *value.Regex:
			return map[string]any{"source": v.Source, "flags": v.Flags}
		}
		if value.IsNull(n.Value) {
			return nil
		}
		return n.Value
	}
	m["type"] = typeName(n)
	if n.Kind != ast.Path && n.Kind != ast.Parent {
		m["position"] = float64(n.Position)
	}
	switch n.Kind {
	case ast.String, ast.Number, ast.Literal, ast.Name, ast.Variable, ast.Regex, ast.Wildcard, ast.Descendant:
		m["value"] = leafValue()
	case ast.Parent:
		set("slot", slot(n.Slot))
	case ast.Path:
		set("steps", nodes(n.Steps))
		set("keepSingletonArray", n.KeepSingletonArray)
	case ast.Binary, ast.Bind, ast.Apply:
		m["value"] = n.Value
		set("lhs", dump(n.LHS))
		set("rhs", dump(n.RHS))
	case ast.Negate:
		m["value"] = "-"
		set("expression", dump(n.Expr))
	case ast.Array:
		m["value"] = "["
		set("expressions", nodes(n.Exprs))
	case ast.Object:
		m["value"] = "{"
		set("lhs", pairs(n.Pairs))
	case ast.Block:
		set("expressions", nodes(n.Exprs))
	case ast.Condition:
		set("condition", dump(n.Cond))
		set("then", dump(n.Then))
		set("else", dump(n.Else))
	case ast.Call, ast.Partial:
		m["value"] = n.Value
		set("procedure", dump(n.Procedure))
		set("arguments", nodes(n.Args))
	case ast.Placeholder:
		m["value"] = "?"
	case ast.Lambda:
		if n.Thunk {
			m["arguments"] = []any{}
		} else {
			args := make([]any, len(n.Params))
			for i, p := range n.Params {
				args[i] = p
			}
			m["arguments"] = args
		}
		if n.Signature != nil {
			m["signature"] = n.Signature.Source
		}
		set("body", dump(n.Body))
		set("thunk", n.Thunk)
	case ast.Transform:
		set("pattern", dump(n.Pattern))
		set("update", dump(n.Update))
		set("delete", dump(n.Delete))
	case ast.Sort:
		terms := make([]any, len(n.Terms))
		for i, t := range n.Terms {
			tm := map[string]any{"expression": dump(t.Expr)}
			if t.Descending {
				tm["descending"] = true
			}
			terms[i] = tm
		}
		m["terms"] = terms
	case ast.Filter:
		set("expr", dump(n.Expr))
	case ast.Index:
		m["value"] = n.Value
	}
	// step annotations
	set("stages", nodes(n.Stages))
	set("predicate", nodes(n.Predicates))
	if n.Group != nil {
		m["group"] = map[string]any{"lhs": pairs(n.Group.Pairs), "position": float64(n.Group.Position)}
	}
	if n.Focused {
		m["focus"] = n.Focus
	}
	set("index", n.IndexVar)
	set("tuple", n.Tuple)
	set("ancestor", slot(n.Ancestor))
	set("keepArray", n.KeepArray)
	set("consarray", n.ConsArray)
	return m
}
