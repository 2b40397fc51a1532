// Command debit is the workflow's debit function: it applies a transfer's DEBIT leg exactly once.
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
	env, err := transfer.LoadLedgerConfig(os.Getenv)
	if err != nil {
		logger.Error("configuration", "error", err.Error())
		os.Exit(1)
	}
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		logger.Error("aws configuration", "error", err.Error())
		os.Exit(1)
	}
	lambda.Start(transfer.NewDebitHandler(cfg, env, logger).Handle)
}
