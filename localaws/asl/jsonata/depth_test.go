package jsonata_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata"
	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// TestLambdaDepth: functions an expression defines evaluate as written, recursion included (tail calls in constant
// depth); an unbounded recursion fails the evaluation instead of overflowing the Go stack (which would end the
// process), and one in tail position, which never nests, ends when the evaluation's time is up.
func TestLambdaDepth(t *testing.T) {
	tests := []struct{ expr, want, err string }{
		{`($f := function($n){ $n <= 1 ? 1 : $n * $f($n - 1) }; $f(10))`, `3628800`, ""},
		{`($f := function($n){ $n <= 1 ? 1 : $n + $f($n - 1) }; $f(1000))`, `500500`, ""}, // as deep as the earlier evaluator went
		{`$map([1,2,3], function($v, $i) { $v * 10 + $i })`, `[10,21,32]`, ""},
		{`$map(['a}', "b{"], λ($v){ $v & '}' })`, `["a}}","b{}"]`, ""},
		{`$filter([1,2,3,4], function($v)<n:b>{ $v % 2 = 0 })`, `[2,4]`, ""},
		{`($f := function($n, $acc){ $n <= 1 ? $acc : $f($n - 1, $acc + 1) }; $f(5000, 0))`, `4999`, ""},
		{`($f := function($x){ 1 + $f($x) }; $f(1))`, "", "U1001: Stack overflow error"},
		{`($g := function($h, $x){ 1 + $h($h, $x) }; $g($g, 1))`, "", "U1001: Stack overflow error"},
		{`($f := function($x){ $f($x) }; $f(1))`, "", "U1001: Expression evaluation timeout"},
		{`($g := function($h, $x){ $h($h, $x) }; $g($g, 1))`, "", "U1001: Expression evaluation timeout"},
	}
	for _, tc := range tests {
		e, err := jsonata.Compile(tc.expr)
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		got, err := e.Eval(jsonata.Env{Context: ctx})
		cancel()
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

// TestHostileSignature: signatures the old library's lexer never finished parse in bounded time, as JSONata parses
// them: a character that is no operator is JSONata's S0204, and a symbol outside the signature grammar is accepted
// and ignored, as JSONata accepts it.
func TestHostileSignature(t *testing.T) {
	for _, src := range []string{`function($)<!::n>`, `function($x)<a!>{1}`} {
		if _, err := jsonata.Compile(src); err == nil || !strings.HasPrefix(err.Error(), `S0204: Unknown operator: "!"`) {
			t.Errorf("%s: %v, want S0204", src, err)
		}
	}
	for src, want := range map[string]string{`λ($x)<n%>{1}(2)`: `1`, `function($x)<n:n>{ $x }(3)`: `3`} {
		e, err := jsonata.Compile(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if got, err := e.Eval(jsonata.Env{}); err != nil || jsonvalue.Marshal(got) != want {
			t.Errorf("%s = %v, %v; want %s", src, got, err, want)
		}
	}
}
