// Command chaos is the chaos campaign (`make chaos`, docs/reliability.md): it runs the local stack as a
// separate process, drives CHAOS_TRANSFERS transfers through it from retrying clients under every --fault kind,
// kill -9s it CHAOS_KILLS times, and checks the money invariants from the table. CHAOS_SEED replays a run. It exits
// 1 on any violation, 2 when the campaign itself fails (lab/chaos) or on a bad command line.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/transferflow/orchestrator/lab/chaos"
)

func main() {
	if code, exit := commandLine(os.Args[1:], os.Stdout, os.Stderr); exit {
		os.Exit(code)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := chaos.Main(ctx, os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// usage is the text of --help: the campaign takes no flags, only environment variables.
var usage = fmt.Sprintf(`usage: chaos [--help]     (make chaos; run from the repository's root)

Runs the chaos campaign against the local stack (docs/reliability.md#chaos-campaign). It is configured by
the environment:
  CHAOS_SEED        replay this campaign (default: random; printed first and last)
  CHAOS_TRANSFERS   transfers to drive (default %d)
  CHAOS_KILLS       kill -9s and restarts of the stack (default %d)
  CHAOS_CLIENTS     concurrent retrying clients (default %d)
  CHAOS_QUIESCE     bound on the wait for every transfer to end after the last client (default %s)
  CHAOS_LOCAL_BIN   the local stack's binary (default: build ./cmd/local)
  CHAOS_DATA_DIR    the stack's --data-dir (default: a temporary directory, removed at the end)
  CHAOS_STACK_LOG   where the stack's logs go (default: chaos-<seed>.log in the temporary directory)
Exit status: 0 without violations, 1 with any, 2 when the campaign itself fails or on a bad command line.

flags:
  -h, --help   print this and exit
`, chaos.DefaultTransfers, chaos.DefaultKills, chaos.DefaultClients, chaos.DefaultQuiesce)

// commandLine answers --help (exit status 0) and refuses any other argument (2); without arguments the campaign
// runs (exit false).
func commandLine(args []string, stdout, stderr io.Writer) (code int, exit bool) {
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("unexpected arguments: %v (the campaign is configured by CHAOS_* variables)", fs.Args())
	}
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, usage)
		return 0, true
	case err != nil:
		fmt.Fprintf(stderr, "chaos: %v\n\n%s", err, usage)
		return 2, true
	}
	return 0, false
}
