// Command timeout-reconciler settles transfers whose workflow timed out, was aborted or failed, and sweeps transfers
// stuck IN_PROGRESS (EventBridge rule and schedule in template.yaml).
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/transferflow/orchestrator/internal/transfer"
)

func main() {
	logger := slog.New(lambdacontext.NewLogHandler())
	env, err := transfer.LoadReconcilerConfig(os.Getenv)
	if err != nil {
		logger.Error("configuration", "error", err.Error())
		os.Exit(1)
	}
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		logger.Error("aws configuration", "error", err.Error())
		os.Exit(1)
	}
	lambda.Start(transfer.NewReconcilerHandler(cfg, env, logger).Handle)
}
