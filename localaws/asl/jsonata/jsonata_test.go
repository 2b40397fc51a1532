package jsonata_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata"
	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	v, err := jsonvalue.Decode([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestEval(t *testing.T) {
	vars := map[string]any{"amount": decode(t, `12.5`), "order": decode(t, `{"z":1,"a":{"y":2,"b":3}}`)}
	states := decode(t, `{"input":{"name":"Ann","items":[1,2,3,4,5],"none":null,"empty":[],"orders":[{"id":"o1","items":[{"sku":"a"},{"sku":"b"}]},{"id":"o2","items":[{"sku":"c"}]}]},"context":{"Execution":{"Id":"arn:x"}}}`)
	env := jsonata.Env{
		Lookup:  func(n string) (any, bool) { v, ok := vars[n]; return v, ok },
		States:  func() any { return states },
		NewUUID: func() string { return "11111111-2222-4333-8444-555555555555" },
		Now:     func() time.Time { return time.Date(2026, 11, 26, 12, 30, 0, 250e6, time.UTC) },
	}
	tests := []struct {
		name, expr, want string
	}{
		{"input field", `$states.input.name`, `"Ann"`},
		{"variable arithmetic", `$amount * 2`, `25`},
		{"an object read back keeps its key order", `$order`, `{"z":1,"a":{"y":2,"b":3}}`},
		{"a nested object read back keeps its key order", `$order.a`, `{"y":2,"b":3}`},
		{"a built object keeps the order of its keys", `{"b": 1, "a": $amount}`, `{"b":1,"a":12.5}`},
		{"the parent operator", `$states.input.orders.items.{"order": %.id, "sku": sku}`, `[{"order":"o1","sku":"a"},{"order":"o1","sku":"b"},{"order":"o2","sku":"c"}]`},
		{"a focus and an index binding", `$states.input.orders@$o#$i.{"n": $i, "id": $o.id}`, `[{"n":0,"id":"o1"},{"n":1,"id":"o2"}]`},
		{"a path to an empty array", `$states.input.empty`, `[]`},
		{"string concatenation", `'Hello ' & $states.input.name`, `"Hello Ann"`},
		{"context", `$states.context.Execution.Id`, `"arn:x"`},
		{"a variable name inside a string is not a variable", `'$nothing'`, `"$nothing"`},
		{"partition", `$partition($states.input.items, 2)`, `[[1,2],[3,4],[5]]`},
		{"range", `$range(0, 10, 2)`, `[0,2,4,6,8,10]`},
		{"range down", `$range(3, 1, -1)`, `[3,2,1]`},
		{"range of one", `$range(1, 1, 1)`, `1`},
		{"hash", `$hash('input data', 'SHA-1')`, `"aaff4a450a104cd177d28d18d74485e8cae074b7"`},
		{"seeded random is repeatable", `$random(7) = $random(7)`, `true`},
		{"random is in [0,1)", `$random() >= 0 and $random() < 1`, `true`},
		{"uuid", `$uuid()`, `"11111111-2222-4333-8444-555555555555"`},
		{"parse", `$parse('{"a":[1,{"b":true}]}')`, `{"a":[1,{"b":true}]}`},
		{"large integer", `1000000 * 1000000`, `1000000000000`},
		{"fraction", `1 / 4`, `0.25`},
		{"sum", `$sum($states.input.items)`, `15`},
		{"map with a lambda", `$map($states.input.items, function($v) { $v * 10 })`, `[10,20,30,40,50]`},
		{"filter", `$states.input.items[$ > 3]`, `[4,5]`},
		{"now reads the engine's clock", `$now()`, `"2026-11-26T12:30:00.250Z"`},
		{"millis reads the engine's clock", `$millis()`, `1795696200250`},
		{"null is a value", `$states.input.none`, `null`},
		{"null compares", `$states.input.none = null`, `true`},
		{"null kept in an object", `{"n": $states.input.none}`, `{"n":null}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := jsonata.Compile(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.Eval(env)
			if err != nil {
				t.Fatal(err)
			}
			if s := jsonvalue.Marshal(got); s != tc.want {
				t.Errorf("%s = %s, want %s", tc.expr, s, tc.want)
			}
		})
	}
}

func TestEvalFailures(t *testing.T) {
	env := jsonata.Env{States: func() any { return decode(t, `{"input":{"a":1}}`) }}
	tests := []struct {
		name, expr string
		undefined  bool
	}{
		{"missing field", `$states.input.missing`, true},
		{"unknown variable", `$nobody`, true},
		{"partition of nothing", `$partition([], 2)`, true},
		{"range without a step", `$range(1, 5)`, true},
		{"type error", `$states.input.a + 'x'`, false},
		{"eval is disabled", `$eval('1')`, false},
		{"parse of bad JSON", `$parse('{')`, false},
		{"unknown hash", `$hash('a', 'CRC32')`, false},
		{"a function is not JSON", `function($x) { $x }`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := jsonata.Compile(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.Eval(env)
			if err == nil {
				t.Fatalf("%s: no error", tc.expr)
			}
			if got := errors.Is(err, jsonata.ErrUndefined); got != tc.undefined {
				t.Errorf("%s: error %v; undefined %v, want %v", tc.expr, err, got, tc.undefined)
			}
		})
	}
}

func TestTopLevelReference(t *testing.T) {
	for expr, want := range map[string]string{
		`phone`: "phone", `phone.number`: "phone", `$states.input.phone`: "", `$x + total`: "total",
		`$states.input.items[value > 3]`: "", `'a' & b`: "b", `{"k": total}`: "total", `{"k": $states.input.v}`: "",
		`-amount`: "amount", `$`: "$", `$.a`: "$", `$states.input.items[$ > 1]`: "", `$map([1], function($v){ $v })`: "",
	} {
		e, err := jsonata.Compile(expr)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.TopLevelReference(); got != want {
			t.Errorf("TopLevelReference(%s) = %q, want %q", expr, got, want)
		}
	}
}

func TestIs(t *testing.T) {
	for s, want := range map[string]bool{`{% 1 %}`: true, `{%1%}`: true, ` {% 1 %}`: false, `{% 1 %} `: false, `{%}`: false, `x`: false} {
		if got := jsonata.Is(s); got != want {
			t.Errorf("Is(%q) = %v, want %v", s, got, want)
		}
	}
}

// FuzzCompileEval compiles and evaluates any expression: neither panics, and a compiled expression evaluates to a
// JSON value, undefined or an error.
func FuzzCompileEval(f *testing.F) {
	for _, s := range []string{`$states.input.a`, `$partition([1,2,3], 2)`, `{"a": $x}`, `$range(1, 10, 3)`,
		`[1..5].($ * 2)`, `$map([1,2], function($v) { $v })`, `($f := function($x){ 1 + $f($x) }; $f(1))`,
		`function($a)<n:n>{ {'}': $a} }(1)`, `$hash('a', 'MD5')`, `$parse('[1]')`, `(`, `$$.x`,
		`$formatInteger(1234, '#,##0;o')`, `$parseInteger('twelve', 'w')`, `$assert(1 = 1, 'x')`, `a.b.%.c`, `a@$x#$i[$i>0].$x`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 1000 {
			return
		}
		e, err := jsonata.Compile(src)
		if err != nil {
			return
		}
		_ = e.TopLevelReference()
		_, _ = e.Eval(jsonata.Env{
			Lookup: func(string) (any, bool) { return []any{"x", nil}, true },
			States: func() any { return map[string]any{"input": map[string]any{"a": []any{"b"}}} },
		})
	})
}

// TestConcurrentEvaluations: evaluations in many goroutines at once (Map iterations, concurrent executions) each
// read their own data, also through functions that take the context item as their argument (the library keeps that
// item on shared function values).
func TestConcurrentEvaluations(t *testing.T) {
	e, err := jsonata.Compile(`$states.input.names.$uppercase() & $string($states.input.n)`)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 8 {
		name := string(rune('a' + g))
		in := decode(t, `{"input":{"names":"`+name+`","n":`+string(rune('0'+g))+`}}`)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				v, err := e.Eval(jsonata.Env{States: func() any { return in }})
				if want := strings.ToUpper(name) + string(rune('0'+g)); err != nil || v != want {
					errs <- fmt.Sprintf("goroutine %d: %v %v, want %s", g, v, err, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestChainEvaluatesAgain: an expression with ~> gives the same answer every time it is evaluated (the library
// appends the chained value to the call's arguments in the compiled expression; each evaluation compiles it again).
func TestChainEvaluatesAgain(t *testing.T) {
	e, err := jsonata.Compile(`('abcdef' ~> $substring(1, 2)) & ($states.input.name ~> $uppercase())`)
	if err != nil {
		t.Fatal(err)
	}
	env := jsonata.Env{States: func() any { return decode(t, `{"input":{"name":"ann"}}`) }}
	for i := range 3 {
		got, err := e.Eval(env)
		if err != nil || got != "bcANN" {
			t.Fatalf("evaluation %d = %v, %v; want bcANN", i+1, got, err)
		}
	}
}

// TestEvaluationsRunAtOnce: two evaluations are inside a function at the same moment (each waits in $uuid() for the
// other to arrive), which a lock around evaluations would never allow; and the built-ins and added functions they
// call on the context item ($uppercase(), $partition) give each its own answer.
func TestEvaluationsRunAtOnce(t *testing.T) {
	e, err := jsonata.Compile(`$uuid() & $states.input.name.$uppercase() & $string($count($partition([1,2,3], $states.input.size)))`)
	if err != nil {
		t.Fatal(err)
	}
	arrived := make(chan struct{}, 2)
	meet := func() string {
		arrived <- struct{}{}
		deadline := time.After(10 * time.Second)
		for len(arrived) < 2 {
			select {
			case <-deadline:
				return "alone"
			case <-time.After(time.Millisecond):
			}
		}
		return "met:"
	}
	var wg sync.WaitGroup
	got := make([]any, 2)
	for g := range 2 {
		in := decode(t, fmt.Sprintf(`{"input":{"name":"%c","size":%d}}`, 'a'+g, g+1))
		wg.Go(func() {
			var err error
			got[g], err = e.Eval(jsonata.Env{NewUUID: meet, States: func() any { return in }})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got[0] != "met:A3" || got[1] != "met:B2" {
		t.Errorf("evaluations = %v, want [met:A3 met:B2]: both inside $uuid() at once, each with its own context item", got)
	}
}

// TestMergeKeepsKeyOrder: $merge gives its keys in the order of their first appearance across the objects, a later
// value replacing an earlier one in its place, as JSONata 2.0 and AWS do; errors stay the library's.
func TestMergeKeepsKeyOrder(t *testing.T) {
	env := jsonata.Env{States: func() any {
		return decode(t, `{"input":{"first":{"b":1,"a":2},"second":{"c":3,"a":4},"list":[{"z":0},{"y":1},{"z":2}]}}`)
	}}
	for expr, want := range map[string]string{
		`$merge([$states.input.first, $states.input.second])`: `{"b":1,"a":4,"c":3}`,
		`$merge($states.input.list)`:                          `{"z":2,"y":1}`,
		`$merge($states.input.second)`:                        `{"c":3,"a":4}`,
		`$merge([{"q": 1}, {"p": 2}])`:                        `{"q":1,"p":2}`,
		`$merge([$states.input.second, {"a": 5}]).a`:          `5`,
	} {
		e, err := jsonata.Compile(expr)
		if err != nil {
			t.Fatal(err)
		}
		v, err := e.Eval(env)
		if err != nil {
			t.Errorf("%s: %v", expr, err)
			continue
		}
		if got := jsonvalue.Marshal(v); got != want {
			t.Errorf("%s = %s, want %s", expr, got, want)
		}
	}
	e, err := jsonata.Compile(`$merge([1, 2])`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Eval(env); err == nil {
		t.Error("$merge of numbers: no error")
	}
}
