package jsonata

import (
	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/ast"
	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/parse"
)

// TopLevelReference returns the name a path of the expression starts with when it reads a field of the context
// item, or "$" when it reads the context item itself (Step Functions provides none: "Reference to 'x' at the top
// level is not supported"), or "". Paths inside function definitions are the functions' business: their context is
// whatever they are called on.
func (e *Expr) TopLevelReference() string {
	node, err := parse.Parse(e.src)
	if err != nil {
		return ""
	}
	return topName(node)
}

func topName(n *ast.Node) string {
	if n == nil {
		return ""
	}
	switch n.Kind {
	case ast.Name:
		name, _ := n.Value.(string)
		return name
	case ast.Variable:
		if n.Value == "" {
			return "$"
		}
		return ""
	case ast.Path:
		if len(n.Steps) > 0 {
			return topName(n.Steps[0])
		}
		return ""
	case ast.Lambda:
		return ""
	}
	for _, c := range children(n) {
		if name := topName(c); name != "" {
			return name
		}
	}
	return ""
}

// children returns the sub-expressions of a node that are evaluated in its context, in source order.
func children(n *ast.Node) []*ast.Node {
	var out []*ast.Node
	add := func(ns ...*ast.Node) {
		for _, c := range ns {
			if c != nil {
				out = append(out, c)
			}
		}
	}
	add(n.LHS, n.Expr)
	add(n.Exprs...)
	for _, kv := range n.Pairs {
		add(kv[0], kv[1])
	}
	add(n.Procedure)
	add(n.Args...)
	add(n.Cond, n.Then, n.Else, n.RHS)
	add(n.Pattern, n.Update, n.Delete)
	add(n.Predicates...)
	return out
}
