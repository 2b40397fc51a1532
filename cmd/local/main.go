// Command local runs the transfer orchestrator's local stack on one machine, with no Docker and no AWS account:
// DynamoDB (Dynoxide), the Step Functions engine and API, the API gateway and the four functions, wired from
// template.yaml. See docs/local-stack.md for the flags. `local invoke <LogicalId> --event FILE [--env-vars FILE]`
// runs one function once, as `sam local invoke` does, without Docker (localaws/saminvoke).
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
	"syscall"

	"github.com/transferflow/orchestrator/localaws/ddbserver/streamindex"
	"github.com/transferflow/orchestrator/localaws/saminvoke"
	"github.com/transferflow/orchestrator/localaws/stack"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(os.Args) > 1 && os.Args[1] == "invoke" {
		code := saminvoke.Main(ctx, os.Args[2:], os.Stdin, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	cfg, code := parseFlags(os.Args[1:], os.Stdout, os.Stderr)
	if code >= 0 {
		stop()
		os.Exit(code)
	}
	cfg.IndexStreams = streamindex.Apply
	if err := stack.Run(ctx, cfg, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "local:", err)
		stop()
		os.Exit(1)
	}
}

// parseFlags reads the command line. It returns an exit status when the program is to end without running the
// stack: 0 after --help (the usage on stdout), 2 for a bad command line (the error and the usage on stderr);
// otherwise -1.
func parseFlags(args []string, stdout, stderr io.Writer) (stack.Config, int) {
	var usage bytes.Buffer
	cfg, err := stack.ParseFlags(args, &usage)
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
