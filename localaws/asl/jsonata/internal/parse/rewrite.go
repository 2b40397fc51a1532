package parse

import (
	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/ast"
	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// The rewriting pass turns the syntax tree into the evaluator's tree (package ast). It is organised around path
// steps:
//
//   - a.b.c becomes one Path whose steps are a, b and c (a name on its own is a one-step path); a string literal
//     used as a step is a field name; a number, true, false or null cannot be a step (S0213);
//   - what follows a step attaches to it, in written order: a predicate [p] and a #$i binding become stages of the
//     path's last step (on an expression that is not a path, a predicate is one of its Predicates), @$v makes it a
//     focus step, ^(…) appends a Sort step, {k: v} is the group-by of the whole path;
//   - [] marks the expression it follows to keep singleton arrays, and the path holding such a step;
//   - an array constructor that starts or ends a path is kept as a value (ConsArray), not flattened;
//   - a step that binds @ or # or provides a % parent works on a stream of tuples (Tuple);
//   - the parent operator % is resolved to the step it reads (parents.go);
//   - a function call in tail position of a lambda's body is wrapped in a thunk (tailcall.go).
//
// The order in which the pass visits the tree is observable in two ways, and follows JSONata's: which error is
// reported first, and the numbering of the % slots (a call's arguments are visited before its procedure).

// MaxProcessDepth bounds the depth of the tree the rewriting pass walks: a long chain of left-associative operators
// (a + b + c …, a.b.c …) is deep without being nested in the source.
const MaxProcessDepth = 10 * MaxDepth

// rewriter holds the state of one rewriting pass.
type rewriter struct {
	slots int // % slots made so far: the next one is labelled "!<slots>"
	depth int
	// marked are the nodes that hold unresolved % slots (in ast.Node.SeekingParent) during the pass: cleared at the
	// end, so that no tree leaves the parser with them.
	marked []*ast.Node
}

// rewrite rewrites one syntax node.
func (w *rewriter) rewrite(s *synNode) *ast.Node {
	w.depth++
	if w.depth > MaxProcessDepth {
		panic(failure{depthError(s.tok.end)})
	}
	n := w.node(s)
	if s.keep {
		n.KeepArray = true
	}
	w.depth--
	return n
}

func leafNode(kind ast.Kind, s *synNode, v any) *ast.Node {
	return &ast.Node{Kind: kind, Value: v, Position: s.tok.end}
}

// node does the work of rewrite for each kind of syntax node.
func (w *rewriter) node(s *synNode) *ast.Node {
	pos := s.tok.end
	switch s.kind {
	case synName:
		step := leafNode(ast.Name, s, s.tok.text)
		step.KeepArray = s.keep
		return &ast.Node{Kind: ast.Path, Steps: []*ast.Node{step}, KeepSingletonArray: s.keep}
	case synVar:
		return leafNode(ast.Variable, s, s.tok.text)
	case synString:
		return leafNode(ast.String, s, s.tok.text)
	case synNumber:
		return leafNode(ast.Number, s, s.tok.num)
	case synLiteral:
		return leafNode(ast.Literal, s, s.tok.lit)
	case synRegex:
		return leafNode(ast.Regex, s, s.tok.re)
	case synWildcard:
		return leafNode(ast.Wildcard, s, "*")
	case synDescendant:
		return leafNode(ast.Descendant, s, "**")
	case synParent:
		return w.parent(s)
	case synPlaceholder:
		return &ast.Node{Kind: ast.Placeholder, Position: pos}
	case synMissing:
		panic(failure{&value.Error{Code: "S0207", Position: pos, Token: "(end)"}})
	case synNegate:
		operand := w.rewrite(s.a)
		if operand.Kind == ast.Number {
			// a negative number is a literal
			operand.Value = -operand.Value.(float64)
			return operand
		}
		n := &ast.Node{Kind: ast.Negate, Value: "-", Position: pos, Expr: operand}
		w.inherit(n, operand)
		return n
	case synArray:
		n := &ast.Node{Kind: ast.Array, Position: pos, Exprs: make([]*ast.Node, len(s.list))}
		for i, item := range s.list {
			n.Exprs[i] = w.rewrite(item)
			w.inherit(n, n.Exprs[i])
		}
		return n
	case synObject:
		n := &ast.Node{Kind: ast.Object, Position: pos}
		n.Pairs = w.pairs(s.pairs, n)
		return n
	case synBlock:
		n := &ast.Node{Kind: ast.Block, Position: pos, Exprs: make([]*ast.Node, len(s.list))}
		for i, item := range s.list {
			e := w.rewrite(item)
			n.Exprs[i] = e
			w.inherit(n, e)
			// JSONata marks the block when one of its expressions is (or starts with) a kept array constructor
			if e.ConsArray || (e.Kind == ast.Path && e.Steps[0].ConsArray) {
				n.ConsArray = true
			}
		}
		return n
	case synTransform:
		n := &ast.Node{Kind: ast.Transform, Position: pos, Pattern: w.rewrite(s.a), Update: w.rewrite(s.b)}
		if s.c != nil {
			n.Delete = w.rewrite(s.c)
		}
		return n
	case synMap:
		return w.mapStep(s)
	case synInfix:
		n := &ast.Node{Kind: ast.Binary, Value: s.tok.text, Position: pos}
		n.LHS = w.rewrite(s.a)
		n.RHS = w.rewrite(s.b)
		w.inherit(n, n.LHS)
		w.inherit(n, n.RHS)
		return n
	case synApply:
		n := &ast.Node{Kind: ast.Apply, Value: "~>", Position: pos}
		n.LHS = w.rewrite(s.a)
		n.RHS = w.rewrite(s.b)
		n.KeepArray = n.LHS.KeepArray || n.RHS.KeepArray
		return n
	case synBind:
		n := &ast.Node{Kind: ast.Bind, Value: ":=", Position: pos}
		n.LHS = w.rewrite(s.a)
		n.RHS = w.rewrite(s.b)
		w.inherit(n, n.RHS)
		return n
	case synCond:
		n := &ast.Node{Kind: ast.Condition, Position: pos}
		n.Cond = w.rewrite(s.a)
		w.inherit(n, n.Cond)
		n.Then = w.rewrite(s.b)
		w.inherit(n, n.Then)
		if s.c != nil {
			n.Else = w.rewrite(s.c)
			w.inherit(n, n.Else)
		}
		return n
	case synCall:
		n := &ast.Node{Kind: ast.Call, Value: "(", Position: pos, Args: make([]*ast.Node, len(s.list))}
		if s.partial {
			n.Kind = ast.Partial
		}
		for i, arg := range s.list {
			n.Args[i] = w.rewrite(arg)
			w.inherit(n, n.Args[i])
		}
		n.Procedure = w.rewrite(s.a)
		return n
	case synLambda:
		n := &ast.Node{Kind: ast.Lambda, Position: pos, Signature: s.sig, Params: make([]string, len(s.list))}
		for i, p := range s.list {
			n.Params[i] = p.tok.text
		}
		n.Body = markTailCalls(w.rewrite(s.b))
		return n
	case synFilter:
		return w.filterStage(s)
	case synIndex:
		return w.indexStage(s)
	case synFocus:
		return w.focusStep(s)
	case synSort:
		return w.sortStep(s)
	case synGroup:
		n := w.rewrite(s.a)
		if n.Group != nil {
			panic(failure{&value.Error{Code: "S0210", Position: pos}})
		}
		n.Group = &ast.Node{Kind: ast.Object, Position: pos, Pairs: w.pairs(s.pairs, nil)}
		return n
	}
	panic("parse: unknown syntax node")
}

// pairs rewrites the key: value pairs of an object constructor (owner: the constructor, which inherits their %
// slots) or of a group-by (owner nil: JSONata resolves no % there).
func (w *rewriter) pairs(ps [][2]*synNode, owner *ast.Node) [][2]*ast.Node {
	out := make([][2]*ast.Node, len(ps))
	for i, p := range ps {
		k := w.rewrite(p[0])
		if owner != nil {
			w.inherit(owner, k)
		}
		v := w.rewrite(p[1])
		if owner != nil {
			w.inherit(owner, v)
		}
		out[i] = [2]*ast.Node{k, v}
	}
	return out
}

// asPath returns n if it is a path, else a new path of which n is the only step.
func asPath(n *ast.Node) *ast.Node {
	if n.Kind == ast.Path {
		return n
	}
	return &ast.Node{Kind: ast.Path, Steps: []*ast.Node{n}}
}

// lastStep is where what follows an expression attaches: a path's last step, or the expression itself.
func lastStep(n *ast.Node) *ast.Node {
	if n.Kind == ast.Path {
		return n.Steps[len(n.Steps)-1]
	}
	return n
}

// mapStep rewrites a.b: the steps of b are appended to the path of a (which a's node becomes, if it is one
// already), then the % slots of the new last step are resolved against the steps before it.
func (w *rewriter) mapStep(s *synNode) *ast.Node {
	left := w.rewrite(s.a)
	path := asPath(left)
	if left.Kind == ast.Parent {
		// a path that starts with % reads its parent from outside the path: only that %'s slot is pending (JSONata
		// forgets any slot of a predicate on that %)
		w.setPending(path, []*ast.Slot{left.Slot})
	}
	right := w.rewrite(s.b)
	if right.Kind == ast.Path {
		path.Steps = append(path.Steps, right.Steps...)
	} else {
		// an expression that becomes a step: its predicates become stages
		if right.Predicates != nil {
			right.Stages, right.Predicates = right.Predicates, nil
		}
		path.Steps = append(path.Steps, right)
	}
	for _, step := range path.Steps {
		switch step.Kind {
		case ast.Number, ast.Literal:
			panic(failure{&value.Error{Code: "S0213", Position: step.Position, Value: step.Value}})
		case ast.String:
			step.Kind = ast.Name
		}
	}
	for _, step := range path.Steps {
		if step.KeepArray {
			path.KeepSingletonArray = true
			break
		}
	}
	if first := path.Steps[0]; first.Kind == ast.Array {
		first.ConsArray = true
	}
	if last := path.Steps[len(path.Steps)-1]; last.Kind == ast.Array {
		last.ConsArray = true
	}
	w.settle(path)
	return path
}

// filterStage rewrites a[p]: a stage of a path's last step, or a predicate of an expression that is not a path.
func (w *rewriter) filterStage(s *synNode) *ast.Node {
	n := w.rewrite(s.a)
	step := lastStep(n)
	if step.Group != nil {
		// only an expression that is not a path carries its group-by itself
		panic(failure{&value.Error{Code: "S0209", Position: s.tok.end}})
	}
	pred := w.rewrite(s.b)
	w.predicateParents(step, pred)
	f := &ast.Node{Kind: ast.Filter, Expr: pred, Position: s.tok.end}
	if n.Kind == ast.Path {
		step.Stages = append(step.Stages, f)
	} else {
		step.Predicates = append(step.Predicates, f)
	}
	return n
}

// indexStage rewrites a#$i. The expression becomes a path if it is not one (its predicates become stages). With
// no stage yet, the binding is the step's IndexVar; after a predicate it is an Index stage, in written order.
func (w *rewriter) indexStage(s *synNode) *ast.Node {
	n := w.rewrite(s.a)
	step := lastStep(n)
	if n.Kind != ast.Path {
		n = asPath(n)
		if step.Predicates != nil {
			step.Stages, step.Predicates = step.Predicates, nil
		}
	}
	name := s.b.tok.text
	if step.Stages == nil {
		step.IndexVar = name
	} else {
		step.Stages = append(step.Stages, &ast.Node{Kind: ast.Index, Value: name, Position: s.tok.end})
	}
	step.Tuple = true
	return n
}

// focusStep rewrites a@$v: the step binds each item to $v instead of making it the context. The binding must come
// before the step's predicates (S0215) and cannot follow an order-by (S0216).
func (w *rewriter) focusStep(s *synNode) *ast.Node {
	n := w.rewrite(s.a)
	step := lastStep(n)
	if step.Stages != nil || step.Predicates != nil {
		panic(failure{&value.Error{Code: "S0215", Position: s.tok.end}})
	}
	if step.Kind == ast.Sort {
		panic(failure{&value.Error{Code: "S0216", Position: s.tok.end}})
	}
	if s.keep {
		step.KeepArray = true
	}
	step.Focus = s.b.tok.text
	step.Focused = true
	step.Tuple = true
	return n
}

// sortStep rewrites a^(…): a Sort step appended to the path of a, whose terms may use % like any step.
func (w *rewriter) sortStep(s *synNode) *ast.Node {
	path := asPath(w.rewrite(s.a))
	sort := &ast.Node{Kind: ast.Sort, Position: s.tok.end, Terms: make([]ast.SortTerm, len(s.terms))}
	for i, term := range s.terms {
		e := w.rewrite(term.expr)
		w.inherit(sort, e)
		sort.Terms[i] = ast.SortTerm{Descending: term.descending, Expr: e}
	}
	path.Steps = append(path.Steps, sort)
	w.settle(path)
	return path
}

// typeName is JSONata's name of a node's type: the token of S0217, and the type the tests' dumps compare.
func typeName(n *ast.Node) string {
	switch n.Kind {
	case ast.String:
		return "string"
	case ast.Number:
		return "number"
	case ast.Literal:
		return "value"
	case ast.Name:
		return "name"
	case ast.Variable:
		return "variable"
	case ast.Regex:
		return "regex"
	case ast.Wildcard:
		return "wildcard"
	case ast.Descendant:
		return "descendant"
	case ast.Parent:
		return "parent"
	case ast.Path:
		return "path"
	case ast.Binary:
		return "binary"
	case ast.Negate, ast.Array, ast.Object:
		return "unary"
	case ast.Block:
		return "block"
	case ast.Condition:
		return "condition"
	case ast.Bind:
		return "bind"
	case ast.Apply:
		return "apply"
	case ast.Call:
		return "function"
	case ast.Partial:
		return "partial"
	case ast.Placeholder:
		return "operator"
	case ast.Lambda:
		return "lambda"
	case ast.Transform:
		return "transform"
	case ast.Sort:
		return "sort"
	case ast.Filter:
		return "filter"
	case ast.Index:
		return "index"
	}
	return ""
}
