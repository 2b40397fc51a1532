package fnconfig

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"
)

// Main is a function's main. Started by hand with arguments, it answers them (CommandLine, logicalID and about as
// there) and exits. Otherwise it starts the function with lambda.Start even when its configuration is unusable: the
// handler is Handler's, given the process environment and a logger writing through Lambda's log handler, which wire
// also receives.
func Main[C any](logicalID, about string, load func(getenv func(string) string) (C, error),
	wire func(aws.Config, C, *slog.Logger) any) {
	if code, exit := CommandLine(os.Args[1:], logicalID, about, os.Stdout, os.Stderr); exit {
		os.Exit(code)
	}
	logger := slog.New(lambdacontext.NewLogHandler())
	lambda.Start(Handler(context.Background(), logger, os.Getenv, load,
		func(cfg aws.Config, c C) any { return wire(cfg, c, logger) }))
}
