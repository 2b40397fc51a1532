package jsonvalue_test

import (
	"strings"
	"testing"

	"github.com/transferflow/orchestrator/internal/jsonvalue"
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
}
