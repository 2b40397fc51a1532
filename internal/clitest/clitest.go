// Package clitest runs a command's main function as its user runs the command: in a process of its own, with
// arguments, reading its exit status, standard output and standard error. The process is the package's test binary
// started again, which runs main instead of the tests (Main), so no separate build is needed.
package clitest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// runLimit bounds a run, so that a command that does not stop (e.g. one that ignored --help and started a server)
// fails its test instead of hanging it.
const runLimit = 2 * time.Minute

// envRunMain tells a test binary started by Run to run the command's main.
const envRunMain = "CLITEST_RUN_MAIN"

// Main is a package's TestMain: in a process started by Run it runs main with Run's arguments (a main that returns
// exits 0), otherwise it runs the tests.
func Main(m *testing.M, main func()) {
	if os.Getenv(envRunMain) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Result is what a run of the command left.
type Result struct {
	Code           int
	Stdout, Stderr string
}

// Run runs the command (the test binary's main, see Main) with args and extra environment variables
// ("NAME=value") and returns its exit status and output.
func Run(t testing.TB, env []string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), envRunMain+"=1"), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("run %v: %v", args, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("run %v: still running after %s, killed\nstdout:\n%s\nstderr:\n%s", args, runLimit, &stdout, &stderr)
	}
	return Result{Code: cmd.ProcessState.ExitCode(), Stdout: stdout.String(), Stderr: stderr.String()}
}

// Case is one expected run of a command: its exit status, and what its standard output and standard error contain.
type Case struct {
	Name string
	Args []string
	Env  []string
	Code int
	// Stdout and Stderr are substrings the output must contain.
	Stdout, Stderr []string
	// NoStdout requires an empty standard output.
	NoStdout bool
}

// Check runs each case (Run) as a subtest and reports every mismatch.
func Check(t *testing.T, cases []Case) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			r := Run(t, c.Env, c.Args...)
			if r.Code != c.Code {
				t.Errorf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", r.Code, c.Code, r.Stdout, r.Stderr)
			}
			for _, s := range c.Stdout {
				if !strings.Contains(r.Stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, r.Stdout)
				}
			}
			for _, s := range c.Stderr {
				if !strings.Contains(r.Stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, r.Stderr)
				}
			}
			if c.NoStdout && r.Stdout != "" {
				t.Errorf("stdout is not empty:\n%s", r.Stdout)
			}
		})
	}
}
