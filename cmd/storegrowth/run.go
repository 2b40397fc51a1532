package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"path/filepath"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/transferflow/orchestrator/internal/ddblocal"
	"github.com/transferflow/orchestrator/internal/loadbench"
	"github.com/transferflow/orchestrator/internal/samtemplate"
	"github.com/transferflow/orchestrator/internal/storegrowth"
)

// options are the command line's settings.
type options struct {
	cfg      storegrowth.Config
	endpoint string
	dbPath   string
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("storegrowth", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.cfg.Fill, "fill", storegrowth.FillWorkload, "how each step grows the store: workload (real transfers), put (the same items by PutItem alone) or tokens (transactions that write nothing)")
	fs.BoolVar(&o.cfg.Tokens, "tokens", true, "the fill's transactions carry a ClientRequestToken, as the AWS SDK sets by default")
	fs.IntVar(&o.cfg.Steps, "steps", 3, "how many times the store grows")
	fs.IntVar(&o.cfg.StepTransfers, "step", 3000, "transfers per step")
	fs.IntVar(&o.cfg.Probe, "probe", 200, "operations each probe times")
	fs.IntVar(&o.cfg.Concurrency, "c", 1, "requests in flight (at 1 each request's latency is its own, and the paired probes separate clearly)")
	fs.IntVar(&o.cfg.Accounts, "accounts", 1000, "accounts the transfers pick from")
	fs.DurationVar(&o.cfg.IdleAfter, "idle", 0, "after the last step, wait this long and probe once more (e.g. 11m: past DynamoDB's 10-minute token window)")
	fs.StringVar(&o.dbPath, "db-path", "", "keep Dynoxide's data in this SQLite file (default: in memory)")
	fs.StringVar(&o.endpoint, "dynamodb-endpoint", "", "use this DynamoDB server, whose tables exist, instead of starting Dynoxide")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	return o, nil
}

// usageError is a bad command line: the exit status is 2, not a failed run's 1.
type usageError struct{ err error }

// Error implements error.
func (e *usageError) Error() string { return e.err.Error() }

// Unwrap returns the flag parsing error.
func (e *usageError) Unwrap() error { return e.err }

func run(ctx context.Context, args []string, getwd func() (string, error), stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil // the flag package printed the usage
	}
	if err != nil {
		return &usageError{err}
	}
	wd, err := getwd()
	if err != nil {
		return err
	}
	root, err := samtemplate.FindRoot(wd)
	if err != nil {
		return fmt.Errorf("find the repository (run from inside it): %w", err)
	}
	tmpl, err := samtemplate.Load(filepath.Join(root, "template.yaml"))
	if err != nil {
		return err
	}
	tables, err := tmpl.Tables()
	if err != nil {
		return err
	}
	if len(tables) != 1 {
		return fmt.Errorf("template.yaml has %d tables, want the transfers table alone", len(tables))
	}
	endpoint := o.endpoint
	if endpoint == "" {
		srv, err := ddblocal.Start(ctx, ddblocal.Options{DBPath: o.dbPath})
		if err != nil {
			return err
		}
		defer srv.Close()
		endpoint = srv.URL
		o.cfg.RSS = func() (int64, error) { return loadbench.ReadRSS(srv.PID()) }
		fmt.Fprintf(stderr, "storegrowth: dynoxide pid %d at %s\n", srv.PID(), srv.URL)
	}
	// Both clients alike but for the token; connections are reused up to the concurrency.
	awsCfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
		HTTPClient: awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
			t.MaxIdleConnsPerHost = max(o.cfg.Concurrency, 2)
		})}
	withEndpoint := func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(endpoint) }
	tokenDB := dynamodb.NewFromConfig(awsCfg, withEndpoint)
	plainDB := storegrowth.NewPlainClient(awsCfg, withEndpoint)
	if o.endpoint == "" {
		if err := ddblocal.CreateTables(ctx, tokenDB, tables); err != nil {
			return err
		}
	}
	o.cfg.Table = aws.ToString(tables[0].Create.TableName)
	o.cfg.Progress = stderr
	rows, err := storegrowth.Run(ctx, o.cfg, tokenDB, plainDB)
	if werr := storegrowth.Write(stdout, rows); werr != nil && err == nil {
		err = werr
	}
	return err
}
