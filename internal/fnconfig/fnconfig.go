// Package fnconfig is what every function's main does before lambda.Start: load the function's configuration from
// its environment and the AWS SDK's, and wire its handler. A function whose configuration cannot be loaded does not
// exit (Lambda would report only Runtime.ExitError, and retry its initialisation on every invocation): it starts and
// answers every invocation with a *ConfigurationError that names the variable, logged once at start.
package fnconfig

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
)

// ConfigurationError reports a function started with an environment it cannot run with: a variable unset or
// invalid (Err names it), or an AWS SDK configuration that does not load. Lambda reports it under its type name,
// ConfigurationError.
type ConfigurationError struct{ Err error }

// Error implements error.
func (e *ConfigurationError) Error() string { return "function configuration: " + e.Err.Error() }

// Unwrap returns the error that made the configuration unusable.
func (e *ConfigurationError) Unwrap() error { return e.Err }

// Handler returns the function's handler, for lambda.Start: wire's, given the configuration load reads through
// getenv and the SDK configuration of the environment. When either fails, it logs the error once and returns a
// handler that answers every invocation with the *ConfigurationError, unwrapped so that Lambda names it by its type.
func Handler[C any](ctx context.Context, logger *slog.Logger, getenv func(string) string,
	load func(getenv func(string) string) (C, error), wire func(aws.Config, C) any) any {
	c, err := load(getenv)
	if err != nil {
		return Unconfigured(logger, err)
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return Unconfigured(logger, fmt.Errorf("aws configuration: %w", err))
	}
	return wire(cfg, c)
}

// Unconfigured logs err once and returns a handler that answers every invocation with it as a *ConfigurationError.
func Unconfigured(logger *slog.Logger, err error) func(context.Context, json.RawMessage) error {
	cerr := &ConfigurationError{Err: err}
	logger.Error("configuration", "error", cerr.Error())
	return func(context.Context, json.RawMessage) error { return cerr }
}
