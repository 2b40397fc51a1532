package lang

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// run compiles and evaluates src against JSON text, returning the result as compact JSON ("undefined" when there is
// none) or the error's code.
func run(t *testing.T, src, data string, o Options) string {
	t.Helper()
	var input any
	if data != "" {
		v, err := jsonvalue.DecodeString(data)
		if err != nil {
			t.Fatal(err)
		}
		input = value.FromEngine(v)
	}
	e, err := Compile(src)
	if err != nil {
		return err.(*value.Error).Code
	}
	if o.Library == nil {
		o.Library = testLibrary(t)
	}
	r, err := e.Evaluate(input, o)
	if err != nil {
		if ve, ok := err.(*value.Error); ok {
			return ve.Code
		}
		return err.Error()
	}
	return show(r)
}

func TestFeatures(t *testing.T) {
	const doc = `{"a":{"b":[{"c":1,"d":"x"},{"c":2,"d":"y"},{"c":3,"d":"x"}]},"n":[[1,2],[3]],"s":"str"}`
	cases := []struct{ name, src, want string }{
		{"path", `a.b.c`, `[1,2,3]`},
		{"singleton", `a.b[0].c`, `1`},
		{"keep array", `a.b[0].c[]`, `[1]`},
		{"negative index", `a.b[-1].d`, `"x"`},
		{"filter", `a.b[c > 1].d`, `["y","x"]`},
		{"nested arrays kept by constructor", `n.[$]`, `[[1,2],[3]]`},
		{"flattened", `n.$`, `[1,2,3]`},
		{"wildcard", `a.*.c`, `[1,2,3]`},
		{"descendants", `**.c`, `[1,2,3]`},
		{"parent", `a.b[c=2].%.%.s`, `"str"`},
		{"parent step", `a.b.{"d": d, "up": %.b[0].c}`, `[{"d":"x","up":1},{"d":"y","up":1},{"d":"x","up":1}]`},
		{"focus", `a.b@$x[$x.c=3].$x.d`, `"x"`},
		{"index", `a.b#$i[$i>0].c`, `[2,3]`},
		{"order-by", `a.b^(>c).c`, `[3,2,1]`},
		{"order-by stable", `a.b^(d).c`, `[1,3,2]`},
		{"group-by", `a.b{d: $sum(c)}`, `{"x":4,"y":2}`},
		{"group duplicate key", `a.b{d: 1, "x": 2}`, `D1009`},
		{"group non-string key", `a.b{c: 1}`, `T1003`},
		{"object order", `{"z":1,"a":2}`, `{"z":1,"a":2}`},
		{"arithmetic", `1 + 2 * 3 - 4 / 2 % 3`, `5`},
		{"arithmetic type", `"a" + 1`, `T2001`},
		{"right type", `1 + "a"`, `T2002`},
		{"undefined arith", `nothing + 1`, `undefined`},
		{"comparison types", `1 < "a"`, `T2009`},
		{"comparison non-value", `{} < 1`, `T2010`},
		{"equality deep", `[1,{"a":2}] = [1,{"a":2}]`, `true`},
		{"in", `"x" in a.b.d`, `true`},
		{"concat", `s & 1 & true & null`, `"str1truenull"`},
		{"and or", `(1 and "") or 0`, `false`},
		{"range", `[1..3]`, `[1,2,3]`},
		{"range type", `[1.5..3]`, `T2003`},
		{"range size", `[1..20000000]`, `D2014`},
		{"negate", `-"a"`, `D1002`},
		{"infinite", `1/(10e300*10e100)`, `D1001`},
		{"condition", `s = "str" ? "yes" : "no"`, `"yes"`},
		{"block scope", `($x := 1; ($x := 2); $x)`, `1`},
		{"lambda closure", `($add := function($a){function($b){$a+$b}}; $add(2)(3))`, `5`},
		{"partial", `($f := function($a,$b){$a-$b}; $g := $f(?, 1); $g(5))`, `4`},
		{"builtin partial", `($s := $substring(?, 1, 2); $s("hello"))`, `"el"`},
		{"chain", `s ~> $uppercase()`, `"STR"`},
		{"compose", `($f := $uppercase ~> $substring(?, 1); $f("abc"))`, `"BC"`},
		{"apply non-function", `1 ~> 2`, `T2006`},
		{"non-function", `($x := 1; $x())`, `T1006`},
		{"did you mean", `uppercase("a")`, `T1005`},
		{"partial non-function", `($x := 1; $x(?))`, `T1008`},
		{"signature", `(function($a)<n:n>{$a})("x")`, `T0410`},
		{"signature array", `(function($a)<a<n>:n>{$count($a)})(5)`, `1`},
		{"signature array type", `(function($a)<a<n>:n>{$count($a)})(["x"])`, `T0412`},
		{"context argument", `s.$uppercase()`, `"STR"`},
		{"context type", `a.$uppercase()`, `T0411`},
		{"transform", `a ~> |b|{"e": c*10}, "d"|`, `{"b":[{"c":1,"e":10},{"c":2,"e":20},{"c":3,"e":30}]}`},
		{"transform update type", `a ~> |b|1|`, `T2011`},
		{"transform delete type", `a ~> |b|{}, 1|`, `T2012`},
		{"transform clone", `($clone := 1; a ~> |b|{}|)`, `T2013`},
		{"regex", `/l+/("hello").match`, `"ll"`},
		{"regex next", `/l/("hello world").next().next().start`, `9`},
		{"eval", `$eval("1 + 'a'")`, `D3121`},
		{"eval ok", `($x := 2; $eval("1 + $x"))`, `3`},
		{"eval syntax", `$eval("1 +")`, `D3120`},
		{"tail recursion", `($f := function($n, $acc){$n = 0 ? $acc : $f($n - 1, $acc + 1)}; $f(20000, 0))`, `20000`},
		{"sort type", `a.b^(c = 1 ? "x" : c).c`, `T2007`},
		{"sort value", `a.b^({}).c`, `T2008`},
		{"variables", `$$.s`, `"str"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := run(t, c.src, doc, Options{}); got != c.want {
				t.Errorf("%s: got %s, want %s", c.src, got, c.want)
			}
		})
	}
}

func TestLimits(t *testing.T) {
	if got := run(t, `($f := function($n){$n = 0 ? 0 : 1 + $f($n - 1)}; $f(1000))`, "", Options{MaxDepth: 100}); got != "U1001" {
		t.Errorf("depth: got %s", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if got := run(t, `($f := function(){$f()}; $f())`, "", Options{Context: ctx}); got != "U1001" {
		t.Errorf("timeout: got %s", got)
	}
	if got := run(t, `($f := function($n){1 + $f($n)}; $f(1))`, "", Options{}); got != "U1001" {
		t.Errorf("default depth: got %s", got)
	}
}

func TestBindingsAndVariables(t *testing.T) {
	e, err := Compile(`($y := $x + 1; $map([1], function($v){$v + $y + $z}))`)
	if err != nil {
		t.Fatal(err)
	}
	vars := e.Variables()
	if len(vars) != 3 || vars[0] != "x" || vars[1] != "map" || vars[2] != "z" {
		t.Errorf("variables: %v", vars)
	}
	r, err := e.Evaluate(nil, Options{Library: testLibrary(t), Bindings: map[string]any{"x": 1.0},
		Lookup: func(name string) (any, bool) { return 10.0, name == "z" }})
	if err != nil || show(r) != "13" {
		t.Errorf("got %v %v", show(r), err)
	}
}

// TestConcurrent evaluates one expression from many goroutines (run with -race).
func TestConcurrent(t *testing.T) {
	e, err := Compile(`a.b[c > 1]{d: $count(c)} ~> |$|{"n": 1}|`)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := jsonvalue.DecodeString(`{"a":{"b":[{"c":1,"d":"x"},{"c":2,"d":"y"},{"c":3,"d":"x"}]}}`)
	input := value.FromEngine(v)
	lib := testLibrary(t)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				r, err := e.Evaluate(input, Options{Library: lib})
				if err != nil || show(r) != `{"y":1,"x":1,"n":1}` {
					t.Errorf("got %s %v", show(r), err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkPathPredicateObject is a Map state's typical per-item expression.
func BenchmarkPathPredicateObject(b *testing.B) {
	e, err := Compile(`{"id": order.id, "total": $sum(order.items[qty > 0].(qty * price)), "names": order.items.name}`)
	if err != nil {
		b.Fatal(err)
	}
	v, _ := jsonvalue.DecodeString(`{"order":{"id":"o-1","items":[{"name":"a","qty":2,"price":1.5},{"name":"b","qty":0,"price":3},{"name":"c","qty":1,"price":10}]}}`)
	input := value.FromEngine(v)
	lib := testLibrary(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Evaluate(input, Options{Library: lib}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestFocusWithoutAName: a step with @$ binds nothing but, like every focus step, leaves the context item as it was,
// so the next step reads the same items again (jsonata-js 2.0 answers undefined for both).
func TestFocusWithoutAName(t *testing.T) {
	for _, src := range []string{`[{"a":1},{"a":2}]@$.a`, `[{"a":{"b":1}},{"a":{"b":2}}]@$.a.b`} {
		e, err := Compile(src)
		if err != nil {
			t.Fatal(err)
		}
		if v, err := e.Evaluate(nil, Options{}); v != nil || err != nil {
			t.Errorf("%s = %v, %v; want undefined", src, show(v), err)
		}
	}
}

// TestStringOrder: < and order-by compare strings as JavaScript does, also when two characters share their first
// UTF-8 byte ("é" and "ê") and for characters above U+FFFF (before U+E000–U+FFFF).
func TestStringOrder(t *testing.T) {
	for src, want := range map[string]string{
		`"é" < "ê"`:                  `true`,
		`"ê" > "é"`:                  `true`,
		`["ê","é","😀","\uFFFF"]^($)`: "[\"é\",\"ê\",\"😀\",\"\uFFFF\"]",
	} {
		e, err := Compile(src)
		if err != nil {
			t.Fatal(err)
		}
		v, err := e.Evaluate(nil, Options{Library: testLibrary(t)})
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if got := show(v); got != want {
			t.Errorf("%s = %s, want %s", src, got, want)
		}
	}
}
