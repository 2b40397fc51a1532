package parse

import (
	"errors"
	"strings"
	"testing"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/ast"
	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// TestTrees checks the processed tree of representative expressions (written with show). The trees are JSONata's:
// TestReferenceParser compares these expressions with the npm package jsonata.
func TestTrees(t *testing.T) {
	for _, c := range []struct{ expr, want string }{
		// paths and stages
		{"a.b.c", "path(a, b, c)"},
		{"a[0].b", "path(a⟨stages [0]⟩, b)"},
		{"$x[0].a", "path($x⟨pred [0]⟩, a)"},
		{"(a.b)[0]", "block(path(a, b))⟨pred [0]⟩"},
		{"a.b[]", "path(a, b⟨keep⟩)⟨keepSingleton⟩"},
		{"a#$i[0]", "path(a⟨stages [0], index $i, tuple⟩)"},
		{"a[0]#$i", "path(a⟨stages [0] #$i, tuple⟩)"},
		{"a@$x.b", "path(a⟨focus $x, tuple⟩, b)"},
		{"a@$.b", "path(a⟨focus $, tuple⟩, b)"},
		{"'a'.\"b\"", "path(a, b)"},
		{"and.or", "path(and, or)"},
		{"$$.a", "path($$, a)"},
		{"**.a", "path(**, a)"},
		{"*.b", "path(*, b)"},
		// parent slots
		{"a.b@$x.c.%", "path(a, b⟨focus $x, tuple⟩, c⟨tuple, anc !0/0⟩, %!0/0)"},
		{"a.b.%.%", "path(a⟨tuple, anc !1/0⟩, b⟨tuple, anc !0/0⟩, %!0/0, %!1/0)"},
		{"Account.Order.Product[%.OrderID = 'order103'].SKU",
			`path(Account, Order, Product⟨stages [(path(%!0/0, OrderID) = "order103")], tuple, anc !0/0⟩, SKU)`},
		{"a.b[%.c]", "path(a, b⟨stages [path(%!0/0, c)], tuple, anc !0/0⟩)"},
		{"a.b#$i.%", "path(a, b⟨index $i, tuple, anc !0/0⟩, %!0/0)"},
		{"a.(b.%)", "path(a, block(path(b⟨tuple, anc !0/0⟩, %!0/0)))"},
		// order-by and group-by
		{"a^(>b, c)", "path(a, sort(>path(b), <path(c)))"},
		{"a.b^(%.c)", "path(a, b⟨tuple, anc !0/0⟩, sort(<path(%!0/0, c)))"},
		{"a^(b)[0]#$i", "path(a, sort(<path(b))⟨stages [0] #$i, tuple⟩)"},
		{"a.b{c: d}", "path(a, b)⟨group {path(c): path(d)}⟩"},
		{"$x{a: b}", "$x⟨group {path(a): path(b)}⟩"},
		// constructors
		{"[1..3].a", "path([(1 .. 3)]⟨cons⟩, a)"},
		{"a.[b, c]", "path(a, [path(b), path(c)]⟨cons⟩)"},
		{"([1]; [2])", "block([1]; [2])"},
		{"{'a': 1, 'b': $x}", `{"a": 1, "b": $x}`},
		{"-1", "-1"},
		{"-a", "-(path(a))"},
		// functions
		{"function($x)<n:n>{$x + 1}", "λ($x)<n:n>{($x + 1)}"},
		{"λ($x){$x}", "λ($x){$x}"},
		{"function($n){$n < 2 ? $n : $f($n - 1)}", "λ($n){(($n < 2) ? $n : thunk{$f(($n - 1))})}"},
		{"function($x){($y := $x; $g($y))}", "λ($x){block(($y := $x); thunk{$g($y)})}"},
		{"function($x){$f($x)[0]}", "λ($x){$f($x)⟨pred [0]⟩}"},
		{"function($x){$f(?, $x)}", "λ($x){$f(?, $x)}"},
		{"$f(?, 2)", "$f(?, 2)"},
		{"$x := $y := 1", "($x := ($y := 1))"},
		{"a ~> $f()", "(path(a) ~> $f())"},
		{"a[] ~> $f", "(path(a⟨keep⟩)⟨keep, keepSingleton⟩ ~> $f)⟨keep⟩"},
		{"a ? b : c ? d : e", "(path(a) ? path(b) : (path(c) ? path(d) : path(e)))"},
		// transforms, regexes, operators
		{"| a | {'b': 1}, ['c'] |", `|path(a)|{"b": 1}, ["c"]|`},
		{"/ab+c/i", "/ab+c/i"},
		{"a / b", "(path(a) / path(b))"},
		{"a and b or c", "((path(a) and path(b)) or path(c))"},
		{"1 + 2 * 3 - 4", "((1 + (2 * 3)) - 4)"},
		{"a & b = c", "((path(a) & path(b)) = path(c))"},
		{"x in [1, 2]", "(path(x) in [1, 2])"},
		{"/* comment */ a", "path(a)"},
	} {
		n, err := Parse(c.expr)
		if err != nil {
			t.Errorf("%q: %v", c.expr, err)
			continue
		}
		if got := show(n); got != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.expr, got, c.want)
		}
	}
}

// TestErrors checks the code, token and position of syntax errors (as JSONata gives them).
func TestErrors(t *testing.T) {
	for _, c := range []struct {
		expr, code, token string
		position          int
	}{
		{`"abc`, "S0101", "", 4},
		{"1e999", "S0102", "1e999", 0},
		{`"\x"`, "S0103", "x", 2},
		{`"\u12"`, "S0104", "", 2},
		{"`abc", "S0105", "", 4},
		{"a /* b", "S0106", "", 2},
		{"a b", "S0201", "b", 3},
		{"(a", "S0203", "(end)", 2},
		{"[1, 2", "S0203", "(end)", 5},
		{"f(1]", "S0202", "]", 4},
		{"a ! b", "S0204", "!", 3},
		{"a.", "S0207", "(end)", 2},
		{"function(a){1}", "S0208", "a", 10},
		{"a{b: c}[0]", "", "", 0}, // parses: the predicate is on the path's last step
		{"$x{a: b}[0]", "S0209", "", 9},
		{"a{b: c}{d: e}", "S0210", "", 8},
		{")", "S0211", ")", 1},
		{"a := 1", "S0212", "a", 1},
		{"a.1", "S0213", "", 3},
		{"a@b", "S0214", "@", 3},
		{"a#b", "S0214", "#", 3},
		{"a[0]@$x", "S0215", "", 5},
		{"a^(b)@$x", "S0216", "", 6},
		{"%", "S0217", "parent", 1},
		{"$.%", "S0217", "variable", 1},
		{"//", "S0301", "", 1},
		{"/ab", "S0302", "", 3},
		{"$f := function($x)<x<n>>{$x}", "S0401", "", 21},
		{"$f := function($x)<(a<n>)>{$x}", "S0402", "", 20},
		{`'a\'b'`, "S0103", "'", 3}, // \' is not a JSON escape
		{"/a{/", "S0302", "", 4},    // JSONata counts the { as an open bracket
		{"/[[]/", "S0302", "", 5},
	} {
		_, err := Parse(c.expr)
		if c.code == "" {
			if err != nil {
				t.Errorf("%q: %v", c.expr, err)
			}
			continue
		}
		var e *value.Error
		if !errors.As(err, &e) {
			t.Errorf("%q: error %v; want %s", c.expr, err, c.code)
			continue
		}
		if e.Code != c.code || e.Token != c.token || e.Position != c.position {
			t.Errorf("%q: %s token %q position %d; want %s token %q position %d", c.expr, e.Code, e.Token,
				e.Position, c.code, c.token, c.position)
		}
	}
}

// TestErrorInserts checks the message inserts JSONata sets: the expected token (S0202) and the parameter (S0208).
func TestErrorInserts(t *testing.T) {
	for expr, want := range map[string]string{
		"f(1]":           `S0202: Expected ")", got "]"`,
		"(a":             `S0203: Expected ")" before end of expression`,
		"function(a){1}": "S0208: Parameter 1 of function definition must be a variable name (start with $)",
		"a.true":         "S0213: The literal value true cannot be used as a step within a path expression",
	} {
		value.Formatter = func(v any) string { return tokenText(v) }
		_, err := Parse(expr)
		if err == nil || err.Error() != want {
			t.Errorf("%q: %v; want %s", expr, err, want)
		}
	}
	value.Formatter = nil
}

// TestStrings checks string literals: JSON escapes, \u escapes and surrogate pairs, and positions in UTF-16 units.
func TestStrings(t *testing.T) {
	for expr, want := range map[string]string{
		`"a\"b"`:               `a"b`,
		`"\\\/\b\f\n\r\t"`:     "\\/\b\f\n\r\t",
		`"\u00e9"`:             "é",
		`"\ud83d\ude00"`:       "😀",
		`"\ud83d"`:             "\uFFFD", // a lone surrogate
		`'it''s'`:              "",       // two strings: a syntax error
		"\"tab\there\"":        "tab\there",
		`"😀"`:                  "😀",
		`"\u00E9t\u00e9"`:      "été",
		"\"multi\nline\"":      "multi\nline",
		`"\"quoted\" \\slash"`: `"quoted" \slash`,
	} {
		n, err := Parse(expr)
		if want == "" {
			if err == nil {
				t.Errorf("%q parsed", expr)
			}
			continue
		}
		if err != nil || n.Kind != ast.String || n.Value != want {
			t.Errorf("%q: %v %v; want %q", expr, show(n), err, want)
		}
	}
	// positions count UTF-16 code units, as JavaScript does: the emoji counts 2
	n, err := Parse(`"😀" & a`)
	if err != nil || n.RHS.Steps[0].Position != 8 {
		t.Errorf("position of a after an emoji: %v %v; want 8", show(n), err)
	}
}

// TestNumbers checks number literals.
func TestNumbers(t *testing.T) {
	for expr, want := range map[string]float64{
		"0": 0, "12": 12, "1.5": 1.5, "1e3": 1000, "1E-2": 0.01, "2.5e+2": 250, "-3": -3, "1e308": 1e308,
	} {
		n, err := Parse(expr)
		if err != nil || n.Kind != ast.Number || n.Value != want {
			t.Errorf("%q: %v %v; want %v", expr, show(n), err, want)
		}
	}
}

// TestRegex checks the translation of regex literals to Go's syntax and the refusals.
func TestRegex(t *testing.T) {
	for _, c := range []struct{ expr, input, match string }{
		{`/ab+c/`, "xabbbcx", "abbbc"},
		{`/AB/i`, "xaby", "ab"},
		{`/^b/m`, "a\nb", "b"},
		{`/(?<year>\d{4})-(?<m>\d\d)/`, "on 2024-05-01", "2024-05"},
		{`/a.c/`, "a\nc abc", "abc"},
		{`/\s+/`, "a\u00a0\u2003b", "\u00a0\u2003"},
		{`/[\s,]+/`, "a ,\u00a0b", " ,\u00a0"},
		{`/\S+/`, "  ab\u00a0", "ab"},
		{`/\u00e9+/`, "ééé", "ééé"},
		{`/\ud83d\ude00/`, "x😀", "😀"},
		{`/[^]/`, "\n", "\n"},
		{`/a[]/`, "a", ""},
		{`/\//`, "a/b", "/"},
		{`/[/]/`, "a/b", "/"},
		{`/\x41/`, "A", "A"},
		{`/\cJ/`, "\n", "\n"},
		{`/\0/`, "a\x00", "\x00"},
		{`/[\b]/`, "\b", "\b"},
		{`/\e\q/`, "eq", "eq"},
		{`/a{2}/`, "aaa", "aa"},
		{`/a\{/`, "a{", "a{"},
		{`/(?:ab)+/`, "ababx", "abab"},
		{`/[\[]/`, "[", "["},
	} {
		n, err := Parse(c.expr)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		re := n.Regex()
		if re == nil {
			t.Errorf("%s: %s is not a regex", c.expr, show(n))
			continue
		}
		if got := re.Pattern.FindString(c.input); got != c.match {
			t.Errorf("%s (%s) on %q: %q; want %q", c.expr, re.Pattern, c.input, got, c.match)
		}
	}
	for expr, says := range map[string]string{
		`/a(?=b)/`:        "look-ahead",
		`/a(?!b)/`:        "look-ahead",
		`/(?<=a)b/`:       "look-behind",
		`/(?<!a)b/`:       "look-behind",
		`/(a)\1/`:         "back reference",
		`/(?<x>a)\k<x>/`:  "back reference",
		`/^*a/`:           "nothing to repeat",
		`/a/ii`:           "flag given twice",
		`/a**/`:           "repetition",
		`/[a/`:            "", // S0302: the / is inside brackets
		`/(?i)a/`:         "invalid group",
		`/a{1001}/`:       "repeat",
		`/\/`:             "", // S0302
		`"a" ~> /+/`:      "missing argument",
		`$match("a", /)/`: "",
	} {
		_, err := Parse(expr)
		var e *value.Error
		if !errors.As(err, &e) {
			t.Errorf("%s: %v; want an error", expr, err)
			continue
		}
		if says == "" {
			if e.Code != "S0302" && e.Code != "S0201" && e.Code != "S0202" && e.Code != RegexError {
				t.Errorf("%s: %v", expr, err)
			}
			continue
		}
		if e.Code != RegexError || !strings.Contains(e.Error(), says) {
			t.Errorf("%s: %v; want %s saying %q", expr, err, RegexError, says)
		}
	}
	// / after an operand is division; a regex after an operator
	n, err := Parse("a / b / c")
	if err != nil || show(n) != "((path(a) / path(b)) / path(c))" {
		t.Errorf("a / b / c: %s %v", show(n), err)
	}
	n, err = Parse("$split(a, /, */)")
	if err != nil || n.Args[1].Kind != ast.Regex || n.Args[1].Regex().Source != ", *" {
		t.Errorf("$split(a, /, */): %s %v", show(n), err)
	}
}

// TestSignature checks parsed signatures.
func TestSignature(t *testing.T) {
	p := func(typ byte, mods string) ast.Param {
		return ast.Param{Type: typ, Optional: strings.Contains(mods, "?"), OneOrMore: strings.Contains(mods, "+"),
			Context: strings.Contains(mods, "-")}
	}
	for _, c := range []struct {
		src    string
		params []ast.Param
		result *ast.Param
	}{
		{"<s-nn?:s>", []ast.Param{p('s', "-"), p('n', ""), p('n', "?")}, &ast.Param{Type: 's'}},
		{"<a<n>:n>", []ast.Param{{Type: 'a', Sub: "n"}}, &ast.Param{Type: 'n'}},
		{"<s-(sf)(sf)n?:s>", []ast.Param{p('s', "-"), {Type: '(', Choice: "sf"}, {Type: '(', Choice: "sf"}, p('n', "?")},
			&ast.Param{Type: 's'}},
		{"<f<s:o>a<a<n>>>", []ast.Param{{Type: 'f', Sub: "s:o"}, {Type: 'a', Sub: "a<n>"}}, nil},
		{"<x+>", []ast.Param{p('x', "+")}, nil},
		{"<j-?:b>", []ast.Param{{Type: 'j', Context: true, Optional: true}}, &ast.Param{Type: 'b'}},
		{"<bl>", []ast.Param{p('b', ""), p('l', "")}, nil},
		{"<:a<s>>", nil, &ast.Param{Type: 'a', Sub: "s"}},
		{"<?n>", []ast.Param{p('n', "")}, nil},
	} {
		s, err := Signature(c.src)
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		if s.Source != c.src || len(s.Params) != len(c.params) {
			t.Errorf("%s: %+v; want %+v", c.src, s, c.params)
			continue
		}
		for i := range c.params {
			if s.Params[i] != c.params[i] {
				t.Errorf("%s: parameter %d %+v; want %+v", c.src, i, s.Params[i], c.params[i])
			}
		}
		if (s.Result == nil) != (c.result == nil) || (s.Result != nil && *s.Result != *c.result) {
			t.Errorf("%s: result %+v; want %+v", c.src, s.Result, c.result)
		}
	}
	for src, code := range map[string]string{
		"<n<s>>":       "S0401",
		"<(sa<n>)>":    "S0402",
		"<n++>":        SignatureError,
		"<n?+>":        SignatureError,
		"<n-+>":        SignatureError,
		"<(s-a)>":      SignatureError,
		"<n+?>":        "",
		"<n-?>":        "",
		"<(sn)-:n>":    "",
		"<(\u0029-:)>": "",
	} {
		_, err := Signature(src)
		var e *value.Error
		if code == "" {
			if err != nil {
				t.Errorf("%s: %v", src, err)
			}
			continue
		}
		if !errors.As(err, &e) || e.Code != code {
			t.Errorf("%s: %v; want %s", src, err, code)
		}
	}
}

// TestDepth checks that deep nesting is refused with a clear error, and that nesting within the limit parses.
func TestDepth(t *testing.T) {
	for _, c := range []struct {
		expr string
		ok   bool
	}{
		{strings.Repeat("(", 900) + "1" + strings.Repeat(")", 900), true},
		{strings.Repeat("(", 5000) + "1" + strings.Repeat(")", 5000), false},
		{strings.Repeat("[", 5000) + strings.Repeat("]", 5000), false},
		{strings.Repeat("-", 5000) + "1", false},
		{strings.Repeat("a.", 5000) + "a", true},
		{"1" + strings.Repeat(" + 1", 5000), true},
		{"1" + strings.Repeat(" + 1", 50000), false},
		{strings.Repeat("a[", 5000) + strings.Repeat("]", 5000), false},
		{strings.Repeat("$f(", 5000) + strings.Repeat(")", 5000), false},
		{strings.Repeat("{'a':", 5000) + strings.Repeat("}", 5000), false},
		{strings.Repeat("a ? ", 5000) + "b", false},
		{"a" + strings.Repeat("[0]", 50000), false},
	} {
		_, err := Parse(c.expr)
		if c.ok {
			if err != nil {
				t.Errorf("%.20s…: %v", c.expr, err)
			}
			continue
		}
		var e *value.Error
		if !errors.As(err, &e) || e.Code != DepthExceeded || !strings.Contains(e.Error(), "nested too deeply") {
			t.Errorf("%.20s…: %v; want %s", c.expr, err, DepthExceeded)
		}
	}
}

// FuzzParse parses arbitrary input: it must not panic, and a tree it returns must be well formed.
func FuzzParse(f *testing.F) {
	for _, e := range referenceExprs {
		f.Add(e)
	}
	for _, e := range []string{
		`Account.Order[0].Product^(>Price).{"name": $."Product Name", "cost": Price * Quantity}`,
		`$sum(Account.Order.Product.(Price * Quantity))`, `Phone{type: number}`, `$reduce([1..5], λ($a, $b){$a + $b})`,
		`library.loans@$l.books@$b[$l.isbn=$b.isbn].{'title': $b.title}`, `**[*.x]`, `$string(/[a-z]+/i)`,
		`| Account.Order.Product | {'Total': Price * Quantity}, ['Price'] |`, `"\ud83d\ude00" & '\u00e9'`,
		`(/* c */ $x := 1; $x)`, "`a b`.c", `a ~> $f(?) ~> $g`, `function($n)<n:n>{$n <= 1 ? 1 : $n * $f($n-1)}`,
	} {
		f.Add(e)
	}
	f.Fuzz(func(t *testing.T, src string) {
		n, err := Parse(src)
		if err != nil {
			var e *value.Error
			if !errors.As(err, &e) || e.Code == "" {
				t.Fatalf("%q: error %v is not a *value.Error with a code", src, err)
			}
			return
		}
		check(t, src, n, 0)
	})
}

// check walks a tree for the invariants the evaluator relies on.
func check(t *testing.T, src string, n *ast.Node, depth int) {
	if n == nil {
		return
	}
	if depth > 3*MaxProcessDepth {
		t.Fatalf("%q: tree deeper than the limits", src)
	}
	switch n.Kind {
	case ast.Path:
		if len(n.Steps) == 0 {
			t.Fatalf("%q: a path with no steps", src)
		}
	case ast.Parent:
		if n.Slot == nil {
			t.Fatalf("%q: a %% with no slot", src)
		}
	case ast.Binary, ast.Bind, ast.Apply:
		if n.LHS == nil || n.RHS == nil {
			t.Fatalf("%q: %s with a missing operand", src, show(n))
		}
	case ast.Invalid:
		t.Fatalf("%q: an invalid node", src)
	}
	if n.SeekingParent != nil {
		t.Fatalf("%q: SeekingParent left set", src)
	}
	for _, list := range [][]*ast.Node{n.Steps, n.Exprs, n.Args, n.Stages, n.Predicates} {
		for _, c := range list {
			if c == nil {
				t.Fatalf("%q: a nil child in %s", src, show(n))
			}
			check(t, src, c, depth+1)
		}
	}
	for _, c := range []*ast.Node{n.LHS, n.RHS, n.Expr, n.Procedure, n.Body, n.Cond, n.Then, n.Else, n.Pattern,
		n.Update, n.Delete, n.Group} {
		check(t, src, c, depth+1)
	}
	for _, p := range n.Pairs {
		check(t, src, p[0], depth+1)
		check(t, src, p[1], depth+1)
	}
	for _, term := range n.Terms {
		check(t, src, term.Expr, depth+1)
	}
}

// BenchmarkParse parses a typical Step Functions expression.
func BenchmarkParse(b *testing.B) {
	const src = `$states.input.orders[status = 'open' and total > 100]^(>total).{"id": id, "items": $count(items),` +
		` "sum": $sum(items.(price * qty)), "tag": $uppercase($substring(name, 0, 3))}`
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(src); err != nil {
			b.Fatal(err)
		}
	}
}
