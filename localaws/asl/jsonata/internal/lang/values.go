package lang

import (
	"math"
	"strconv"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// newSeq returns an empty sequence with room for n items.
func newSeq(n int) *value.Array {
	return &value.Array{Items: make([]any, 0, n), Sequence: true}
}

// seqOf returns a sequence of v: empty when v is undefined.
func seqOf(v any) *value.Array {
	if v == nil {
		return &value.Array{Sequence: true}
	}
	return &value.Array{Items: []any{v}, Sequence: true}
}

// appendFlat appends v to items: the items of an array one level deep, anything else as one item.
func appendFlat(items []any, v any) []any {
	if a, ok := v.(*value.Array); ok {
		return append(items, a.Items...)
	}
	return append(items, v)
}

// truthy is JSONata's boolean cast ($boolean); an undefined value is false.
func truthy(v any) bool {
	switch t := v.(type) {
	case nil:
		return false
	case bool:
		return t
	case string:
		return t != ""
	case float64:
		return t != 0 && !math.IsNaN(t)
	case *value.Array:
		switch len(t.Items) {
		case 0:
			return false
		case 1:
			return truthy(t.Items[0])
		}
		for _, x := range t.Items {
			if truthy(x) {
				return true
			}
		}
		return false
	case *value.Object:
		return t.Len() > 0
	case value.NullType:
		return false
	}
	return false // functions
}

// sameValue is JavaScript's ===: primitives by value, everything else by identity.
func sameValue(a, b any) (eq bool) {
	switch x := a.(type) {
	case float64, string, bool, value.NullType:
		return a == b
	case *value.Array:
		y, ok := b.(*value.Array)
		return ok && x == y
	case *value.Object:
		y, ok := b.(*value.Object)
		return ok && x == y
	}
	defer func() {
		if recover() != nil { // incomparable function values
			eq = false
		}
	}()
	return a == b
}

// typeSymbol is the signature symbol of a value: s n b l a o f, m for undefined.
func typeSymbol(v any) byte {
	switch v.(type) {
	case nil:
		return 'm'
	case string:
		return 's'
	case float64:
		return 'n'
	case bool:
		return 'b'
	case value.NullType:
		return 'l'
	case *value.Array:
		return 'a'
	case *value.Object:
		return 'o'
	case value.Function:
		return 'f'
	}
	return 'm'
}

// stringify is JSONata's $string of a defined value: strings as they are, functions as "", numbers with 15
// significant digits, anything else as compact JSON.
func stringify(v any) (string, error) {
	switch t := v.(type) {
	case string:
		return t, nil
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return "", &value.Error{Code: "D3001", Value: t}
		}
		return numberString(t), nil
	case value.Function:
		return "", nil
	}
	if inf, ok := infinite(v); ok {
		return "", &value.Error{Code: "D1001", Value: inf}
	}
	return string(appendJSON(nil, v)), nil
}

// infinite finds an infinite number inside an array or object ($string refuses them: D1001).
func infinite(v any) (float64, bool) {
	switch t := v.(type) {
	case float64:
		return t, math.IsInf(t, 0)
	case *value.Array:
		for _, x := range t.Items {
			if f, ok := infinite(x); ok {
				return f, true
			}
		}
	case *value.Object:
		for _, x := range t.Values() {
			if f, ok := infinite(x); ok {
				return f, true
			}
		}
	}
	return 0, false
}

// numberString writes a number as $string does: rounded to 15 significant digits, in JavaScript's notation.
func numberString(f float64) string {
	r, err := strconv.ParseFloat(strconv.FormatFloat(f, 'g', 15, 64), 64)
	if err != nil {
		r = f
	}
	return value.NumberText(r)
}

// appendJSON writes v as JSON the way $string does (JSON.stringify with numbers to 15 digits, functions as "").
func appendJSON(b []byte, v any) []byte {
	switch t := v.(type) {
	case nil, value.NullType:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, t)
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return append(b, "null"...)
		}
		return append(b, numberString(t)...)
	case string:
		return jsonvalue.AppendString(b, t)
	case *value.Array:
		b = append(b, '[')
		for i, x := range t.Items {
			if i > 0 {
				b = append(b, ',')
			}
			if x == nil {
				b = append(b, "null"...)
				continue
			}
			b = appendJSON(b, x)
		}
		return append(b, ']')
	case *value.Object:
		b = append(b, '{')
		n := 0
		for i, k := range t.Keys() {
			x := t.Values()[i]
			if x == nil {
				continue
			}
			if n > 0 {
				b = append(b, ',')
			}
			n++
			b = jsonvalue.AppendString(b, k)
			b = append(b, ':')
			b = appendJSON(b, x)
		}
		return append(b, '}')
	case *value.Regex:
		return append(b, "{}"...)
	case value.Function:
		return append(b, `""`...)
	}
	return append(b, "null"...)
}

// deepClone copies objects and arrays so that the copy can be changed (the transform operator's $clone).
func deepClone(v any) any {
	switch t := v.(type) {
	case *value.Object:
		o := value.NewObject(t.Len())
		for i, k := range t.Keys() {
			x := t.Values()[i]
			if x == nil {
				continue
			}
			o.Set(k, deepClone(x))
		}
		return o
	case *value.Array:
		items := make([]any, 0, len(t.Items))
		for _, x := range t.Items {
			if x != nil {
				items = append(items, deepClone(x))
			}
		}
		return &value.Array{Items: items}
	case value.Function:
		return ""
	}
	return v
}
