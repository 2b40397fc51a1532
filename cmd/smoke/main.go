// Command smoke checks a running deployment of the transfer API, the local stack (--start-local starts one on free
// ports; --local uses make run's) or a deployed AWS stack (--stack NAME --profile P), with the same checks: one line
// "ok <check>" or "FAIL <check>: <why>" each, exit status 1 on any failure. Its logic is lab/smoke; how to run it,
// what it checks and what it leaves behind: docs/deploy.md#smoke-test.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/transferflow/orchestrator/lab/smoke"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := smoke.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
