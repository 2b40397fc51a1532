package sfnlocal

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/transferflow/orchestrator/internal/asl"
	"github.com/transferflow/orchestrator/internal/intrinsic"
	"github.com/transferflow/orchestrator/internal/jsonpath"
	"github.com/transferflow/orchestrator/internal/jsonvalue"
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

var callCache sync.Map // string -> *intrinsic.Call

// get evaluates a path against doc, or against the context object when it starts with $$.
func (x *execution) get(sr *stateRun, path string, doc any) (any, error) {
	if strings.HasPrefix(path, "$$") {
		doc = x.contextObject(sr)
		path = path[1:]
	}
	p, err := compiledPath(path)
	if err != nil {
		return nil, err
	}
	return p.Get(doc)
}

func (x *execution) evalIntrinsic(sr *stateRun, src string, doc any) (any, error) {
	var call *intrinsic.Call
	if c, ok := callCache.Load(src); ok {
		call = c.(*intrinsic.Call)
	} else {
		c, err := intrinsic.Parse(src)
		if err != nil {
			return nil, err
		}
		callCache.Store(src, c)
		call = c
	}
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
	return x.selectPath(sr, sr.st.InputPath, input)
}

// outputPath applies OutputPath.
func (x *execution) outputPath(sr *stateRun, out any) (any, *failure) {
	return x.selectPath(sr, sr.st.OutputPath, out)
}

func (x *execution) selectPath(sr *stateRun, p asl.OptPath, doc any) (any, *failure) {
	if !p.Set {
		return doc, nil
	}
	if p.Null {
		return jsonvalue.NewObject(0), nil
	}
	v, err := x.get(sr, p.Path, doc)
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

// resultPath places result into input according to ResultPath.
func (x *execution) resultPath(sr *stateRun, p asl.OptPath, input, result any) (any, *failure) {
	if !p.Set {
		return result, nil
	}
	if p.Null {
		return input, nil
	}
	jp, err := compiledPath(p.Path)
	if err != nil {
		return nil, x.runtimeErr(sr, "Invalid path '%s': %v", p.Path, err)
	}
	out, err := jp.Set(input, result)
	if err != nil {
		return nil, &failure{Error: ErrNameResultPathMatch, Cause: fmt.Sprintf(
			"Unable to apply ResultPath \"%s\" to input \"%s\"", p.Path, marshal(input))}
	}
	return out, nil
}

// payload evaluates a Parameters, ResultSelector or ItemSelector template against doc.
func (x *execution) payload(sr *stateRun, tmpl any, doc any) (any, *failure) {
	switch t := tmpl.(type) {
	case *jsonvalue.Object:
		// Literal fields come first, in the template's order; the ".$" fields follow in the order Step Functions
		// emits them (java.util.HashMap iteration order of the result names).
		out := jsonvalue.NewObject(t.Len())
		var dynamic []string
		for _, k := range t.Keys() {
			v, _ := t.Get(k)
			if strings.HasSuffix(k, ".$") {
				dynamic = append(dynamic, strings.TrimSuffix(k, ".$"))
				continue
			}
			val, fail := x.payload(sr, v, doc)
			if fail != nil {
				return nil, fail
			}
			out.Set(k, val)
		}
		values := make(map[string]any, len(dynamic))
		for _, name := range dynamic {
			k := name + ".$"
			v, _ := t.Get(k)
			s, _ := v.(string)
			var val any
			var err error
			if intrinsic.Is(s) {
				val, err = x.evalIntrinsic(sr, s, doc)
				if err != nil {
					var pe *pathError
					if errors.As(err, &pe) {
						return nil, x.runtimeErr(sr, "The JSONPath '%s' specified for the field '%s' could not be found in the input '%s'",
							pe.path, k, marshal(doc))
					}
					return nil, &failure{Error: ErrNameIntrinsicFailure, Cause: fmt.Sprintf(
						"An error occurred while executing the state '%s' (entered at the event id #%d). %v", sr.st.Name, sr.enteredID, err)}
				}
			} else {
				val, err = x.get(sr, s, doc)
				if err != nil {
					return nil, x.runtimeErr(sr, "The JSONPath '%s' specified for the field '%s' could not be found in the input '%s'",
						s, k, marshal(doc))
				}
			}
			values[name] = val
		}
		for _, name := range jsonvalue.HashMapOrder(dynamic) {
			out.Set(name, values[name])
		}
		return out, nil
	case []any:
		out := make([]any, len(t))
		for i, v := range t {
			val, fail := x.payload(sr, v, doc)
			if fail != nil {
				return nil, fail
			}
			out[i] = val
		}
		return out, nil
	}
	return tmpl, nil
}
