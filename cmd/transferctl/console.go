package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/transferflow/orchestrator/internal/console"
)

// Where `console` listens and reads Step Functions when no flag says otherwise: the local stack's Step Functions API
// for a loopback --endpoint (cmd/local --sfn-addr), else Step Functions of the region.
const (
	defaultConsoleAddr = "127.0.0.1:8085"
	defaultSFNEndpoint = "http://127.0.0.1:8083"
)

// console runs `console`: the audit console on --addr, reading the API at --endpoint with the caller's rights (signed
// as every command signs, --operator for the operator routes) and Step Functions with the same credentials. It prints
// "console=http://ADDR" on stdout once it listens and serves until interrupted.
func (a *app) console(ctx context.Context, fs *flag.FlagSet, args []string) int {
	addr, sfnEndpoint, machine := defaultConsoleAddr, "", ""
	fs.StringVar(&addr, "addr", addr, "")
	fs.StringVar(&sfnEndpoint, "sfn-endpoint", "", "")
	fs.StringVar(&machine, "state-machine", "", "")
	pos, code, done := a.prepare(fs, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		return a.usageError(fmt.Errorf("console takes no arguments, got %q", pos))
	}
	api, code := a.client(ctx)
	if api == nil {
		return code
	}
	api.OnRetry = nil // a page shows its error; retries would only delay it
	sfnClient, code := a.sfnClient(ctx, sfnEndpoint)
	if sfnClient == nil {
		return code
	}
	c, err := console.New(console.Config{API: api, Operator: api.Operator, SFN: sfnClient, StateMachineArn: machine,
		Logger: slog.New(slog.NewJSONHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		fmt.Fprintf(a.stderr, "transferctl: %v\n", err)
		return exitError
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(a.stderr, "transferctl: console: %v\n", err)
		return exitError
	}
	if h, _, err := net.SplitHostPort(ln.Addr().String()); err == nil && !isLoopback(h) {
		fmt.Fprintf(a.stderr, "transferctl: warning: anyone who reaches %s reads the API with your credentials\n", ln.Addr())
	}
	srv := &http.Server{Handler: c, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute}
	fmt.Fprintf(a.stdout, "console=http://%s\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
		return exitOK
	case err := <-errc:
		fmt.Fprintf(a.stderr, "transferctl: console: %v\n", err)
		return exitError
	}
}

// sfnClient builds the Step Functions client: for a loopback endpoint (the local stack, by default when --endpoint is
// loopback) with the same signing as the API's requests, in us-east-1 unless --region says otherwise; for "aws", or by
// default when --endpoint is not loopback, Step Functions of the region with the caller's credentials.
func (a *app) sfnClient(ctx context.Context, endpoint string) (*sfn.Client, int) {
	apiURL, err := url.Parse(a.g.endpoint)
	if err != nil {
		return nil, a.usageError(fmt.Errorf("--endpoint %q: %v", a.g.endpoint, err))
	}
	if endpoint, err = a.serviceEndpoint("--sfn-endpoint", endpoint, defaultSFNEndpoint); err != nil {
		return nil, a.usageError(err)
	}
	if endpoint != endpointAWS {
		region := a.g.region
		if region == "" {
			region = "us-east-1"
		}
		if !a.g.sign.enabled(apiURL) {
			return sfn.New(sfn.Options{Region: region, BaseEndpoint: aws.String(endpoint), Credentials: aws.AnonymousCredentials{},
				HTTPClient: a.deps.http}), exitOK
		}
		cfg, err := a.deps.loadAWS(ctx, region)
		if err != nil {
			fmt.Fprintf(a.stderr, "transferctl: load AWS configuration: %v\n", err)
			return nil, exitError
		}
		return sfn.NewFromConfig(cfg, func(o *sfn.Options) { o.BaseEndpoint = aws.String(endpoint); o.HTTPClient = a.deps.http }), exitOK
	}
	cfg, err := a.deps.loadAWS(ctx, a.g.region)
	if err != nil {
		fmt.Fprintf(a.stderr, "transferctl: load AWS configuration: %v\n", err)
		return nil, exitError
	}
	if cfg.Region == "" {
		return nil, a.usageError(errors.New("cannot tell which region's Step Functions to read: use --region or set AWS_REGION"))
	}
	return sfn.NewFromConfig(cfg), exitOK
}
