package main

import (
	"testing"

	"github.com/transferflow/orchestrator/internal/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m, main) }

// TestCommandLine runs the binary's main, as TestUsage runs run: --help, -h and help print the usage with the
// commands and global flags (on stderr) and exit 0; an unknown flag exits 2.
func TestCommandLine(t *testing.T) {
	usage := []string{"usage: transferctl [global flags] COMMAND", "submit", "history", "--endpoint URL", "--output text|json", "--operator", "assign-owner ACCOUNT_ID --owner ARN", "exit codes"}
	clitest.Check(t, []clitest.Case{
		{Name: "--help", Args: []string{"--help"}, Code: 0, Stderr: usage},
		{Name: "-h", Args: []string{"-h"}, Code: 0, Stderr: usage},
		{Name: "help", Args: []string{"help"}, Code: 0, Stderr: usage},
		{Name: "unknown flag", Args: []string{"--nope"}, Code: 2, NoStdout: true, Stderr: []string{"transferctl: flag provided but not defined: -nope"}},
	})
}
