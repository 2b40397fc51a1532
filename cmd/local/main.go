// Command local runs the transfer orchestrator's local stack on one machine, with no Docker and no AWS account.
//
// Today it starts the DynamoDB part: the bundled Dynoxide server (or --dynamodb-endpoint) with the tables of
// template.yaml. The Step Functions engine and API, the API gateway and the functions join it with the local-stack
// issue; see the README.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/transferflow/orchestrator/internal/ddblocal"
	"github.com/transferflow/orchestrator/internal/samtemplate"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "local:", err)
		os.Exit(1)
	}
}

type options struct {
	template         string
	dynamodbAddr     string
	dynamodbEndpoint string
	dataDir          string
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("local", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.template, "template", "template.yaml", "the SAM template to read the wiring from")
	fs.StringVar(&o.dynamodbAddr, "dynamodb-addr", "127.0.0.1:8000", "where the bundled DynamoDB-compatible server listens (port 0 picks one)")
	fs.StringVar(&o.dynamodbEndpoint, "dynamodb-endpoint", "", "use this DynamoDB endpoint instead of starting one")
	fs.StringVar(&o.dataDir, "data-dir", "", "keep data across restarts in this folder (default: in memory)")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	return o, nil
}

// run starts the stack, prints the ready line and blocks until ctx is cancelled, then stops what it started.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewJSONHandler(stderr, nil))
	tmpl, err := samtemplate.Load(o.template)
	if err != nil {
		return err
	}
	tables, err := tmpl.Tables()
	if err != nil {
		return err
	}

	endpoint := o.dynamodbEndpoint
	if endpoint == "" {
		opts := ddblocal.Options{Addr: o.dynamodbAddr}
		if o.dataDir != "" {
			if err := os.MkdirAll(o.dataDir, 0o755); err != nil {
				return fmt.Errorf("data dir: %w", err)
			}
			opts.DBPath = filepath.Join(o.dataDir, "dynamodb.sqlite")
		}
		srv, err := ddblocal.Start(ctx, opts)
		if err != nil {
			return err
		}
		defer srv.Close()
		endpoint = srv.URL
	}
	setupCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := ddblocal.CreateTables(setupCtx, ddblocal.NewClient(endpoint, nil), tables); err != nil {
		return err
	}
	for _, t := range tables {
		logger.Info("table ready", "logicalId", t.LogicalID)
	}
	fmt.Fprintf(stdout, "ready dynamodb=%s\n", endpoint)
	<-ctx.Done()
	logger.Info("shutting down")
	if errors.Is(context.Cause(ctx), context.Canceled) {
		return nil
	}
	return context.Cause(ctx)
}
