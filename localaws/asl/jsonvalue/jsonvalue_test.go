package jsonvalue_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

func TestDecodeMarshalKeepsOrderAndText(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "key order", in: `{"z":1,"a":{"y":true,"b":null}}`, want: `{"z":1,"a":{"y":true,"b":null}}`},
		{name: "number spelling", in: `[1.0, 1e3, -0, 12345678901234567890]`, want: `[1.0,1e3,-0,12345678901234567890]`},
		{name: "no HTML escaping", in: `"<a&b>"`, want: `"<a&b>"`},
		{name: "control characters", in: `"a\n\t\u0001\b\f"`, want: `"a\n\t\u0001\b\f"`},
		{name: "line separators", in: `"a\u2028b\u2029c"`, want: `"a\u2028b\u2029c"`},
		{name: "invalid UTF-8 becomes U+FFFD", in: "\"a\xffb\"", want: "\"a\ufffdb\""},
		{name: "duplicate keys keep the first position and the last value", in: `{"a":1,"b":2,"a":3}`, want: `{"a":3,"b":2}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := jsonvalue.Decode([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if got := jsonvalue.Marshal(v); got != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a":1} x`, `[1,]`} {
		if _, err := jsonvalue.Decode([]byte(in)); err == nil {
			t.Errorf("Decode(%q) succeeded", in)
		}
	}
}

// TestHashMapOrder uses key sets whose output order AWS recorded in the conformance corpus.
func TestHashMapOrder(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{
			name: "13 keys, table resized to 32",
			in: []string{"context_object", "execution", "execution_id", "execution_input", "execution_name", "execution_rolearn",
				"execution_starttime", "state", "state_enteredtime", "state_name", "statemachine", "statemachine_id", "statemachine_name"},
			want: []string{"execution", "execution_rolearn", "execution_name", "statemachine_id", "execution_id", "execution_input",
				"execution_starttime", "state_name", "state_enteredtime", "statemachine", "state", "context_object", "statemachine_name"},
		},
		{name: "two keys", in: []string{"Iterations", "Values"}, want: []string{"Values", "Iterations"}},
		{name: "merge result", in: []string{"a", "b", "d", "c"}, want: []string{"a", "b", "c", "d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := jsonvalue.HashMapOrder(tt.in); strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestEqualIgnoresKeyOrderAndNumberSpelling(t *testing.T) {
	a, _ := jsonvalue.Decode([]byte(`{"a":1,"b":[1.0,{"c":"x"}]}`))
	b, _ := jsonvalue.Decode([]byte(`{"b":[1,{"c":"x"}],"a":1.00}`))
	c, _ := jsonvalue.Decode([]byte(`{"b":[1,{"c":"y"}],"a":1}`))
	if !jsonvalue.Equal(a, b) {
		t.Fatal("equal values reported different")
	}
	if jsonvalue.Equal(a, c) {
		t.Fatal("different values reported equal")
	}
	// Found by FuzzDecode (testdata/fuzz/FuzzDecode): a number beyond float64's range was not equal to itself.
	huge, _ := jsonvalue.Decode([]byte(`[1E700, 1e-400]`))
	if !jsonvalue.Equal(huge, huge) {
		t.Fatal("a number out of float64's range is not equal to itself")
	}
}

// TestDecodeMatchesEncodingJSON checks the single-pass reader against encoding/json's token reader, which decides
// every value it does not read itself: same values, same text when written back, same errors.
func TestDecodeMatchesEncodingJSON(t *testing.T) {
	tests := []struct {
		name string
		in   string
	}{
		{name: "nested", in: ` {"a": [1, -2.5e+3, 0, true, false, null, {}, []], "b": {"c": "d"}} `},
		{name: "escapes", in: `{"q":"a\"b\\c\/d\u00e9\ud83d\ude00\n"}`},
		{name: "lone surrogate", in: `"\ud800x"`},
		{name: "non-ASCII text", in: `["héllo", "日本"]`},
		{name: "invalid UTF-8", in: "\"a\xffb\""},
		{name: "duplicate keys", in: `{"a":1,"b":2,"a":3}`},
		{name: "number forms", in: `[0.5, 1E9, -0, 1e-7]`},
		{name: "leading zero", in: `[01]`},
		{name: "bare minus", in: `-`},
		{name: "trailing comma", in: `{"a":1,}`},
		{name: "control character", in: "\"a\tb\""},
		{name: "trailing text", in: `{} {}`},
		{name: "truncated", in: `{"a":`},
		{name: "bad literal", in: `tru`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, gotErr := jsonvalue.Decode([]byte(tt.in))
			want, wantErr := jsonvalue.DecodeSlow([]byte(tt.in))
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Fatalf("error %v, want %v", gotErr, wantErr)
			}
			if gotErr == nil && jsonvalue.Marshal(got) != jsonvalue.Marshal(want) {
				t.Fatalf("got %s, want %s", jsonvalue.Marshal(got), jsonvalue.Marshal(want))
			}
		})
	}
}

// TestObjectLargeAndShared covers objects past the size where keys are indexed, and objects sharing a key list.
func TestObjectLargeAndShared(t *testing.T) {
	o := jsonvalue.NewObject(0)
	for i := range 40 {
		o.Set(fmt.Sprintf("k%d", i), i)
	}
	c := o.Clone()
	c.Set("k3", "changed")
	c.Set("extra", true)
	o.Set("late", 1)
	if v, _ := o.Get("k3"); v != 3 {
		t.Fatalf("original k3 = %v after changing the clone", v)
	}
	if _, ok := o.Get("extra"); ok {
		t.Fatal("the original sees a key added to the clone")
	}
	if _, ok := c.Get("late"); ok {
		t.Fatal("the clone sees a key added to the original")
	}
	if v, _ := c.Get("k39"); v != 39 {
		t.Fatalf("clone k39 = %v", v)
	}
	c.Delete("k0")
	if v, ok := c.Get("k1"); !ok || v != 1 || c.Len() != 40 {
		t.Fatalf("after Delete: k1 = %v %v, len %d", v, ok, c.Len())
	}

	keys := []string{"a", "b"}
	x, y := jsonvalue.NewObjectKeys(keys), jsonvalue.NewObjectKeys(keys)
	x.SetAt(0, 1)
	x.Set("c", 3)
	y.Set("b", 2)
	if got := jsonvalue.Marshal(x) + jsonvalue.Marshal(y); got != `{"a":1,"b":null,"c":3}{"a":null,"b":2}` {
		t.Fatalf("got %s", got)
	}
	if strings.Join(keys, ",") != "a,b" {
		t.Fatalf("the shared key list changed: %v", keys)
	}
}
