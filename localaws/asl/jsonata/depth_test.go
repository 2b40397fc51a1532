package jsonata_test

import (
	"strings"
	"testing"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata"
	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// TestLambdaDepth: functions an expression defines evaluate as written, recursion included, and an unbounded
// recursion fails the evaluation instead of overflowing the Go stack (which would end the process).
func TestLambdaDepth(t *testing.T) {
	tests := []struct{ expr, want, err string }{
		{`($f := function($n){ $n <= 1 ? 1 : $n * $f($n - 1) }; $f(10))`, `3628800`, ""},
		{`$map([1,2,3], function($v, $i) { $v * 10 + $i })`, `[10,21,32]`, ""},
		{`$map(['a}', "b{"], λ($v){ $v & '}' })`, `["a}}","b{}"]`, ""},
		{`$filter([1,2,3,4], function($v)<n:b>{ $v % 2 = 0 })`, `[2,4]`, ""},
		{`($f := function($x){ $f($x) }; $f(1))`, "", "more than 1000 levels deep"},
		{`($f := function($x){ 1 + $f($x) }; $f(1))`, "", "more than 1000 levels deep"},
		{`($g := function($h, $x){ $h($h, $x) }; $g($g, 1))`, "", "more than 1000 levels deep"},
	}
	for _, tc := range tests {
		e, err := jsonata.Compile(tc.expr)
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		got, err := e.Eval(jsonata.Env{})
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.expr, err, tc.err)
			}
			continue
		}
		if err != nil || jsonvalue.Marshal(got) != tc.want {
			t.Errorf("%s = %s, %v; want %s", tc.expr, jsonvalue.Marshal(got), err, tc.want)
		}
	}
}

// TestHostileSignature: a function signature the library's lexer never finishes is refused before it parses.
func TestHostileSignature(t *testing.T) {
	for _, src := range []string{`function($)<!::n>`, `function($x)<a!>{1}`, `λ($x)<n%>{1}`} {
		if _, err := jsonata.Compile(src); err == nil || !strings.Contains(err.Error(), "invalid type signature") {
			t.Errorf("%s: %v, want an invalid type signature", src, err)
		}
	}
	if _, err := jsonata.Compile(`function($x)<n:n>{ $x }`); err != nil {
		t.Fatalf("a valid signature: %v", err)
	}
}
