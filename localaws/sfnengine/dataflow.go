package sfnengine

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/transferflow/orchestrator/localaws/asl"
	"github.com/transferflow/orchestrator/localaws/asl/intrinsic"
	"github.com/transferflow/orchestrator/localaws/asl/jsonpath"
	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// marshal renders a value as compact JSON text, objects in key order.
func marshal(v any) string { return jsonvalue.Marshal(v) }

var pathCache sync.Map // string -> *jsonpath.Path

func compiledPath(src string) (*jsonpath.Path, error) {
	if p, ok := pathCache.Load(src); ok {
		return p.(*jsonpath.Path), nil
	}
	p, err := jsonpath.Parse(src)
	if err != nil {
		return nil, err
	}
	pathCache.Store(src, p)
	return p, nil
}

// get evaluates a path against doc, or against the context object when it starts with $$.
func (x *execution) get(sr *stateRun, path string, doc any) (any, error) {
	if name, rest, ok := asl.VariablePath(path); ok {
		v, found := x.variable(sr, name)
		if !found {
			return nil, fmt.Errorf("the variable '$%s' is not defined: %w", name, jsonpath.ErrNoMatch)
		}
		doc, path = v, rest
	} else if strings.HasPrefix(path, "$$") {
		doc = x.contextObject(sr)
		path = path[1:]
	}
	p, err := compiledPath(path)
	if err != nil {
		return nil, err
	}
	return p.Get(doc)
}

// evalIntrinsic evaluates an intrinsic function call given as text.
func (x *execution) evalIntrinsic(sr *stateRun, src string, doc any) (any, error) {
	call, err := compiledCall(src)
	if err != nil {
		return nil, err
	}
	return x.evalCall(sr, call, doc)
}

// evalCall evaluates a parsed intrinsic function call; its paths are read from doc (or the context object).
func (x *execution) evalCall(sr *stateRun, call *intrinsic.Call, doc any) (any, error) {
	return call.Eval(intrinsic.Env{
		Resolve: func(p string) (any, error) {
			v, err := x.get(sr, p, doc)
			if err != nil {
				return nil, &pathError{path: p, err: err}
			}
			return v, nil
		},
		NewUUID:   x.eng.opts.NewID,
		RandomInt: randomInt,
	})
}

type pathError struct {
	path string
	err  error
}

// Error returns the underlying JSONPath error.
func (e *pathError) Error() string { return e.err.Error() }

// filterInput applies InputPath.
func (x *execution) filterInput(sr *stateRun, input any) (any, *failure) {
	return x.selectPath(sr, sr.sp.inputPath, input)
}

// outputPath applies OutputPath.
func (x *execution) outputPath(sr *stateRun, out any) (any, *failure) {
	return x.selectPath(sr, sr.sp.outputPath, out)
}

func (x *execution) selectPath(sr *stateRun, s *selector, doc any) (any, *failure) {
	p := s.opt
	if !p.Set {
		return doc, nil
	}
	if p.Null {
		return jsonvalue.NewObject(0), nil
	}
	v, err := x.eval(sr, s.path, doc)
	if err != nil {
		return nil, x.runtimeErr(sr, "Invalid path '%s' : %s", p.Path, noResults(p.Path, err))
	}
	return v, nil
}

func noResults(path string, err error) string {
	if errors.Is(err, jsonpath.ErrNoMatch) {
		src := path
		if strings.HasPrefix(src, "$$") {
			src = src[1:]
		}
		if jp, perr := compiledPath(src); perr == nil {
			return "No results for path: " + jp.Bracketed()
		}
	}
	return err.Error()
}

// Path fields that supply a parameter's value (Wait's SecondsPath and TimestampPath, a Task's TimeoutSecondsPath
// and HeartbeatSecondsPath, Map's MaxConcurrencyPath and its ItemBatcher's MaxItemsPerBatchPath and
// MaxInputBytesPerBatchPath, Fail's ErrorPath and CausePath) fail in AWS's two recorded
// families of causes, which paramPath and longParam apply to all of them alike:
//   - the path matches nothing: "The JSONPath '<path>' specified for the field '<field>' could not be found in the
//     input '<input>'" (recorded for ErrorPath, CausePath and Parameters' "<key>.$" fields);
//   - the value has the wrong type or range: "The <field> parameter <problem>: <path> == <value>" (recorded for
//     SecondsPath, "cannot be parsed as a long value", and TimestampPath, "does not reference a valid ISO-8601
//     extended offset date-time format string").
//
// Data-flow paths (InputPath, OutputPath, ItemsPath) keep their own family, "Invalid path '<path>' : …".

// paramPath evaluates the Path field named field on doc.
func (x *execution) paramPath(sr *stateRun, field, path string, doc any) (any, *failure) {
	v, err := x.get(sr, path, doc)
	if err != nil {
		return nil, x.runtimeErr(sr, "The JSONPath '%s' specified for the field '%s' could not be found in the input '%s'", path, field, marshal(doc))
	}
	return v, nil
}

// paramProblem is the cause of a Path field whose value v does not do: "The <field> parameter <problem>: <path> ==
// <value>", a string value as it is, any other as its JSON text.
func (x *execution) paramProblem(sr *stateRun, field, problem, path string, v any) *failure {
	text, isStr := v.(string)
	if !isStr {
		text = marshal(v)
	}
	return x.runtimeErr(sr, "The %s parameter %s: %s == %s", field, problem, path, text)
}

// longParam evaluates an integer Path field; min is the least value allowed (0: not negative, 1: positive).
func (x *execution) longParam(sr *stateRun, field, path string, doc any, min int64) (int64, *failure) {
	v, fail := x.paramPath(sr, field, path, doc)
	if fail != nil {
		return 0, fail
	}
	n, isNum := v.(json.Number)
	i, err := strconv.ParseInt(string(n), 10, 64)
	if !isNum || err != nil {
		return 0, x.paramProblem(sr, field, "cannot be parsed as a long value", path, v)
	}
	switch {
	case i < 0 && min >= 0:
		return 0, x.paramProblem(sr, field, "references a negative value", path, v)
	case i < min:
		return 0, x.paramProblem(sr, field, "references a value that is not positive", path, v)
	}
	return i, nil
}

// resultPath places result into input according to ResultPath.
func (x *execution) resultPath(sr *stateRun, r *resultPath, input, result any) (any, *failure) {
	p := r.opt
	if !p.Set {
		return result, nil
	}
	if p.Null {
		return input, nil
	}
	if r.err != nil {
		return nil, x.runtimeErr(sr, "Invalid path '%s': %v", p.Path, r.err)
	}
	out, err := r.path.Set(input, result)
	if err != nil {
		return nil, &failure{Error: ErrNameResultPathMatch, Cause: fmt.Sprintf(
			"Unable to apply ResultPath \"%s\" to input \"%s\"", p.Path, marshal(input))}
	}
	return out, nil
}

// payload evaluates a compiled Parameters, ResultSelector or ItemSelector template against doc. Literal parts are
// evaluated first, in template order, then the ".$" fields in template order; the first failure is returned.
func (x *execution) payload(sr *stateRun, t *template, doc any) (any, *failure) {
	if t.static {
		return t.value, nil
	}
	if !t.obj {
		out := make([]any, len(t.items))
		for i, it := range t.items {
			val, fail := x.payload(sr, it, doc)
			if fail != nil {
				return nil, fail
			}
			out[i] = val
		}
		return out, nil
	}
	out := jsonvalue.NewObjectKeys(t.keys)
	for _, l := range t.lits {
		val, fail := x.payload(sr, l.t, doc)
		if fail != nil {
			return nil, fail
		}
		out.SetAt(l.pos, val)
	}
	for i := range t.dynamic {
		d := &t.dynamic[i]
		var val any
		var err error
		if d.isCall {
			if d.err != nil {
				err = d.err
			} else {
				val, err = x.evalCall(sr, d.call, doc)
			}
			if err != nil {
				var pe *pathError
				if errors.As(err, &pe) {
					return nil, x.runtimeErr(sr, "The JSONPath '%s' specified for the field '%s' could not be found in the input '%s'",
						pe.path, d.key, marshal(doc))
				}
				return nil, &failure{Error: ErrNameIntrinsicFailure, Cause: fmt.Sprintf(
					"An error occurred while executing the state '%s' (entered at the event id #%d). %v", sr.st.Name, sr.enteredID, err)}
			}
		} else {
			val, err = x.eval(sr, d.path, doc)
			if err != nil {
				return nil, x.runtimeErr(sr, "The JSONPath '%s' specified for the field '%s' could not be found in the input '%s'",
					d.src, d.key, marshal(doc))
			}
		}
		out.SetAt(d.pos, val)
	}
	return out, nil
}
