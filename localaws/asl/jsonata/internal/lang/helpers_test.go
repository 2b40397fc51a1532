package lang

import (
	"fmt"
	"strings"
	"testing"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// testLibrary is the handful of functions this package's tests call, written for the tests only (the real
// library is package stdlib).
func testLibrary(t testing.TB) *Library {
	num := func(f float64) any { return f }
	lib, err := NewLibrary(
		&value.Builtin{Name: "count", Signature: "<a:n>", Impl: func(_ value.Context, a []any) (any, error) {
			if a[0] == nil {
				return num(0), nil
			}
			return num(float64(len(a[0].(*value.Array).Items))), nil
		}},
		&value.Builtin{Name: "sum", Signature: "<a<n>:n>", Impl: func(_ value.Context, a []any) (any, error) {
			if a[0] == nil {
				return num(0), nil
			}
			s := 0.0
			for _, x := range a[0].(*value.Array).Items {
				s += x.(float64)
			}
			return s, nil
		}},
		&value.Builtin{Name: "string", Signature: "<x-b?:s>", Impl: func(_ value.Context, a []any) (any, error) {
			if a[0] == nil {
				return nil, nil
			}
			return stringify(a[0])
		}},
		&value.Builtin{Name: "uppercase", Signature: "<s-:s>", Impl: func(_ value.Context, a []any) (any, error) {
			if a[0] == nil {
				return nil, nil
			}
			return strings.ToUpper(a[0].(string)), nil
		}},
		&value.Builtin{Name: "lowercase", Signature: "<s-:s>", Impl: func(_ value.Context, a []any) (any, error) {
			if a[0] == nil {
				return nil, nil
			}
			return strings.ToLower(a[0].(string)), nil
		}},
		&value.Builtin{Name: "substring", Signature: "<s-nn?:s>", Impl: func(_ value.Context, a []any) (any, error) {
			if a[0] == nil {
				return nil, nil
			}
			r := []rune(a[0].(string))
			s := int(a[1].(float64))
			if s < 0 {
				s = max(len(r)+s, 0)
			}
			s = min(s, len(r))
			e := len(r)
			if l, ok := a[2].(float64); ok {
				e = min(s+max(int(l), 0), len(r))
			}
			return string(r[s:e]), nil
		}},
		&value.Builtin{Name: "map", Signature: "<af>", Impl: func(c value.Context, a []any) (any, error) {
			out := newSeq(0)
			if a[0] == nil {
				return nil, nil
			}
			fn := a[1].(value.Function)
			arr := a[0].(*value.Array)
			for i, x := range arr.Items {
				args := []any{x, float64(i), arr}[:min(max(fn.Arity(), 1), 3)]
				r, err := c.Call(fn, args)
				if err != nil {
					return nil, err
				}
				if r != nil {
					out.Items = append(out.Items, r)
				}
			}
			return out, nil
		}},
		&value.Builtin{Name: "append", Signature: "<xx:a>", Impl: func(_ value.Context, a []any) (any, error) {
			if a[1] == nil {
				return a[0], nil
			}
			if a[0] == nil {
				return a[1], nil
			}
			return &value.Array{Items: appendFlat(appendFlat(nil, a[0]), a[1])}, nil
		}},
		&value.Builtin{Name: "exists", Signature: "<x:b>", Impl: func(_ value.Context, a []any) (any, error) {
			return a[0] != nil, nil
		}},
		&value.Builtin{Name: "not", Signature: "<x-:b>", Impl: func(_ value.Context, a []any) (any, error) {
			if a[0] == nil {
				return nil, nil
			}
			return !truthy(a[0]), nil
		}},
		&value.Builtin{Name: "boolean", Signature: "<x-:b>", Impl: func(_ value.Context, a []any) (any, error) {
			if a[0] == nil {
				return nil, nil
			}
			return truthy(a[0]), nil
		}},
		&value.Builtin{Name: "number", Signature: "<(nsb)-:n>", Impl: func(_ value.Context, a []any) (any, error) {
			switch v := a[0].(type) {
			case float64:
				return v, nil
			case string:
				var f float64
				if _, err := fmt.Sscan(v, &f); err != nil {
					return nil, &value.Error{Code: "D3030", Value: v}
				}
				return f, nil
			}
			return nil, nil
		}},
		&value.Builtin{Name: "keys", Signature: "<x-:a<s>>", Impl: func(_ value.Context, a []any) (any, error) {
			o, ok := a[0].(*value.Object)
			if !ok {
				return nil, nil
			}
			out := newSeq(0)
			for _, k := range o.Keys() {
				out.Items = append(out.Items, k)
			}
			return out, nil
		}},
	)
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

// show writes a result for a failure message.
func show(v any) string {
	if v == nil {
		return "undefined"
	}
	return string(appendJSON(nil, v))
}
