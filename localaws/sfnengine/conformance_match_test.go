package sfnengine_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestAssignedVariablesComparedAsJSON checks that the conformance matcher compares the values of an event's
// assignedVariables as JSON values, as it compares the other payloads: equal values written differently match,
// different values, a missing or extra variable, and a text that is not JSON do not, and placeholders still apply.
func TestAssignedVariablesComparedAsJSON(t *testing.T) {
	event := func(assigned string) map[string]any {
		return mustDecode([]byte(`{"id":3,"previousEventId":2,"type":"PassStateExited","stateExitedEventDetails":` +
			`{"name":"P","output":"{}","assignedVariables":` + assigned + `,"assignedVariablesDetails":{"truncated":false}}}`)).(map[string]any)
	}
	// A recording that parsed an array payload (LocalStack parsed some) is compared with the engine's text as JSON.
	m := &matcher{c: &conformanceCase{}, volatile: map[string]bool{}}
	w := event(`{}`)
	w["stateExitedEventDetails"].(map[string]any)["output"] = []any{json.Number("1"), "a"}
	for got, match := range map[string]bool{`[1, "a"]`: true, `[1,"b"]`: false, `[1,"a"] x`: false} {
		g := event(`{}`)
		g["stateExitedEventDetails"].(map[string]any)["output"] = got
		if d := m.compareEvent("/history/0", w, g, true); (d == "") != match {
			t.Errorf("output [1,\"a\"] recorded parsed, engine's %s: difference %q, want a match: %v", got, d, match)
		}
	}
	tests := []struct {
		name      string
		want, got string // the assignedVariables objects, as recorded and as the engine wrote them
		volatile  []string
		placehold []string
		match     bool
	}{
		{name: "spacing of an array", want: `{"xs":"[1, 2, 3]"}`, got: `{"xs":"[1,2,3]"}`, match: true},
		{name: "a number written two ways", want: `{"n":"1.0"}`, got: `{"n":"1"}`, match: true},
		{name: "an exponent", want: `{"n":"0.1"}`, got: `{"n":"1e-1"}`, match: true},
		{name: "key order of an object held as text", want: `{"o":"[{\"a\":1,\"b\":2}]"}`, got: `{"o":"[{\"b\":2,\"a\":1}]"}`, match: true},
		{name: "an object the recording parsed", want: `{"o":{"a":[1,2]}}`, got: `{"o":"{\"a\": [1, 2]}"}`, match: true},
		{name: "the same text", want: `{"s":"\"x\""}`, got: `{"s":"\"x\""}`, match: true},
		{name: "different numbers", want: `{"n":"1"}`, got: `{"n":"2"}`},
		{name: "different arrays", want: `{"xs":"[1,2]"}`, got: `{"xs":"[2,1]"}`},
		{name: "a string and a number", want: `{"n":"\"1\""}`, got: `{"n":"1"}`},
		{name: "a text that is not JSON", want: `{"s":"\"x\""}`, got: `{"s":"x"}`},
		{name: "trailing text", want: `{"n":"1"}`, got: `{"n":"1 2"}`},
		{name: "a missing variable", want: `{"a":"1","b":"2"}`, got: `{"a":"1"}`},
		{name: "an extra variable", want: `{"a":"1"}`, got: `{"a":"1","b":"2"}`},
		{name: "a placeholder in a volatile variable", want: `{"arn":"\"arn:<partition>:states:x\""}`, got: `{"arn":"\"arn:aws:states:x\""}`,
			volatile: []string{"/history/0/stateExitedEventDetails/assignedVariables/arn"}, placehold: []string{"<partition>"}, match: true},
		{name: "a placeholder outside volatile pointers", want: `{"arn":"\"arn:<partition>:states:x\""}`, got: `{"arn":"\"arn:aws:states:x\""}`,
			placehold: []string{"<partition>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &matcher{c: &conformanceCase{Placeholders: tt.placehold}, volatile: map[string]bool{}}
			for _, v := range tt.volatile {
				m.volatile[v] = true
			}
			want, got := event(tt.want), event(tt.got)
			d := m.compareEvent("/history/0", want, got, true)
			if (d == "") != tt.match {
				t.Errorf("compareEvent(%s, %s) = %q, want a match: %v", tt.want, tt.got, d, tt.match)
			}
			if tt.match {
				return
			}
			if !strings.Contains(d, "assignedVariables") {
				t.Errorf("difference %q does not name assignedVariables", d)
			}
			// The events compared are left as they were: a window of the history compares one event several times.
			if b, _ := json.Marshal(got["stateExitedEventDetails"].(map[string]any)["assignedVariables"]); string(b) != string(mustMarshal(mustDecode([]byte(tt.got)))) {
				t.Errorf("compareEvent changed the engine's event: %s", b)
			}
		})
	}
}
