// Command bench is the benchmark: it starts the local stack (bin/local) as a separate process on
// a fresh store and measures throughput, failures, latency, DynamoDB requests and capacity, the store's own limit,
// memory, the engine against the npm engine and the cost on AWS, then prints one table (ending with the verdicts
// against the stack's performance targets) and writes the same figures as JSON. lab/bench/README.md explains every figure.
//
//	go run ./cmd/bench --scale quick|full [--local-bin FILE --local-dir DIR] [--dynamodb-endpoint URL]
//	                   [--store memory|disk] [--out FILE|-] [--node-dir DIR] [--stack-log FILE]
//	                   [--stack-args "FLAGS"]
//
// The exit status is 0 whether or not the targets are met (it is a measurement), 1 when the harness fails and 2 on a
// bad command line.
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
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
