// Command local runs the transfer orchestrator's local stack on one machine, with no Docker and no AWS account:
// DynamoDB (Dynoxide), the Step Functions engine and API, the API gateway and the four functions, wired from
// template.yaml. See spec/local-stack.md for the flags.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/transferflow/orchestrator/internal/localstack"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := localstack.ParseFlags(os.Args[1:], os.Stderr)
	if err == nil {
		err = localstack.Run(ctx, cfg, os.Stdout, os.Stderr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "local:", err)
		os.Exit(1)
	}
}
