package main

import (
	"testing"

	"github.com/transferflow/orchestrator/internal/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m, main) }

// TestCommandLine runs the binary's main: --help prints the usage and exits 0 (before, it tried to read a file named
// --help and exited 2); an unknown flag or no file exits 2.
func TestCommandLine(t *testing.T) {
	clitest.Check(t, []clitest.Case{
		{Name: "--help", Args: []string{"--help"}, Code: 0, Stdout: []string{"usage: aslcheck FILE.asl.json...", "-h, --help", "Exit status"}},
		{Name: "-h", Args: []string{"-h"}, Code: 0, Stdout: []string{"usage: aslcheck"}},
		{Name: "unknown flag", Args: []string{"--nope"}, Code: 2, NoStdout: true, Stderr: []string{"aslcheck: flag provided but not defined: -nope", "usage: aslcheck"}},
		{Name: "no file", Args: nil, Code: 2, NoStdout: true, Stderr: []string{"usage: aslcheck"}},
		{Name: "a file", Args: []string{"../../statemachine/transfer.asl.json"}, Code: 0, Stdout: []string{"transfer.asl.json: ok"}},
	})
}
