package lang

import "testing"

// TestHostileQuick evaluates odd and malformed expressions: each must give a result or an error, never a panic.
func TestHostileQuick(t *testing.T) {
	for _, src := range []string{`%`, `$$$`, `[1,2]@$x#$i^($x)`, `a@$x.b#$y{$x: $y}`, `$eval("$eval(\"%\")")`, `|a|b|`, `(|a|{}|)("x")`,
		`$x(1)`, `{}[0]`, `[[1]][0][0][0]`, `**[0]`, `*.*.*`, `$.$.$#$i`, `^(a)`, `a^(b)^(c)`, `/a/()`, `/(/`, `$substring(?)`,
		`$substring(?)(1,2,3,4)`, `function($a){$a}(1,2,3)`, `a.(b)[0]{c: d}[0]`, `$clone()`, `$clone(1)`, `$eval()`, `[1..3].%`} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic %v", src, r)
				}
			}()
			run(t, src, `{"a":[{"b":1}]}`, Options{})
		}()
	}
}
