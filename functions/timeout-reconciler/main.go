// Command timeout-reconciler settles transfers whose workflow timed out, was aborted or failed, and sweeps transfers
// stuck IN_PROGRESS (EventBridge rule and schedule in template.yaml).
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/transferflow/orchestrator/internal/fnconfig"
	"github.com/transferflow/orchestrator/internal/transfer"
)

// about is what --help says the executable is.
const about = "timeout-reconciler: the Lambda function that settles transfers whose workflow timed out, was aborted or failed, and sweeps transfers stuck IN_PROGRESS"

// main starts the function even when its configuration is unusable: it then answers every invocation with a
// ConfigurationError naming the variable (fnconfig). Started by hand with arguments, it answers --help instead.
func main() {
	if code, exit := fnconfig.CommandLine(os.Args[1:], "TimeoutReconcilerFunction", about, os.Stdout, os.Stderr); exit {
		os.Exit(code)
	}
	logger := slog.New(lambdacontext.NewLogHandler())
	lambda.Start(fnconfig.Handler(context.Background(), logger, os.Getenv, transfer.LoadReconcilerConfig,
		func(cfg aws.Config, c transfer.ReconcilerConfig) any {
			return transfer.NewReconcilerHandler(cfg, c, logger).Handle
		}))
}
