package parse

import (
	"strings"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/ast"
	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// show writes a processed tree compactly, for the table tests:
//
//	path(a, b)            a path and its steps
//	a⟨…⟩                  a node's annotations: stages ([p] filters, #$i index stages), pred (predicates of a
//	                      non-step), group, focus $x, index $i, tuple, anc !0 (Ancestor), keep (KeepArray),
//	                      keepSingleton (Path.KeepSingletonArray), cons (ConsArray)
//	%!0/1                 a parent slot: label/level
//	(a + b), ($x := 1), (a ~> b), -(a), [a, b], {k: v}, block(a; b), (c ? t : e), $f(a, ?), λ($x)<sig>{body},
//	thunk{call}, |p|u, d|, sort(<a, >b)
func show(n *ast.Node) string {
	if n == nil {
		return "nil"
	}
	var b strings.Builder
	switch n.Kind {
	case ast.String:
		b.WriteString(`"` + n.Value.(string) + `"`)
	case ast.Number:
		b.WriteString(value.NumberText(n.Value.(float64)))
	case ast.Literal:
		b.WriteString(tokenText(n.Value))
	case ast.Name:
		b.WriteString(n.Value.(string))
	case ast.Variable:
		b.WriteString("$" + n.Value.(string))
	case ast.Regex:
		r := n.Value.(*value.Regex)
		b.WriteString("/" + r.Source + "/" + r.Flags)
	case ast.Wildcard:
		b.WriteString("*")
	case ast.Descendant:
		b.WriteString("**")
	case ast.Parent:
		b.WriteString("%" + slotText(n.Slot))
	case ast.Path:
		b.WriteString("path(" + list(n.Steps, ", ") + ")")
	case ast.Binary, ast.Bind, ast.Apply:
		b.WriteString("(" + show(n.LHS) + " " + n.Value.(string) + " " + show(n.RHS) + ")")
	case ast.Negate:
		b.WriteString("-(" + show(n.Expr) + ")")
	case ast.Array:
		b.WriteString("[" + list(n.Exprs, ", ") + "]")
	case ast.Object:
		b.WriteString(pairsText(n.Pairs))
	case ast.Block:
		b.WriteString("block(" + list(n.Exprs, "; ") + ")")
	case ast.Condition:
		b.WriteString("(" + show(n.Cond) + " ? " + show(n.Then))
		if n.Else != nil {
			b.WriteString(" : " + show(n.Else))
		}
		b.WriteString(")")
	case ast.Call, ast.Partial:
		b.WriteString(show(n.Procedure) + "(" + list(n.Args, ", ") + ")")
	case ast.Placeholder:
		b.WriteString("?")
	case ast.Lambda:
		if n.Thunk {
			b.WriteString("thunk{" + show(n.Body) + "}")
			break
		}
		params := make([]string, len(n.Params))
		for i, p := range n.Params {
			params[i] = "$" + p
		}
		b.WriteString("λ(" + strings.Join(params, ", ") + ")")
		if n.Signature != nil {
			b.WriteString(n.Signature.Source)
		}
		b.WriteString("{" + show(n.Body) + "}")
	case ast.Transform:
		b.WriteString("|" + show(n.Pattern) + "|" + show(n.Update))
		if n.Delete != nil {
			b.WriteString(", " + show(n.Delete))
		}
		b.WriteString("|")
	case ast.Sort:
		terms := make([]string, len(n.Terms))
		for i, t := range n.Terms {
			dir := "<"
			if t.Descending {
				dir = ">"
			}
			terms[i] = dir + show(t.Expr)
		}
		b.WriteString("sort(" + strings.Join(terms, ", ") + ")")
	case ast.Filter:
		b.WriteString("[" + show(n.Expr) + "]")
	case ast.Index:
		b.WriteString("#$" + n.Value.(string))
	default:
		b.WriteString("?kind")
	}
	var ann []string
	if n.Stages != nil {
		ann = append(ann, "stages "+list(n.Stages, " "))
	}
	if n.Predicates != nil {
		ann = append(ann, "pred "+list(n.Predicates, " "))
	}
	if n.Group != nil {
		ann = append(ann, "group "+pairsText(n.Group.Pairs))
	}
	if n.Focused {
		ann = append(ann, "focus $"+n.Focus)
	}
	if n.IndexVar != "" {
		ann = append(ann, "index $"+n.IndexVar)
	}
	if n.Tuple {
		ann = append(ann, "tuple")
	}
	if n.Ancestor != nil {
		ann = append(ann, "anc "+slotText(n.Ancestor))
	}
	if n.KeepArray {
		ann = append(ann, "keep")
	}
	if n.KeepSingletonArray {
		ann = append(ann, "keepSingleton")
	}
	if n.ConsArray {
		ann = append(ann, "cons")
	}
	if ann != nil {
		b.WriteString("⟨" + strings.Join(ann, ", ") + "⟩")
	}
	return b.String()
}

func slotText(s *ast.Slot) string {
	if s == nil {
		return "nil"
	}
	return s.Label + "/" + value.NumberText(float64(s.Level))
}

func list(ns []*ast.Node, sep string) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = show(n)
	}
	return strings.Join(parts, sep)
}

func pairsText(ps [][2]*ast.Node) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = show(p[0]) + ": " + show(p[1])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
