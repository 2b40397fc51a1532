package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/lab/docexample"
)

// testedDocs are the documents whose examples TestDocs runs (the convention is in docs/README.md), each with the
// number of run blocks it must keep at least, so that a document cannot silently stop being tested. Raise a minimum
// when you add examples.
var testedDocs = []struct {
	path   string
	minRun int
}{
	{"docs/api.md", 12},
	{"docs/transferctl.md", 24},
}

// docSessionTimeout bounds one document's session.
const docSessionTimeout = 4 * time.Minute

// TestDocsAreTested checks the tested documents without a stack: every example is well formed (no shell block that
// would escape the test, no expectation that checks nothing, no typo in an info string) and each document keeps
// its minimum of run blocks.
func TestDocsAreTested(t *testing.T) {
	t.Parallel()
	for _, d := range testedDocs {
		t.Run(filepath.Base(d.path), func(t *testing.T) {
			doc := parseDoc(t, d.path)
			if n := len(doc.Run()); n < d.minRun {
				t.Errorf("%s has %d run blocks (sh), want at least %d: an example was removed or turned into sh skip-test", d.path, n, d.minRun)
			}
			if len(doc.Run())+len(doc.Skipped()) != len(doc.Blocks) {
				t.Errorf("%s: %d blocks, %d run and %d skipped", d.path, len(doc.Blocks), len(doc.Run()), len(doc.Skipped()))
			}
		})
	}
}

// TestDocs runs the examples of each tested document, in order, in one bash session against a fresh local stack
// (the default seed, events/local-accounts.json), and checks each block's output against its expect block. Each
// block is a subtest named by its line (TestDocs/api.md/line_42); a failure prints the block, its output and the
// expectation. Run it alone with go test ./lab/e2e -run TestDocs.
func TestDocs(t *testing.T) {
	t.Parallel()
	tools := docTools(t)
	for _, d := range testedDocs {
		t.Run(filepath.Base(d.path), func(t *testing.T) {
			t.Parallel() // each has its own stack
			doc := parseDoc(t, d.path)
			runDoc(t, doc, tools)
		})
	}
}

func TestDocRewriter(t *testing.T) {
	t.Parallel()
	rewrite := docRewriter(map[string]string{"3000": "http://127.0.0.1:41000", "8083": "http://127.0.0.1:41001"})
	tests := []struct{ in, want string }{
		{"curl http://127.0.0.1:3000/transfers", "curl http://127.0.0.1:41000/transfers"},
		{"--endpoint http://localhost:3000/Prod", "--endpoint http://127.0.0.1:41000/Prod"},
		{"aws --endpoint-url http://127.0.0.1:8083 stepfunctions", "aws --endpoint-url http://127.0.0.1:41001 stepfunctions"},
		{"curl http://127.0.0.1:8084/events", "curl " + closedAddress + "/events"},
		{"http://127.0.0.1:30001 http://127.0.0.1:3000x https://127.0.0.1:3000", "http://127.0.0.1:30001 http://127.0.0.1:3000x https://127.0.0.1:3000"},
	}
	for _, tc := range tests {
		if got := rewrite(tc.in); got != tc.want {
			t.Errorf("rewrite(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func parseDoc(t *testing.T, path string) *docexample.Document {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := docexample.Parse(path, src)
	if err != nil {
		t.Fatalf("examples of %s:\n%v", path, err)
	}
	return doc
}

// docTools makes the directory put first on the sessions' PATH: the freshly built transferctl, and curl, jq and
// python3 as found on the caller's PATH (python3 resolved to the real interpreter, so that a pyenv shim works
// with the session's own HOME).
func docTools(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	link := func(name, target string) {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	link("transferctl", transferctlPath(t))
	for _, name := range []string{"curl", "jq", "python3"} {
		p, err := exec.LookPath(name)
		if err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("the documentation examples need %s on PATH: %v", name, err)
			}
			t.Skipf("the documentation examples need %s on PATH (%v); install it to run them", name, err)
		}
		if name == "python3" {
			out, err := exec.Command(p, "-c", "import sys; print(sys.executable)").Output()
			if err != nil || strings.TrimSpace(string(out)) == "" {
				t.Fatalf("python3 (%s) does not run: %v", p, err)
			}
			p = strings.TrimSpace(string(out))
		}
		link(name, p)
	}
	return dir
}

// stackFlags reports whether the stack's binary accepts a flag (its usage lists it): the examples of the local
// EventBridge need --events-addr, which a stack without it would refuse.
var stackUsage = sync.OnceValue(func() string {
	out, _ := exec.Command(binary, "--help").CombinedOutput() // usage, whatever the exit status
	return string(out)
})

func stackAccepts(flag string) bool {
	return strings.Contains(stackUsage(), "-"+flag+" ")
}

// defaultAddress matches the addresses the documents are written against (make run's), which the test rewrites to
// the stack's.
var defaultAddress = regexp.MustCompile(`http://(?:127\.0\.0\.1|localhost):(3000|8083|8084)\b`)

// closedAddress stands in for a service the stack does not serve, so that an example never reaches a stack the
// developer may be running on the default ports.
const closedAddress = "http://127.0.0.1:9"

func runDoc(t *testing.T, doc *docexample.Document, tools string) {
	args := []string{"--seed", filepath.Join(root, "events", "local-accounts.json")}
	if stackAccepts("events-addr") {
		args = append(args, "--events-addr", "127.0.0.1:0")
	}
	s := startStack(t, args...)
	rewrite := docRewriter(map[string]string{"3000": s.API, "8083": s.SFN, "8084": readyField(s, "events")})
	session := &docexample.Session{
		Dir: root,
		Env: []string{
			"PATH=" + tools + ":/usr/local/bin:/usr/bin:/bin",
			"HOME=" + t.TempDir(),
			"TMPDIR=" + t.TempDir(),
			"LANG=C.UTF-8",
			"TRANSFERCTL_ENDPOINT=" + s.API,
			"AWS_REGION=us-east-1",
			"AWS_DEFAULT_REGION=us-east-1", // the AWS CLI v1 reads only this one
			"AWS_ACCESS_KEY_ID=AKIDEXAMPLEDOCS00001",
			"AWS_SECRET_ACCESS_KEY=docs-examples-are-not-signed",
		},
		Rewrite: rewrite,
		Timeout: docSessionTimeout,
	}
	start := time.Now()
	results, err := session.Run(context.Background(), doc.Run())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d blocks run in %s", doc.Name, len(results), time.Since(start).Round(time.Millisecond))
	byLine := map[int]docexample.Result{}
	for _, r := range results {
		byLine[r.Block.Line] = r
	}
	var failedAt int
	for _, b := range doc.Blocks {
		t.Run(fmt.Sprintf("line %d", b.Line), func(t *testing.T) {
			if b.Skip {
				t.Skip("sh skip-test: shown in the document, not run (the prose next to it says why)")
			}
			r := byLine[b.Line]
			if !r.Ran {
				t.Fatalf("%s:%d: not run: the block at line %d ended the session", doc.Name, b.Line, failedAt)
			}
			if r.Err != nil {
				failedAt = b.Line
				t.Fatalf("%s\n%v\n\nthe stack's log (end):\n%s", blockReport(doc.Name, r, nil), r.Err, tail(s.stderr.String(), 3000))
			}
			if b.Expect == nil {
				return
			}
			exp := *b.Expect
			exp.Body = rewrite(exp.Body)
			if err := docexample.Check(exp, r.Stdout); err != nil {
				t.Errorf("%s\n%v", blockReport(doc.Name, r, &exp), err)
			}
		})
	}
}

// docRewriter returns the function that turns the documents' default addresses into the stack's, given by port;
// a port with no address (a service the stack does not serve) becomes closedAddress.
func docRewriter(byPort map[string]string) func(string) string {
	return func(text string) string {
		return defaultAddress.ReplaceAllStringFunc(text, func(m string) string {
			if a := byPort[m[strings.LastIndexByte(m, ':')+1:]]; a != "" {
				return a
			}
			return closedAddress
		})
	}
}

// readyField returns a field of the stack's ready line ("events" for events=…), or "".
func readyField(s *stack, key string) string {
	for _, line := range strings.Split(s.stdout.String(), "\n") {
		if !strings.HasPrefix(line, "ready ") {
			continue
		}
		for _, f := range strings.Fields(line)[1:] {
			if k, v, ok := strings.Cut(f, "="); ok && k == key {
				return v
			}
		}
	}
	return ""
}

// blockReport renders a block for a failure: where it is, what ran, what it printed, what was expected.
func blockReport(docName string, r docexample.Result, exp *docexample.Expectation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d:\n%s", docName, r.Block.Line, indent(r.Code))
	fmt.Fprintf(&b, "stdout:\n%s", indent(string(r.Stdout)))
	fmt.Fprintf(&b, "stderr:\n%s", indent(string(r.Stderr)))
	if exp != nil {
		fmt.Fprintf(&b, "expected (%s expect, %s:%d):\n%s", exp.Kind, docName, exp.Line, indent(exp.Body))
	}
	return b.String()
}

func indent(s string) string {
	if s == "" {
		return "    (nothing)\n"
	}
	s = strings.TrimSuffix(s, "\n")
	return "    " + strings.ReplaceAll(s, "\n", "\n    ") + "\n"
}
