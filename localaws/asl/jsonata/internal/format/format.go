// Package format is the part of JSONata 2.0.6's function library that reads and writes picture strings: numbers
// ($formatNumber, $formatBase, $formatInteger, $parseInteger) and timestamps ($fromMillis, $toMillis, $now,
// $millis), after XPath F&O 3.1's fn:format-number, fn:format-integer and fn:format-dateTime as JSONata implements
// them. The evaluator validates and coerces the arguments with each function's signature before its Impl runs.
package format

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// All returns the functions of this package, with JSONata's signatures. Each call returns new values: nothing is
// shared between evaluations.
func All() []*value.Builtin {
	return []*value.Builtin{
		{Name: "formatNumber", Signature: "<n-so?:s>", Impl: formatNumberImpl},
		{Name: "formatBase", Signature: "<n-n?:s>", Impl: formatBaseImpl},
		{Name: "formatInteger", Signature: "<n-s:s>", Impl: formatIntegerImpl},
		{Name: "parseInteger", Signature: "<s-s:n>", Impl: parseIntegerImpl},
		{Name: "fromMillis", Signature: "<n-s?s?:s>", Impl: fromMillisImpl},
		{Name: "toMillis", Signature: "<s-s?:n>", Impl: toMillisImpl},
		{Name: "now", Signature: "<s?s?:s>", Impl: nowImpl},
		{Name: "millis", Signature: "<:n>", Impl: millisImpl},
	}
}

// errArgument is the error of an argument of a type the signature should have refused (the evaluator checks
// signatures, so only a direct caller sees it).
var errArgument = errors.New("an argument does not have the type of the function's signature")

// typedArg returns args[i] as a T; ok is false when it is absent (undefined), and an argument of another type is
// errArgument.
func typedArg[T any](args []any, i int) (v T, ok bool, err error) {
	if i >= len(args) || args[i] == nil {
		return v, false, nil
	}
	if v, ok = args[i].(T); !ok {
		return v, false, errArgument
	}
	return v, true, nil
}

// pictureArgs reads the two arguments a picture function starts with: the subject, a T (ok is false when it is
// absent, and the function's result is then undefined), and the picture string (hasPicture is false when it is
// absent).
func pictureArgs[T float64 | string](args []any) (subject T, picture string, hasPicture, ok bool, err error) {
	if subject, ok, err = typedArg[T](args, 0); err != nil || !ok {
		return subject, "", false, false, err
	}
	picture, hasPicture, err = typedArg[string](args, 1)
	return subject, picture, hasPicture, err == nil, err
}

func formatIntegerImpl(_ value.Context, args []any) (any, error) {
	n, picture, _, ok, err := pictureArgs[float64](args)
	if err != nil || !ok {
		return nil, err
	}
	s, err := formatInteger(n, picture)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func parseIntegerImpl(_ value.Context, args []any) (any, error) {
	s, picture, _, ok, err := pictureArgs[string](args)
	if err != nil || !ok {
		return nil, err
	}
	n, err := parseInteger(s, picture)
	if err != nil {
		return nil, err
	}
	return n, nil
}

// formatBaseImpl is $formatBase(number, radix): the number rounded to an integer (half to even), written in the
// radix (10 by default, 2 to 36 after rounding, D3100 otherwise) with JavaScript's lower-case digits.
func formatBaseImpl(_ value.Context, args []any) (any, error) {
	n, ok, err := typedArg[float64](args, 0)
	if err != nil || !ok {
		return nil, err
	}
	radix := 10.0
	if r, given, err := typedArg[float64](args, 1); err != nil {
		return nil, err
	} else if given {
		radix = roundHalfEven(r, 0)
	}
	if !(radix >= 2 && radix <= 36) {
		return nil, &value.Error{Code: "D3100", Value: radix}
	}
	n = roundHalfEven(n, 0)
	if radix == 10 || math.IsInf(n, 0) || math.IsNaN(n) {
		return value.NumberText(n), nil
	}
	return radixText(n, int(radix)), nil
}

// radixText writes an integer-valued number in a radix as JavaScript (V8) does: the digits past a double's
// precision (from 2^53 on) are zeros.
func radixText(n float64, radix int) string {
	neg := n < 0
	n = math.Abs(n)
	r := float64(radix)
	var zeros int
	for n/r >= 1<<53 {
		n /= r
		zeros++
	}
	var digits []byte
	for {
		rem := math.Mod(n, r)
		digits = append(digits, "0123456789abcdefghijklmnopqrstuvwxyz"[int(rem)])
		n = (n - rem) / r
		if n <= 0 {
			break
		}
	}
	slices.Reverse(digits)
	s := string(digits) + strings.Repeat("0", zeros)
	if neg {
		s = "-" + s
	}
	return s
}

// nowImpl is $now(picture, timezone): the evaluation's instant, written as $fromMillis writes it.
func nowImpl(c value.Context, args []any) (any, error) {
	ms := float64(c.Now().UnixMilli())
	return fromMillisImpl(c, append([]any{ms}, args...))
}

// millisImpl is $millis(): the evaluation's instant in milliseconds since the epoch.
func millisImpl(c value.Context, _ []any) (any, error) {
	return float64(c.Now().UnixMilli()), nil
}

// roundHalfEven rounds x to the given number of decimal places, halves to even, as JSONata's $round: the decimal
// point is moved in the number's text (not by multiplying, which would add binary noise), the result rounded, and
// the point moved back.
func roundHalfEven(x float64, places int) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	if places != 0 {
		x = shiftDecimal(x, places)
	}
	r := math.Floor(x)
	if x-r >= 0.5 {
		r++
	}
	if math.Abs(r-x) == 0.5 && math.Mod(math.Abs(r), 2) == 1 {
		r--
	}
	if places != 0 {
		r = shiftDecimal(r, -places)
	}
	return r
}

// shiftDecimal multiplies x by 10^places by rewriting the exponent of its shortest decimal text.
func shiftDecimal(x float64, places int) float64 {
	s := value.NumberText(x)
	mant, exp := s, 0
	for i := 0; i < len(s); i++ {
		if s[i] == 'e' {
			mant = s[:i]
			exp, _ = strconv.Atoi(s[i+1:])
			break
		}
	}
	f, err := strconv.ParseFloat(mant+"e"+strconv.Itoa(exp+places), 64)
	if err != nil && f == 0 {
		return x
	}
	return f
}
