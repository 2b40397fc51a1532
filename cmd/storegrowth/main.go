// Command storegrowth grows a Dynoxide table with the transfer workload, in steps, and after each step times each
// request kind of a transfer on its own (internal/storegrowth): the reproduction of the finding that Dynoxide
// slows down under the transfer workload. docs/ddblocal.md ("Dynoxide under the transfer workload") explains it.
//
//	go run ./cmd/storegrowth [--fill workload|put|tokens] [--tokens=true|false] [--steps N] [--step TRANSFERS]
//	                         [--probe N] [--c N] [--accounts N] [--idle DURATION] [--db-path FILE]
//	                         [--dynamodb-endpoint URL]
//
// Without --dynamodb-endpoint it starts its own Dynoxide (in memory, or on --db-path) and creates template.yaml's
// tables in it. The defaults (3 steps of 3,000 transfers, one request at a time) run in under 2 minutes on a 2-core
// machine.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getwd, os.Stdout, os.Stderr)
	stop()
	var usage *usageError
	switch {
	case errors.As(err, &usage):
		fmt.Fprintln(os.Stderr, "storegrowth:", err)
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "storegrowth:", err)
		os.Exit(1)
	}
}
