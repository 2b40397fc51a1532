package parse

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// referenceExprs are expressions beyond the test suite's for TestReferenceParser: corners of the grammar and of the
// rewriting pass.
var referenceExprs = []string{
	"a.b.c", "a[0].b[1][2]", "a.b[]", "a[].b", "$x[0]", "$x[0].a", "($x)[0][1]", "a#$i", "a#$i[0]", "a[0]#$i",
	"a[0]#$i[1]", "$x#$i", "$x[0]#$i", "a@$x", "a@$x.b@$y", "a@$x[]", "a@$x#$i", "a^(b)", "a^(>b, <c)", "a^(b)[0]",
	"a^(b)#$i", "a{b: c}", "a.b{c: d}", "$x{a: b}.c", "a{b: c}{d: e}", "$x{a: b}[0]", "a.%", "a.b.%", "a.b.%.%",
	"a.b[%.c]", "a.(b.%)", "a.b.(%)", "a.b.%.c", "a[b.%.c]", "a.b{%.c: d}", "a.b^(%.c)", "a.*.%", "a.b@$x.c.%",
	"a@$x.b@$y.%", "a.b#$i.%", "[1, 2].a", "a.[b, c]", "a.[b].c", "([1]; [2])", "-1", "-a", "-(1)", "- -1",
	"1 - -1", "function($x){$x}", "function($x){$f($x)}", "function($x){$x ? $f($x) : $g($x)}",
	"function($x){($a := 1; $f($a))}", "function($x){$f($x)[0]}", "λ($x)<n-:n>{$x}", "$f(?, 1)", "$f(?)",
	"$x := 1", "$x := $y := 2", "a ~> $f", "a[] ~> $f", "| a | {'b': 1} |", "| a | {'b': 1}, ['c'] |",
	"a ? b", "a ? b : c", "a ? b : c ? d : e", "[1..3]", "[1..3, 5]", "a and b", "and.or.in", "a.and", "`a b`.c",
	"'a'.\"b\"", "$", "$$", "$$.a", "$.a", "**.a", "a.**", "*.a", "/a/", "/a/i.b", "a / b", "(a) / 2", "$x / 2",
	"a[0] / 2", "/* c */ a", "a /* c */ . b", "1e3", "0.5e-2", "'\\u00e9\\ud83d\\ude00'", "\"a\\\"b\"",
	"{'a': 1, 'b': [1, 2]}", "{}", "[]", "()", "a.()", "a(1)", "a.b(1)", "$x.$f(1)", "a.b.$f(1).c", "$f(1)(2)",
	"$f(1)[0]", "$f(1){a: b}", "f.function($x){1}", "a.b ~> $f ~> $g", "a[b = 'c'].d[0]", "a[[1, 2]]",
	"%.a", "(%)", "a.(%)", "$x.%", "a.[%]", "a.{'x': %}", "a.b.[%.c]", "a.(b; %)", "a.b[0].%", "a.b#$i[0].%",
	"a.b@$x[0]", "a.b@$x^(c)", "a^(b)@$x", "a.b.c{d: e}[0]", "a{b: c}.d", "a.b{c: d}{e: f}", "a[0]{b: c}",
	"$f(a.%)", "a.$f(%)", "a.b.$f(%.c)", "a.$f(%.%)", "a.(%.%)", "a.b.c.(%.%.d)", "a.b.c[%.%.d]",
	"a.*[%.b]", "a.b.*.%", "a.b.**.%", "a.b^(%.c).d", "a.b^(c).%", "a.b.c^(%.d)", "a@$x.%", "a.b@$x.%.%",
	"a.b@$x.c@$y.%", "a.b#$i.c#$j.%", "a.[b].%", "a.$.%", "a.($x := %)", "a.(%[0])", "a.%[0]", "a.%.b[%.c]",
	"a.b.(c.d).%", "a.(b.c).%.%", "a.b[c.%.d]", "a.b[c[%.d]]", "a.b[c.d[%.%.e]]",
	"function($x)<a<n>:a<n>>{$x}", "function($x, $y)<s-n?:s>{$x}", "function($x)<(sn)>{$x}",
	"a.'b'", "a.\"b\"[0]", "a.1", "a.true", "a.null", "1.a", "[a][0]", "[a][]", "{a: b}.c", "a.{b: c}[0]",
	"(a.b)[%.c]", "$x[%.a]", "$x[%]", "a.$x[%]", "()[%]", "a.%[%]{b: c}[%]", "a@$v.b@$w.c.%.%", "a^/x/mi",
}

// TestReferenceParser compares the trees (and errors) with those of the npm package jsonata 2.0.6, which the
// repository pins in package.json, run by node over the test suite's expressions, referenceExprs and
// extraReferenceExprs (and, with JSONATA_REF_MUTANTS=n, n random mutants of each). Outside CI it skips when node or
// the package is missing or not the pinned version; in CI (CI=true) it fails instead.
func TestReferenceParser(t *testing.T) {
	missing := func(why string) {
		if os.Getenv("CI") == "true" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	if _, err := exec.LookPath("node"); err != nil {
		missing("node is not installed")
	}
	root, err := repositoryRoot()
	if err != nil {
		missing(err.Error())
	}
	pkg, err := os.ReadFile(filepath.Join(root, "node_modules", "jsonata", "package.json"))
	if err != nil {
		missing("the npm package jsonata is not installed (`make deps` installs it): " + err.Error())
	}
	var meta struct{ Version string }
	if err := json.Unmarshal(pkg, &meta); err != nil || meta.Version != "2.0.6" {
		missing(fmt.Sprintf("node_modules/jsonata is version %q (%v), not the pinned 2.0.6: `make deps` installs it", meta.Version, err))
	}
	exprs := append([]string(nil), referenceExprs...)
	cases := loadSuite(t)
	var names []string
	for n := range cases {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		exprs = append(exprs, *cases[n].Expr)
	}
	exprs = append(exprs, extraReferenceExprs...)
	if n, _ := strconv.Atoi(os.Getenv("JSONATA_REF_MUTANTS")); n > 0 {
		exprs = append(exprs, mutants(exprs, n)...)
	}
	in := filepath.Join(t.TempDir(), "exprs.json")
	b, _ := json.Marshal(exprs)
	if err := os.WriteFile(in, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("node", "testdata/jsparse.js", root, in).Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var want []struct {
		Tree    any
		JSError string
		Error   *struct {
			Code     string
			Token    *string
			Position *float64
			Value    any
		}
	}
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	same := 0
	for i, e := range exprs {
		w := want[i]
		got, err := Parse(e)
		switch {
		case w.JSError != "" && !strings.HasPrefix(w.JSError, "SyntaxError: Invalid "):
			// JSONata itself failed (a TypeError on malformed input)
			t.Logf("%q: JSONata: %s; got %v", e, w.JSError, err)
		case w.JSError != "":
			// JavaScript's RegExp refused the pattern (of a regex literal, or the one JSONata makes of a signature)
			var ve *value.Error
			if !errors.As(err, &ve) || (ve.Code != RegexError && ve.Code != SignatureError) {
				t.Errorf("%q: JSONata: %s; got %v", e, w.JSError, err)
				continue
			}
		case w.Error != nil:
			var ve *value.Error
			if !errors.As(err, &ve) {
				t.Errorf("%q: JSONata: error %s; got %v", e, w.Error.Code, dumpJSON(dump(got)))
				continue
			}
			if ve.Code != w.Error.Code || (w.Error.Token != nil && ve.Token != *w.Error.Token) ||
				(w.Error.Position != nil && float64(ve.Position) != *w.Error.Position) {
				t.Errorf("%q: JSONata: error %s token %v position %v; got %s token %q position %d", e,
					w.Error.Code, deref(w.Error.Token), derefF(w.Error.Position), ve.Code, ve.Token, ve.Position)
				continue
			}
		default:
			if err != nil {
				var ve *value.Error
				if errors.As(err, &ve) && ve.Code == RegexError {
					t.Logf("%q: %v (JSONata accepts it)", e, err)
					continue
				}
				t.Errorf("%q: %v; JSONata: %s", e, err, dumpJSON(w.Tree))
				continue
			}
			g := normalize(dump(got))
			if !reflect.DeepEqual(g, w.Tree) {
				t.Errorf("%q:\n got %s\nwant %s", e, dumpJSON(g), dumpJSON(w.Tree))
				continue
			}
		}
		same++
	}
	t.Logf("%d expressions, %d the same as JSONata's", len(exprs), same)
}

// repositoryRoot walks up from the package directory to the directory holding go.mod.
func repositoryRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod above the package directory")
		}
		dir = up
	}
}

// mutants returns n variants of each expression with a random edit: a character deleted, doubled or inserted, or
// the expression cut short.
func mutants(exprs []string, n int) []string {
	r := rand.New(rand.NewPCG(1, 2))
	const chars = "()[]{}.,;:?$%#@^<>=!~*/+-&|'\"`\\ 0aλ"
	var out []string
	for _, e := range exprs {
		u := []rune(e)
		if len(u) == 0 {
			continue
		}
		for range n {
			i := r.IntN(len(u))
			var m []rune
			switch r.IntN(4) {
			case 0:
				m = append(append(m, u[:i]...), u[i+1:]...)
			case 1:
				m = append(append(append(m, u[:i+1]...), u[i]), u[i+1:]...)
			case 2:
				c := []rune(chars)[r.IntN(len([]rune(chars)))]
				m = append(append(append(m, u[:i]...), c), u[i:]...)
			default:
				m = u[:i]
			}
			out = append(out, string(m))
		}
	}
	return out
}

// extraReferenceExprs are added by other tests' files (the error cases).
var extraReferenceExprs []string

func deref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

func derefF(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

func normalize(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func dumpJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
