// Package jsonata evaluates the JSONata expressions of Step Functions states ("{% … %}" strings) over the engine's
// JSON values (package jsonvalue: ordered objects, json.Number), with the variables of the execution, the reserved
// $states variable and the functions Step Functions adds ($partition, $range, $hash, $random, $uuid, $parse).
//
// The language itself is github.com/blues/jsonata-go, an implementation of JSONata 1.5; Step Functions runs
// JSONata 2.0.6. The 2.x functions the library lacks are added here too: $assert (functions.go), $formatInteger and
// $parseInteger (integer.go, with the XPath picture strings of picture.go). docs/asl-engine.md lists the
// differences that matter and what this package does about them.
package jsonata

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	lib "github.com/blues/jsonata-go"
	"github.com/blues/jsonata-go/jparse"
	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// ErrUndefined is returned by Eval when the expression yields nothing (JSONata's undefined).
var ErrUndefined = errors.New("jsonata: the expression returned nothing (undefined)")

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
	expr *lib.Expr
	// libSrc is what was compiled into expr (src, or src with its functions guarded); fresh says to compile it again
	// for each evaluation: the library's evaluation of x ~> $f(…) appends x to the call's arguments in the compiled
	// expression itself, so a second evaluation of the same compiled expression would call $f with one argument too
	// many.
	libSrc string
	fresh  bool
	// vars are the names of the variables the expression reads ($name), besides functions, so that only those
	// are converted for an evaluation.
	vars []string
	// states: the expression reads $states.
	states bool
	// guarded: the functions the expression defines count their depth (depth.go).
	guarded bool
	// field: the expression is a path ending in a field name, which may hold [] (emptyarray.go).
	field *fieldPath
}

// Src returns the expression without its delimiters.
func (e *Expr) Src() string { return e.src }

// Vars returns the names of the variables the expression reads ($name), $states excepted.
func (e *Expr) Vars() []string { return e.vars }

// UsesStates reports whether the expression reads $states.
func (e *Expr) UsesStates() bool { return e.states }

var varRef = regexp.MustCompile(`\$([\p{L}_][\p{L}\p{N}_]*)`)

// Compile parses an expression (the text inside "{% … %}"). The error of an expression that does not parse is
// the parser's message.
func Compile(src string) (*Expr, error) {
	e, err := compileSafe(src)
	if err != nil {
		return nil, err
	}
	x := &Expr{src: src, expr: e, libSrc: src, fresh: strings.Contains(stripStrings(src), "~>")}
	if guarded, ok := guardLambdas(src); ok {
		g, err := compileSafe(guarded)
		if err != nil {
			return nil, fmt.Errorf("guard the functions of the expression: %w", err)
		}
		x.expr, x.guarded, x.libSrc = g, true, guarded
	} else {
		x.field = lastField(src)
	}
	seen := map[string]bool{}
	for _, m := range varRef.FindAllStringSubmatch(stripStrings(src), -1) {
		name := m[1]
		switch {
		case name == "states":
			x.states = true
		case seen[name]:
		default:
			seen[name] = true
			x.vars = append(x.vars, name)
		}
	}
	return x, nil
}

// compileTimeout bounds how long the library's parser may take (compileSafe).
const compileTimeout = 2 * time.Second

// compileSafe parses with the library, guarding against its failures on hostile text (definitions come from users):
// a panic of the parser is an error; a function signature with characters outside the signature grammar is refused
// before the parser sees it (the library's lexer loops forever on "<a!>"); and a parse still running after
// compileTimeout is abandoned with an error (its goroutine is left to finish, or not).
func compileSafe(src string) (*lib.Expr, error) {
	if err := checkSignatures(src); err != nil {
		return nil, err
	}
	type result struct {
		e   *lib.Expr
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- result{nil, fmt.Errorf("the expression could not be parsed: %v", r)}
			}
		}()
		e, err := lib.Compile(src)
		done <- result{e, err}
	}()
	timer := time.NewTimer(compileTimeout)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.e, r.err
	case <-timer.C:
		return nil, fmt.Errorf("the expression could not be parsed within %v", compileTimeout)
	}
}

// signatureRunes are the characters of JSONata function signatures.
const signatureRunes = "bnsloafxju()<>?+-: \t\n\r"

// checkSignatures refuses a function signature (function(…)<…> or λ(…)<…>) with a character outside the signature
// grammar.
func checkSignatures(src string) error {
	for i := 0; i < len(src); i++ {
		if c := src[i]; c == '\'' || c == '"' || c == '`' {
			i = skipQuoted(src, i) - 1
			continue
		}
		start, ok := signatureStart(src, i)
		if !ok {
			continue
		}
		depth := 0
		for j := start; j < len(src); j++ {
			c := src[j]
			if !strings.ContainsRune(signatureRunes, rune(c)) {
				return fmt.Errorf("invalid type signature: %q is not a signature symbol", c)
			}
			if c == '<' {
				depth++
			} else if c == '>' {
				depth--
				if depth == 0 {
					break
				}
			}
		}
	}
	return nil
}

// stripStrings blanks out the string literals of an expression, so that "$x" inside quotes is not read as a
// variable.
func stripStrings(src string) string {
	b := []byte(src)
	var quote byte
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case quote == 0 && (c == '"' || c == '\''):
			quote = c
		case quote != 0 && c == '\\':
			b[i] = ' '
			if i+1 < len(b) {
				i++
				b[i] = ' '
			}
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			b[i] = ' '
		}
	}
	return string(b)
}

// TopLevelReference returns the name a path of the expression starts with when it reads a field of the context
// item, or "$" when it reads the context item itself (Step Functions provides none: "Reference to 'x' at the top
// level is not supported"), or "".
func (e *Expr) TopLevelReference() (name string) {
	defer func() {
		if recover() != nil {
			name = ""
		}
	}()
	node, err := jparse.Parse(e.src)
	if err != nil {
		return ""
	}
	return topName(node)
}

func topName(n jparse.Node) string {
	switch t := n.(type) {
	case *jparse.NameNode:
		return t.Value
	case *jparse.VariableNode:
		if t.Name == "" { // $, the context item
			return "$"
		}
	case *jparse.PathNode:
		if len(t.Steps) > 0 {
			return topName(t.Steps[0])
		}
	case *jparse.PredicateNode:
		return topName(t.Expr)
	case *jparse.BlockNode:
		for _, s := range t.Exprs {
			if name := topName(s); name != "" {
				return name
			}
		}
	case *jparse.NumericOperatorNode:
		if name := topName(t.LHS); name != "" {
			return name
		}
		return topName(t.RHS)
	case *jparse.ComparisonOperatorNode:
		if name := topName(t.LHS); name != "" {
			return name
		}
		return topName(t.RHS)
	case *jparse.BooleanOperatorNode:
		if name := topName(t.LHS); name != "" {
			return name
		}
		return topName(t.RHS)
	case *jparse.StringConcatenationNode:
		if name := topName(t.LHS); name != "" {
			return name
		}
		return topName(t.RHS)
	case *jparse.ConditionalNode:
		for _, s := range []jparse.Node{t.If, t.Then, t.Else} {
			if s == nil {
				continue
			}
			if name := topName(s); name != "" {
				return name
			}
		}
	case *jparse.FunctionCallNode:
		for _, a := range t.Args {
			if name := topName(a); name != "" {
				return name
			}
		}
	case *jparse.ArrayNode:
		for _, a := range t.Items {
			if name := topName(a); name != "" {
				return name
			}
		}
	case *jparse.ObjectNode:
		for _, kv := range t.Pairs {
			for _, n := range kv {
				if name := topName(n); name != "" {
					return name
				}
			}
		}
	case *jparse.NegationNode:
		return topName(t.RHS)
	}
	return ""
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
	// Session, when set, keeps the values converted for the library across the evaluations that share it (the
	// expressions of one field), so that $states and each variable are converted once.
	Session *Session
}

// Session caches the conversions of one Env's values for several evaluations. It is not safe for concurrent use.
type Session struct {
	c      *converter
	states interface{}
	vars   map[string]interface{}
}

// NewSession returns an empty session.
func NewSession() *Session {
	return &Session{c: newConverter(), vars: map[string]interface{}{}}
}

// Eval evaluates the expression. The result is in the engine's representation (objects as *jsonvalue.Object,
// numbers as json.Number); a result that is not JSON (a function) is an error, and undefined is ErrUndefined.
func (e *Expr) Eval(env Env) (any, error) {
	sess := env.Session
	if sess == nil {
		sess = NewSession()
	}
	vars := make(map[string]interface{}, len(e.vars)+1)
	for _, name := range e.vars {
		switch {
		case awsFunctions[name] != nil:
			vars[name] = private(awsFunctions[name])
		case name == "uuid":
			vars[name] = uuidFunction(env.NewUUID)
		case (name == "now" || name == "millis") && env.Now != nil:
			if _, bound := vars[name]; !bound {
				vars["now"], vars["millis"] = clockFunctions(env.Now())
			}
		case env.Lookup != nil:
			v, cached := sess.vars[name]
			if !cached {
				if val, ok := env.Lookup(name); ok {
					v = sess.c.toGo(val)
				}
				sess.vars[name] = v
			}
			if v != nil {
				vars[name] = v
			}
		}
	}
	for _, name := range e.vars {
		if _, bound := vars[name]; !bound && name == "merge" {
			vars[name] = mergeFunction(sess.c)
		}
		if _, bound := vars[name]; !bound {
			if fn := builtin(name); fn != nil {
				vars[name] = private(fn)
			}
		}
	}
	if e.guarded {
		vars["__enter"], vars["__leave"] = depthFunctions()
	}
	if e.states && env.States != nil {
		if sess.states == nil {
			sess.states = sess.c.toGo(env.States())
		}
		vars["states"] = sess.states
	}
	compiled := e.expr
	if e.fresh {
		c, err := compileSafe(e.libSrc)
		if err != nil {
			return nil, err
		}
		compiled = c
	}
	run := *compiled // a copy, so that the variables of this evaluation are its own
	if err := run.RegisterVars(vars); err != nil {
		return nil, fmt.Errorf("bind variables: %w", err)
	}
	out, err := evalSafe(&run)
	if err != nil {
		if errors.Is(err, lib.ErrUndefined) {
			if e.field != nil {
				empty, err := e.field.emptyArray(vars)
				if err != nil {
					return nil, err
				}
				if empty {
					return []any{}, nil
				}
			}
			return nil, ErrUndefined
		}
		return nil, err
	}
	return sess.c.fromGo(out)
}

// evalSafe evaluates with no context item, turning a panic of the library into an error. Evaluations run at once:
// each binds its own copies of the functions it calls (private), and an expression the library would change as it
// runs is compiled again for each evaluation (Expr.fresh).
func evalSafe(e *lib.Expr) (out interface{}, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("the evaluation failed: %v", r)
		}
	}()
	return e.Eval(nil)
}

// builtins holds the library's built-in functions by name (nil for a name that is none), looked up once each.
var builtins sync.Map

// builtin returns the library's own value of the built-in function $name, or nil when there is none.
func builtin(name string) interface{} {
	if fn, ok := builtins.Load(name); ok {
		return fn
	}
	var fn interface{}
	if e, err := lib.Compile("$" + name); err == nil {
		if v, err := e.Eval(nil); err == nil && isFunction(v) {
			fn = v
		}
	}
	builtins.Store(name, fn)
	return fn
}

// isFunction reports whether v is one of the library's function values: a pointer to a struct.
func isFunction(v interface{}) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.Elem().Kind() == reflect.Struct
}

// private returns a copy of one of the library's function values, for one evaluation. The library writes the name
// and the context item of each call on the function value itself (SetName, SetContext in its evalFunctionCall) and
// reads them back when the call runs; its built-in functions, and the ones added here, are shared by every
// expression, so two evaluations calling one function at once would read each other's context item. Bound as a
// variable, the copy takes the place of the shared value in this evaluation only.
func private(fn interface{}) interface{} {
	if !isFunction(fn) {
		return fn
	}
	v := reflect.ValueOf(fn)
	c := reflect.New(v.Elem().Type())
	c.Elem().Set(v.Elem())
	return c.Interface()
}

// converter turns engine values into the generic values the library reads and back. Objects are Go maps there,
// which have no key order: an object read from the engine that comes back unchanged keeps its order (orig), an
// object built by the expression gets its keys sorted.
type converter struct {
	orig map[uintptr]*jsonvalue.Object
	// order is the key order of the objects $merge built (mergeFunction), by map.
	order map[uintptr][]string
}

func newConverter() *converter {
	return &converter{orig: map[uintptr]*jsonvalue.Object{}, order: map[uintptr][]string{}}
}

// keysOf returns a map's keys in the order they have for the engine: an object read from it, in its order; one
// $merge built, in the order $merge gave it; any other, sorted.
func (c *converter) keysOf(m map[string]interface{}) []string {
	p := reflect.ValueOf(m).Pointer()
	if o, ok := c.orig[p]; ok && o.Len() == len(m) {
		return o.Keys()
	}
	if keys, ok := c.order[p]; ok && len(keys) == len(m) {
		return keys
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// null is how the library represents JSON null (a nil Go value is undefined there).
var null *interface{}

func (c *converter) toGo(v any) interface{} {
	switch t := v.(type) {
	case nil:
		return null
	case *jsonvalue.Object:
		m := make(map[string]interface{}, t.Len())
		for i, k := range t.Keys() {
			m[k] = c.toGo(t.Values()[i])
		}
		c.orig[reflect.ValueOf(m).Pointer()] = t
		return m
	case map[string]any:
		m := make(map[string]interface{}, len(t))
		for k, x := range t {
			m[k] = c.toGo(x)
		}
		return m
	case []any:
		out := make([]interface{}, len(t))
		for i, x := range t {
			out[i] = c.toGo(x)
		}
		return out
	case json.Number:
		f, err := t.Float64()
		if err != nil {
			return string(t)
		}
		return f
	}
	return v
}

func (c *converter) fromGo(v interface{}) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch t := v.(type) {
	case string, bool:
		return t, nil
	case json.Number:
		return t, nil
	case float64:
		return Number(t)
	case map[string]interface{}:
		if o, ok := c.orig[reflect.ValueOf(t).Pointer()]; ok && o.Len() == len(t) {
			return o, nil
		}
		keys := c.keysOf(t)
		o := jsonvalue.NewObjectKeys(keys)
		for i, k := range keys {
			x, err := c.fromGo(t[k])
			if err != nil {
				return nil, err
			}
			o.SetAt(i, x)
		}
		return o, nil
	case []interface{}:
		out := make([]any, len(t))
		for i, x := range t {
			y, err := c.fromGo(x)
			if err != nil {
				return nil, err
			}
			out[i] = y
		}
		return out, nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Ptr, reflect.Interface:
		if rv.IsNil() {
			return nil, nil
		}
		return c.fromGo(rv.Elem().Interface())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return json.Number(strconv.FormatInt(rv.Int(), 10)), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return json.Number(strconv.FormatUint(rv.Uint(), 10)), nil
	case reflect.Float32:
		return Number(rv.Float())
	case reflect.Slice, reflect.Array:
		out := make([]any, rv.Len())
		for i := range out {
			y, err := c.fromGo(rv.Index(i).Interface())
			if err != nil {
				return nil, err
			}
			out[i] = y
		}
		return out, nil
	case reflect.Map:
		m := make(map[string]interface{}, rv.Len())
		iter := rv.MapRange()
		for iter.Next() {
			m[fmt.Sprint(iter.Key().Interface())] = iter.Value().Interface()
		}
		return c.fromGo(m)
	case reflect.Func:
		return nil, fmt.Errorf("the expression returned a function: %w", ErrNotJSON)
	}
	if _, ok := v.(interface {
		Call([]reflect.Value) (reflect.Value, error)
	}); ok {
		return nil, fmt.Errorf("the expression returned a function: %w", ErrNotJSON)
	}
	return nil, fmt.Errorf("the expression returned a value of type %T: %w", v, ErrNotJSON)
}

// Number writes f as a JSON number the way JavaScript prints it (integers without a fraction or exponent below
// 1e21).
func Number(f float64) (json.Number, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", fmt.Errorf("the number %v is not a JSON value", f)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return json.Number(strconv.FormatFloat(f, 'f', -1, 64)), nil
	}
	abs := math.Abs(f)
	if abs >= 1e-7 && abs < 1e21 {
		return json.Number(strconv.FormatFloat(f, 'f', -1, 64)), nil
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	// JavaScript writes 1e+21 and 1e-7, Go 1e+21 and 1e-07.
	if i := strings.IndexAny(s, "e"); i >= 0 {
		mant, exp := s[:i], s[i+1:]
		sign := exp[0]
		digits := strings.TrimLeft(exp[1:], "0")
		if digits == "" {
			digits = "0"
		}
		s = mant + "e" + string(sign) + digits
	}
	return json.Number(s), nil
}
