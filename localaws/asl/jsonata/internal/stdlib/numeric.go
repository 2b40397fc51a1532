package stdlib

import (
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// numbers returns the numbers of an array-of-numbers argument (the signature has checked their type).
func numbers(v any) []float64 {
	xs := items(v)
	out := make([]float64, 0, len(xs))
	for _, x := range xs {
		if f, ok := x.(float64); ok {
			out = append(out, f)
		}
	}
	return out
}

// fnSum is $sum(array): 0 for an empty array, undefined for undefined.
func fnSum(_ value.Context, args []any) (any, error) {
	if arg(args, 0) == nil {
		return nil, nil
	}
	total := 0.0
	for _, f := range numbers(args[0]) {
		total += f
	}
	return total, nil
}

// fnCount is $count(array): 0 for undefined.
func fnCount(_ value.Context, args []any) (any, error) {
	return float64(len(items(arg(args, 0)))), nil
}

// fnMax is $max(array): undefined for an empty array.
func fnMax(_ value.Context, args []any) (any, error) {
	xs := numbers(arg(args, 0))
	if len(xs) == 0 {
		return nil, nil
	}
	m := math.Inf(-1)
	for _, f := range xs {
		m = math.Max(m, f)
	}
	return m, nil
}

// fnMin is $min(array): undefined for an empty array.
func fnMin(_ value.Context, args []any) (any, error) {
	xs := numbers(arg(args, 0))
	if len(xs) == 0 {
		return nil, nil
	}
	m := math.Inf(1)
	for _, f := range xs {
		m = math.Min(m, f)
	}
	return m, nil
}

// fnAverage is $average(array): undefined for an empty array.
func fnAverage(_ value.Context, args []any) (any, error) {
	xs := numbers(arg(args, 0))
	if len(xs) == 0 {
		return nil, nil
	}
	total := 0.0
	for _, f := range xs {
		total += f
	}
	return total / float64(len(xs)), nil
}

// decimalSyntax is the syntax of a decimal number $number accepts.
var decimalSyntax = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?([Ee][-+]?[0-9]+)?$`)

// prefixedSyntax is what makes $number try a hexadecimal, octal or binary literal. JSONata's pattern anchors only
// its first alternative at the start and its last at the end; it is kept so, and the whole string must then read as
// such a literal (JavaScript's Number()).
var prefixedSyntax = regexp.MustCompile(`^(0[xX][0-9A-Fa-f]+)|(0[oO][0-7]+)|(0[bB][0-1]+)$`)

// fnNumber is $number(arg): numbers as they are, strings in JSON's number syntax or as 0x/0o/0b literals, booleans
// as 1 and 0; anything else is D3030.
func fnNumber(_ value.Context, args []any) (any, error) {
	v := arg(args, 0)
	switch t := v.(type) {
	case nil:
		return nil, nil
	case float64:
		return t, nil
	case bool:
		if t {
			return 1.0, nil
		}
		return 0.0, nil
	case string:
		if decimalSyntax.MatchString(t) {
			if f, err := strconv.ParseFloat(t, 64); err == nil && !math.IsInf(f, 0) {
				return f, nil
			}
		}
		if prefixedSyntax.MatchString(t) {
			if f, ok := prefixedNumber(t); ok {
				return f, nil
			}
		}
	}
	return nil, &value.Error{Code: "D3030", Value: v, Index: 1}
}

// prefixedNumber reads s, blanks around it allowed, as a 0x, 0o or 0b literal the way JavaScript's Number() does.
func prefixedNumber(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 3 || s[0] != '0' {
		return 0, false
	}
	base := 0
	switch s[1] {
	case 'x', 'X':
		base = 16
	case 'o', 'O':
		base = 8
	case 'b', 'B':
		base = 2
	default:
		return 0, false
	}
	f := 0.0
	for _, c := range s[2:] {
		d := digitValue(c)
		if d < 0 || d >= base {
			return 0, false
		}
		f = f*float64(base) + float64(d)
	}
	return f, !math.IsInf(f, 0)
}

// digitValue is the value of a hexadecimal digit, or -1.
func digitValue(c rune) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// number1 is the common shape of the one-number functions: undefined in, undefined out.
func number1(args []any, f func(float64) float64) (any, error) {
	x, ok := arg(args, 0).(float64)
	if !ok {
		return nil, nil
	}
	return f(x), nil
}

// fnFloor is $floor(number).
func fnFloor(_ value.Context, args []any) (any, error) { return number1(args, math.Floor) }

// fnCeil is $ceil(number).
func fnCeil(_ value.Context, args []any) (any, error) { return number1(args, math.Ceil) }

// fnAbs is $abs(number).
func fnAbs(_ value.Context, args []any) (any, error) { return number1(args, math.Abs) }

// fnSqrt is $sqrt(number): D3060 for a negative number.
func fnSqrt(_ value.Context, args []any) (any, error) {
	x, ok := arg(args, 0).(float64)
	if !ok {
		return nil, nil
	}
	if x < 0 {
		return nil, &value.Error{Code: "D3060", Value: x, Index: 1}
	}
	return math.Sqrt(x), nil
}

// fnPower is $power(base, exponent): D3061 when the result is not a finite number.
func fnPower(_ value.Context, args []any) (any, error) {
	x, ok := arg(args, 0).(float64)
	if !ok {
		return nil, nil
	}
	e, _ := arg(args, 1).(float64)
	r := jsPow(x, e)
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return nil, &value.Error{Code: "D3061", Value: x, Exp: e, Index: 1}
	}
	return r, nil
}

// jsPow is JavaScript's Math.pow, which differs from Go's math.Pow where the base is ±1 and the exponent infinite
// (NaN in JavaScript, 1 in Go).
func jsPow(x, e float64) float64 {
	if math.IsInf(e, 0) && (x == 1 || x == -1) {
		return math.NaN()
	}
	return math.Pow(x, e)
}

// fnRandom is $random(): a number in [0, 1).
func fnRandom(_ value.Context, _ []any) (any, error) { return rand.Float64(), nil }

// fnRound is $round(number, precision): round half to even at the given number of decimal places (negative
// places round to tens, hundreds…). Like JSONata, it shifts the decimal point in the number's text rather than by
// multiplying, so that 2.675 at two places is 2.68 rather than the 2.67 the double nearest 267.5 would give.
func fnRound(_ value.Context, args []any) (any, error) {
	x, ok := arg(args, 0).(float64)
	if !ok {
		return nil, nil
	}
	places := 0
	if p, ok := arg(args, 1).(float64); ok && p == p {
		places = int(math.Max(-1e6, math.Min(1e6, math.Trunc(p))))
	}
	if places != 0 {
		x = shiftDecimal(x, places)
	}
	r := math.Floor(x)
	if x-r >= 0.5 { // JavaScript's Math.round: halves go up
		r++
	}
	if math.Abs(r-x) == 0.5 && math.Mod(math.Abs(r), 2) == 1 {
		r-- // a half went to the odd neighbour: take the even one
	}
	if places != 0 {
		r = shiftDecimal(r, -places)
	}
	if r == 0 {
		r = 0 // no -0 in JSON
	}
	return r, nil
}

// shiftDecimal multiplies x by 10^places by editing its decimal text's exponent, exactly.
func shiftDecimal(x float64, places int) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	s := numberText(x)
	exp := 0
	if i := strings.IndexByte(s, 'e'); i >= 0 {
		exp, _ = strconv.Atoi(s[i+1:])
		s = s[:i]
	}
	f, err := strconv.ParseFloat(s+"e"+strconv.Itoa(exp+places), 64)
	if err != nil && f == 0 {
		return 0
	}
	return f
}
