package jsonpath_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/transferflow/orchestrator/localaws/asl/jsonpath"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func enc(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

const doc = `{"a":{"b":[1,2,3],"c":"x"},"items":[{"v":1,"k":"p"},{"v":2,"k":"q"},{"v":3}],"Test\\\"\"Name\"":"esc","n":null}`

func TestGet(t *testing.T) {
	tests := []struct {
		name    string
		path    string
		want    string
		wantErr bool
	}{
		{name: "root", path: "$", want: enc(decodeStatic(doc))},
		{name: "field", path: "$.a.c", want: `"x"`},
		{name: "index", path: "$.a.b[1]", want: `2`},
		{name: "negative index", path: "$.a.b[-1]", want: `3`},
		{name: "bracket name with escapes kept literally", path: `$['Test\""Name"']`, want: `"esc"`},
		{name: "null value is found", path: "$.n", want: `null`},
		{name: "wildcard yields a list", path: "$.items[*].v", want: `[1,2,3]`},
		{name: "wildcard on missing data yields an empty list", path: "$.nothing[*].v", want: `[]`},
		{name: "slice", path: "$.a.b[0:2]", want: `[1,2]`},
		{name: "open slice", path: "$.a.b[1:]", want: `[2,3]`},
		{name: "slice past the end", path: "$.a.b[1:5]", want: `[2,3]`},
		{name: "slice with a step past the largest int", path: "$.a.b[1::9223372036854775807]", want: `[2]`},
		{name: "slice with a negative step past the smallest int", path: "$.a.b[::-9223372036854775808]", want: `[3]`},
		{name: "union of indexes", path: "$.a.b[0,2]", want: `[1,3]`},
		{name: "deep scan", path: "$..v", want: `[1,2,3]`},
		{name: "filter", path: "$.items[?(@.v > 1)].k", want: `["q"]`},
		{name: "filter on presence", path: "$.items[?(@.k)].v", want: `[1,2]`},
		{name: "missing field of a definite path", path: "$.a.zz", wantErr: true},
		{name: "index out of range", path: "$.a.b[9]", wantErr: true},
	}
	root := decode(t, doc)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := jsonpath.Get(root, tt.path)
			if tt.wantErr {
				if !errors.Is(err, jsonpath.ErrNoMatch) {
					t.Fatalf("err = %v, want ErrNoMatch", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if enc(got) != tt.want {
				t.Fatalf("got %s, want %s", enc(got), tt.want)
			}
		})
	}
}

func decodeStatic(s string) any {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	_ = d.Decode(&v)
	return v
}

func TestSetLeavesTheInputUntouched(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		path    string
		value   string
		want    string
		wantErr bool
	}{
		{name: "root replaces", in: `{"a":1}`, path: "$", value: `"x"`, want: `"x"`},
		{name: "new field", in: `{"a":1}`, path: "$.b", value: `2`, want: `{"a":1,"b":2}`},
		{name: "nested objects are created", in: `{"a":1}`, path: "$.b.c.d", value: `true`, want: `{"a":1,"b":{"c":{"d":true}}}`},
		{name: "array element", in: `{"a":[1,2]}`, path: "$.a[1]", value: `9`, want: `{"a":[1,9]}`},
		{name: "write through a string fails", in: `{"a":"s"}`, path: "$.a.b", value: `1`, wantErr: true},
		{name: "index out of range fails", in: `{"a":[]}`, path: "$.a[0]", value: `1`, wantErr: true},
		{name: "not a reference path", in: `{}`, path: "$.a[*]", value: `1`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := decode(t, tt.in)
			p, err := jsonpath.Parse(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Set(in, decode(t, tt.value))
			if tt.wantErr {
				if err == nil {
					t.Fatalf("no error, got %s", enc(got))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if enc(got) != tt.want {
				t.Fatalf("got %s, want %s", enc(got), tt.want)
			}
			if enc(in) != enc(decode(t, tt.in)) {
				t.Fatalf("input was modified: %s", enc(in))
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, p := range []string{"a.b", "$.", "$[", "$['x'", "$[1:2:0]", "$[abc]"} {
		var se *jsonpath.SyntaxError
		if _, err := jsonpath.Parse(p); !errors.As(err, &se) {
			t.Errorf("Parse(%q) = %v, want a *SyntaxError", p, err)
		}
	}
}
