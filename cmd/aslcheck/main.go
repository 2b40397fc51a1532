// Command aslcheck parses and validates Amazon States Language definitions and prints every problem with its
// position: aslcheck statemachine/transfer.asl.json. It exits 1 when a definition is invalid, 2 on usage errors.
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
		if _, err := asl.Load(data); err != nil {
			code = 1
			for _, e := range asl.Errors(err) {
				fmt.Fprintf(stdout, "%s: %s\n", path, e)
			}
			continue
		}
		fmt.Fprintf(stdout, "%s: ok\n", path)
	}
	return code
}
