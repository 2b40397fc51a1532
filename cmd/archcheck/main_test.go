package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/transferflow/orchestrator/internal/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m, main) }

// TestCommandLine runs the binary's main: --help prints the usage, a missing flag or package is a usage error, and
// a package of this module checks for another platform; a folder without a package is an error of its own.
func TestCommandLine(t *testing.T) {
	clitest.Check(t, []clitest.Case{
		{Name: "--help", Args: []string{"--help"}, Code: 0, Stdout: []string{"usage: archcheck -goos GOOS -goarch GOARCH PACKAGE...", "Exit status"}},
		{Name: "no goarch", Args: []string{"-goos", "linux", "./..."}, Code: 2, NoStdout: true, Stderr: []string{"usage: archcheck"}},
		{Name: "no package", Args: []string{"-goos", "linux", "-goarch", "arm64"}, Code: 2, NoStdout: true, Stderr: []string{"usage: archcheck"}},
		{Name: "unknown flag", Args: []string{"--nope"}, Code: 2, NoStdout: true, Stderr: []string{"archcheck: flag provided but not defined: -nope"}},
		{Name: "a package", Args: []string{"-goos", "linux", "-goarch", "arm64", "../../internal/jsonstring"}, Code: 0, Stdout: []string{"packages type-check for linux/arm64"}},
		{Name: "a pattern without packages", Args: []string{"-goos", "linux", "-goarch", "arm64", "../../internal/nosuchpackage"}, Code: 1, Stdout: []string{"internal/nosuchpackage", "archcheck: 1 errors in 1 packages"}},
	})
}

// TestFindsWhatOnlyThePlatformBreaks checks testdata/mod, a module of its own with a package of each kind, for
// linux/amd64 (this machine's kind, where all but the cgo one build) and linux/arm64.
func TestFindsWhatOnlyThePlatformBreaks(t *testing.T) {
	cases := []struct {
		pkg, goarch, cgo string
		want             string // in one of the problems expected; "" for none
	}{
		{"./plain", "arm64", "0", ""},
		{"./constrained", "amd64", "0", ""},
		{"./constrained", "arm64", "0", "undefined: onlyOnAmd64"},
		{"./asm", "amd64", "0", ""},
		{"./asm", "arm64", "0", "asm.go:5:6: missing function body (no assembly for arm64)"},
		{"./needscgo", "amd64", "0", "build constraints exclude all Go files"},
		{"./importer", "amd64", "0", ""},
		{"./importer", "arm64", "0", "undefined: onlyOnAmd64"},
		{"./importer", "arm64", "0", "missing function body"},
	}
	for _, c := range cases {
		t.Run(c.pkg+" on "+c.goarch, func(t *testing.T) {
			problems, n, err := check("testdata/mod", "linux", c.goarch, c.cgo, []string{c.pkg})
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				t.Fatal("no package read")
			}
			switch {
			case c.want == "" && len(problems) > 0:
				t.Errorf("problems %q, want none", problems)
			case c.want != "" && !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, c.want) }):
				t.Errorf("problems %q, want one with %q", problems, c.want)
			}
		})
	}
}
