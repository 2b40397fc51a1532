// Command transferctl is the command-line client of the transfer API: submit a transfer safely (with an
// Idempotency-Key and retries that can only replay it), read a transfer, its audit trail as a timeline, and account
// balances. It talks to the local stack by default and signs requests with SigV4 for a deployed API. See
// docs/transferctl.md for the flags and exit codes.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}
