// Package jsonata evaluates the JSONata expressions of Step Functions states ("{% … %}" strings) over the engine's
// JSON values (package jsonvalue: ordered objects, json.Number), with the variables of the execution, the reserved
// $states variable and the functions Step Functions adds ($partition, $range, $hash, $random, $uuid, $parse).
//
// The language is JSONata 2.0.6, the version Step Functions runs, implemented in this repository: internal/parse
// (syntax), internal/lang (evaluation), internal/stdlib and internal/format (the function library), checked against
// JSONata's own test suite (testdata/jsonata-suite, run by internal/suite). docs/asl-engine.md lists the differences
// that remain and why.
package jsonata

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/lang"
	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// ErrUndefined is returned by Eval when the expression yields nothing (JSONata's undefined).
var ErrUndefined = errors.New("jsonata: the expression returned nothing (undefined)")

// ErrNotJSON is the error of an evaluation whose result is not a JSON value (a function): AWS calls it "an
// unsupported result type".
var ErrNotJSON = value.ErrNotJSON

// Is reports whether s is a JSONata expression string: it starts with "{%" and ends with "%}".
func Is(s string) bool {
	return len(s) >= 4 && strings.HasPrefix(s, "{%") && strings.HasSuffix(s, "%}")
}

// Body returns the expression inside a "{% … %}" string, trimmed of surrounding white space.
func Body(s string) string {
	return strings.TrimSpace(s[2 : len(s)-2])
}

// Expr is a compiled expression. It is immutable and safe for concurrent use.
type Expr struct {
	src  string // the expression, without its delimiters
	prog *lang.Expression
	// vars are the names the expression reads ($name) and does not bind itself, $states excepted: workflow
	// variables, or the library's functions when no variable has the name. Only those are looked up and converted
	// for an evaluation.
	vars []string
	// states: the expression reads $states.
	states bool
	// uuid: the expression reads $uuid, which is bound per evaluation (it calls the engine's UUID source).
	uuid bool
}

// Compile parses an expression (the text inside "{% … %}"). The error of an expression that does not parse is
// JSONata's ("S0202: Expected \")\", got \"]\"").
func Compile(src string) (*Expr, error) {
	prog, err := lang.Compile(src)
	if err != nil {
		return nil, err
	}
	x := &Expr{src: src, prog: prog}
	for _, name := range prog.Variables() {
		switch name {
		case "states":
			x.states = true
		case "uuid":
			x.uuid = true
			x.vars = append(x.vars, name)
		default:
			// A workflow variable of a function's name ($count, $type) takes its place, as a binding does in
			// JSONata; a name no variable has is the library's function.
			x.vars = append(x.vars, name)
		}
	}
	return x, nil
}

// Env is what an evaluation reads besides the expression: the variables and $states.
type Env struct {
	// Lookup returns the value of a variable, in the engine's representation.
	Lookup func(name string) (any, bool)
	// States returns the value of $states (an object with input, result, errorOutput and context); it is called
	// only when the expression reads $states.
	States func() any
	// NewUUID returns a new version 4 UUID for $uuid.
	NewUUID func() string
	// Now is the time $now and $millis read (the engine's clock); the system clock when nil.
	Now func() time.Time
	// Session, when set, keeps the values converted for the evaluator across the evaluations that share it (the
	// expressions of one field), so that $states and each variable are converted once.
	Session *Session
	// Context, when set, ends an evaluation that is still running when it is done (an execution stopped); an
	// evaluation ends after EvaluationTimeout in any case.
	Context context.Context
}

// Session caches the conversions of one Env's values for several evaluations. It is not safe for concurrent use.
type Session struct {
	states any
	vars   map[string]any
}

// NewSession returns an empty session.
func NewSession() *Session {
	return &Session{vars: map[string]any{}}
}

// MaxDepth is how deeply an evaluation may nest (functions calling functions, nested expressions). The evaluator
// recurses on the Go stack, so an unbounded recursion ($f := function($x){ 1 + $f($x) }) would grow it without end;
// past this depth the evaluation fails with JSONata's U1001 ("Stack overflow error"). A function calling itself
// outside tail position goes about 1,600 levels deep; tail calls do not nest.
const MaxDepth = 5000

// EvaluationTimeout bounds the time of one evaluation. JSONata has loops that never end (a function calling itself
// in tail position runs in constant depth: $f := function($x){ $f($x) }) and sequences that take hours to build
// ([1..1000000].[1..1000000]); past this time the evaluation fails with JSONata's own timeout error, U1001
// ("Expression evaluation timeout: Check for infinite loop"). AWS does not document its bound.
const EvaluationTimeout = 10 * time.Second

// Eval evaluates the expression. The result is in the engine's representation (objects as *jsonvalue.Object,
// numbers as json.Number); a result that is not JSON (a function) is ErrNotJSON, and undefined is ErrUndefined.
func (e *Expr) Eval(env Env) (any, error) {
	sess := env.Session
	if sess == nil {
		sess = NewSession()
	}
	bindings := make(map[string]any, len(e.vars)+2)
	for _, name := range e.vars {
		v, cached := sess.vars[name]
		if !cached {
			if env.Lookup != nil {
				if val, ok := env.Lookup(name); ok {
					v = value.FromEngine(val)
				}
			}
			sess.vars[name] = v
		}
		if v != nil {
			bindings[name] = v
		}
	}
	if e.states && env.States != nil {
		if sess.states == nil {
			sess.states = value.FromEngine(env.States())
		}
		bindings["states"] = sess.states
	}
	if _, isVariable := bindings["uuid"]; e.uuid && !isVariable {
		bindings["uuid"] = uuidFunction(env.NewUUID)
	}
	ctx := env.Context
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, EvaluationTimeout)
	defer cancel()
	opts := lang.Options{Library: library, Bindings: bindings, MaxDepth: MaxDepth, Context: ctx}
	if env.Now != nil {
		opts.Now = env.Now()
	}
	out, err := e.prog.Evaluate(nil, opts)
	if err != nil {
		return nil, err
	}
	if out == nil {
		return nil, ErrUndefined
	}
	return value.ToEngine(out)
}

// Coded returns an evaluation error as JSONata 2.0 (the evaluator AWS runs) reports it, its code and its message
// ("T2001: The left side of the \"+\" operator must evaluate to a number"), as AWS quotes it in the cause of a
// States.QueryEvaluationError ("… threw an error during evaluation. T1006: Attempted to invoke a non-function").
// ok is false for an error that is not JSONata's (a result that is not JSON, an evaluation ended by its context).
func Coded(err error) (text string, ok bool) {
	var ve *value.Error
	if errors.As(err, &ve) {
		return ve.Error(), true
	}
	return "", false
}
