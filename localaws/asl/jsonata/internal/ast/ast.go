// Package ast is the syntax tree of a JSONata expression, as the parser (package parse) leaves it after its
// rewriting pass and the evaluator (package lang) walks it.
//
// The tree is the one JSONata's own documentation of its processing model implies: a path is a list of steps; a step
// carries its stages (predicates and # index bindings, in written order), its order-by terms, its group-by object,
// its @ focus binding; the parent operator % is resolved at parse time to a slot, a tuple binding the step that
// provides the parent writes and % reads.
package ast

import "github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"

// Kind is the kind of a node.
type Kind int

// The kinds of node.
const (
	Invalid Kind = iota
	// Leaves.
	String   // Value: the string
	Number   // Value: the float64
	Literal  // Value: true, false or value.Null
	Name     // Value: the field name (a step)
	Variable // Value: the name without $ ("" for $, the context item; "$" for $$, the root)
	Regex    // Value: *value.Regex
	Wildcard // *
	Descendant
	Parent // %: Slot
	// Operators.
	Path      // Steps; KeepSingletonArray; Tuple (a step binds @, #, or feeds %)
	Binary    // Value: the operator ("+", "-", "*", "/", "%", "=", "!=", "<", "<=", ">", ">=", "&", "and", "or", "in", "..")
	Negate    // Expr
	Array     // Exprs: an array constructor [a, b]
	Object    // Pairs: an object constructor {k: v}; as a step's group-by, see Node.Group
	Block     // Exprs: (a; b; c)
	Condition // Cond, Then, Else (Else nil when absent)
	Bind      // LHS (a Variable), RHS: $x := expr
	Apply     // LHS, RHS: lhs ~> rhs
	Call      // Procedure, Args: f(a, b); an argument of Kind Placeholder makes it a partial application
	Partial   // Procedure, Args with one or more Placeholder: f(?, b)
	Placeholder
	Lambda    // Params (variable names without $), Signature (may be nil), Body; Thunk for a tail-call thunk
	Transform // Pattern, Update, Delete (Delete nil when absent): | pattern | update, delete |
	Sort      // Terms: the ^(…) of a step
	Filter    // Expr: a predicate stage [expr]
	Index     // Value: the variable name (without $) a # binding binds, as a stage
)

// Node is a node of the tree. Which fields are set depends on Kind (see the constants); the step annotations at the
// end apply to a node that is a step of a path (or the only expression of a path the parser made for it).
type Node struct {
	Kind     Kind
	Value    any
	Position int // the character position after the node's token in the source (as JSONata reports positions: in UTF-16 code units)

	Steps              []*Node
	KeepSingletonArray bool

	LHS, RHS         *Node
	Expr             *Node
	Exprs            []*Node
	Pairs            [][2]*Node
	Procedure        *Node
	Args             []*Node
	Params           []string
	Signature        *Signature
	Body             *Node
	Thunk            bool
	Cond, Then, Else *Node
	Pattern          *Node
	Update, Delete   *Node
	Terms            []SortTerm

	// Step annotations.
	Stages []*Node // Filter and Index nodes, in the order written
	// Predicates is the list of [expr] applied to an expression that is not a path step (JSONata evaluates them
	// after the expression).
	Predicates []*Node
	// Group is the group-by {k: v} (an Object node): as in JSONata it is set on the Path node it follows (or on the
	// expression that is not a path: $x{k: v}), not on the path's last step, and it applies to the whole result.
	Group *Node
	Focus string // @$name: the variable (without $) bound to each item, which does not become the context
	// Focused is set on a step with a @ binding, even @$ (Focus ""), which binds nothing but, like any focus, keeps
	// the context of the next step (JSONata tests typeof step.focus === 'undefined' there, and the truthiness of
	// the name where it binds).
	Focused  bool
	IndexVar string // #$name on a step with no predicate after it (else an Index stage)
	Tuple    bool   // the step (or the path, or block, that provides a % parent) works on a tuple stream
	// Ancestor is the slot this step writes for a % read further on (the item the step is evaluated from).
	Ancestor *Slot
	// SeekingParent lists the % slots still unresolved inside this node (parse time only; empty after parsing).
	SeekingParent []*Slot
	// KeepArray: the node ends in [] (keep a singleton array). JSONata sets it on any node (a step, a path, a
	// variable, a block…; an ~> gets it from either side) and its evaluate() marks a sequence result keepSingleton.
	KeepArray bool
	// ConsArray: the array constructor is the first or last step of a path (not flattened into the path); also on
	// a Block holding such an expression (which JSONata sets, and does not read).
	ConsArray bool
	Slot      *Slot
}

// Slot links a parent operator % to the step whose context item it reads: the parser names it (Label) and counts
// how many steps up it goes (Level); the step at that level gets it as its Ancestor and binds the label in the tuple.
type Slot struct {
	Label string
	Level int
	Index int
}

// SortTerm is one term of an order-by clause.
type SortTerm struct {
	Descending bool
	Expr       *Node
}

// Signature is a parsed function signature (<s-nn?:s>).
type Signature struct {
	Source string  // as written
	Params []Param // the parameters, in order
	Result *Param  // the result type after ':' (nil when absent)
}

// Param is one parameter of a signature.
type Param struct {
	// Type is the symbol: b, n, s, l, a, o, f, j, x, u; '(' for a choice (Choice).
	Type byte
	// Choice holds the symbols of a (…) choice.
	Choice string
	// Sub is the <…> subtype of an a or f parameter (a<n>, f<n:n>), as written without its brackets.
	Sub string
	// Optional (?), OneOrMore (+), Context (-: the context item when the argument is missing).
	Optional, OneOrMore, Context bool
}

// Regex returns the regex of a Regex node.
func (n *Node) Regex() *value.Regex { r, _ := n.Value.(*value.Regex); return r }
