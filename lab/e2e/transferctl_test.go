package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	stackproc "github.com/transferflow/orchestrator/localaws/stack"
)

// transferctlBuild builds cmd/transferctl once a run, kept between runs as the stack's binary is.
var transferctlBuild = sync.OnceValues(func() (string, error) {
	return stackproc.KeptBinary(context.Background(), root, "./cmd/transferctl", "e2e")
})

// transferctlPath returns the freshly built transferctl.
func transferctlPath(t testing.TB) string {
	t.Helper()
	p, err := transferctlBuild()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// ctlResult is what one transferctl run did.
type ctlResult struct {
	code           int
	stdout, stderr string
}

// transferctl runs the CLI against the stack's API, with no AWS configuration of the caller's.
func (s *stack) transferctl(args ...string) ctlResult {
	s.t.Helper()
	cmd := exec.Command(transferctlPath(s.t), args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.t.TempDir(), "TRANSFERCTL_ENDPOINT=" + s.API}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := ctlResult{stdout: stdout.String(), stderr: stderr.String()}
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			s.t.Fatalf("transferctl %s: %v", strings.Join(args, " "), err)
		}
		res.code = ee.ExitCode()
	}
	return res
}
