// Command chaos is the chaos campaign of issue 12 (`make chaos`, docs/reliability.md): it runs the local stack as a
// separate process, drives CHAOS_TRANSFERS transfers through it from retrying clients under every --fault kind,
// kill -9s it CHAOS_KILLS times, and checks the money invariants from the table. CHAOS_SEED replays a run. It exits
// 1 on any violation, 2 when the campaign itself fails (internal/chaos).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/transferflow/orchestrator/internal/chaos"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := chaos.Main(ctx, os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
