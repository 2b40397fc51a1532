package jsonvalue_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// FuzzDecode checks the single-pass decoder every definition, input and output of the engine goes through (ASL
// parsing, JSONPath, intrinsic functions) against encoding/json's reading of the same text (DecodeSlow): the same
// documents are accepted, with the same error, and give the same value; what Marshal writes is valid JSON that
// decodes to itself; and Equal holds between a value and its re-decoded text.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		` {"a": [1, -2.5e+3, 0, true, false, null, {}, []], "b": {"c": "d"}} `, `{"q":"a\"b\\c\/d\u00e9\ud83d\ude00\n"}`,
		`"\ud800x"`, `["héllo", "日本"]`, "\"a\xffb\"", `{"a":1,"b":2,"a":3}`, `[0.5, 1E9, -0, 1e-7]`, `[01]`, `-`,
		`{"a":1,}`, "\"a\tb\"", `{} {}`, `{"a":`, `tru`, `"a\u2028b"`, `"<a&b>"`, `12345678901234567890`,
		`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k0":17}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 16<<10 {
			return
		}
		got, gotErr := jsonvalue.Decode(data)
		want, wantErr := jsonvalue.DecodeSlow(data)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("%q: error %v, encoding/json says %v", data, gotErr, wantErr)
		}
		if (gotErr == nil) != json.Valid(data) {
			t.Fatalf("%q: error %v, json.Valid says %v", data, gotErr, json.Valid(data))
		}
		if gotErr != nil {
			return
		}
		text := jsonvalue.Marshal(got)
		if w := jsonvalue.Marshal(want); text != w {
			t.Fatalf("%q: decoded as %s, encoding/json as %s", data, text, w)
		}
		if !json.Valid([]byte(text)) {
			t.Fatalf("%q: Marshal wrote invalid JSON %q", data, text)
		}
		back, err := jsonvalue.Decode([]byte(text))
		if err != nil || jsonvalue.Marshal(back) != text || !jsonvalue.Equal(back, got) {
			t.Fatalf("%q: %s decodes as %s, %v", data, text, jsonvalue.Marshal(back), err)
		}
	})
}
