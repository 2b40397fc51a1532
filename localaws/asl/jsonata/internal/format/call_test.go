package format

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// fakeContext is the evaluation a test calls the functions in: a fixed instant and nothing else.
type fakeContext struct{ now time.Time }

func (c fakeContext) Call(value.Function, []any) (any, error) {
	return nil, fmt.Errorf("no calls in tests")
}
func (c fakeContext) Input() any             { return nil }
func (c fakeContext) Environment(string) any { return nil }
func (c fakeContext) Now() time.Time         { return c.now }

// testNow is the instant of the tests' evaluations: 2018-10-21T13:05:00.000Z.
var testNow = time.UnixMilli(1540127100000).UTC()

// builtins are this package's functions by name.
var builtins = func() map[string]*value.Builtin {
	m := map[string]*value.Builtin{}
	for _, b := range All() {
		m[b.Name] = b
	}
	return m
}()

// call evaluates a call written as JSONata would write it, with literal arguments or nested calls of this
// package's functions: `$formatNumber(12345.6, "#,###.00")`. A bare name (undefined, foo) or () is undefined.
func call(expr string) (any, error) {
	r := &callReader{s: expr}
	v, err := r.value()
	if err != nil {
		return nil, err
	}
	r.space()
	if r.i != len(r.s) {
		return nil, fmt.Errorf("test expression %q: unread text at %d", expr, r.i)
	}
	return v, nil
}

type callReader struct {
	s string
	i int
}

func (r *callReader) space() {
	for r.i < len(r.s) && strings.ContainsRune(" \t\n", rune(r.s[r.i])) {
		r.i++
	}
}

func (r *callReader) value() (any, error) {
	r.space()
	if r.i >= len(r.s) {
		return nil, fmt.Errorf("test expression %q ends early", r.s)
	}
	switch c := r.s[r.i]; {
	case c == '$':
		j := r.i + 1
		for j < len(r.s) && r.s[j] != '(' {
			j++
		}
		name := r.s[r.i+1 : j]
		r.i = j + 1
		var args []any
		for {
			r.space()
			if r.s[r.i] == ')' {
				r.i++
				break
			}
			v, err := r.value()
			if err != nil {
				return nil, err
			}
			args = append(args, v)
			r.space()
			if r.s[r.i] == ',' {
				r.i++
			}
		}
		b, ok := builtins[name]
		if !ok {
			return nil, fmt.Errorf("no function %s", name)
		}
		return b.Impl(fakeContext{now: testNow}, args)
	case c == '\'' || c == '"':
		j := r.i + 1
		var b strings.Builder
		for r.s[j] != c {
			if r.s[j] == '\\' {
				j++
				switch r.s[j] {
				case 'n':
					b.WriteByte('\n')
				default:
					b.WriteByte(r.s[j])
				}
			} else {
				b.WriteByte(r.s[j])
			}
			j++
		}
		r.i = j + 1
		return b.String(), nil
	case c == '(':
		r.i++
		r.space()
		r.i++ // )
		return nil, nil
	case c == '{':
		r.i++
		o := value.NewObject(4)
		for {
			r.space()
			if r.s[r.i] == '}' {
				r.i++
				return o, nil
			}
			k, err := r.value()
			if err != nil {
				return nil, err
			}
			r.space()
			r.i++ // :
			v, err := r.value()
			if err != nil {
				return nil, err
			}
			o.Set(k.(string), v)
			r.space()
			if r.s[r.i] == ',' {
				r.i++
			}
		}
	case c == '-' || c >= '0' && c <= '9':
		j := r.i + 1
		for j < len(r.s) && strings.ContainsRune("0123456789.eE+-", rune(r.s[j])) {
			j++
		}
		f, err := strconv.ParseFloat(r.s[r.i:j], 64)
		r.i = j
		return f, err
	default:
		j := r.i
		for j < len(r.s) && (r.s[j] >= 'a' && r.s[j] <= 'z' || r.s[j] >= 'A' && r.s[j] <= 'Z') {
			j++
		}
		if j == r.i {
			return nil, fmt.Errorf("test expression %q: unexpected %q at %d", r.s, r.s[j], j)
		}
		r.i = j
		return nil, nil
	}
}

// callCase is a call and its expected result: JSON text ("" for undefined), or an error code or message.
type callCase struct {
	name, expr, want string
}

// checkCalls runs the cases: want is the result as JSON ("" undefined), "!CODE" a *value.Error's code, "!!text"
// the exact text of an error.
func checkCalls(t *testing.T, tests []callCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := call(tc.expr)
			if code, ok := strings.CutPrefix(tc.want, "!"); ok {
				if text, ok := strings.CutPrefix(code, "!"); ok {
					if err == nil || err.Error() != text {
						t.Fatalf("%s = %v, %v; want the error %q", tc.expr, got, err, text)
					}
					return
				}
				je, ok := err.(*value.Error)
				if !ok || je.Code != code {
					t.Fatalf("%s = %v, %v; want the error %s", tc.expr, got, err, code)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.expr, err)
			}
			if tc.want == "" {
				if got != nil {
					t.Fatalf("%s = %#v, want undefined", tc.expr, got)
				}
				return
			}
			var want any
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatalf("bad want %s: %v", tc.want, err)
			}
			if f, ok := got.(float64); ok && !math.IsNaN(f) {
				if w, ok := want.(float64); ok && w == f {
					return
				}
			}
			if got != want {
				t.Errorf("%s = %#v, want %#v", tc.expr, got, want)
			}
		})
	}
}
