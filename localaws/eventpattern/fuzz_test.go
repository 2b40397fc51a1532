package eventpattern

import (
	"encoding/json"
	"testing"
)

// FuzzMatch compiles any pattern and matches it against any event. Compile either refuses a pattern or returns one
// that matches every event without panicking, the same way every time; the answer does not change when the event
// gains a field the pattern does not name; and for patterns of exact values only (nested objects of arrays of
// strings, numbers, booleans and null) it agrees with a direct reading of EventBridge's rule: every named field is
// present and equal to one of its values (to one element of it, for an array field).
func FuzzMatch(f *testing.F) {
	patterns := []string{
		`{"source":["aws.states"],"detail-type":["Step Functions Execution Status Change"]}`,
		`{"detail":{"status":["FAILED","TIMED_OUT","ABORTED"]}}`,
		`{"source":["aws.states"],"detail":{"status":["SUCCEEDED"]}}`,
		`{"resources":[{"prefix":"arn:aws:states:us-east-1:000000000000:execution:M:"}]}`,
		`{"detail":{"error":[{"exists":false}]}}`, `{"detail":{"stopDate":[{"exists":true}]}}`, `{"detail":{"stopDate":[null]}}`,
		`{"detail":{"status":[{"anything-but":["RUNNING","SUCCEEDED"]}]}}`, `{"detail":{"status":[{"anything-but":"TIMED_OUT"}]}}`,
		`{"detail":{"status":[{"anything-but":{"prefix":"TIMED"}}]}}`, `{"detail":{"name":[{"suffix":"1"}]}}`,
		`{"detail":{"startDate":[{"numeric":[">",0,"<=",1700000000000]}]}}`, `{"source":{"x":["y"]}}`,
		`{"detail":{"redriveCount":[0, true, false]}}`, `{}`, `{"a":[]}`, `{"a":"b"}`, `{"a":[{"wildcard":"*"}]}`,
	}
	for _, p := range patterns {
		f.Add([]byte(p), []byte(statusChange))
	}
	f.Add([]byte(`{"a":[1]}`), []byte(`{"a":[1,[1]]}`))
	f.Fuzz(func(t *testing.T, patternJSON, event []byte) {
		if len(patternJSON) > 4<<10 || len(event) > 8<<10 {
			return
		}
		var raw map[string]any
		if json.Unmarshal(patternJSON, &raw) != nil {
			return
		}
		p, err := Compile(raw)
		if err != nil {
			return
		}
		var ev map[string]any
		if json.Unmarshal(event, &ev) != nil {
			return
		}
		got := p.Match(ev)
		if again, err := p.MatchJSON(event); err != nil || again != got {
			t.Fatalf("pattern %s on %s: %v, then %v, %v", patternJSON, event, got, again, err)
		}
		if exactOnly(raw) {
			if want := reference(raw, ev); got != want {
				t.Fatalf("pattern %s on %s: %v, EventBridge's rule says %v", patternJSON, event, got, want)
			}
		}
		extra := make(map[string]any, len(ev)+1)
		for k, v := range ev {
			extra[k] = v
		}
		name := "\x00not-in-the-pattern"
		if _, named := raw[name]; !named {
			extra[name] = []any{"x", map[string]any{"y": nil}}
			if p.Match(extra) != got {
				t.Fatalf("pattern %s on %s: a field it does not name changed the answer", patternJSON, event)
			}
		}
	})
}

// exactOnly reports whether a pattern has only nested objects and arrays of scalars.
func exactOnly(p map[string]any) bool {
	for _, v := range p {
		switch v := v.(type) {
		case map[string]any:
			if !exactOnly(v) {
				return false
			}
		case []any:
			for _, x := range v {
				if !isScalar(x) {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

func isScalar(v any) bool {
	switch v.(type) {
	case string, float64, bool, nil:
		return true
	}
	return false
}

// reference is EventBridge's rule for exact-value patterns, read directly.
func reference(p, ev map[string]any) bool {
	for k, want := range p {
		v, present := ev[k]
		switch want := want.(type) {
		case map[string]any:
			sub, ok := v.(map[string]any)
			if !ok || !reference(want, sub) {
				return false
			}
		case []any:
			if !present {
				return false
			}
			values := []any{v}
			if arr, ok := v.([]any); ok {
				values = arr
			}
			found := false
			for _, w := range want {
				for _, x := range values {
					if isScalar(x) && x == w {
						found = true
					}
				}
			}
			if !found {
				return false
			}
		}
	}
	return true
}
