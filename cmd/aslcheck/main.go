// Command aslcheck parses and validates Amazon States Language definitions and prints every problem with its
// position: aslcheck statemachine/transfer.asl.json. It also lints what AWS accepts but can never work as meant (see
// lint). It exits 1 when a definition is invalid or has a lint finding, 2 on usage errors.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/transferflow/orchestrator/localaws/asl"
	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// usage is the text of --help.
const usage = `usage: aslcheck FILE.asl.json...

Parses and validates each Amazon States Language definition and prints every problem with its position, then
lints what AWS accepts but can never work as meant (e.g. error names an integration never reports).
Exit status: 0 when every file is valid and clean, 1 when one is not, 2 on usage errors.

flags:
  -h, --help   print this and exit
`

// run checks each file named in args and returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("aslcheck", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	switch err := fs.Parse(args); {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, usage)
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "aslcheck: %v\n\n%s", err, usage)
		return 2
	}
	args = fs.Args()
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	code := 0
	for _, path := range args {
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(stderr, "aslcheck: %v\n", err)
			return 2
		}
		def, err := sfnengine.LoadDefinition(data)
		if err != nil {
			code = 1
			for _, e := range asl.Errors(err) {
				fmt.Fprintf(stdout, "%s: %s\n", path, e)
			}
			continue
		}
		if findings := lint(def); len(findings) > 0 {
			code = 1
			for _, f := range findings {
				fmt.Fprintf(stdout, "%s: %s\n", path, f)
			}
			continue
		}
		fmt.Fprintf(stdout, "%s: ok\n", path)
	}
	return code
}
