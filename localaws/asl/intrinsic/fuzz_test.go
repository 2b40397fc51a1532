package intrinsic_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/transferflow/orchestrator/localaws/asl/intrinsic"
	"github.com/transferflow/orchestrator/localaws/asl/jsonpath"
	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// FuzzIntrinsic parses any intrinsic function call and evaluates it with its paths read from any input. A call
// either parses or is refused; its path arguments are paths; evaluation gives the same result every time (with a
// fixed UUID and random source), a JSON value that re-encodes and decodes to itself, or an *intrinsic.Error (or the
// path's own error); and it never changes the input. Independently of the call, States.StringToJson undoes
// States.JsonToString (except that it reads -0 as 0, as AWS does) and States.Base64Decode undoes
// States.Base64Encode on the input.
func FuzzIntrinsic(f *testing.F) {
	const input = `{"a":2,"s":"x,y","arr":[1,1,"b"],"obj":{"k":"v"},"f":2.5,"big":9007199254740993,"u":"caf\u00e9"}`
	for _, c := range []string{
		`States.Format('a\{\}={} \'q\'', $.a)`, `States.Format('{}', $.obj)`, `States.StringToJson(States.JsonToString($.obj))`,
		`States.ArrayLength(States.ArrayUnique($.arr))`, `States.ArrayRange(1, 9, 4)`, `States.ArrayRange(0, 5000, 1)`,
		`States.ArrayPartition(States.Array(1, 2, 3), 2)`, `States.StringSplit($.s, ',')`, `States.MathAdd(2.5, -1.5)`,
		`States.MathAdd($.big, 1)`, `States.Hash('input data', 'SHA-256')`, `States.Hash($.u, 'MD5')`,
		`States.Base64Decode(States.Base64Encode('hi'))`, `States.UUID()`, `States.ArrayContains($.arr, 'b')`,
		`States.ArrayGetItem($.arr, 5)`, `States.MathAdd(1)`, `States.MathRandom(1, 10)`, `States.JsonMerge($.obj, $.obj, false)`,
		`States.Array(true, false, null, -0.5e3, 'x', $$.Execution.Id)`, `States.Nope(1)`, `States.Format(`, `States.Format('{}'`,
		`States.Array($.arr[?(@ == 1)], $..k)`, `States.Base64Decode('!!')`, `States.ArrayPartition($.arr, 9223372036854775807)`,
	} {
		f.Add(c, []byte(input))
	}
	env := func(doc any) intrinsic.Env {
		return intrinsic.Env{
			Resolve: func(p string) (any, error) {
				if strings.HasPrefix(p, "$$") {
					return "context-value", nil
				}
				return jsonpath.Get(doc, p)
			},
			NewUUID:   func() string { return "3f1c2e4a-0000-4000-8000-000000000000" },
			RandomInt: func(lo, hi int64) int64 { return lo },
		}
	}
	f.Fuzz(func(t *testing.T, src string, data []byte) {
		// A call is text inside a JSON definition, so it is UTF-8.
		if len(src) > 1024 || len(data) > 4<<10 || !utf8.ValidString(src) {
			return
		}
		doc, err := jsonvalue.Decode(data)
		if err != nil {
			return
		}
		before := jsonvalue.Marshal(doc)

		// Round trips on the input itself.
		roundTrip := func(call string) {
			c, err := intrinsic.Parse(call)
			if err != nil {
				t.Fatalf("Parse(%s): %v", call, err)
			}
			v, err := c.Eval(env(doc))
			if err != nil {
				return // e.g. Base64Decode of a result that is not valid UTF-8 text
			}
			if want := jsonvalue.Marshal(withoutNegativeZero(doc)); jsonvalue.Marshal(v) != want {
				t.Fatalf("%s on %s gave %s, want %s", call, before, jsonvalue.Marshal(v), want)
			}
		}
		roundTrip(`States.StringToJson(States.JsonToString($))`)
		if s, ok := doc.(string); ok && len(s) <= 1000 {
			roundTrip(`States.Base64Decode(States.Base64Encode($))`)
		}

		c, err := intrinsic.Parse(src)
		if err != nil {
			return
		}
		for _, p := range c.Paths() {
			if !strings.HasPrefix(p, "$") {
				t.Fatalf("%s: path argument %q", src, p)
			}
		}
		v, err := c.Eval(env(doc))
		v2, err2 := c.Eval(env(doc))
		if jsonvalue.Marshal(v) != jsonvalue.Marshal(v2) || (err == nil) != (err2 == nil) {
			t.Fatalf("%s on %s: %s, %v then %s, %v", src, before, jsonvalue.Marshal(v), err, jsonvalue.Marshal(v2), err2)
		}
		if after := jsonvalue.Marshal(doc); after != before {
			t.Fatalf("%s changed the input %s into %s", src, before, after)
		}
		if err != nil {
			var ie *intrinsic.Error
			var se *jsonpath.SyntaxError
			if !errors.As(err, &ie) && !errors.As(err, &se) && !errors.Is(err, jsonpath.ErrNoMatch) {
				t.Fatalf("%s: error %v (%T) is not an *intrinsic.Error", src, err, err)
			}
			return
		}
		text := jsonvalue.Marshal(v)
		back, err := jsonvalue.Decode([]byte(text))
		if err != nil || jsonvalue.Marshal(back) != text {
			t.Fatalf("%s gave %s, which decodes as %s, %v", src, text, jsonvalue.Marshal(back), err)
		}
	})
}

// withoutNegativeZero returns v with every number written -0 written 0, as States.StringToJson reads it.
func withoutNegativeZero(v any) any {
	switch t := v.(type) {
	case json.Number:
		if t == "-0" {
			return json.Number("0")
		}
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = withoutNegativeZero(x)
		}
		return out
	case *jsonvalue.Object:
		out := jsonvalue.NewObject(t.Len())
		for _, k := range t.Keys() {
			x, _ := t.Get(k)
			out.Set(k, withoutNegativeZero(x))
		}
		return out
	}
	return v
}
