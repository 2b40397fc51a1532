package jsonpath

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// filter is a parsed [?(...)] expression: comparisons of @-relative paths with literals, joined by && and ||.
type filter struct {
	or [][]cond // disjunction of conjunctions
}

type cond struct {
	path *Path // relative path, @ replaced by $
	op   string
	lit  any
}

func parseFilter(src string) (*filter, error) {
	f := &filter{}
	for _, disj := range strings.Split(src, "||") {
		var conj []cond
		for _, c := range strings.Split(disj, "&&") {
			cd, err := parseCond(strings.TrimSpace(c))
			if err != nil {
				return nil, err
			}
			conj = append(conj, cd)
		}
		f.or = append(f.or, conj)
	}
	return f, nil
}

var filterOps = []string{"==", "!=", "<=", ">=", "<", ">"}

func parseCond(s string) (cond, error) {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "("), ")")
	for _, op := range filterOps {
		if i := strings.Index(s, op); i > 0 {
			left := strings.TrimSpace(s[:i])
			right := strings.TrimSpace(s[i+len(op):])
			p, err := relPath(left)
			if err != nil {
				return cond{}, err
			}
			lit, err := literal(right)
			if err != nil {
				return cond{}, err
			}
			return cond{path: p, op: op, lit: lit}, nil
		}
	}
	p, err := relPath(s)
	if err != nil {
		return cond{}, err
	}
	return cond{path: p, op: "exists"}, nil
}

func relPath(s string) (*Path, error) {
	if !strings.HasPrefix(s, "@") {
		return nil, fmt.Errorf("filter operand %q must start with @", s)
	}
	return Parse("$" + s[1:])
}

func literal(s string) (any, error) {
	if strings.HasPrefix(s, "'") && strings.HasSuffix(s, "'") && len(s) >= 2 {
		return s[1 : len(s)-1], nil
	}
	var v any
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("filter literal %q: %w", s, err)
	}
	return v, nil
}

func (f *filter) match(v any) bool {
	for _, conj := range f.or {
		all := true
		for _, c := range conj {
			if !c.eval(v) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

func (c cond) eval(v any) bool {
	got, err := c.path.Get(v)
	if err != nil {
		return false
	}
	if c.op == "exists" {
		return true
	}
	if a, ok := toFloat(got); ok {
		if b, ok := toFloat(c.lit); ok {
			return compareOrdered(c.op, a, b)
		}
	}
	if a, ok := got.(string); ok {
		if b, ok := c.lit.(string); ok {
			return compareOrdered(c.op, a, b)
		}
	}
	switch c.op {
	case "==":
		return fmt.Sprint(got) == fmt.Sprint(c.lit)
	case "!=":
		return fmt.Sprint(got) != fmt.Sprint(c.lit)
	}
	return false
}

// compareOrdered applies a filter comparison operator to two ordered values.
func compareOrdered[T cmp.Ordered](op string, a, b T) bool {
	switch op {
	case "==":
		return a == b
	case "!=":
		return a != b
	case "<":
		return a < b
	case "<=":
		return a <= b
	case ">":
		return a > b
	case ">=":
		return a >= b
	}
	return false
}

func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(n), 64)
		return f, err == nil
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

// sortedKeys returns the keys of m in order.
func sortedKeys(m map[string]any) []string {
	return slices.Sorted(maps.Keys(m))
}
