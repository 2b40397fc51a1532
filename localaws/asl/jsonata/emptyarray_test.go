package jsonata_test

import (
	"errors"
	"testing"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata"
	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// TestPathToAnEmptyArray: a path whose last step is a field holding [] of a single object is [] (JSONata 2.0, and
// AWS, which records a Map over `$states.input.items` with {"items": []} succeeding with []), while a path that
// matches nothing, or that gathers empty arrays from several objects, stays undefined.
func TestPathToAnEmptyArray(t *testing.T) {
	vars := map[string]any{"ItemsVar": decode(t, `[]`), "holder": decode(t, `{"items":[]}`)}
	env := jsonata.Env{
		Lookup: func(n string) (any, bool) { v, ok := vars[n]; return v, ok },
		States: func() any {
			return decode(t, `{"input":{"items":[],"full":[1],"one":[{"items":[]}],"two":[{"items":[]},{"items":[]}],"deep":{"a":{"items":[]}}}}`)
		},
	}
	tests := []struct {
		name, expr, want string // want "" for undefined
	}{
		{"an input field holding []", `$states.input.items`, `[]`},
		{"a deeper field holding []", `$states.input.deep.a.items`, `[]`},
		{"a variable's field holding []", `$holder.items`, `[]`},
		{"a variable holding []", `$ItemsVar`, `[]`},
		{"the one object of an array", `$states.input.one.items`, `[]`},
		{"a field holding a value", `$states.input.full`, `[1]`},
		{"a field that is missing", `$states.input.missing`, ``},
		{"a field of a missing object", `$states.input.missing.items`, ``},
		{"empty arrays of several objects", `$states.input.two.items`, ``},
		{"a filter that keeps nothing", `$states.input.full[$ > 5]`, ``},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := jsonata.Compile(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.Eval(env)
			if tc.want == "" {
				if !errors.Is(err, jsonata.ErrUndefined) {
					t.Fatalf("%s = %v, %v; want undefined", tc.expr, got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s := jsonvalue.Marshal(got); s != tc.want {
				t.Errorf("%s = %s, want %s", tc.expr, s, tc.want)
			}
		})
	}
}
