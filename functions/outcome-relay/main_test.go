package main

import (
	"testing"

	"github.com/transferflow/orchestrator/internal/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m, main) }

// TestCommandLine runs the executable's main outside Lambda: --help says what it is and exits 0 (before, it failed
// on the missing Lambda runtime); anything else exits 2.
func TestCommandLine(t *testing.T) {
	clitest.Check(t, []clitest.Case{
		{Name: "--help", Args: []string{"--help"}, Code: 0, Stdout: []string{"usage: bootstrap [--help]", "OutcomeRelayFunction in template.yaml", "-h, --help"}},
		{Name: "unknown flag", Args: []string{"--nope"}, Code: 2, NoStdout: true, Stderr: []string{"flag provided but not defined: -nope"}},
	})
}
