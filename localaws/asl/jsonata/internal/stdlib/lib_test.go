package stdlib

import (
	"errors"
	"math"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// call applies the named built-in to args directly.
func call(t *testing.T, name string, args ...any) (any, error) {
	t.Helper()
	b, ok := library()[name]
	if !ok {
		t.Fatalf("no function %s", name)
	}
	return b.Impl(newContext(), args)
}

// text writes a result for comparison: undefined, a JSON-like text, or the error's code.
func text(v any, err error) string {
	if err != nil {
		var e *value.Error
		if errors.As(err, &e) {
			return e.Code
		}
		return "error: " + err.Error()
	}
	if v == nil {
		return "undefined"
	}
	if a, ok := v.(*value.Array); ok && a.Sequence {
		return "seq" + messageText(v)
	}
	return messageText(v)
}

func arr(xs ...any) *value.Array { return value.NewArray(xs...) }

func obj(kv ...any) *value.Object {
	o := value.NewObject(len(kv) / 2)
	for i := 0; i+1 < len(kv); i += 2 {
		o.Set(kv[i].(string), kv[i+1])
	}
	return o
}

func re(src string) *value.Regex {
	return &value.Regex{Source: src, Pattern: regexp.MustCompile(src)}
}

// fn1, fn2 and fn3 are test functions of one, two and three parameters.
func fn1(f func(a any) any) *testFunc {
	return &testFunc{arity: 1, fn: func(args []any) (any, error) { return f(arg(args, 0)), nil }}
}

func fn2(f func(a, b any) any) *testFunc {
	return &testFunc{arity: 2, fn: func(args []any) (any, error) { return f(arg(args, 0), arg(args, 1)), nil }}
}

func fn3(f func(a, b, c any) any) *testFunc {
	return &testFunc{arity: 3, fn: func(args []any) (any, error) {
		if len(args) != 3 {
			return nil, errors.New("wrong number of arguments")
		}
		return f(args[0], args[1], args[2]), nil
	}}
}

func TestFunctions(t *testing.T) {
	double := fn1(func(a any) any { return a.(float64) * 2 })
	even := fn1(func(a any) any { return math.Mod(a.(float64), 2) == 0 })
	none := fn1(func(any) any { return nil })
	sum := fn2(func(a, b any) any { return a.(float64) + b.(float64) })
	withIndex := fn3(func(v, i, a any) any { return v.(float64)*10 + i.(float64) + float64(len(a.(*value.Array).Items)) })
	descending := fn2(func(a, b any) any {
		return a.(*value.Object).Values()[0].(float64) < b.(*value.Object).Values()[0].(float64)
	})
	keyValue := fn2(func(v, k any) any { return k.(string) + "=" + messageText(v) })
	isNumber := fn1(func(v any) any { _, ok := v.(float64); return ok })
	upper := fn1(func(m any) any { s, _ := m.(*value.Object).Get("match"); return strings.ToUpper(s.(string)) })
	number := fn1(func(any) any { return 42.0 })
	nested := obj("b", arr(1.0, obj("c", true)), "a", value.Null, "f", double)

	tests := []struct {
		name string
		args []any
		want string
	}{
		{"string", []any{nested}, `"{\"b\":[1,{\"c\":true}],\"a\":null,\"f\":\"\"}"`},
		{"string", []any{nested, true}, `"{\n  \"b\": [\n    1,\n    {\n      \"c\": true\n    }\n  ],\n  \"a\": null,\n  \"f\": \"\"\n}"`},
		{"string", []any{0.1 + 0.2}, `"0.3"`},
		{"string", []any{arr(0.1+0.2, 1e21, 1e-7, 123456789012345678.0)}, `"[0.3,1e+21,1e-7,123456789012346000]"`},
		{"string", []any{100000000000000.5}, `"100000000000001"`},
		{"string", []any{math.Inf(1)}, "D3001"},
		{"string", []any{arr(math.Inf(1))}, "D1001"},
		{"string", []any{double}, `""`},
		{"string", []any{"a\"b"}, `"a\"b"`},
		{"string", []any{obj("s", "tab\there\u0001")}, `"{\"s\":\"tab\\there\\u0001\"}"`},
		{"string", []any{obj()}, `"{}"`},
		{"string", []any{arr(), true}, `"[]"`},
		{"round", []any{2.675, 2.0}, "2.68"},
		{"round", []any{2.5}, "2"},
		{"round", []any{3.5}, "4"},
		{"round", []any{-2.5}, "-2"},
		{"round", []any{-3.5}, "-4"},
		{"round", []any{1250.0, -2.0}, "1200"},
		{"round", []any{1350.0, -2.0}, "1400"},
		{"round", []any{-0.4}, "0"},
		{"number", []any{"0x1F"}, "31"},
		{"number", []any{"0b101"}, "5"},
		{"number", []any{"0o17"}, "15"},
		{"number", []any{"1e400"}, "D3030"},
		{"number", []any{" 12"}, "D3030"},
		{"number", []any{"-0.5e2"}, "-50"},
		{"power", []any{10.0, 400.0}, "D3061"},
		{"sqrt", []any{-1.0}, "D3060"},
		{"max", []any{arr()}, "undefined"},
		{"average", []any{arr(1.0, 2.0)}, "1.5"},
		{"sum", []any{arr()}, "0"},
		{"map", []any{arr(1.0, 2.0), double}, "seq[2,4]"},
		{"map", []any{arr(1.0, 2.0), withIndex}, "seq[12,23]"},
		{"map", []any{arr(1.0), none}, "seq[]"},
		{"map", []any{arr(1.0, 2.0), library()["string"]}, `seq["1","2"]`},
		{"filter", []any{arr(1.0, 2.0, 3.0, 4.0), even}, "seq[2,4]"},
		{"single", []any{arr(1.0, 2.0, 3.0), even}, "2"},
		{"single", []any{arr(2.0, 4.0), even}, "D3138"},
		{"single", []any{arr(1.0), even}, "D3139"},
		{"single", []any{arr(7.0)}, "7"},
		{"reduce", []any{arr(1.0, 2.0, 3.0), sum}, "6"},
		{"reduce", []any{arr(1.0, 2.0, 3.0), sum, 10.0}, "16"},
		{"reduce", []any{arr(), sum}, "undefined"},
		{"reduce", []any{arr(1.0), double}, "D3050"},
		{"sort", []any{arr(3.0, 1.0, 2.0)}, "[1,2,3]"},
		{"sort", []any{arr("b", "a", "\U0001F600", "\uFFFF")}, "[\"a\",\"b\",\"😀\",\"\uffff\"]"},
		{"sort", []any{arr(1.0, "a")}, "D3070"},
		{"sort", []any{arr(obj("v", 1.0, "i", 0.0), obj("v", 2.0, "i", 1.0), obj("v", 1.0, "i", 2.0)), descending},
			`[{"v":2,"i":1},{"v":1,"i":0},{"v":1,"i":2}]`},
		{"each", []any{obj("a", 1.0, "b", "x"), keyValue}, `seq["a=1","b=\"x\""]`},
		{"sift", []any{obj("a", 1.0, "b", "x"), isNumber}, `{"a":1}`},
		{"sift", []any{obj("b", "x"), isNumber}, "undefined"},
		{"keys", []any{arr(obj("b", 1.0, "a", 2.0), obj("c", 1.0, "a", 3.0))}, `seq["b","a","c"]`},
		{"keys", []any{"x"}, "seq[]"},
		{"lookup", []any{arr(obj("a", arr(1.0, 2.0)), obj("a", 3.0), obj("b", 4.0)), "a"}, "seq[1,2,3]"},
		{"lookup", []any{obj("a", 1.0), "b"}, "undefined"},
		{"spread", []any{obj("a", 1.0, "b", 2.0)}, `seq[{"a":1},{"b":2}]`},
		{"spread", []any{arr(obj("a", 1.0), obj("b", 2.0, "c", 3.0))}, `[{"a":1},{"b":2},{"c":3}]`},
		{"spread", []any{"x"}, `"x"`},
		{"merge", []any{arr(obj("a", 1.0, "b", 2.0), obj("c", 3.0, "a", 4.0))}, `{"a":4,"b":2,"c":3}`},
		{"append", []any{1.0, arr(2.0, 3.0)}, "[1,2,3]"},
		{"append", []any{nil, 2.0}, "2"},
		{"distinct", []any{arr(obj("a", 1.0, "b", 2.0), obj("b", 2.0, "a", 1.0), 1.0, "1", 1.0, arr(1.0))}, `[{"a":1,"b":2},1,"1",[1]]`},
		{"distinct", []any{&value.Array{Items: []any{1.0, 1.0}, Sequence: true}}, "seq[1]"},
		{"reverse", []any{arr(1.0, 2.0, 3.0)}, "[3,2,1]"},
		{"zip", []any{arr(1.0, 2.0), arr(3.0)}, "[[1,3]]"},
		{"type", []any{double}, `"function"`},
		{"type", []any{re("a")}, `"function"`},
		{"type", []any{value.Null}, `"null"`},
		{"type", []any{nil}, "undefined"},
		{"boolean", []any{double}, "false"},
		{"boolean", []any{arr(0.0, arr(1.0))}, "true"},
		{"boolean", []any{obj()}, "false"},
		{"not", []any{""}, "true"},
		{"error", []any{"boom"}, "D3137"},
		{"assert", []any{true}, "undefined"},
		{"assert", []any{false, "no"}, "D3141"},
		{"match", []any{"ab😀ab", re("a(b)")}, `seq[{"match":"ab","index":0,"groups":["b"]},{"match":"ab","index":4,"groups":["b"]}]`},
		{"match", []any{"abab", re("a(b)"), 1.0}, `seq[{"match":"ab","index":0,"groups":["b"]}]`},
		{"match", []any{"abab", re("a"), -1.0}, "D3040"},
		{"match", []any{"aaba", re("a*")}, "D1004"},
		{"match", []any{"x", re("a*")}, "D1004"},
		{"match", []any{"", re("a*")}, `seq[{"match":"","index":0,"groups":[]}]`},
		{"match", []any{"aab", re("^a*")}, `seq[{"match":"aa","index":0,"groups":[]}]`},
		{"match", []any{"ab", re("(x)?b")}, `seq[{"match":"b","index":1,"groups":[null]}]`},
		{"contains", []any{"abc", re("b+")}, "true"},
		{"contains", []any{"abc", "d"}, "false"},
		{"replace", []any{"hat cat", re("[hc]at"), upper}, `"HAT CAT"`},
		{"replace", []any{"hat", re("hat"), number}, "D3012"},
		{"replace", []any{"a.b.c", ".", "-", 1.0}, `"a-b.c"`},
		{"replace", []any{"abc", "", "x"}, "D3010"},
		{"replace", []any{"abc", "b", "x", -1.0}, "D3011"},
		{"replace", []any{"abc", re("(b)"), "[$1$$$0$2$]"}, `"a[b$b$]c"`},
		{"split", []any{"a,b,,c", ","}, `["a","b","","c"]`},
		{"split", []any{"a,b,c", ",", 2.0}, `["a","b"]`},
		{"split", []any{"a1b22c", re("[0-9]+"), 2.0}, `["a","b"]`},
		{"split", []any{"a1b22c", re("[0-9]+")}, `["a","b","c"]`},
		{"split", []any{"abc", ",", -1.0}, "D3020"},
		{"split", []any{"héllo", ""}, `["h","é","l","l","o"]`},
		{"join", []any{arr("a", "b"), "-"}, `"a-b"`},
		{"pad", []any{"ab", -5.0, "xy"}, `"xyxab"`},
		{"pad", []any{"ab", 4.0}, `"ab  "`},
		{"substring", []any{"h😀llo", 1.0, 2.0}, `"😀l"`},
		{"substring", []any{"hello", -3.0}, `"llo"`},
		{"length", []any{"😀"}, "1"},
		{"trim", []any{"  a \t\n b  "}, `"a b"`},
		{"uppercase", []any{"straße"}, `"STRASSE"`},
		{"base64encode", []any{"héllo"}, `"aMOpbGxv"`},
		{"base64decode", []any{"aMOpbGxv"}, `"héllo"`},
		{"base64decode", []any{"aGVsbG8"}, `"hello"`},
		{"encodeUrlComponent", []any{"a b&c/é"}, `"a%20b%26c%2F%C3%A9"`},
		{"encodeUrl", []any{"https://x.org/a b?q=é#f"}, `"https://x.org/a%20b?q=%C3%A9#f"`},
		{"decodeUrlComponent", []any{"a%20b%26c%2F%C3%A9"}, `"a b&c/é"`},
		{"decodeUrl", []any{"a%20b%26c%2F%C3%A9"}, `"a b%26c%2Fé"`},
		{"decodeUrl", []any{"%C3"}, "D3140"},
		{"decodeUrlComponent", []any{"%"}, "D3140"},
	}
	for _, tc := range tests {
		got := text(call(t, tc.name, tc.args...))
		if got != tc.want {
			t.Errorf("$%s%s = %s, want %s", tc.name, text(arr(tc.args...), nil), got, tc.want)
		}
	}
}

func TestMessages(t *testing.T) {
	_, err := call(t, "number", obj("a", arr(1.0, value.Null)))
	if got, want := err.Error(), `D3030: Unable to cast value to a number: {"a":[1,null]}`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	_, err = call(t, "power", 10.0, 400.0)
	if got, want := err.Error(), "D3061: The power function has resulted in a value that cannot be represented as a JSON number: base=10, exponent=400"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	_, err = call(t, "encodeUrl", "\xff")
	if got, want := err.Error(), "D3140: Malformed URL passed to $encodeUrl(): \"\\xff\""; got != want {
		t.Logf("(value.Format quotes strings with Go's rules) got %q, want %q", got, want)
	}
}

func TestSignatures(t *testing.T) {
	seen := map[string]bool{}
	for _, b := range All() {
		if seen[b.Name] {
			t.Errorf("%s twice", b.Name)
		}
		seen[b.Name] = true
		if b.Impl == nil || !strings.HasPrefix(b.Signature, "<") {
			t.Errorf("%s: bad definition", b.Name)
		}
	}
	if len(seen) != 55 {
		t.Errorf("%d functions, want 55", len(seen))
	}
}

// TestConcurrent runs functions from many goroutines at once (meaningful under -race).
func TestConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				_, _ = call(t, "shuffle", arr(1.0, 2.0, 3.0))
				_, _ = call(t, "random")
				_, _ = call(t, "match", "abab", re("b"))
				_, _ = call(t, "string", obj("a", 1.0))
			}
		})
	}
	wg.Wait()
}

// TestHostile checks that absurd arguments give errors or bounded results rather than panics or huge allocations.
func TestHostile(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []any
	}{
		{"pad", []any{"x", 1e300}},
		{"pad", []any{"x", math.Inf(-1), "ab"}},
		{"pad", []any{"x", math.NaN()}},
		{"substring", []any{"abc", math.Inf(-1), math.Inf(1)}},
		{"substring", []any{"abc", math.NaN(), math.NaN()}},
		{"round", []any{1.5, 1e300}},
		{"round", []any{math.Inf(1), 2.0}},
		{"split", []any{"abc", "", 1e300}},
		{"replace", []any{"abc", "b", "x", math.Inf(1)}},
		{"match", []any{"abc", re("b"), math.NaN()}},
		{"string", []any{math.NaN()}},
		{"sort", []any{arr(math.NaN(), 1.0)}},
		{"type", []any{math.Inf(1)}},
	} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("$%s panicked: %v", tc.name, r)
				}
			}()
			_, _ = call(t, tc.name, tc.args...)
		}()
	}
	deep := any(1.0)
	for range maxJSONDepth + 10 {
		deep = arr(deep)
	}
	if _, err := call(t, "string", deep); err == nil {
		t.Error("a value nested beyond the limit was written")
	}
}
