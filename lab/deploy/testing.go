package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Tester is the part of testing.TB the helpers use.
type Tester interface {
	Helper()
	Skipf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// transformTimeout bounds one transform (a fraction of a second once the translator has started, about a second
// with its start).
const transformTimeout = 2 * time.Minute

// transformed caches the translator's output by absolute template path and parameter values for the life of the
// test binary: the files do not change while tests run, and each transform costs the translator a few tenths of a
// second. Each caller decodes its own copy, so tests cannot change one another's Template. Its lock is also the
// translator's (worker): one transform at a time.
var transformed struct {
	sync.Mutex
	out map[string][]byte
}

// TransformT returns the repository's template.yaml transformed into the CloudFormation `sam deploy` would create. Without the translator the
// test is skipped with a message naming `make test`, except under CI=true, where that is a failure.
func TransformT(t Tester) *Template {
	t.Helper()
	path, err := ProjectTemplate()
	if err != nil {
		t.Fatalf("%v", err)
	}
	return TransformFileT(t, path)
}

// TransformFileT returns the SAM template at path (relative to the working directory, such as a testdata fixture)
// transformed as TransformT transforms template.yaml, skipping or failing the test as TransformT does when the translator is missing.
func TransformFileT(t Tester, path string) *Template {
	t.Helper()
	return transformT(t, path, nil)
}

// TransformWithParametersT returns the repository's template.yaml transformed as TransformT does, with parameter
// values as CloudFormation hands them to the transform on deploy (a CommaDelimitedList as a list of strings); the
// others keep their defaults.
func TransformWithParametersT(t Tester, params map[string]any) *Template {
	t.Helper()
	path, err := ProjectTemplate()
	if err != nil {
		t.Fatalf("%v", err)
	}
	if params == nil {
		params = map[string]any{}
	}
	return transformT(t, path, params)
}

func transformT(t Tester, path string, params map[string]any) *Template {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatalf("%v", err)
	}
	key := abs
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			t.Fatalf("%v", err)
		}
		key += " " + string(b)
	}
	transformed.Lock()
	defer transformed.Unlock()
	out, ok := transformed.out[key]
	if !ok {
		ctx, cancel := context.WithTimeout(context.Background(), transformTimeout)
		defer cancel()
		out, err = transformJSON(ctx, abs, params)
		if errors.Is(err, ErrNoTranslator) {
			if os.Getenv("CI") != "" {
				t.Fatalf("%v", err)
			}
			t.Skipf("template transform test skipped: %v", err)
		}
		if err != nil {
			t.Fatalf("%v", err)
		}
		if transformed.out == nil {
			transformed.out = map[string][]byte{}
		}
		transformed.out[key] = out
	}
	tmpl, err := decode(path, out)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return tmpl
}
