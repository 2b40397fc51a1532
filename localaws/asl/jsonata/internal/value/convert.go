package value

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// ErrNotJSON is the error of a result that is not a JSON value (a function).
var ErrNotJSON = errors.New("which is not a JSON value")

// FromEngine converts one of the engine's JSON values (nil for null, bool, string, json.Number or float64,
// *jsonvalue.Object or map[string]any, []any) into this package's model. Objects and arrays are copied.
func FromEngine(v any) any {
	switch t := v.(type) {
	case nil:
		return Null
	case json.Number:
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return string(t)
		}
		return f
	case int:
		return float64(t)
	case int64:
		return float64(t)
	case *jsonvalue.Object:
		o := jsonvalue.NewObjectKeys(append([]string(nil), t.Keys()...))
		for i, x := range t.Values() {
			o.SetAt(i, FromEngine(x))
		}
		return o
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		o := jsonvalue.NewObjectKeys(keys)
		for i, k := range keys {
			o.SetAt(i, FromEngine(t[k]))
		}
		return o
	case []any:
		items := make([]any, len(t))
		for i, x := range t {
			items[i] = FromEngine(x)
		}
		return &Array{Items: items}
	}
	return v
}

// ToEngine converts a value of this package's model into the engine's (nil for null, json.Number for numbers,
// *jsonvalue.Object, []any). Undefined items of arrays and objects are left out; a function is ErrNotJSON; a number
// that is not finite is an error (JSON has no NaN or Infinity).
func ToEngine(v any) (any, error) {
	switch t := v.(type) {
	case nil, NullType:
		return nil, nil
	case bool, string:
		return t, nil
	case float64:
		return Number(t)
	case *Object:
		o := jsonvalue.NewObject(t.Len())
		for i, k := range t.Keys() {
			x := t.Values()[i]
			if x == nil {
				continue
			}
			y, err := ToEngine(x)
			if err != nil {
				return nil, err
			}
			o.Set(k, y)
		}
		return o, nil
	case *Array:
		out := make([]any, 0, len(t.Items))
		for _, x := range t.Items {
			if x == nil {
				continue
			}
			y, err := ToEngine(x)
			if err != nil {
				return nil, err
			}
			out = append(out, y)
		}
		return out, nil
	case Function:
		return nil, fmt.Errorf("the expression returned a function: %w", ErrNotJSON)
	}
	return nil, fmt.Errorf("the expression returned a value of type %T: %w", v, ErrNotJSON)
}

// Number writes f as a JSON number the way JavaScript prints it: integers without a fraction or exponent below 1e21,
// other numbers in the shortest form that reads back the same (1e+21, 1e-7, 0.1), in exponent form below 1e-6.
func Number(f float64) (json.Number, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", fmt.Errorf("the number %v is not a JSON value", f)
	}
	return json.Number(NumberText(f)), nil
}

// NumberText writes f as JavaScript's String(f) does (NaN and Infinity included).
func NumberText(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		return "0"
	}
	abs := math.Abs(f)
	if abs >= 1e-6 && abs < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	// JavaScript writes 1e+21 and 1e-7, Go 1e+21 and 1e-07.
	if i := strings.IndexByte(s, 'e'); i >= 0 {
		mant, exp := s[:i], s[i+1:]
		sign := exp[0]
		digits := strings.TrimLeft(exp[1:], "0")
		if digits == "" {
			digits = "0"
		}
		s = mant + "e" + string(sign) + digits
	}
	return s
}
