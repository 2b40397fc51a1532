package main

import (
	"testing"

	"github.com/transferflow/orchestrator/internal/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m, main) }

// TestCommandLine runs the binary's main: --help prints the usage with the flags on stdout and exits 0; a bad command
// line exits 2 (it exited 1, the harness failure's status), measuring nothing.
func TestCommandLine(t *testing.T) {
	clitest.Check(t, []clitest.Case{
		{Name: "--help", Args: []string{"--help"}, Code: 0,
			Stdout: []string{"usage: bench [flags]", "-scale", "-local-bin", "-local-dir", "-out", "-only", "-stack-args"}},
		{Name: "unknown flag", Args: []string{"--nope"}, Code: 2, NoStdout: true,
			Stderr: []string{"flag provided but not defined: -nope", "usage: bench"}},
		{Name: "bad value", Args: []string{"--scale", "huge"}, Code: 2, NoStdout: true, Stderr: []string{`bench: scale "huge"`}},
	})
}
