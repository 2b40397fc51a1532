package main

import (
	"testing"

	"github.com/transferflow/orchestrator/internal/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m, main) }

// TestCommandLine runs the binary's main: --help prints the flags and exits 0 (it exited 1 with "flag: help
// requested"); a bad command line exits 2, starting nothing.
func TestCommandLine(t *testing.T) {
	clitest.Check(t, []clitest.Case{
		{Name: "--help", Args: []string{"--help"}, Code: 0, Stderr: []string{"-fill", "-steps", "-step", "-probe", "-dynamodb-endpoint"}},
		{Name: "unknown flag", Args: []string{"--nope"}, Code: 2, NoStdout: true, Stderr: []string{"flag provided but not defined: -nope"}},
		{Name: "argument", Args: []string{"now"}, Code: 2, NoStdout: true, Stderr: []string{"storegrowth: unexpected arguments: [now]"}},
	})
}
