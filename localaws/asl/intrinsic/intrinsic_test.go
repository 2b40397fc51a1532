package intrinsic_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/transferflow/orchestrator/localaws/asl/intrinsic"
)

func TestEval(t *testing.T) {
	input := map[string]any{"a": json.Number("2"), "s": "x,y", "arr": []any{json.Number("1"), json.Number("1"), "b"}, "obj": map[string]any{"k": "v"}}
	env := intrinsic.Env{
		Resolve: func(p string) (any, error) {
			switch p {
			case "$.a":
				return input["a"], nil
			case "$.s":
				return input["s"], nil
			case "$.arr":
				return input["arr"], nil
			case "$.obj":
				return input["obj"], nil
			case "$AnswerTemplate", "$.tmpl":
				return `It's {}!`, nil
			case "$.escaped":
				return `a\{}b`, nil
			}
			return nil, errors.New("no such path " + p)
		},
		NewUUID:   func() string { return "uuid-1" },
		RandomInt: func(lo, hi int64) int64 { return lo },
	}
	tests := []struct {
		name    string
		expr    string
		want    string
		wantErr bool
	}{
		{name: "format with escapes", expr: `States.Format('a\{\}={} \'q\'', $.a)`, want: `"a{}=2 'q'"`},
		{name: "format of an object is Java-like", expr: `States.Format('{}', $.obj)`, want: `"{k=v}"`},
		{name: "format with a variable's template", expr: `States.Format($AnswerTemplate, 'Pikachu')`, want: `"It's Pikachu!"`},
		{name: "format with a path's template", expr: `States.Format($.tmpl, $.a)`, want: `"It's 2!"`},
		{name: "a template's value is not unescaped", expr: `States.Format($.escaped, 1)`, want: `"a\\1b"`},
		{name: "a template's value must be a string", expr: `States.Format($.a, 1)`, wantErr: true},
		{name: "a template's placeholders must match the arguments", expr: `States.Format($.tmpl)`, wantErr: true},
		{name: "json round trip", expr: `States.StringToJson(States.JsonToString($.obj))`, want: `{"k":"v"}`},
		{name: "array functions", expr: `States.ArrayLength(States.ArrayUnique($.arr))`, want: `2`},
		{name: "array range", expr: `States.ArrayRange(1, 9, 4)`, want: `[1,5,9]`},
		{name: "array partition", expr: `States.ArrayPartition(States.Array(1, 2, 3), 2)`, want: `[[1,2],[3]]`},
		{name: "string split on any delimiter", expr: `States.StringSplit($.s, ',')`, want: `["x","y"]`},
		{name: "math add rounds half up", expr: `States.MathAdd(2.5, -1.5)`, want: `2`},
		{name: "hash", expr: `States.Hash('input data', 'SHA-256')`, want: `"b4a697a057313163aee33cd8d40c66e9f0f177e00cac2de32475ffff6169c3e3"`},
		{name: "base64", expr: `States.Base64Decode(States.Base64Encode('hi'))`, want: `"hi"`},
		{name: "uuid", expr: `States.UUID()`, want: `"uuid-1"`},
		{name: "contains", expr: `States.ArrayContains($.arr, 'b')`, want: `true`},
		{name: "get item out of range", expr: `States.ArrayGetItem($.arr, 5)`, wantErr: true},
		{name: "wrong argument count", expr: `States.MathAdd(1)`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := intrinsic.Parse(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Eval(env)
			if tt.wantErr {
				var ie *intrinsic.Error
				if !errors.As(err, &ie) {
					t.Fatalf("err = %v, want *intrinsic.Error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s := intrinsic.Marshal(got); s != tt.want {
				t.Fatalf("got %s, want %s", s, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, src := range []string{`States.Nope()`, `States.Format('x'`, `Format('x')`, `States.Array(1,)`} {
		if _, err := intrinsic.Parse(src); err == nil {
			t.Errorf("Parse(%q) succeeded", src)
		}
	}
}
