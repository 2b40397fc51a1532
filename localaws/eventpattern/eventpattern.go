// Package eventpattern matches events against Amazon EventBridge event patterns, so the local stack can deliver an
// event to exactly the functions whose EventBridgeRule in template.yaml would receive it on AWS.
//
// Supported: nested objects; arrays of exact values (strings, numbers, booleans, null), matched against a scalar or
// against any element of an array field; and the content filters {"prefix": s}, {"suffix": s},
// {"anything-but": v | [v…] | {"prefix": s}}, {"exists": bool} and {"numeric": [op, n, …]}. Other filters are refused
// by Compile rather than silently never matching.
package eventpattern

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// Pattern is a compiled event pattern.
type Pattern struct{ root map[string]any }

// Compile checks a pattern (as decoded JSON) and returns it ready to match.
func Compile(p map[string]any) (*Pattern, error) {
	if err := check("", p); err != nil {
		return nil, err
	}
	return &Pattern{root: p}, nil
}

func check(path string, p map[string]any) error {
	if len(p) == 0 {
		return fmt.Errorf("eventpattern: %s: empty object", orRoot(path))
	}
	for k, v := range p {
		at := strings.TrimPrefix(path+"."+k, ".")
		switch v := v.(type) {
		case map[string]any:
			if err := check(at, v); err != nil {
				return err
			}
		case []any:
			if len(v) == 0 {
				return fmt.Errorf("eventpattern: %s: empty array matches nothing", at)
			}
			for _, m := range v {
				switch m := m.(type) {
				case map[string]any:
					if err := checkFilter(at, m); err != nil {
						return err
					}
				case []any:
					return fmt.Errorf("eventpattern: %s: a match value must be a string, number, boolean, null or filter, not an array", at)
				}
			}
		default:
			return fmt.Errorf("eventpattern: %s: values must be in an array", at)
		}
	}
	return nil
}

func checkFilter(at string, f map[string]any) error {
	if len(f) != 1 {
		return fmt.Errorf("eventpattern: %s: a filter has exactly one key", at)
	}
	for k, v := range f {
		switch k {
		case "prefix", "suffix":
			if _, ok := v.(string); !ok {
				return fmt.Errorf("eventpattern: %s: %s takes a string", at, k)
			}
		case "exists":
			if _, ok := v.(bool); !ok {
				return fmt.Errorf("eventpattern: %s: exists takes a boolean", at)
			}
		case "anything-but":
			switch a := v.(type) {
			case map[string]any:
				if _, ok := a["prefix"].(string); !ok || len(a) != 1 {
					return fmt.Errorf("eventpattern: %s: anything-but takes a value, an array or {\"prefix\": s}", at)
				}
			case []any:
				for _, x := range a {
					switch x.(type) {
					case map[string]any, []any:
						return fmt.Errorf("eventpattern: %s: anything-but takes strings, numbers, booleans or null", at)
					}
				}
			}
		case "numeric":
			arr, ok := v.([]any)
			if !ok || len(arr) == 0 || len(arr)%2 != 0 {
				return fmt.Errorf("eventpattern: %s: numeric takes [op, number, …]", at)
			}
			for i := 0; i < len(arr); i += 2 {
				op, _ := arr[i].(string)
				if _, ok := arr[i+1].(float64); !ok || !validOp[op] {
					return fmt.Errorf("eventpattern: %s: numeric takes [op, number, …]", at)
				}
			}
		default:
			return fmt.Errorf("eventpattern: %s: filter %q is not supported locally", at, k)
		}
	}
	return nil
}

var validOp = map[string]bool{"=": true, "<": true, "<=": true, ">": true, ">=": true}

func orRoot(p string) string {
	if p == "" {
		return "pattern"
	}
	return p
}

// Paths returns the dotted paths of the event fields the pattern tests (e.g. "detail.status"), sorted: a partial
// event that has every one of them as the full event has them matches exactly when the full event does.
func (p *Pattern) Paths() []string {
	var out []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			if sub, ok := v.(map[string]any); ok {
				walk(prefix+k+".", sub)
				continue
			}
			out = append(out, prefix+k)
		}
	}
	walk("", p.root)
	sort.Strings(out)
	return out
}

// MatchJSON reports whether the event (JSON text) matches.
func (p *Pattern) MatchJSON(event []byte) (bool, error) {
	var ev map[string]any
	if err := json.Unmarshal(event, &ev); err != nil {
		return false, fmt.Errorf("eventpattern: event: %w", err)
	}
	return p.Match(ev), nil
}

// Match reports whether the decoded event matches.
func (p *Pattern) Match(event map[string]any) bool { return matchObject(p.root, event) }

func matchObject(p map[string]any, ev map[string]any) bool {
	keys := slices.Sorted(maps.Keys(p))
	for _, k := range keys {
		v, present := ev[k]
		switch want := p[k].(type) {
		case map[string]any:
			sub, ok := v.(map[string]any)
			if !ok || !matchObject(want, sub) {
				return false
			}
		case []any:
			if !matchField(want, v, present) {
				return false
			}
		}
	}
	return true
}

// matchField: the field matches when any of the pattern's values matches the field's value (or, for an array
// field, any of its elements).
func matchField(want []any, v any, present bool) bool {
	values := []any{v}
	if arr, ok := v.([]any); ok {
		values = arr
	}
	for _, w := range want {
		if f, ok := w.(map[string]any); ok {
			if e, ok := f["exists"]; ok {
				if e.(bool) == present {
					return true
				}
				continue
			}
			if !present {
				continue
			}
		}
		for _, val := range values {
			if present && matchValue(w, val) {
				return true
			}
		}
	}
	return false
}

func matchValue(w, v any) bool {
	f, ok := w.(map[string]any)
	if !ok {
		return w == v
	}
	for k, arg := range f {
		s, isString := v.(string)
		switch k {
		case "prefix":
			return isString && strings.HasPrefix(s, arg.(string))
		case "suffix":
			return isString && strings.HasSuffix(s, arg.(string))
		case "anything-but":
			switch a := arg.(type) {
			case []any:
				for _, x := range a {
					if x == v {
						return false
					}
				}
				return true
			case map[string]any:
				return isString && !strings.HasPrefix(s, a["prefix"].(string))
			default:
				return a != v
			}
		case "numeric":
			n, ok := v.(float64)
			if !ok {
				return false
			}
			arr := arg.([]any)
			for i := 0; i < len(arr); i += 2 {
				if !compare(arr[i].(string), n, arr[i+1].(float64)) {
					return false
				}
			}
			return true
		}
	}
	return false
}

func compare(op string, a, b float64) bool {
	switch op {
	case "=":
		return a == b
	case "<":
		return a < b
	case "<=":
		return a <= b
	case ">":
		return a > b
	default:
		return a >= b
	}
}
