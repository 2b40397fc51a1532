// Package stdlib is JSONata 2.0.6's built-in function library, except the functions that read or write pictures
// (package format) and $eval and $clone (package lang).
//
// The evaluator validates and coerces each call's arguments against the function's signature before its Impl runs,
// so an Impl reads its arguments by position with the types the signature promises: a parameter of type a is an
// *value.Array, an absent optional argument is nil (undefined). Functions passed as arguments are applied through
// value.Context.Call.
package stdlib

import (
	"errors"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

func init() {
	value.Formatter = messageText
}

// All returns every function of the library, each with its JSONata 2.0.6 signature. The slice and the functions
// are new on each call.
func All() []*value.Builtin {
	return []*value.Builtin{
		{Name: "sum", Signature: "<a<n>:n>", Impl: fnSum},
		{Name: "count", Signature: "<a:n>", Impl: fnCount},
		{Name: "max", Signature: "<a<n>:n>", Impl: fnMax},
		{Name: "min", Signature: "<a<n>:n>", Impl: fnMin},
		{Name: "average", Signature: "<a<n>:n>", Impl: fnAverage},
		{Name: "string", Signature: "<x-b?:s>", Impl: fnString},
		{Name: "substring", Signature: "<s-nn?:s>", Impl: fnSubstring},
		{Name: "substringBefore", Signature: "<s-s:s>", Impl: fnSubstringBefore},
		{Name: "substringAfter", Signature: "<s-s:s>", Impl: fnSubstringAfter},
		{Name: "lowercase", Signature: "<s-:s>", Impl: fnLowercase},
		{Name: "uppercase", Signature: "<s-:s>", Impl: fnUppercase},
		{Name: "length", Signature: "<s-:n>", Impl: fnLength},
		{Name: "trim", Signature: "<s-:s>", Impl: fnTrim},
		{Name: "pad", Signature: "<s-ns?:s>", Impl: fnPad},
		{Name: "match", Signature: "<s-f<s:o>n?:a<o>>", Impl: fnMatch},
		{Name: "contains", Signature: "<s-(sf):b>", Impl: fnContains},
		{Name: "replace", Signature: "<s-(sf)(sf)n?:s>", Impl: fnReplace},
		{Name: "split", Signature: "<s-(sf)n?:a<s>>", Impl: fnSplit},
		{Name: "join", Signature: "<a<s>s?:s>", Impl: fnJoin},
		{Name: "number", Signature: "<(nsb)-:n>", Impl: fnNumber},
		{Name: "floor", Signature: "<n-:n>", Impl: fnFloor},
		{Name: "ceil", Signature: "<n-:n>", Impl: fnCeil},
		{Name: "round", Signature: "<n-n?:n>", Impl: fnRound},
		{Name: "abs", Signature: "<n-:n>", Impl: fnAbs},
		{Name: "sqrt", Signature: "<n-:n>", Impl: fnSqrt},
		{Name: "power", Signature: "<n-n:n>", Impl: fnPower},
		{Name: "random", Signature: "<:n>", Impl: fnRandom},
		{Name: "boolean", Signature: "<x-:b>", Impl: fnBoolean},
		{Name: "not", Signature: "<x-:b>", Impl: fnNot},
		{Name: "map", Signature: "<af>", Impl: fnMap},
		{Name: "zip", Signature: "<a+>", Impl: fnZip},
		{Name: "filter", Signature: "<af>", Impl: fnFilter},
		{Name: "single", Signature: "<af?>", Impl: fnSingle},
		{Name: "reduce", Signature: "<afj?:j>", Impl: fnReduce},
		{Name: "sift", Signature: "<o-f?:o>", Impl: fnSift},
		{Name: "keys", Signature: "<x-:a<s>>", Impl: fnKeys},
		{Name: "lookup", Signature: "<x-s:x>", Impl: fnLookup},
		{Name: "append", Signature: "<xx:a>", Impl: fnAppend},
		{Name: "exists", Signature: "<x:b>", Impl: fnExists},
		{Name: "spread", Signature: "<x-:a<o>>", Impl: fnSpread},
		{Name: "merge", Signature: "<a<o>:o>", Impl: fnMerge},
		{Name: "reverse", Signature: "<a:a>", Impl: fnReverse},
		{Name: "each", Signature: "<o-f:a>", Impl: fnEach},
		{Name: "error", Signature: "<s?:x>", Impl: fnError},
		{Name: "assert", Signature: "<bs?:x>", Impl: fnAssert},
		{Name: "type", Signature: "<x:s>", Impl: fnType},
		{Name: "sort", Signature: "<af?:a>", Impl: fnSort},
		{Name: "shuffle", Signature: "<a:a>", Impl: fnShuffle},
		{Name: "distinct", Signature: "<x:x>", Impl: fnDistinct},
		{Name: "base64encode", Signature: "<s-:s>", Impl: fnBase64Encode},
		{Name: "base64decode", Signature: "<s-:s>", Impl: fnBase64Decode},
		{Name: "encodeUrlComponent", Signature: "<s-:s>", Impl: fnEncodeURLComponent},
		{Name: "encodeUrl", Signature: "<s-:s>", Impl: fnEncodeURL},
		{Name: "decodeUrlComponent", Signature: "<s-:s>", Impl: fnDecodeURLComponent},
		{Name: "decodeUrl", Signature: "<s-:s>", Impl: fnDecodeURL},
	}
}

// ErrTooLarge is the error of a function whose result would be larger than an evaluation allows (a string of more
// than maxStringBytes bytes, a value nested deeper than maxJSONDepth): JSONata has no code for it, as JavaScript
// would run out of memory or stack instead.
var ErrTooLarge = errors.New("the result of the function would be too large")

// maxStringBytes bounds the strings $pad and $replace build, so that hostile arguments are an error rather than a
// huge allocation.
const maxStringBytes = 1 << 26

// arg returns the i-th argument, or nil (undefined) when the call has fewer.
func arg(args []any, i int) any {
	if i < len(args) {
		return args[i]
	}
	return nil
}

// items returns the items of an array argument; a single value (which the signature would have wrapped) is one
// item, undefined none.
func items(v any) []any {
	switch t := v.(type) {
	case nil:
		return nil
	case *value.Array:
		return t.Items
	}
	return []any{v}
}

// hofArity is the number of arguments a higher-order function passes to fn: the function's own arity, except for
// built-ins whose JavaScript implementation declares fewer parameters than their signature (JSONata counts those):
// $string's prettify flag is a defaulted parameter, so $map(xs, $string) passes the item only, and $zip declares
// none.
func hofArity(fn value.Function) int {
	if b, ok := fn.(*value.Builtin); ok {
		switch b.Name {
		case "string":
			return 1
		case "zip": // variadic: JavaScript counts no declared parameter
			return 0
		}
	}
	return fn.Arity()
}

// hofArgs builds the arguments of a call of fn by $map, $filter, $single, $each or $sift: the value always, then the
// position and the whole structure if fn takes them.
func hofArgs(fn value.Function, v, pos, whole any) []any {
	n := hofArity(fn)
	out := []any{v}
	if n >= 2 {
		out = append(out, pos)
	}
	if n >= 3 {
		out = append(out, whole)
	}
	return out
}

// hofTest calls fn on v, with pos and whole as hofArgs passes them, and returns the effective boolean of its
// result: the predicate of $filter, $single and $sift.
func hofTest(c value.Context, fn value.Function, v, pos, whole any) (bool, error) {
	r, err := c.Call(fn, hofArgs(fn, v, pos, whole))
	if err != nil {
		return false, err
	}
	return toBoolean(r)
}

// definedResults calls fn on each of vals in turn, with its position pos(i) and whole as hofArgs passes them, and
// returns the sequence of the results that are not undefined: the loop of $map (over an array's items) and $each
// (over an object's values). It stops at the first error.
func definedResults(c value.Context, fn value.Function, vals []any, pos func(i int) any, whole any) (any, error) {
	out := value.NewSequence()
	for i, v := range vals {
		r, err := c.Call(fn, hofArgs(fn, v, pos(i), whole))
		if err != nil {
			return nil, err
		}
		if r != nil {
			out.Items = append(out.Items, r)
		}
	}
	return out, nil
}

// toBoolean is JSONata's effective boolean value (the cast $boolean performs). A number that is not finite is
// D1001, as JSONata's check for numbers raises.
func toBoolean(v any) (bool, error) {
	switch t := v.(type) {
	case nil, value.NullType:
		return false, nil
	case bool:
		return t, nil
	case string:
		return t != "", nil
	case float64:
		if err := checkFinite(t); err != nil {
			return false, err
		}
		return t != 0 && t == t, nil
	case *value.Array:
		switch len(t.Items) {
		case 0:
			return false, nil
		case 1:
			return toBoolean(t.Items[0])
		}
		found := false
		for _, x := range t.Items {
			b, err := toBoolean(x)
			if err != nil {
				return false, err
			}
			found = found || b
		}
		return found, nil
	case *value.Object:
		return t.Len() > 0, nil
	}
	return false, nil
}

// checkFinite is D1001 for an infinite number.
func checkFinite(f float64) error {
	if f > maxFloat || f < -maxFloat {
		return &value.Error{Code: "D1001", Value: f}
	}
	return nil
}

// maxFloat is the largest finite float64.
const maxFloat = 1.7976931348623157e308

// jsTruthy is JavaScript's truthiness, which $sort applies to its comparator's result (not JSONata's boolean
// cast): every array, object and function is true; 0, NaN, "", null and undefined are false.
func jsTruthy(v any) bool {
	switch t := v.(type) {
	case nil, value.NullType:
		return false
	case bool:
		return t
	case float64:
		return t != 0 && t == t
	case string:
		return t != ""
	}
	return true
}
