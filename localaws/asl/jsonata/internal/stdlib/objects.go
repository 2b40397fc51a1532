package stdlib

import (
	"sort"
	"strconv"
	"strings"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// fnBoolean is $boolean(arg): the effective boolean value.
func fnBoolean(_ value.Context, args []any) (any, error) {
	v := arg(args, 0)
	if v == nil {
		return nil, nil
	}
	return toBoolean(v)
}

// fnNot is $not(arg): the negated effective boolean value.
func fnNot(_ value.Context, args []any) (any, error) {
	v := arg(args, 0)
	if v == nil {
		return nil, nil
	}
	b, err := toBoolean(v)
	return !b, err
}

// fnExists is $exists(arg): whether arg is not undefined.
func fnExists(_ value.Context, args []any) (any, error) {
	return arg(args, 0) != nil, nil
}

// fnType is $type(arg): "null", "number", "string", "boolean", "array", "object" or "function"; undefined for
// undefined.
func fnType(_ value.Context, args []any) (any, error) {
	switch t := arg(args, 0).(type) {
	case nil:
		return nil, nil
	case value.NullType:
		return "null", nil
	case float64:
		if err := checkFinite(t); err != nil {
			return nil, err
		}
		if t != t {
			return "object", nil // NaN is no JSONata number
		}
		return "number", nil
	case string:
		return "string", nil
	case bool:
		return "boolean", nil
	case *value.Array:
		return "array", nil
	case value.Function:
		return "function", nil
	}
	return "object", nil
}

// fnKeys is $keys(arg): the sequence of an object's keys in order, or of the distinct keys of an array's objects in
// order of first appearance; empty for anything else.
func fnKeys(_ value.Context, args []any) (any, error) {
	out := value.NewSequence()
	seen := map[string]bool{}
	var collect func(v any, depth int)
	collect = func(v any, depth int) {
		switch t := v.(type) {
		case *value.Object:
			for _, k := range t.Keys() {
				if !seen[k] {
					seen[k] = true
					out.Items = append(out.Items, k)
				}
			}
		case *value.Array:
			if depth > maxJSONDepth {
				return
			}
			for _, x := range t.Items {
				collect(x, depth+1)
			}
		}
	}
	collect(arg(args, 0), 0)
	return out, nil
}

// fnLookup is $lookup(arg, key): the key's value in an object; over an array, the sequence of the values in each
// item, arrays among them flattened.
func fnLookup(_ value.Context, args []any) (any, error) {
	key, _ := arg(args, 1).(string)
	return lookup(arg(args, 0), key, 0), nil
}

func lookup(v any, key string, depth int) any {
	switch t := v.(type) {
	case *value.Object:
		x, _ := t.Get(key)
		return x
	case *value.Array:
		out := value.NewSequence()
		if depth > maxJSONDepth {
			return out
		}
		for _, item := range t.Items {
			switch r := lookup(item, key, depth+1).(type) {
			case nil:
			case *value.Array:
				out.Items = append(out.Items, r.Items...)
			default:
				out.Items = append(out.Items, r)
			}
		}
		return out
	}
	return nil
}

// fnAppend is $append(a, b): the items of both (a single value counting as one item) in one array; one argument
// undefined gives the other.
func fnAppend(_ value.Context, args []any) (any, error) {
	return appendValues(arg(args, 0), arg(args, 1)), nil
}

func appendValues(a, b any) any {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	xs, ys := items(a), items(b)
	out := make([]any, 0, len(xs)+len(ys))
	out = append(out, xs...)
	out = append(out, ys...)
	return value.NewArray(out...)
}

// fnSpread is $spread(arg): an object split into objects of one field each (in a sequence); over an array, the
// spread of every item in one array; anything else as it is.
func fnSpread(_ value.Context, args []any) (any, error) {
	return spread(arg(args, 0), 0), nil
}

func spread(v any, depth int) any {
	switch t := v.(type) {
	case *value.Array:
		var result any = value.NewSequence()
		if depth > maxJSONDepth {
			return result
		}
		for _, item := range t.Items {
			result = appendValues(result, spread(item, depth+1))
		}
		return result
	case *value.Object:
		out := value.NewSequence()
		for i, k := range t.Keys() {
			o := value.NewObject(1)
			o.Set(k, t.Values()[i])
			out.Items = append(out.Items, o)
		}
		return out
	}
	return v
}

// fnMerge is $merge(array): one object with the fields of all the array's objects; a key keeps the position of its
// first appearance and takes the value of its last.
func fnMerge(_ value.Context, args []any) (any, error) {
	v := arg(args, 0)
	if v == nil {
		return nil, nil
	}
	out := value.NewObject(0)
	for _, x := range items(v) {
		if o, ok := x.(*value.Object); ok {
			for i, k := range o.Keys() {
				out.Set(k, o.Values()[i])
			}
		}
	}
	return out, nil
}

// fnReverse is $reverse(array).
func fnReverse(_ value.Context, args []any) (any, error) {
	v := arg(args, 0)
	if v == nil {
		return nil, nil
	}
	xs := items(v)
	if len(xs) <= 1 {
		return v, nil
	}
	out := make([]any, len(xs))
	for i, x := range xs {
		out[len(xs)-1-i] = x
	}
	return value.NewArray(out...), nil
}

// fnDistinct is $distinct(arg): the array without repeated values (compared deeply), a sequence staying a
// sequence; anything else as it is.
func fnDistinct(_ value.Context, args []any) (any, error) {
	v := arg(args, 0)
	a, ok := v.(*value.Array)
	if !ok || len(a.Items) <= 1 {
		return v, nil
	}
	out := &value.Array{Sequence: a.Sequence}
	seen := map[string]bool{}
	var rest []any // values without a canonical key (holding functions or NaN): compared one by one
	for _, x := range a.Items {
		var b strings.Builder
		if canonical(&b, x, 0) {
			k := b.String()
			if seen[k] {
				continue
			}
			seen[k] = true
			out.Items = append(out.Items, x)
			continue
		}
		dup := false
		for _, y := range rest {
			if value.Equal(x, y) {
				dup = true
				break
			}
		}
		if !dup {
			rest = append(rest, x)
			out.Items = append(out.Items, x)
		}
	}
	return out, nil
}

// canonical writes a text that is the same for two values exactly when value.Equal holds between them (objects with
// their keys sorted); it reports false for a value it cannot write so (one holding a function or NaN).
func canonical(b *strings.Builder, v any, depth int) bool {
	if depth > maxJSONDepth {
		return false
	}
	switch t := v.(type) {
	case value.NullType:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(t))
	case float64:
		if t != t {
			return false
		}
		if t == 0 {
			t = 0 // -0 equals 0
		}
		b.WriteString(strconv.FormatFloat(t, 'g', -1, 64))
	case string:
		writeJSONString(b, t)
	case *value.Array:
		b.WriteByte('[')
		for _, x := range t.Items {
			if !canonicalMember(b, x, depth+1) {
				return false
			}
		}
		b.WriteByte(']')
	case *value.Object:
		keys := append([]string(nil), t.Keys()...)
		sort.Strings(keys)
		b.WriteByte('{')
		for _, k := range keys {
			x, _ := t.Get(k)
			writeJSONString(b, k)
			b.WriteByte(':')
			if !canonicalMember(b, x, depth+1) {
				return false
			}
		}
		b.WriteByte('}')
	default:
		return false
	}
	return true
}

// canonicalMember writes an array item or an object field's value as canonical does, then a comma; undefined (which
// an array or object built by an expression may hold) is "u". It reports false where canonical does.
func canonicalMember(b *strings.Builder, x any, depth int) bool {
	if x == nil {
		b.WriteString("u")
	} else if !canonical(b, x, depth) {
		return false
	}
	b.WriteByte(',')
	return true
}

// fnError is $error(message): always D3137 with the message (a default one when it is absent or empty).
func fnError(_ value.Context, args []any) (any, error) {
	msg, _ := arg(args, 0).(string)
	if msg == "" {
		msg = "$error() function evaluated"
	}
	return nil, &value.Error{Code: "D3137", Message: msg}
}

// fnAssert is $assert(condition, message): D3141 with the message (a default one when it is absent or empty) unless
// the condition is true; undefined otherwise.
func fnAssert(_ value.Context, args []any) (any, error) {
	if ok, _ := arg(args, 0).(bool); ok {
		return nil, nil
	}
	msg, _ := arg(args, 1).(string)
	if msg == "" {
		msg = "$assert() statement failed"
	}
	return nil, &value.Error{Code: "D3141", Message: msg}
}
