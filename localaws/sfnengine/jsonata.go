package sfnengine

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/transferflow/orchestrator/localaws/asl"
	"github.com/transferflow/orchestrator/localaws/asl/jsonata"
	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// jtemplate is a compiled JSONata field value (Arguments, Output, Assign, Items, ItemSelector, ItemBatcher.BatchInput,
// a Condition, a numeric or string field): "{% … %}" strings at any depth are compiled expressions, everything else is literal.
// field is the location AWS names in errors, relative to the state: "Output/v", "Arguments/list[0]", "Assign/x".
type jtemplate struct {
	field  string
	static bool
	value  any
	expr   *jsonata.Expr
	src    string
	err    error // the expression's compile error (Validate refuses such definitions; kept for safety)
	keys   []string
	fields []*jtemplate
	isArr  bool
	items  []*jtemplate
}

// compileJ compiles a JSONata field value; nil when the field is absent.
func compileJ(v any, has bool, field string) *jtemplate {
	if !has {
		return nil
	}
	return compileJValue(v, field)
}

func compileJValue(v any, field string) *jtemplate {
	switch t := v.(type) {
	case string:
		if !jsonata.Is(t) {
			return &jtemplate{field: field, static: true, value: t}
		}
		src := jsonata.Body(t)
		e, err := jsonata.Compile(src)
		return &jtemplate{field: field, expr: e, src: src, err: err}
	case *jsonvalue.Object:
		jt := &jtemplate{field: field, keys: t.Keys()}
		static := true
		for i, k := range t.Keys() {
			f := compileJValue(t.Values()[i], field+"/"+k)
			static = static && f.static
			jt.fields = append(jt.fields, f)
		}
		if static {
			return &jtemplate{field: field, static: true, value: v}
		}
		return jt
	case []any:
		jt := &jtemplate{field: field, isArr: true}
		static := true
		for i, x := range t {
			f := compileJValue(x, fmt.Sprintf("%s[%d]", field, i))
			static = static && f.static
			jt.items = append(jt.items, f)
		}
		if static {
			return &jtemplate{field: field, static: true, value: v}
		}
		return jt
	}
	return &jtemplate{field: field, static: true, value: v}
}

// queryError is a States.QueryEvaluationError of the state, with AWS's cause prefix, recorded in an
// EvaluationFailed event (state, error, cause and the field as location) as AWS records one.
func (x *execution) queryError(sr *stateRun, field, format string, args ...any) *failure {
	return x.evaluationFailed(sr, field, fmt.Sprintf(format, args...))
}

// evaluationFailed is queryError with the cause's last part given; field "" records no location. An
// EvaluationFailed event that directly follows the state's entered event links, as AWS records for Pass, Task and
// Map states (and for a Pass state in a Map iteration), to the event the entered event links to, not to the
// entered event itself; for a Wait state AWS records the link to WaitStateEntered, kept here.
func (x *execution) evaluationFailed(sr *stateRun, field, cause string) *failure {
	f := &failure{Error: ErrNameQueryEvaluation, Cause: fmt.Sprintf("An error occurred while executing the state '%s' (entered at the event id #%d). ",
		sr.st.Name, sr.enteredID) + cause}
	if sr.th != nil {
		d := map[string]any{"state": sr.sp.name, "error": f.Error, "cause": f.Cause}
		if field != "" {
			d["location"] = field
		}
		if sr.hasBeforeEntered && sr.th.prev == sr.enteredID && sr.st.Type != asl.TypeWait {
			sr.th.prev = sr.beforeEntered
		}
		x.emit(sr.th, true, EventEvaluationFailed, "evaluationFailedEventDetails", d)
	}
	return f
}

// evalJ evaluates a JSONata field value for the state: expressions read $states (sr's input, result, error output
// and context) and the variables visible to the state. An expression that returns nothing or fails is a
// States.QueryEvaluationError naming the expression and the field. The expressions of one field share one session,
// so that $states and each variable are converted for the evaluator once.
func (x *execution) evalJ(sr *stateRun, t *jtemplate) (any, *failure) {
	if t.static {
		return t.value, nil
	}
	return x.evalJIn(sr, t, jsonata.NewSession())
}

func (x *execution) evalJIn(sr *stateRun, t *jtemplate, sess *jsonata.Session) (any, *failure) {
	switch {
	case t.static:
		return t.value, nil
	case t.isArr:
		out := make([]any, len(t.items))
		for i, it := range t.items {
			v, fail := x.evalJIn(sr, it, sess)
			if fail != nil {
				return nil, fail
			}
			out[i] = v
		}
		return out, nil
	case t.keys != nil || t.fields != nil:
		out := jsonvalue.NewObjectKeys(t.keys)
		for i, f := range t.fields {
			v, fail := x.evalJIn(sr, f, sess)
			if fail != nil {
				return nil, fail
			}
			out.SetAt(i, v)
		}
		return out, nil
	}
	if t.err != nil {
		return nil, x.queryError(sr, t.field, "The JSONata expression '%s' specified for the field '%s' could not be parsed: %v", t.src, t.field, t.err)
	}
	v, err := t.expr.Eval(jsonata.Env{
		Lookup: func(name string) (any, bool) { return x.variable(sr, name) },
		States: func() any { return x.statesValue(sr) },
		NewUUID: func() string {
			return x.eng.opts.NewID()
		},
		Now:     x.eng.opts.Clock.Now,
		Session: sess,
	})
	if errors.Is(err, jsonata.ErrUndefined) {
		return nil, x.queryError(sr, t.field, "The JSONata expression '%s' specified for the field '%s' returned nothing (undefined).", t.src, t.field)
	}
	if errors.Is(err, jsonata.ErrNotJSON) {
		return nil, x.queryError(sr, t.field, "The JSONata expression '%s' specified for the field '%s' returned an unsupported result type.", t.src, t.field)
	}
	if err != nil {
		if text, ok := jsonata.Coded(err); ok {
			return nil, x.queryError(sr, t.field, "The JSONata expression '%s' specified for the field '%s' threw an error during evaluation. %s", t.src, t.field, text)
		}
		return nil, x.queryError(sr, t.field, "The JSONata expression '%s' specified for the field '%s' threw an error during evaluation: %v", t.src, t.field, err)
	}
	return v, nil
}

// typeName names a JSON value's type as JSONata's $type does.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case []any:
		return "array"
	}
	return "object"
}

func (x *execution) unexpectedType(sr *stateRun, t *jtemplate, want string, v any) *failure {
	return x.queryError(sr, t.field, "The JSONata expression '%s' specified for the field '%s' returned an unexpected result type. Expected '%s', but was '%s' for value: %s",
		jtemplateSrc(t), t.field, want, typeName(v), marshal(v))
}

func jtemplateSrc(t *jtemplate) string {
	if t.expr != nil || t.err != nil {
		return t.src
	}
	return marshal(t.value)
}

// evalJInt evaluates a field that must be an integer (TimeoutSeconds, HeartbeatSeconds, Seconds, MaxConcurrency):
// at least 1 when positive, else at least 0.
func (x *execution) evalJInt(sr *stateRun, t *jtemplate, positive bool) (int64, *failure) {
	n, fail := x.evalJNumber(sr, t, "integer")
	if fail != nil {
		return 0, fail
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > math.MaxInt64/2 {
		return 0, x.unexpectedType(sr, t, "integer", n)
	}
	i := int64(f)
	if (positive && i < 1) || i < 0 {
		min := 0
		if positive {
			min = 1
		}
		return 0, x.queryError(sr, t.field, "The JSONata expression '%s' specified for the field '%s' returned %d, but the field must be at least %d.",
			jtemplateSrc(t), t.field, i, min)
	}
	return i, nil
}

// evalJNumber evaluates a field that must be a number; want is the type its error names when it is not one
// ("integer", "number").
func (x *execution) evalJNumber(sr *stateRun, t *jtemplate, want string) (json.Number, *failure) {
	v, fail := x.evalJ(sr, t)
	if fail != nil {
		return "", fail
	}
	n, ok := v.(json.Number)
	if !ok {
		return "", x.unexpectedType(sr, t, want, v)
	}
	return n, nil
}

// isExpression reports whether a JSONata field's value is a "{% … %}" expression.
func isExpression(v any) bool {
	s, ok := v.(string)
	return ok && jsonata.Is(s)
}

// evalJPercentage evaluates a field that must be a percentage, a number from 0 to 100
// (ToleratedFailurePercentage).
func (x *execution) evalJPercentage(sr *stateRun, t *jtemplate) (float64, *failure) {
	n, fail := x.evalJNumber(sr, t, "number")
	if fail != nil {
		return 0, fail
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f < 0 || f > 100 {
		return 0, x.queryError(sr, t.field, "The JSONata expression '%s' specified for the field '%s' returned %s, but the field must be between 0 and 100.",
			jtemplateSrc(t), t.field, string(n))
	}
	return f, nil
}

// evalJString evaluates a field that must be a string (Timestamp, Error, Cause).
func (x *execution) evalJString(sr *stateRun, t *jtemplate) (string, *failure) {
	v, fail := x.evalJ(sr, t)
	if fail != nil {
		return "", fail
	}
	s, ok := v.(string)
	if !ok {
		return "", x.unexpectedType(sr, t, "string", v)
	}
	return s, nil
}

// evalJBool evaluates a Choice rule's Condition.
func (x *execution) evalJBool(sr *stateRun, t *jtemplate) (bool, *failure) {
	v, fail := x.evalJ(sr, t)
	if fail != nil {
		return false, fail
	}
	b, ok := v.(bool)
	if !ok {
		return false, x.unexpectedType(sr, t, "boolean", v)
	}
	return b, nil
}

// assignProgram is a compiled Assign field: a JSONPath template (".$" names) or a JSONata one.
type assignProgram struct {
	path *template
	j    *jtemplate
}

func compileAssign(v any, has, isJSONata bool, field string) *assignProgram {
	if !has {
		return nil
	}
	if isJSONata {
		return &assignProgram{j: compileJValue(v, field)}
	}
	return &assignProgram{path: compileTemplate(v)}
}

// evalAssign evaluates an Assign for the state into sr.pending, committed when the state exits: every expression
// sees the variables as they were when the state was entered. doc is what "$" means in a JSONPath Assign.
func (x *execution) evalAssign(sr *stateRun, a *assignProgram, doc any) *failure {
	sr.pending = nil
	if a == nil {
		return nil
	}
	var v any
	var fail *failure
	if a.j != nil {
		v, fail = x.evalJ(sr, a.j)
	} else {
		v, fail = x.payload(sr, a.path, doc)
	}
	if fail != nil {
		return fail
	}
	sr.pending = assignments(v)
	if sr.pending == nil {
		sr.pending = []assignment{}
	}
	return nil
}
