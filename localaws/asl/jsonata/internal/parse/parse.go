// Package parse parses JSONata 2.0.6 expressions into the tree of package ast.
//
// It works in three stages: a scanner (lexer.go) that turns the source into tokens, a precedence-climbing reader of
// the grammar (grammar.go) that builds a syntax tree mirroring the source, and a rewriting pass (rewrite.go) that
// turns it into the evaluator's tree: paths flattened into steps carrying their stages, order-by, group-by and
// bindings, the parent operator % resolved to the step it reads (parents.go), and tail calls marked. The trees and
// the errors (codes, tokens and positions, in UTF-16 code units) are JSONata's, which the tests check against the
// npm package jsonata 2.0.6.
package parse

import (
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/ast"
	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// Parse parses a JSONata expression. The error is a *value.Error with JSONata's code (S0…), position and token.
func Parse(src string) (n *ast.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(failure)
			if !ok {
				panic(r)
			}
			n, err = nil, f.err
		}
	}()
	r := &reader{sc: scanner{src: utf16.Encode([]rune(src))}}
	r.next(true)
	syn := r.expression(0)
	if r.tok.kind != tokEnd {
		fail("S0201", r.tok.end, r.tok.display())
	}
	w := &rewriter{}
	n = w.rewrite(syn)
	if n.Kind == ast.Parent || len(n.SeekingParent) > 0 {
		// a % whose parent no step provides
		fail("S0217", n.Position, typeName(n))
	}
	for _, m := range w.marked {
		m.SeekingParent = nil
	}
	return n, nil
}

// tokenText writes a value as JavaScript turns it into a string (in error tokens and message inserts). A regex is
// written as JSONata's RegExp object is, with the g flag it adds, flags in JavaScript's order.
func tokenText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return value.NumberText(v)
	case bool:
		return strconv.FormatBool(v)
	case *value.Regex:
		flags := "g"
		for _, f := range "im" {
			if strings.ContainsRune(v.Flags, f) {
				flags += string(f)
			}
		}
		return "/" + v.Source + "/" + flags
	case nil:
		return "undefined"
	}
	if value.IsNull(v) {
		return "null"
	}
	return ""
}
