// Package value is the data model shared by the JSONata evaluator (package lang) and its function library (package
// stdlib): the values an expression computes, the errors it raises with JSONata's codes, and the shape of a built-in
// function.
//
// Values are plain Go values:
//
//	nil            undefined (JSONata's "no value"; never stored inside an array or object)
//	Null           JSON null
//	bool, float64, string
//	*Object        an object; its keys keep their insertion order, as JSONata's do
//	*Regex         a regular expression literal (a function in JSONata)
//	*Array         an array or a sequence (Array.Sequence): see Array
//	Function       a function value: a lambda, a partial application, a built-in
//
// Numbers are float64 only: JSONata's numbers are IEEE doubles. Converting the engine's values (json.Number, nil for
// null, *jsonvalue.Object, []any) into these, and back, is package jsonata's business.
package value

import (
	"regexp"
	"time"

	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// NullType is the type of Null.
type NullType struct{}

// Null is JSON null. (Go's nil is JSONata's undefined.)
var Null any = NullType{}

// IsNull reports whether v is JSON null.
func IsNull(v any) bool {
	_, ok := v.(NullType)
	return ok
}

// Object is an object with ordered keys. Values stored in it are never nil (undefined); JSON null is Null.
type Object = jsonvalue.Object

// NewObject returns an empty object with room for n keys.
func NewObject(n int) *Object { return jsonvalue.NewObject(n) }

// Array is a JSON array or a JSONata sequence.
//
// A sequence (Sequence true) is what a path, a predicate or a function such as $map yields: the evaluator flattens
// sequences into one another and unwraps a sequence of one item into the item itself, unless KeepSingleton is set
// (the path ended in []). An array built by an array constructor ([…]) has Cons set, so that a path step does not
// flatten it. Arrays read from the input are plain arrays (all flags false).
type Array struct {
	Items []any
	// Sequence marks a JSONata sequence.
	Sequence bool
	// KeepSingleton keeps a sequence of one item an array (the [] modifier on a path step).
	KeepSingleton bool
	// Cons marks an array built by an array constructor.
	Cons bool
	// OuterWrapper marks the outer array of a path's result that held arrays (the evaluator's business).
	OuterWrapper bool
}

// NewArray returns a plain array of the given items.
func NewArray(items ...any) *Array { return &Array{Items: items} }

// NewSequence returns a sequence of the given items.
func NewSequence(items ...any) *Array { return &Array{Items: items, Sequence: true} }

// Function is a function value. The evaluator calls it (Context.Call); the library only passes it around.
type Function interface {
	// Arity is the number of parameters the function declares (a built-in's signature's parameters, a lambda's
	// parameter list). Higher-order functions use it to decide how many arguments to pass ($map passes the item,
	// then the index and the array when the function takes them).
	Arity() int
}

// Context is what a built-in function reads from the evaluation that calls it.
type Context interface {
	// Call applies a function value (a lambda, a partial application or a built-in) to arguments.
	Call(fn Function, args []any) (any, error)
	// Input is the context item of the call (the value the expression is evaluated against at that point).
	Input() any
	// Environment returns the value bound to a variable name (without its $), or nil.
	Environment(name string) any
	// Now is the time of the evaluation: JSONata reads the clock once per evaluation, so $now() and $millis() give
	// the same instant throughout one.
	Now() time.Time
}

// Regex is the value of a regular expression literal (/ab+c/i). In JSONata it is a function (its $type is
// "function"): called with a string, it returns the first match; $match, $contains, $split and $replace take it.
type Regex struct {
	// Source is the pattern as written between the slashes, Flags the flags after them ("i", "m").
	Source, Flags string
	// Pattern is the compiled pattern: JavaScript's syntax translated to Go's (RE2).
	Pattern *regexp.Regexp
}

// Arity implements Function: a regex takes the string to match.
func (r *Regex) Arity() int { return 1 }

// Builtin is a function of the library.
type Builtin struct {
	// Name is the function's name without its $ ("substring").
	Name string
	// Signature is the function's JSONata signature ("<s-nn?:s>"). The evaluator validates and coerces the
	// arguments with it before Impl runs: a parameter of type a receives an *Array (a single value is wrapped), '-'
	// takes the context item when the argument is missing, an optional argument that is absent is nil.
	Signature string
	// Impl computes the result; nil is undefined.
	Impl func(c Context, args []any) (any, error)
}

// Arity implements Function: the number of parameters of the signature (a symbol with its <…> subtype, or a (…)
// choice, is one parameter; the modifiers ?, + and - are not parameters).
func (b *Builtin) Arity() int {
	sig := b.Signature
	if len(sig) < 2 || sig[0] != '<' {
		return 0
	}
	n, depth := 0, 0
	for i := 1; i < len(sig); i++ {
		switch c := sig[i]; {
		case c == '<' || c == '(':
			if depth == 0 && c == '(' {
				n++
			}
			depth++
		case c == '>' || c == ')':
			if depth == 0 {
				return n
			}
			depth--
		case c == ':' && depth == 0:
			return n
		case depth == 0 && c != '?' && c != '+' && c != '-':
			n++
		}
	}
	return n
}
