package value

import (
	"math"
	"testing"
)

// TestParseInt checks ParseInt against what node's parseInt(s, 10) returns for the same strings.
func TestParseInt(t *testing.T) {
	for _, c := range []struct {
		s    string
		want float64
		ok   bool
	}{
		{"42", 42, true},
		{"  -17abc", -17, true},
		{"+5", 5, true},
		{"0530", 530, true},
		{"\u00a0\u30001", 1, true},
		{"\ufeff1", 1, true},
		{"\u00851", 0, false},
		{"\u180e1", 0, false},
		{"-", 0, false},
		{"x1", 0, false},
		{"", 0, false},
	} {
		got, ok := ParseInt(c.s)
		if got != c.want || ok != c.ok {
			t.Errorf("ParseInt(%q) = %v, %v; want %v, %v", c.s, got, ok, c.want, c.ok)
		}
	}
	if n, ok := ParseInt(" -0"); !ok || n != 0 || !math.Signbit(n) {
		t.Errorf(`ParseInt(" -0") = %v, %v; want -0, true`, n, ok)
	}
}
