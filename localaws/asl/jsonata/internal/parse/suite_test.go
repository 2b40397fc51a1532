package parse

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// suiteCase is the part of a case of JSONata's test suite that parsing concerns.
type suiteCase struct {
	Expr     *string `json:"expr"`
	ExprFile string  `json:"expr-file"`
	Code     string  `json:"code"`
	Token    *string `json:"token"`
}

// suiteDir is JSONata 2.0.6's test suite, kept in package jsonata's test data.
const suiteDir = "../../testdata/jsonata-suite"

// loadSuite reads every case of the suite's groups: name (group/file[#index]) to case, with the expression read.
func loadSuite(t *testing.T) map[string]suiteCase {
	dir := suiteDir
	files, err := filepath.Glob(filepath.Join(dir, "groups", "*", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test cases under %s/groups: %v", dir, err)
	}
	cases := map[string]suiteCase{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		group := filepath.Base(filepath.Dir(f))
		name := group + "/" + strings.TrimSuffix(filepath.Base(f), ".json")
		var list []suiteCase
		if strings.HasPrefix(strings.TrimSpace(string(data)), "[") {
			if err := json.Unmarshal(data, &list); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
		} else {
			var c suiteCase
			if err := json.Unmarshal(data, &c); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			list = []suiteCase{c}
		}
		for i, c := range list {
			n := name
			if len(list) > 1 {
				n += "#" + itoa(i)
			}
			if c.Expr == nil {
				if c.ExprFile == "" {
					continue
				}
				b, err := os.ReadFile(filepath.Join(filepath.Dir(f), c.ExprFile))
				if err != nil {
					t.Fatal(err)
				}
				s := string(b)
				c.Expr = &s
			}
			cases[n] = c
		}
	}
	return cases
}

func itoa(i int) string { return value.NumberText(float64(i)) }

// TestSuite parses every expression of JSONata's test suite: a case whose code is a syntax error's (S0…) must fail
// to parse with that code (and token, when the case gives one); every other case must parse.
func TestSuite(t *testing.T) {
	cases := loadSuite(t)
	names := make([]string, 0, len(cases))
	for n := range cases {
		names = append(names, n)
	}
	sort.Strings(names)
	var parsed, refused, failed int
	for _, n := range names {
		c := cases[n]
		_, err := Parse(*c.Expr)
		if strings.HasPrefix(c.Code, "S0") {
			var e *value.Error
			switch {
			case err == nil:
				t.Errorf("%s: %q parsed; want error %s", n, *c.Expr, c.Code)
				failed++
			case !errors.As(err, &e) || e.Code != c.Code:
				t.Errorf("%s: %q: error %v; want code %s", n, *c.Expr, err, c.Code)
				failed++
			case c.Token != nil && e.Token != *c.Token:
				t.Errorf("%s: %q: error %v with token %q; want token %q", n, *c.Expr, err, e.Token, *c.Token)
				failed++
			default:
				refused++
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %q: %v", n, *c.Expr, err)
			failed++
			continue
		}
		parsed++
	}
	t.Logf("%d cases: %d parsed, %d refused with the expected syntax error, %d failed", len(names), parsed, refused, failed)
}
