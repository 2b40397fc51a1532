package intrinsic

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

type fn func(c *Call, args []any, env Env) (any, error)

var funcs map[string]fn

func init() {
	funcs = map[string]fn{
		"States.Format":         format,
		"States.StringToJson":   stringToJSON,
		"States.JsonToString":   jsonToString,
		"States.Array":          array,
		"States.ArrayPartition": arrayPartition,
		"States.ArrayContains":  arrayContains,
		"States.ArrayRange":     arrayRange,
		"States.ArrayGetItem":   arrayGetItem,
		"States.ArrayLength":    arrayLength,
		"States.ArrayUnique":    arrayUnique,
		"States.Base64Encode":   base64Encode,
		"States.Base64Decode":   base64Decode,
		"States.Hash":           hashFn,
		"States.JsonMerge":      jsonMerge,
		"States.MathRandom":     mathRandom,
		"States.MathAdd":        mathAdd,
		"States.StringSplit":    stringSplit,
		"States.UUID":           uuid,
	}
}

func failf(c *Call, format string, args ...any) error {
	return &Error{Func: c.Name, Msg: fmt.Sprintf(format, args...)}
}

func nargs(c *Call, args []any, lo, hi int) error {
	if len(args) < lo || len(args) > hi {
		if lo == hi {
			return failf(c, "Function %s expects %d argument(s), got %d", c.Name, lo, len(args))
		}
		return failf(c, "Function %s expects %d to %d arguments, got %d", c.Name, lo, hi, len(args))
	}
	return nil
}

func str(c *Call, v any, i int) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", failf(c, "Function %s expects argument %d to be a string, got %s", c.Name, i+1, Marshal(v))
	}
	return s, nil
}

func num(c *Call, v any, i int) (float64, error) {
	n, ok := v.(json.Number)
	if ok {
		if f, err := strconv.ParseFloat(string(n), 64); err == nil {
			return f, nil
		}
	}
	if f, ok := v.(float64); ok {
		return f, nil
	}
	return 0, failf(c, "Function %s expects argument %d to be a number, got %s", c.Name, i+1, Marshal(v))
}

func integer(c *Call, v any, i int) (int64, error) {
	f, err := num(c, v, i)
	if err != nil {
		return 0, err
	}
	if f != math.Trunc(f) {
		return 0, failf(c, "Function %s expects argument %d to be an integer, got %s", c.Name, i+1, Marshal(v))
	}
	return int64(f), nil
}

func arr(c *Call, v any, i int) ([]any, error) {
	a, ok := v.([]any)
	if !ok {
		return nil, failf(c, "Function %s expects argument %d to be an array, got %s", c.Name, i+1, Marshal(v))
	}
	return a, nil
}

// Marshal renders a value as compact JSON text, objects in key order.
func Marshal(v any) string { return jsonvalue.Marshal(v) }

// javaString renders a value the way AWS's States.Format prints non-string arguments.
func javaString(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case nil:
		return "null"
	case *jsonvalue.Object:
		parts := make([]string, 0, t.Len())
		for _, k := range t.Keys() {
			v, _ := t.Get(k)
			parts = append(parts, k+"="+javaString(v))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case map[string]any:
		keys := slices.Sorted(maps.Keys(t))
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + javaString(t[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		parts := make([]string, len(t))
		for i, x := range t {
			parts[i] = javaString(x)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return Marshal(v)
}

func format(c *Call, args []any, _ Env) (any, error) {
	if len(args) < 1 {
		return nil, failf(c, "Function States.Format expects at least 1 argument")
	}
	// The template is a string literal, escapes kept (\{ is a brace, not a placeholder), or a path or variable
	// whose value is a string (AWS formats with "States.Format($AnswerTemplate, …)"), whose text is taken as it is.
	tmpl, literal := c.Args[0].raw, c.Args[0].kind == argString
	if !literal {
		s, ok := args[0].(string)
		if !ok {
			return nil, failf(c, "Function States.Format expects its first argument to be a string, got %s", Marshal(args[0]))
		}
		tmpl = s
	}
	var b strings.Builder
	next := 1
	for i := 0; i < len(tmpl); i++ {
		ch := tmpl[i]
		if literal && ch == '\\' && i+1 < len(tmpl) {
			b.WriteByte(tmpl[i+1])
			i++
			continue
		}
		if ch == '{' && i+1 < len(tmpl) && tmpl[i+1] == '}' {
			if next >= len(args) {
				return nil, failf(c, "Function States.Format has more placeholders than arguments")
			}
			b.WriteString(javaString(args[next]))
			next++
			i++
			continue
		}
		b.WriteByte(ch)
	}
	if next != len(args) {
		return nil, failf(c, "Function States.Format has more arguments than placeholders")
	}
	return b.String(), nil
}

func stringToJSON(c *Call, args []any, _ Env) (any, error) {
	if err := nargs(c, args, 1, 1); err != nil {
		return nil, err
	}
	s, err := str(c, args[0], 0)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	v, err := jsonvalue.DecodeString(s)
	if err != nil {
		return nil, failf(c, "Function States.StringToJson could not parse %q as JSON", s)
	}
	return normalizeNumbers(v), nil
}

// normalizeNumbers turns "-0" into 0, as AWS's JSON parser does.
func normalizeNumbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		if t == "-0" {
			return json.Number("0")
		}
	case []any:
		for i := range t {
			t[i] = normalizeNumbers(t[i])
		}
	case *jsonvalue.Object:
		for _, k := range t.Keys() {
			x, _ := t.Get(k)
			t.Set(k, normalizeNumbers(x))
		}
	}
	return v
}

func jsonToString(c *Call, args []any, _ Env) (any, error) {
	if err := nargs(c, args, 1, 1); err != nil {
		return nil, err
	}
	return Marshal(args[0]), nil
}

func array(_ *Call, args []any, _ Env) (any, error) {
	return append([]any{}, args...), nil
}

func arrayPartition(c *Call, args []any, _ Env) (any, error) {
	if err := nargs(c, args, 2, 2); err != nil {
		return nil, err
	}
	a, err := arr(c, args[0], 0)
	if err != nil {
		return nil, err
	}
	n, err := integer(c, args[1], 1)
	if err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, failf(c, "Function States.ArrayPartition expects a chunk size > 0, got %d", n)
	}
	out := []any{}
	for i := 0; i < len(a); i += int(n) {
		end := min(i+int(n), len(a))
		out = append(out, append([]any{}, a[i:end]...))
	}
	return out, nil
}

// Equal reports whether two JSON values are equal, numbers compared by value.
func Equal(a, b any) bool { return jsonvalue.Equal(a, b) }

func arrayContains(c *Call, args []any, _ Env) (any, error) {
	if err := nargs(c, args, 2, 2); err != nil {
		return nil, err
	}
	a, err := arr(c, args[0], 0)
	if err != nil {
		return nil, err
	}
	for _, x := range a {
		if Equal(x, args[1]) {
			return true, nil
		}
	}
	return false, nil
}

func arrayRange(c *Call, args []any, _ Env) (any, error) {
	if err := nargs(c, args, 3, 3); err != nil {
		return nil, err
	}
	var v [3]int64
	for i := range v {
		n, err := integer(c, args[i], i)
		if err != nil {
			return nil, err
		}
		v[i] = n
	}
	if v[2] == 0 {
		return nil, failf(c, "Function States.ArrayRange expects a non-zero step")
	}
	out := []any{}
	for x := v[0]; (v[2] > 0 && x <= v[1]) || (v[2] < 0 && x >= v[1]); x += v[2] {
		out = append(out, json.Number(strconv.FormatInt(x, 10)))
		if len(out) > 1000 {
			return nil, failf(c, "Function States.ArrayRange result exceeds 1000 elements")
		}
	}
	return out, nil
}

func arrayGetItem(c *Call, args []any, _ Env) (any, error) {
	if err := nargs(c, args, 2, 2); err != nil {
		return nil, err
	}
	a, err := arr(c, args[0], 0)
	if err != nil {
		return nil, err
	}
	i, err := integer(c, args[1], 1)
	if err != nil {
		return nil, err
	}
	if i < 0 || i >= int64(len(a)) {
		return nil, failf(c, "Function States.ArrayGetItem index %d out of bounds for an array of length %d", i, len(a))
	}
	return a[i], nil
}

func arrayLength(c *Call, args []any, _ Env) (any, error) {
	if err := nargs(c, args, 1, 1); err != nil {
		return nil, err
	}
	a, err := arr(c, args[0], 0)
	if err != nil {
		return nil, err
	}
	return json.Number(strconv.Itoa(len(a))), nil
}

func arrayUnique(c *Call, args []any, _ Env) (any, error) {
	if err := nargs(c, args, 1, 1); err != nil {
		return nil, err
	}
	a, err := arr(c, args[0], 0)
	if err != nil {
		return nil, err
	}
	out := []any{}
	for _, x := range a {
		dup := false
		for _, y := range out {
			if Equal(x, y) {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, x)
		}
	}
	return out, nil
}

func base64Encode(c *Call, args []any, _ Env) (any, error) {
	if err := nargs(c, args, 1, 1); err != nil {
		return nil, err
	}
	s, err := str(c, args[0], 0)
	if err != nil {
		return nil, err
	}
	return base64.StdEncoding.EncodeToString([]byte(s)), nil
}

func base64Decode(c *Call, args []any, _ Env) (any, error) {
	if err := nargs(c, args, 1, 1); err != nil {
		return nil, err
	}
	s, err := str(c, args[0], 0)
	if err != nil {
		return nil, err
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, failf(c, "Function States.Base64Decode could not decode %q", s)
	}
	return string(b), nil
}

func hashFn(c *Call, args []any, _ Env) (any, error) {
	if err := nargs(c, args, 2, 2); err != nil {
		return nil, err
	}
	s, err := str(c, args[0], 0)
	if err != nil {
		return nil, err
	}
	alg, err := str(c, args[1], 1)
	if err != nil {
		return nil, err
	}
	var h hash.Hash
	switch alg {
	case "MD5":
		h = md5.New()
	case "SHA-1":
		h = sha1.New()
	case "SHA-256":
		h = sha256.New()
	case "SHA-384":
		h = sha512.New384()
	case "SHA-512":
		h = sha512.New()
	default:
		return nil, failf(c, "Function States.Hash does not support the algorithm %q", alg)
	}
	h.Write([]byte(s))
	return hex.EncodeToString(h.Sum(nil)), nil
}

func jsonMerge(c *Call, args []any, _ Env) (any, error) {
	if err := nargs(c, args, 3, 3); err != nil {
		return nil, err
	}
	a, ok1 := toObject(args[0])
	b, ok2 := toObject(args[1])
	if !ok1 || !ok2 {
		return nil, failf(c, "Function States.JsonMerge expects two objects")
	}
	deep, ok := args[2].(bool)
	if !ok {
		return nil, failf(c, "Function States.JsonMerge expects a boolean third argument")
	}
	if deep {
		return nil, failf(c, "Function States.JsonMerge supports only a shallow merge (false)")
	}
	merged := a.Clone()
	for _, k := range b.Keys() {
		v, _ := b.Get(k)
		merged.Set(k, v)
	}
	// Step Functions returns the merged object in java.util.HashMap order.
	out := jsonvalue.NewObject(merged.Len())
	for _, k := range jsonvalue.HashMapOrder(merged.Keys()) {
		v, _ := merged.Get(k)
		out.Set(k, v)
	}
	return out, nil
}

// toObject returns v as an *jsonvalue.Object; plain maps are taken in key order.
func toObject(v any) (*jsonvalue.Object, bool) {
	switch t := v.(type) {
	case *jsonvalue.Object:
		return t, true
	case map[string]any:
		keys := slices.Sorted(maps.Keys(t))
		o := jsonvalue.NewObject(len(keys))
		for _, k := range keys {
			o.Set(k, t[k])
		}
		return o, true
	}
	return nil, false
}

func mathRandom(c *Call, args []any, env Env) (any, error) {
	if err := nargs(c, args, 2, 3); err != nil {
		return nil, err
	}
	lo, err := num(c, args[0], 0)
	if err != nil {
		return nil, err
	}
	hi, err := num(c, args[1], 1)
	if err != nil {
		return nil, err
	}
	l, h := javaRound(lo), javaRound(hi)
	if h <= l {
		return nil, failf(c, "Function States.MathRandom expects start < end")
	}
	return json.Number(strconv.FormatInt(env.RandomInt(l, h), 10)), nil
}

// javaRound rounds half up, like Java's Math.round.
func javaRound(f float64) int64 { return int64(math.Floor(f + 0.5)) }

func mathAdd(c *Call, args []any, _ Env) (any, error) {
	if err := nargs(c, args, 2, 2); err != nil {
		return nil, err
	}
	a, err := num(c, args[0], 0)
	if err != nil {
		return nil, err
	}
	b, err := num(c, args[1], 1)
	if err != nil {
		return nil, err
	}
	return json.Number(strconv.FormatInt(javaRound(a)+javaRound(b), 10)), nil
}

func stringSplit(c *Call, args []any, _ Env) (any, error) {
	if err := nargs(c, args, 2, 2); err != nil {
		return nil, err
	}
	s, err := str(c, args[0], 0)
	if err != nil {
		return nil, err
	}
	d, err := str(c, args[1], 1)
	if err != nil {
		return nil, err
	}
	parts := strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(d, r) })
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return out, nil
}

func uuid(c *Call, args []any, env Env) (any, error) {
	if err := nargs(c, args, 0, 0); err != nil {
		return nil, err
	}
	return env.NewUUID(), nil
}
