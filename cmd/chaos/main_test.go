package main

import (
	"testing"

	"github.com/transferflow/orchestrator/internal/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m, main) }

// TestCommandLine runs the binary's main: --help prints the usage with the variables and exits 0 (before, it started
// a 10,000-transfer campaign); an unknown flag or an argument exits 2 without starting anything.
func TestCommandLine(t *testing.T) {
	clitest.Check(t, []clitest.Case{
		{Name: "--help", Args: []string{"--help"}, Code: 0,
			Stdout: []string{"usage: chaos [--help]", "CHAOS_SEED", "CHAOS_TRANSFERS", "CHAOS_KILLS", "CHAOS_CLIENTS", "-h, --help"}},
		{Name: "-h", Args: []string{"-h"}, Code: 0, Stdout: []string{"usage: chaos"}},
		{Name: "unknown flag", Args: []string{"--transfers", "5"}, Code: 2, NoStdout: true,
			Stderr: []string{"chaos: flag provided but not defined: -transfers", "CHAOS_TRANSFERS"}},
		{Name: "argument", Args: []string{"run"}, Code: 2, NoStdout: true, Stderr: []string{"unexpected arguments: [run]"}},
	})
}
