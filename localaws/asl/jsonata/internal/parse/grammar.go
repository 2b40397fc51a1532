package parse

import (
	"strconv"
	"strings"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/ast"
	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// The grammar is read by precedence climbing: an operand (a literal, a name, a prefix construct such as a block,
// a constructor, a transform or a negation), then as long as the next token is an infix or postfix operator that
// binds tighter than the caller's minimum, that operator with its right side. The result is a syntax tree (synNode)
// that still mirrors the source; the rewriting pass (rewrite.go) turns it into the tree of package ast.
//
// Two phases are needed, not only for clarity: JSONata reports every syntax error the reading finds before any
// error the rewriting finds, wherever they are in the source ("a.1 b" is S0201 at b, not S0213 at 1).

// MaxDepth bounds the nesting of an expression (parentheses, operators, paths…): deeper input is refused with
// DepthExceeded rather than growing the stack without bound.
const MaxDepth = 1000

// DepthExceeded is the code of the error for an expression nested more than MaxDepth levels (JSONata in JavaScript
// would run out of stack instead).
const DepthExceeded = "S0220"

// synKind is the kind of a syntax node.
type synKind uint8

const (
	synMissing synKind = iota // the end of the source where an operand was expected (an error once rewritten)
	synName
	synVar
	synString
	synNumber
	synLiteral
	synRegex
	synWildcard
	synDescendant
	synParent
	synPlaceholder // ? as an argument
	synNegate      // -a
	synArray       // [a, b, c..d]
	synObject      // {k: v}
	synBlock       // (a; b)
	synTransform   // |pattern|update, delete|
	synMap         // a.b
	synInfix       // a + b and the other operators that make a Binary node, .. in an array included
	synApply       // a ~> b
	synBind        // $a := b
	synFilter      // a[b]
	synGroup       // a{k: v}
	synSort        // a^(<k, >l)
	synFocus       // a@$v
	synIndex       // a#$v
	synCond        // a ? b : c
	synCall        // f(a, b), f(?, b)
	synLambda      // function($a)<sig>{body}
)

// synNode is a node of the syntax tree. tok is the token it was made from: its end is the node's position, and
// errors that name the node show that token.
type synNode struct {
	kind    synKind
	tok     token
	keep    bool       // followed by [] (keep a singleton array)
	a, b, c *synNode   // operands: left and right; the condition, then, else; the transform's three parts
	list    []*synNode // items, statements, arguments, parameters
	pairs   [][2]*synNode
	terms   []synTerm
	partial bool // a call with a ? argument
	sig     *ast.Signature
}

type synTerm struct {
	descending bool
	expr       *synNode
}

// power is the binding power of each infix and postfix operator: the higher, the tighter. '.' binds less tightly
// than predicates, calls and bindings (a.b[0] is a.(b[0])) but more than a group-by (a.b{…} groups the path).
var power = map[string]int{
	".": 75, "[": 80, "(": 80, "@": 80, "#": 80, "{": 70,
	"*": 60, "/": 60, "%": 60, "+": 50, "-": 50, "&": 50,
	"=": 40, "!=": 40, "<": 40, "<=": 40, ">": 40, ">=": 40, "in": 40, "~>": 40, "^": 40,
	"and": 30, "or": 25, "?": 20, ":=": 10,
}

// negatePower is how tightly a prefix minus holds its operand: -a.b is -(a.b), -a*b is (-a)*b.
const negatePower = 70

// known are the operators the grammar uses somewhere; any other operator token ('!' or '~' alone) is S0204.
var known = map[string]bool{
	"]": true, "}": true, ")": true, ",": true, ";": true, ":": true, "|": true, "..": true, "**": true,
}

func isKnown(op string) bool { _, ok := power[op]; return ok || known[op] }

// failure carries a syntax error up the recursion to Parse.
type failure struct{ err *value.Error }

func fail(code string, position int, tok string) {
	panic(failure{&value.Error{Code: code, Position: position, Token: tok}})
}

func depthError(position int) *value.Error {
	return &value.Error{Code: DepthExceeded, Position: position,
		Message: "The expression is nested too deeply (more than " + strconv.Itoa(MaxDepth) + " levels)"}
}

// reader reads the grammar: the scanner, the current (not yet consumed) token, and the nesting depth.
type reader struct {
	sc    scanner
	tok   token
	depth int
}

// next consumes the current token and scans the following one; operand is the scanner state (see lexer.go).
func (r *reader) next(operand bool) {
	r.tok = r.sc.scan(operand)
	if r.tok.kind == tokOp && !isKnown(r.tok.text) {
		fail("S0204", r.tok.end, r.tok.text)
	}
}

// is reports whether the current token is the operator op.
func (r *reader) is(op string) bool { return r.tok.kind == tokOp && r.tok.text == op }

// expect consumes the operator op, which must be the current token (S0202, or S0203 at the end of the source).
func (r *reader) expect(op string, operand bool) {
	if !r.is(op) {
		code := "S0202"
		if r.tok.kind == tokEnd {
			code = "S0203"
		}
		panic(failure{&value.Error{Code: code, Position: r.tok.end, Token: r.tok.display(), Value: op}})
	}
	r.next(operand)
}

// list reads items separated by commas up to the closing operator, which it consumes.
func (r *reader) list(closing string, item func()) {
	if !r.is(closing) {
		for {
			item()
			if !r.is(",") {
				break
			}
			r.next(true)
		}
	}
	r.expect(closing, false)
}

// expression reads an expression whose operators all bind more tightly than min.
func (r *reader) expression(min int) *synNode {
	r.depth++
	if r.depth > MaxDepth {
		panic(failure{depthError(r.tok.end)})
	}
	left := r.operand()
	for r.tok.kind == tokOp {
		p, ok := power[r.tok.text]
		if !ok || p <= min {
			break
		}
		left = r.operator(left, p)
	}
	r.depth--
	return left
}

// operand reads what may start an expression. The token after an operand's first token is scanned in the
// operator state, even after a prefix such as '(' or '-' (so -/a/ is a misplaced division, as in JSONata).
func (r *reader) operand() *synNode {
	t := r.tok
	r.next(false)
	n := &synNode{tok: t}
	switch t.kind {
	case tokEnd:
		n.kind = synMissing
		return n
	case tokName:
		n.kind = synName
		return n
	case tokVar:
		n.kind = synVar
		return n
	case tokString:
		n.kind = synString
		return n
	case tokNumber:
		n.kind = synNumber
		return n
	case tokLiteral:
		n.kind = synLiteral
		return n
	case tokRegex:
		n.kind = synRegex
		return n
	}
	switch t.text {
	case "and", "or", "in":
		// keywords are names where an operand is expected
		n.kind = synName
	case "*":
		n.kind = synWildcard
	case "**":
		n.kind = synDescendant
	case "%":
		n.kind = synParent
	case "-":
		n.kind = synNegate
		n.a = r.expression(negatePower)
	case "(":
		r.block(n)
	case "[":
		r.arrayConstructor(n)
	case "{":
		n.kind = synObject
		n.pairs = r.pairs()
	case "|":
		r.transform(n)
	default:
		fail("S0211", t.end, t.text)
	}
	return n
}

// block reads (a; b; c) after its '('; a trailing ';' is allowed.
func (r *reader) block(n *synNode) {
	n.kind = synBlock
	for !r.is(")") {
		n.list = append(n.list, r.expression(0))
		if !r.is(";") {
			break
		}
		r.next(true)
	}
	r.expect(")", false)
}

// arrayConstructor reads [a, b, c..d] after its '['.
func (r *reader) arrayConstructor(n *synNode) {
	n.kind = synArray
	r.list("]", func() {
		item := r.expression(0)
		if r.is("..") {
			rng := &synNode{kind: synInfix, tok: r.tok, a: item}
			r.next(true)
			rng.b = r.expression(0)
			item = rng
		}
		n.list = append(n.list, item)
	})
}

// pairs reads the key: value pairs of an object constructor or a group-by after its '{', and the '}'.
func (r *reader) pairs() [][2]*synNode {
	var ps [][2]*synNode
	r.list("}", func() {
		k := r.expression(0)
		r.expect(":", true)
		ps = append(ps, [2]*synNode{k, r.expression(0)})
	})
	return ps
}

// transform reads | pattern | update [, delete] | after its first '|'.
func (r *reader) transform(n *synNode) {
	n.kind = synTransform
	n.a = r.expression(0)
	r.expect("|", true)
	n.b = r.expression(0)
	if r.is(",") {
		r.next(true)
		n.c = r.expression(0)
	}
	r.expect("|", true)
}

// operator reads an infix or postfix operator (the current token, of binding power p) applied to left.
func (r *reader) operator(left *synNode, p int) *synNode {
	t := r.tok
	r.next(true)
	n := &synNode{tok: t, a: left}
	switch t.text {
	case ".":
		n.kind = synMap
		n.b = r.expression(p)
	case "~>":
		n.kind = synApply
		n.b = r.expression(p)
	case ":=":
		// right-associative: $a := $b := 1 binds $b first
		if left.kind != synVar {
			fail("S0212", left.tok.end, left.tok.display())
		}
		n.kind = synBind
		n.b = r.expression(p - 1)
	case "@", "#":
		n.kind = synFocus
		if t.text == "#" {
			n.kind = synIndex
		}
		n.b = r.expression(p)
		if n.b.kind != synVar {
			fail("S0214", n.b.tok.end, t.text)
		}
	case "?":
		n.kind = synCond
		n.b = r.expression(0)
		if r.is(":") {
			r.next(true)
			n.c = r.expression(0)
		}
	case "[":
		return r.predicate(n)
	case "{":
		n.kind = synGroup
		n.pairs = r.pairs()
	case "^":
		r.orderBy(n)
	case "(":
		return r.call(n)
	default:
		n.kind = synInfix
		n.b = r.expression(p)
	}
	return n
}

// predicate reads [expr] after its '['. An empty [] is no predicate: it marks the expression it follows (past any
// predicates: a[0][] marks a) to keep a singleton array.
func (r *reader) predicate(n *synNode) *synNode {
	if r.is("]") {
		target := n.a
		for target.kind == synFilter {
			target = target.a
		}
		target.keep = true
		r.next(true)
		return n.a
	}
	n.kind = synFilter
	n.b = r.expression(0)
	r.expect("]", false)
	return n
}

// orderBy reads ^(term, …) after its '^': each term an expression, ascending unless > precedes it.
func (r *reader) orderBy(n *synNode) {
	n.kind = synSort
	r.expect("(", true)
	for {
		var term synTerm
		if r.is("<") {
			r.next(true)
		} else if r.is(">") {
			term.descending = true
			r.next(true)
		}
		term.expr = r.expression(0)
		n.terms = append(n.terms, term)
		if !r.is(",") {
			break
		}
		r.next(true)
	}
	r.expect(")", true)
}

// call reads the arguments of f(…) after its '('. A ? argument makes it a partial application; a call of the name
// function (or λ) is a lambda definition, whose arguments must be variables, and which goes on with an optional
// <signature> and the {body}.
func (r *reader) call(n *synNode) *synNode {
	n.kind = synCall
	r.list(")", func() {
		if r.is("?") {
			n.partial = true
			n.list = append(n.list, &synNode{kind: synPlaceholder, tok: r.tok})
			r.next(true)
			return
		}
		n.list = append(n.list, r.expression(0))
	})
	if f := n.a; f.kind != synName || f.tok.kind != tokName || (f.tok.text != "function" && f.tok.text != "λ") {
		return n
	}
	for i, param := range n.list {
		if param.kind != synVar {
			panic(failure{&value.Error{Code: "S0208", Position: param.tok.end, Token: param.tok.display(),
				Value: float64(i + 1)}})
		}
	}
	n.kind = synLambda
	if r.is("<") {
		n.sig = r.signature()
	}
	r.expect("{", true)
	n.b = r.expression(0)
	r.expect("}", true)
	return n
}

// signature reads a <signature> from its '<'. The scanner knows nothing of signatures: JSONata joins the tokens up
// to the matching '>' (white space is lost) and parses that text; its errors are placed from the '<'.
func (r *reader) signature() *ast.Signature {
	at := r.tok.end
	var text strings.Builder
	text.WriteString("<")
	for depth := 1; depth > 0 && !r.is("{") && r.tok.kind != tokEnd; {
		r.next(true)
		switch {
		case r.is(">"):
			depth--
		case r.is("<"):
			depth++
		}
		text.WriteString(r.tok.display())
	}
	r.expect(">", true)
	sig, err := Signature(text.String())
	if err != nil {
		e := err.(*value.Error)
		e.Position += at
		panic(failure{e})
	}
	return sig
}
