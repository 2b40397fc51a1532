package main

import (
	"testing"

	"github.com/transferflow/orchestrator/internal/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m, main) }

// TestCommandLine runs the binary's main: --help prints the usage with the flags on stdout and exits 0 (it exited 1
// before); a bad command line exits 2 without starting anything.
func TestCommandLine(t *testing.T) {
	clitest.Check(t, []clitest.Case{
		{Name: "--help", Args: []string{"--help"}, Code: 0,
			Stdout: []string{"usage: local [flags]", "-api-addr", "-sfn-addr", "-dynamodb-addr", "-template", "-seed", "-data-dir", "-fault", "-hints",
				"-operator", "TransferOperatorPolicy"}},
		{Name: "-h", Args: []string{"-h"}, Code: 0, Stdout: []string{"usage: local [flags]", "-api-addr"}},
		{Name: "invoke --help", Args: []string{"invoke", "--help"}, Code: 0,
			Stderr: []string{"usage: local invoke <LogicalId>", "-event", "-env-vars", "-template"}},
		{Name: "unknown flag", Args: []string{"--nope"}, Code: 2, NoStdout: true,
			Stderr: []string{"flag provided but not defined: -nope", "usage: local [flags]"}},
		{Name: "an empty --operator", Args: []string{"--operator", ""}, Code: 2, NoStdout: true,
			Stderr: []string{`invalid value "" for flag -operator: an empty pattern names no principal`}},
		{Name: "unexpected argument", Args: []string{"extra"}, Code: 2, NoStdout: true,
			Stderr: []string{"local: unexpected arguments: [extra]", "local --help"}},
		{Name: "invoke: unknown flag", Args: []string{"invoke", "--nope"}, Code: 2, NoStdout: true,
			Stderr: []string{"flag provided but not defined: -nope"}},
	})
}
