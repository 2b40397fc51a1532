package lang

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// suiteCase is one case of JSONata's test suite.
type suiteCase struct {
	Expr            string          `json:"expr"`
	ExprFile        string          `json:"expr-file"`
	Data            json.RawMessage `json:"data"`
	Dataset         *string         `json:"dataset"`
	Bindings        map[string]any  `json:"bindings"`
	Result          json.RawMessage `json:"result"`
	UndefinedResult bool            `json:"undefinedResult"`
	Code            string          `json:"code"`
	Token           string          `json:"token"`
	Error           *struct {
		Code string `json:"code"`
	} `json:"error"`
	Timelimit int `json:"timelimit"`
	Depth     int `json:"depth"`
}

// testLibrary is the handful of functions the suite's non-library groups call, written for the tests only (the real
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

// TestSuite runs JSONata's own test suite (package jsonata's testdata) with this package's small test library: the
// groups that call no library function, or every group when JSONATA_SUITE_ALL is set (package suite runs them all
// with the real library); the summary is logged per group.
func TestSuite(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "jsonata-suite")
	groups, err := os.ReadDir(filepath.Join(dir, "groups"))
	if err != nil {
		t.Fatal(err)
	}
	lib := testLibrary(t)
	only := os.Getenv("JSONATA_SUITE_GROUP")
	type tally struct{ pass, total int }
	counts := map[string]*tally{}
	var names []string
	for _, g := range groups {
		name := g.Name()
		if only != "" && name != only {
			continue
		}
		if only == "" && os.Getenv("JSONATA_SUITE_ALL") == "" && (strings.HasPrefix(name, "function-") || strings.HasPrefix(name, "hof-")) {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(dir, "groups", name, "*.json"))
		sort.Strings(files)
		tl := &tally{}
		counts[name] = tl
		names = append(names, name)
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var cases []suiteCase
			if strings.HasPrefix(strings.TrimSpace(string(raw)), "[") {
				err = json.Unmarshal(raw, &cases)
			} else {
				var c suiteCase
				err = json.Unmarshal(raw, &c)
				cases = []suiteCase{c}
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			for i, c := range cases {
				if c.ExprFile != "" {
					src, err := os.ReadFile(filepath.Join(dir, "groups", name, c.ExprFile))
					if err != nil {
						t.Fatal(err)
					}
					c.Expr = string(src)
				}
				tl.total++
				label := fmt.Sprintf("%s/%s#%d", name, filepath.Base(f), i)
				if msg := runCase(dir, lib, c); msg != "" {
					if os.Getenv("JSONATA_SUITE_VERBOSE") != "" {
						t.Logf("FAIL %s: %s\n  expr: %s", label, msg, c.Expr)
					}
					continue
				}
				tl.pass++
			}
		}
	}
	pass, total := 0, 0
	for _, n := range names {
		pass += counts[n].pass
		total += counts[n].total
		t.Logf("%-28s %4d/%4d", n, counts[n].pass, counts[n].total)
	}
	t.Logf("TOTAL %d/%d", pass, total)
}

// runCase runs one case and returns why it failed ("" when it passed). A panic is a failure, reported.
func runCase(dir string, lib *Library, c suiteCase) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprintf("PANIC %v", r)
		}
	}()
	var input any
	switch {
	case len(c.Data) > 0:
		v, err := jsonvalue.Decode(c.Data)
		if err != nil {
			return "bad data: " + err.Error()
		}
		input = value.FromEngine(v)
	case c.Dataset != nil && *c.Dataset != "":
		raw, err := os.ReadFile(filepath.Join(dir, "datasets", *c.Dataset+".json"))
		if err != nil {
			return "no dataset: " + err.Error()
		}
		v, err := jsonvalue.Decode(raw)
		if err != nil {
			return "bad dataset: " + err.Error()
		}
		input = value.FromEngine(v)
	}
	bindings := map[string]any{}
	for k, v := range c.Bindings {
		bindings[k] = value.FromEngine(toNumbers(v))
	}
	opts := Options{Library: lib, Bindings: bindings, MaxDepth: c.Depth}
	// At least 10 s: the suite's limits were set for jsonata-js on a quiet machine, and its U1001 cases reach the
	// error through their depth (as in package suite).
	limit := max(time.Duration(c.Timelimit)*time.Millisecond, 10*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	opts.Context = ctx
	if c.Error != nil && c.Code == "" {
		c.Code = c.Error.Code
	}
	e, err := Compile(c.Expr)
	var got any
	if err == nil {
		got, err = e.Evaluate(input, opts)
	}
	if c.Code != "" {
		if err == nil {
			return fmt.Sprintf("want error %s, got %s", c.Code, show(got))
		}
		ve, ok := err.(*value.Error)
		if !ok || ve.Code != c.Code {
			return fmt.Sprintf("want error %s, got %v", c.Code, err)
		}
		return ""
	}
	if err != nil {
		return "error: " + err.Error()
	}
	if c.UndefinedResult || len(c.Result) == 0 {
		if got != nil {
			return "want undefined, got " + show(got)
		}
		return ""
	}
	want, err := jsonvalue.Decode(c.Result)
	if err != nil {
		return "bad result: " + err.Error()
	}
	if got == nil {
		return "got undefined, want " + string(c.Result)
	}
	g, err := value.ToEngine(got)
	if err != nil {
		return "result: " + err.Error()
	}
	if !sameJSON(g, want) {
		return "got " + show(got) + ", want " + string(c.Result)
	}
	return ""
}

// toNumbers turns the float64 of encoding/json into values FromEngine reads.
func toNumbers(v any) any { return v }

// sameJSON compares results as the suite does: numbers to 1e-10 relative precision.
func sameJSON(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		fx, _ := x.Float64()
		fy, _ := y.Float64()
		return fx == fy || math.Abs(fx-fy) <= 1e-10*math.Max(math.Abs(fx), math.Abs(fy))
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	case *jsonvalue.Object:
		y, ok := b.(*jsonvalue.Object)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for i, k := range x.Keys() {
			w, ok := y.Get(k)
			if !ok || !sameJSON(x.Values()[i], w) {
				return false
			}
		}
		return true
	}
	return jsonvalue.Equal(a, b)
}

// show writes a result for a failure message.
func show(v any) string {
	if v == nil {
		return "undefined"
	}
	return string(appendJSON(nil, v))
}
