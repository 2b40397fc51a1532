// Command archcheck type-checks Go packages, and every package they import, for another operating system and
// architecture, without compiling them: archcheck -goos linux -goarch arm64 ./functions/... make test runs it on the
// functions for the platform Lambda runs them on (template.yaml's arm64), where compiling them and the AWS SDK for
// that platform on an empty cache cost about 90 s of CPU time, and this check about 7.
//
// It finds what stops the build on that platform and not on this machine's: files the platform's build constraints
// leave out (a name's _amd64 suffix, a //go:build line), a package with no files for it, a package that needs cgo
// (make builds with cgo off), and, outside the standard library, a function declared without a body (implemented in
// assembly) in a package with no assembly for the platform. What only a compiler finds (an assembler's or a linker's
// error) it does not: `make sam-build` compiles for the platform, as `sam build` does on deploy.
//
// It exits 1 when a package has an error, 2 on usage errors.
package main

import (
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/tools/go/packages"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// usage is the text of --help.
const usage = `usage: archcheck -goos GOOS -goarch GOARCH PACKAGE...

Type-checks the packages and everything they import, from source, for GOOS/GOARCH, with the build tags of GOFLAGS
and the CGO_ENABLED of the environment (cgo off when it is unset), and prints every error. Outside the standard
library, a function declared without a body in a package with no assembly for GOARCH is an error too.
Exit status: 0 when every package checks, 1 when one does not, 2 on usage errors.

flags:
  -goos GOOS       the operating system to check for (e.g. linux)
  -goarch GOARCH   the architecture to check for (e.g. arm64)
  -h, --help       print this and exit
`

// run checks the packages named in args and returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("archcheck", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	goos := fs.String("goos", "", "")
	goarch := fs.String("goarch", "", "")
	switch err := fs.Parse(args); {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, usage)
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "archcheck: %v\n\n%s", err, usage)
		return 2
	}
	if *goos == "" || *goarch == "" || fs.NArg() == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	cgo := os.Getenv("CGO_ENABLED")
	if cgo == "" {
		cgo = "0"
	}
	problems, n, err := check("", *goos, *goarch, cgo, fs.Args())
	if err != nil {
		fmt.Fprintf(stderr, "archcheck: %v\n", err)
		return 2
	}
	for _, p := range problems {
		fmt.Fprintln(stdout, p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(stdout, "archcheck: %d errors in %d packages for %s/%s\n", len(problems), n, *goos, *goarch)
		return 1
	}
	fmt.Fprintf(stdout, "archcheck: %d packages type-check for %s/%s\n", n, *goos, *goarch)
	return 0
}

// check loads patterns (in the module of dir, "" for the current folder's) and their dependencies for goos/goarch
// and returns every problem found and how many packages it read. An error is one of loading itself (no go command,
// a pattern go list rejects outright).
func check(dir, goos, goarch, cgo string, patterns []string) (problems []string, n int, err error) {
	cfg := &packages.Config{
		Dir: dir,
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedImports | packages.NeedDeps |
			packages.NeedTypes | packages.NeedSyntax | packages.NeedModule,
		Env: append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED="+cgo),
	}
	roots, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, 0, err
	}
	packages.Visit(roots, nil, func(p *packages.Package) {
		n++
		for _, e := range p.Errors {
			problems = append(problems, fmt.Sprintf("%s: %s", p.PkgPath, e))
		}
		if p.Module != nil { // outside the standard library
			problems = append(problems, bodiless(p, goarch)...)
		}
	})
	if n == 0 {
		return nil, 0, fmt.Errorf("no packages match %s", strings.Join(patterns, " "))
	}
	return problems, n, nil
}

// bodiless lists p's functions declared without a body when p has no assembly file for goarch: the compiler
// rejects those ("missing function body"), go/types does not. A declaration with a //go:linkname directive takes its
// body from elsewhere and is left alone.
func bodiless(p *packages.Package, goarch string) []string {
	for _, f := range p.OtherFiles { // the build's non-Go files, after its constraints
		if filepath.Ext(f) == ".s" {
			return nil
		}
	}
	linked := map[string]bool{}
	for _, f := range p.Syntax {
		for _, g := range f.Comments {
			for _, c := range g.List {
				if fields := strings.Fields(c.Text); len(fields) >= 2 && fields[0] == "//go:linkname" {
					linked[fields[1]] = true
				}
			}
		}
	}
	var out []string
	for _, f := range p.Syntax {
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Body == nil && !linked[fn.Name.Name] {
				out = append(out, fmt.Sprintf("%s: %s: missing function body (no assembly for %s)",
					p.PkgPath, p.Fset.Position(fn.Name.Pos()), goarch))
			}
		}
	}
	return out
}
