package jsonata_test

import (
	"testing"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata"
)

// TestCoded: evaluation errors are reported with JSONata 2.0's codes and messages (its errorCodes table, tokens and
// values quoted as JSON), as AWS quotes them.
func TestCoded(t *testing.T) {
	tests := []struct {
		expr, want string // want "" for an error that is not coded
	}{
		{`'a' + 1`, `T2001: The left side of the "+" operator must evaluate to a number`},
		{`1 * 'a'`, `T2002: The right side of the "*" operator must evaluate to a number`},
		{`{} < 1`, `T2010: The expressions either side of operator "<" must evaluate to numeric or string values`},
		{`$partial(1)`, `T1006: Attempted to invoke a non-function`},
		{`1 ~> 2`, `T2006: The right side of the function application operator ~> must be a function`},
		{`[{}, 1]^($)`, `T2008: The expressions within an order-by clause must evaluate to numeric or string values`},
		{`{'a':1, 'a':2}`, `D1009: Multiple key definitions evaluate to same key: "a"`},
		{`$abs('x')`, `T0410: Argument 1 of function "abs" does not match function signature`},
		{`$number('abc')`, `D3030: Unable to cast value to a number: "abc"`},
		{`1 = 1 and 'a' < 1`, `T2009: The values "a" and 1 either side of operator "<" must be of the same data type`},
		{`$sum(1, 2, 3)`, `T0410: Argument 2 of function "sum" does not match function signature`},
		{`$assert(false, 'not ok')`, `D3141: not ok`},
		{`$error('stop')`, `D3137: stop`},
		{`[1..20000000]`, `D2014: The size of the sequence allocated by the range operator (..) must not exceed 1e6.  Attempted to allocate 20000000.`}, // the limit is 1e7; the message says 1e6, as JSONata 2.0.6 says it,
	}
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			e, err := jsonata.Compile(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.Eval(jsonata.Env{})
			if err == nil {
				t.Fatalf("%s evaluated without an error", tc.expr)
			}
			got, ok := jsonata.Coded(err)
			if got != tc.want || ok != (tc.want != "") {
				t.Errorf("Coded(%v) = %q, %v; want %q", err, got, ok, tc.want)
			}
		})
	}
	if _, ok := jsonata.Coded(nil); ok {
		t.Error("Coded(nil) is coded")
	}
}
