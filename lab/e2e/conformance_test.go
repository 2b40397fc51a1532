package e2e

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The callers tools/schemathesis_sigv4.py signs as: the local gateway makes the access key id K the IAM user
// arn:aws:iam::000000000000:user/K, so the operator's key is the user operatorIdentity, whom the stack is told holds
// TransferOperatorPolicy (--operator); every other caller is a client.
const (
	operatorAccessKey = "operator"
	clientAccessKey   = "client"
	operatorIdentity  = "arn:aws:iam::000000000000:user/" + operatorAccessKey
)

// schemathesisTimeout bounds the whole run, the stack's start excluded, beyond the time schemathesis is told to
// spend (its --max-time): SCHEMATHESIS_MAX_TIME seconds, or defaultSchemathesisBudget. Every phase runs within the
// default (examples, coverage, fuzzing, stateful), each with fewer generated cases than a longer budget gives;
// `make fuzz-api` is the long run.
const (
	schemathesisTimeout       = 3 * time.Minute
	defaultSchemathesisBudget = 10
)

// schemathesisBudget is the --max-time of this run, in seconds.
func schemathesisBudget(t *testing.T) int {
	t.Helper()
	v := os.Getenv("SCHEMATHESIS_MAX_TIME")
	if v == "" {
		return defaultSchemathesisBudget
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("SCHEMATHESIS_MAX_TIME=%q: want a whole number of seconds", v)
	}
	return n
}

// schemathesis runs with one worker: with two, its threads meet CPython 3.11's ast.parse bug (python/cpython#106905,
// "SystemError: AST constructor recursion depth mismatch", raised when Hypothesis describes a filter's lambda) about
// one run in three here, an error of the tool that fails the run.

// schemathesisChecks are the checks of every response: no 5xx, and the status, content type, headers and body as
// docs/openapi.yaml describes them.
var schemathesisChecks = []string{
	"not_a_server_error", "status_code_conformance", "content_type_conformance",
	"response_headers_conformance", "response_schema_conformance",
}

// schemathesis returns the schemathesis of the repository's .venv-schemathesis (`make venv`, part of `make test`,
// installs it from tools/schemathesis-requirements.txt). Without python3, or without the environment, the test is
// skipped with the reason, except under CI=true, where that is a failure.
func schemathesis(t *testing.T) string {
	t.Helper()
	skip := t.Skipf
	if os.Getenv("CI") != "" {
		skip = t.Fatalf
	}
	if _, err := exec.LookPath("python3"); err != nil {
		skip("the OpenAPI conformance test needs python3 on PATH (%v): install it, then `make venv` installs schemathesis", err)
	}
	bin := filepath.Join(root, ".venv-schemathesis", "bin", "schemathesis")
	if _, err := os.Stat(bin); errors.Is(err, fs.ErrNotExist) {
		skip("the OpenAPI conformance test needs %s: `make test` (or `make venv`) installs it", bin)
	}
	return bin
}

// TestOpenAPIConformance runs schemathesis (tools/schemathesis-requirements.txt) against a fresh local stack with
// docs/openapi.yaml: its examples, coverage, fuzzing and stateful phases (the description's links chain the
// operations: an opened account is read, paid from and funded, a submitted transfer is read), for about 10 s. Every
// request is signed with SigV4 by tools/schemathesis_sigv4.py: as the operator for the /operator/ routes, as a
// client otherwise. The stack is started with --operator for the operator's principal when its --help lists that
// flag. Any 5xx, and any answer whose status, content type, headers or body the description does not allow, fails
// the test with schemathesis's report (each failure with a curl command that reproduces it). The seed is printed;
// SCHEMATHESIS_SEED=… replays a run.
func TestOpenAPIConformance(t *testing.T) {
	t.Parallel()
	bin := schemathesis(t)
	var flags []string
	if stackAccepts("operator") {
		flags = append(flags, "--operator", operatorIdentity)
	} else {
		t.Logf("bin/local has no --operator flag: the /operator/ routes are expected to answer 403")
	}
	budget := schemathesisBudget(t)
	s := startStack(t, flags...)

	args := []string{"run", filepath.Join(root, openAPIPath), "--url", s.API,
		"--checks", strings.Join(schemathesisChecks, ","),
		"--phases", "examples,coverage,fuzzing,stateful",
		"--max-examples", "50", "--max-time", strconv.Itoa(budget), "--workers", "1",
		"--request-timeout", "10", "--generation-database", "none",
		"--output-sanitize", "false", "--no-color"}
	if seed := os.Getenv("SCHEMATHESIS_SEED"); seed != "" {
		args = append(args, "--seed", seed)
	}
	t.Logf("PYTHONPATH=tools SCHEMATHESIS_HOOKS=schemathesis_sigv4 %s %s", bin, strings.Join(args, " "))
	ctx, cancel := context.WithTimeout(context.Background(), schemathesisTimeout+time.Duration(budget)*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = t.TempDir() // anything schemathesis writes stays out of the repository
	cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(root, "tools"), "SCHEMATHESIS_HOOKS=schemathesis_sigv4",
		"SIGV4_OPERATOR_KEY="+operatorAccessKey, "SIGV4_CLIENT_KEY="+clientAccessKey, "NO_COLOR=1")
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start).Round(time.Second)
	if ctx.Err() != nil {
		t.Fatalf("schemathesis did not finish within %s:\n%s", schemathesisTimeout, out.String())
	}
	if err != nil {
		t.Fatalf("schemathesis %s (after %s); its report:\n%s\nthe stack's log (end):\n%s", err, took, out.String(), tail(s.stderr.String(), 4000))
	}
	t.Logf("schemathesis passed in %s: %s", took, schemathesisSummary(out.String()))
}

// schemathesisSummary picks the lines of a report that say what ran: the stateful scenarios and links, the test
// cases and the seed.
func schemathesisSummary(report string) string {
	var keep []string
	lines := strings.Split(report, "\n")
	for i, l := range lines {
		l = strings.TrimSpace(l)
		switch {
		case l == "Test cases:" && i+1 < len(lines):
			keep = append(keep, strings.TrimSpace(lines[i+1]))
		case strings.HasPrefix(l, "Seed:"), strings.HasPrefix(l, "Scenarios:"), strings.HasPrefix(l, "API Links:"):
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "; ")
}
