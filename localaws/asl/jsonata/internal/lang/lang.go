// Package lang evaluates JSONata 2.0.6 expressions: Compile parses an expression once (package parse), Evaluate runs
// it against an input in the value model of package value, with a library of built-in functions (package stdlib and
// others) bound as $name.
//
// An Expression is immutable once compiled and may be evaluated by many goroutines at once; all the state of an
// evaluation lives in that evaluation.
package lang

import (
	"context"
	"time"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/ast"
	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/parse"
	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// Library is a set of built-in functions with their signatures parsed once.
type Library struct {
	byName map[string]*value.Builtin
	sigs   map[*value.Builtin]*signature
}

// NewLibrary returns a library of the given functions and of Builtins(); a later function of the same name replaces
// an earlier one. A signature that does not parse is an error.
func NewLibrary(fns ...*value.Builtin) (*Library, error) {
	all := append(Builtins(), fns...)
	l := &Library{byName: make(map[string]*value.Builtin, len(all)), sigs: make(map[*value.Builtin]*signature, len(all))}
	for _, b := range all {
		sig, err := parseSignature(b.Signature)
		if err != nil {
			return nil, err
		}
		l.byName[b.Name] = b
		l.sigs[b] = sig
	}
	return l, nil
}

// defaultLibrary holds Builtins() only; it is built once and never changed.
var defaultLibrary = func() *Library {
	l, err := NewLibrary()
	if err != nil {
		panic(err)
	}
	return l
}()

// signatureOf returns the parsed signature of a built-in (nil when it has none or it does not parse).
func (l *Library) signatureOf(b *value.Builtin) *signature {
	if s, ok := l.sigs[b]; ok {
		return s
	}
	s, _ := parseSignature(b.Signature)
	return s
}

// Expression is a compiled expression.
type Expression struct {
	root *ast.Node
	// sigs holds the parsed signature of every lambda of the tree that declares one.
	sigs map[*ast.Node]*signature
	vars []string
}

// Compile parses an expression; a syntax error is a *value.Error (S0xxx).
func Compile(src string) (*Expression, error) {
	root, err := parse.Parse(src)
	if err != nil {
		return nil, err
	}
	return newExpression(root)
}

// newExpression prepares a parsed tree for evaluation.
func newExpression(root *ast.Node) (*Expression, error) {
	e := &Expression{root: root}
	if err := e.prepare(); err != nil {
		return nil, err
	}
	return e, nil
}

// Options are the settings of one evaluation.
type Options struct {
	Library  *Library                      // the functions bound as $name (nil: only Builtins())
	Bindings map[string]any                // variables (names without $), in the value model
	Lookup   func(name string) (any, bool) // variables looked up lazily when not in Bindings (optional)
	Now      time.Time                     // the evaluation's clock (value.Context.Now); zero: time.Now() once
	MaxDepth int                           // nested evaluation depth limit; 0: a default that is safe for Go's stack
	Context  context.Context               // checked during evaluation (deadline/cancel); nil: none
}

// DefaultMaxDepth is the nesting limit of an evaluation when Options.MaxDepth is 0: deep enough for any sensible
// expression (tail calls do not nest), shallow enough for Go's stack.
const DefaultMaxDepth = 10000

// Evaluate evaluates against input (nil: undefined input). Undefined result: (nil, nil).
func (e *Expression) Evaluate(input any, o Options) (result any, err error) {
	ev := &evaluator{
		lib:      o.Library,
		bindings: o.Bindings,
		lookupFn: o.Lookup,
		now:      o.Now,
		maxDepth: o.MaxDepth,
		ctx:      o.Context,
		sigs:     e.sigs,
		root:     input,
	}
	if ev.lib == nil {
		ev.lib = defaultLibrary
	}
	if ev.now.IsZero() {
		ev.now = time.Now()
	}
	if ev.maxDepth <= 0 {
		ev.maxDepth = DefaultMaxDepth
	}
	if ev.ctx != nil {
		ev.done = ev.ctx.Done()
	}
	if a, ok := input.(*value.Array); ok && !a.Sequence {
		input = &value.Array{Items: []any{a}, Sequence: true, OuterWrapper: true}
	}
	r, err := ev.eval(e.root, input, &frame{})
	if err != nil {
		return nil, err
	}
	if _, ok := r.(tuples); ok {
		return nil, nil
	}
	return r, nil
}

// Variables returns the names (without $) of the variables the expression reads and does not bind itself, in order
// of first appearance ($ and $$ excluded).
func (e *Expression) Variables() []string { return append([]string(nil), e.vars...) }

// prepare parses the lambdas' signatures and lists the free variables.
func (e *Expression) prepare() error {
	bound := map[string]bool{}
	var read []string
	seen := map[string]bool{}
	var walk func(n *ast.Node) error
	walk = func(n *ast.Node) error {
		if n == nil {
			return nil
		}
		switch n.Kind {
		case ast.Variable:
			if name, _ := n.Value.(string); name != "" && name != "$" && !seen[name] {
				seen[name] = true
				read = append(read, name)
			}
		case ast.Bind:
			if n.LHS != nil {
				if name, ok := n.LHS.Value.(string); ok {
					bound[name] = true
				}
			}
		case ast.Lambda:
			for _, p := range n.Params {
				bound[p] = true
			}
			if n.Signature != nil {
				if e.sigs == nil {
					e.sigs = map[*ast.Node]*signature{}
				}
				sig, err := parseSignature(n.Signature.Source)
				if err != nil {
					return err
				}
				e.sigs[n] = sig
			}
		case ast.Index:
			if name, ok := n.Value.(string); ok {
				bound[name] = true
			}
		}
		if n.Focus != "" {
			bound[n.Focus] = true
		}
		if n.IndexVar != "" {
			bound[n.IndexVar] = true
		}
		// The children in the order they are written.
		kids := [][]*ast.Node{{n.Procedure}, n.Args, n.Steps, n.Exprs,
			{n.LHS, n.Expr, n.RHS, n.Cond, n.Then, n.Else, n.Body, n.Pattern, n.Update, n.Delete}, n.Stages, n.Predicates,
			{n.Group}}
		for _, list := range kids {
			for _, k := range list {
				if err := walk(k); err != nil {
					return err
				}
			}
		}
		for _, p := range n.Pairs {
			if err := walk(p[0]); err != nil {
				return err
			}
			if err := walk(p[1]); err != nil {
				return err
			}
		}
		for _, t := range n.Terms {
			if err := walk(t.Expr); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(e.root); err != nil {
		return err
	}
	for _, name := range read {
		if !bound[name] {
			e.vars = append(e.vars, name)
		}
	}
	return nil
}
