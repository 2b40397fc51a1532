// Command local runs the transfer orchestrator's local stack on one machine, with no Docker and no AWS account:
// DynamoDB (Dynoxide), the Step Functions engine and API, the API gateway and the four functions, wired from
// template.yaml. See docs/local-stack.md for the flags. `local invoke <LogicalId> --event FILE [--env-vars FILE]`
// runs one function once, as `sam local invoke` does, without Docker (internal/localinvoke).
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/transferflow/orchestrator/internal/heaptrim"
	"github.com/transferflow/orchestrator/internal/localinvoke"
	"github.com/transferflow/orchestrator/internal/localstack"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(os.Args) > 1 && os.Args[1] == "invoke" {
		code := localinvoke.Main(ctx, os.Args[2:], os.Stdin, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	cfg, code := parseFlags(os.Args[1:], os.Stdout, os.Stderr)
	if code >= 0 {
		stop()
		os.Exit(code)
	}
	tuneGC(os.Getenv)
	go heaptrim.New(heaptrim.Options{}).Run(ctx, heaptrim.DefaultInterval)
	if err := localstack.Run(ctx, cfg, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "local:", err)
		stop()
		os.Exit(1)
	}
}

// parseFlags reads the command line. It returns an exit status when the program is to end without running the
// stack: 0 after --help (the usage on stdout), 2 for a bad command line (the error and the usage on stderr);
// otherwise -1.
func parseFlags(args []string, stdout, stderr io.Writer) (localstack.Config, int) {
	var usage bytes.Buffer
	cfg, err := localstack.ParseFlags(args, &usage)
	switch {
	case errors.Is(err, flag.ErrHelp):
		_, _ = usage.WriteTo(stdout)
		return cfg, 0
	case err != nil:
		if usage.Len() == 0 { // not the flag package's own error, which it printed with the usage
			fmt.Fprintf(&usage, "local: %v\nrun 'local --help' for the flags\n", err)
		}
		_, _ = usage.WriteTo(stderr)
		return cfg, 2
	}
	return cfg, -1
}

// tuneGC trades memory for CPU, unless GOGC or GOMEMLIMIT say otherwise. The stack allocates fast (the AWS SDK) on a
// small live heap, where Go's default GOGC=100 collects so often that GC takes a fifth of its CPU; GOGC=400 collects
// a quarter as often. The 2 GiB soft limit brings collections back as the live heap grows (executions kept in
// memory), so the heap does not become five times a large live heap. Memory left behind by a burst (a large
// execution) is given back to the system once the stack is quiet again, by a heaptrim.Trimmer that main runs.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(2 << 30)
	}
}
