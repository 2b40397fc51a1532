// Command aslcheck parses and validates Amazon States Language definitions and prints every problem with its
// position: aslcheck statemachine/transfer.asl.json. It also lints what AWS accepts but can never work as meant (see
// lint). It exits 1 when a definition is invalid or has a lint finding, 2 on usage errors.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/transferflow/orchestrator/internal/asl"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run checks each file named in args and returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: aslcheck FILE.asl.json...")
		return 2
	}
	code := 0
	for _, path := range args {
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(stderr, "aslcheck: %v\n", err)
			return 2
		}
		def, err := asl.Load(data)
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
