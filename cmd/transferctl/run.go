package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/transferflow/orchestrator/internal/transferclient"
)

// Exit codes. They are part of the interface (docs/transferctl.md); never renumber them.
const (
	exitOK             = 0   // success; for a transfer: accepted, in progress or COMPLETED
	exitError          = 1   // anything else: AWS config or credentials, an unexpected answer, writing output
	exitUsage          = 2   // bad flags or arguments; nothing was sent
	exitTransferFailed = 3   // the transfer is FAILED (a business outcome, not an error of the tool)
	exitRejected       = 4   // the API rejected the request (4xx other than 404); nothing was written
	exitNotFound       = 5   // 404: no such transfer or account (or not visible to this caller)
	exitUnavailable    = 6   // network errors, timeouts, 5xx, 429 or 409 REQUEST_IN_PROGRESS after all retries
	exitWaitTimeout    = 7   // --wait: the transfer was still IN_PROGRESS at --timeout
	exitInterrupted    = 130 // SIGINT or SIGTERM
)

// defaultEndpoint is the local stack's API (cmd/local --api-addr).
const defaultEndpoint = "http://127.0.0.1:3000"

// deps are what run needs from the outside world; tests replace them.
type deps struct {
	// http sends requests.
	http *http.Client
	// loadAWS loads the SDK configuration (the standard credential chain); region overrides the configured one
	// when not empty.
	loadAWS func(ctx context.Context, region string) (aws.Config, error)
	now     func() time.Time
	sleep   func(ctx context.Context, d time.Duration) error
	jitter  func() float64
	// newKey returns a fresh Idempotency-Key.
	newKey func() string
}

func defaultDeps() deps {
	return deps{
		// Redirects are not followed: a payment request goes to the endpoint the user chose, or nowhere.
		http: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		loadAWS: func(ctx context.Context, region string) (aws.Config, error) {
			var opts []func(*config.LoadOptions) error
			if region != "" {
				opts = append(opts, config.WithRegion(region))
			}
			return config.LoadDefaultConfig(ctx, opts...)
		},
		now:    time.Now,
		newKey: rand.Text,
	}
}

// run executes one transferctl command and returns its exit code. JSON goes to stdout only; people's messages and
// errors go to stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	return runWith(ctx, args, stdout, stderr, getenv, defaultDeps())
}

// app is one invocation of transferctl.
type app struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	deps           deps
	g              globals
	unreachable    bool // a request was given up with no attempt reaching the API: hintUnreachable, once, at the end
}

func runWith(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string, d deps) int {
	a := &app{stdout: stdout, stderr: stderr, getenv: getenv, deps: d}
	code := a.run(ctx, args)
	if code != exitOK && ctx.Err() != nil {
		fmt.Fprintln(stderr, "transferctl: interrupted")
		return exitInterrupted
	}
	if a.unreachable {
		a.hintUnreachable()
	}
	return code
}

// command is a subcommand: it parses its own arguments (a usageError for bad ones) and returns an exit code.
type command struct {
	name, args, summary string
	run                 func(a *app, ctx context.Context, fs *flag.FlagSet, args []string) int
}

// commandList returns the subcommands, in the order usage lists them.
func commandList() []command {
	return []command{
		{"submit", "--from ACCOUNT --to ACCOUNT --amount MINOR_UNITS --currency CCY [--reference TEXT] [--idempotency-key KEY] [--wait]",
			"submit a transfer; retries safely with the same Idempotency-Key", (*app).submit},
		{"get", "TRANSFER_ID [--wait]", "show a transfer", (*app).get},
		{"history", "TRANSFER_ID [--relative]", "show a transfer's audit trail: one timeline of its states, retries, ledger legs and outcome", (*app).history},
		{"accounts", "get ACCOUNT_ID... | create --currency CCY [--id ID] [--kind customer|funding] [--floor N] [--owner ARN] [--idempotency-key KEY]\n" +
			"            | assign-owner ACCOUNT_ID --owner ARN | transfers ACCOUNT_ID [--limit N] [--all]",
			"show accounts (accounts ACCOUNT_ID... is accounts get), open one, give one an owner (--operator), or list the transfers that touched one", (*app).accounts},
		{"transfers", "list --account ACCOUNT_ID [--limit N] [--all]", "list the transfers that touched an account, newest first (as accounts transfers)", (*app).transfers},
		{"events", "tail [--follow] [--since DURATION] [--log-group NAME] [--events-endpoint URL|aws]",
			"show the transfer outcome events (Transfer Completed, Transfer Failed); --follow until interrupted", (*app).events},
		{"console", "[--addr HOST:PORT] [--state-machine ARN] [--sfn-endpoint URL|aws]",
			"serve the audit console (transfers, accounts, executions) on --addr, reading the API and Step Functions with your credentials", (*app).console},
	}
}

func (a *app) run(ctx context.Context, args []string) int {
	top := flag.NewFlagSet("transferctl", flag.ContinueOnError)
	top.SetOutput(io.Discard)
	a.g = defaultGlobals(a.getenv)
	a.g.bind(top)
	args = joinSignValue(args)
	if err := top.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			a.usage()
			return exitOK
		}
		return a.usageError(err)
	}
	rest := top.Args()
	if len(rest) == 0 {
		a.usage()
		return exitUsage
	}
	name := rest[0]
	if name == "help" {
		a.usage()
		return exitOK
	}
	for _, c := range commandList() {
		if c.name != name {
			continue
		}
		fs := flag.NewFlagSet("transferctl "+c.name, flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		a.g.bind(fs) // globals may also follow the command name
		return c.run(a, ctx, fs, rest[1:])
	}
	return a.usageError(fmt.Errorf("unknown command %q", name))
}

func (a *app) usage() {
	fmt.Fprint(a.stderr, "usage: transferctl [global flags] COMMAND [flags] [args]\n\ncommands:\n")
	for _, c := range commandList() {
		fmt.Fprintf(a.stderr, "  %-9s %s\n            %s\n", c.name, c.summary, c.args)
	}
	fmt.Fprint(a.stderr, `
global flags (before or after the command):
  --endpoint URL        the API (default $TRANSFERCTL_ENDPOINT, else `+defaultEndpoint+`)
  --output text|json    json: the API's JSON on stdout, messages on stderr (default text)
  --sign auto|true|false  SigV4-sign requests; auto signs for non-loopback endpoints; a bare --sign is true (default auto)
  --region REGION       region to sign for (default: from the endpoint host, else the AWS config)
  --timeout DURATION    bound on the whole command, retries and --wait included (default 60s)
  --max-attempts N      requests per call, first included (default 6)
  --quiet               no progress messages on stderr
  --operator            use the operator routes (/operator/…): open funding accounts (--floor), open accounts for an
                        owner (--owner), assign owners, read any account or transfer, pay out of a funding account;
                        needs a principal IAM allows on them, signed (make run's operator: AWS_ACCESS_KEY_ID=operator
                        AWS_SECRET_ACCESS_KEY=local transferctl --sign true --operator …)

exit codes: 0 ok, 1 error, 2 usage, 3 transfer FAILED, 4 rejected (4xx), 5 not found,
            6 unavailable after retries, 7 --wait timed out, 130 interrupted
`)
}

// usageError reports a bad invocation and returns exitUsage.
func (a *app) usageError(err error) int {
	fmt.Fprintf(a.stderr, "transferctl: %v\nrun 'transferctl help' for usage\n", err)
	return exitUsage
}

// parseArgs parses fs over args, allowing flags after positional arguments, and returns the positional ones.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// client builds the API client from the global flags: the endpoint, and a SigV4 signer when signing is on.
func (a *app) client(ctx context.Context) (*transferclient.Client, int) {
	u, err := checkEndpoint(a.g.endpoint)
	if err != nil {
		return nil, a.usageError(err)
	}
	c := &transferclient.Client{
		Endpoint:    a.g.endpoint,
		HTTP:        a.deps.http,
		Now:         a.deps.now,
		Sleep:       a.deps.sleep,
		Jitter:      a.deps.jitter,
		MaxAttempts: a.g.maxAttempts,
		Operator:    a.g.operator,
	}
	if !a.g.quiet {
		c.OnRetry = func(r transferclient.Retry) {
			fmt.Fprintf(a.stderr, "attempt %d failed (%v); retrying in %s\n", r.Attempt, describe(r.Err), transferclient.FormatDuration(r.Wait))
		}
	}
	if !a.g.sign.enabled(u) {
		return c, exitOK
	}
	region := a.g.region
	if region == "" {
		region, _ = transferclient.RegionFromHost(u.Hostname())
	}
	cfg, err := a.deps.loadAWS(ctx, region)
	if err != nil {
		fmt.Fprintf(a.stderr, "transferctl: load AWS configuration: %v\n", err)
		return nil, exitError
	}
	if cfg.Region == "" {
		return nil, a.usageError(errors.New("cannot tell which region to sign for: use --region or set AWS_REGION"))
	}
	if cfg.Credentials == nil {
		fmt.Fprintln(a.stderr, "transferctl: no AWS credentials found (environment, shared config, SSO, container or instance role)")
		return nil, exitError
	}
	c.Signer = &transferclient.SigV4Signer{Credentials: cfg.Credentials, Region: cfg.Region}
	return c, exitOK
}

// checkEndpoint parses the endpoint and refuses plain http to a host other than loopback: signatures and payment
// details would cross the network in clear text.
func checkEndpoint(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("--endpoint %q: want http(s)://host[:port][/stage]", s)
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return nil, fmt.Errorf("--endpoint %q: plain http is allowed only to loopback; use https", s)
	}
	return u, nil
}

// isLoopback reports whether host is localhost or a loopback address.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// exitCode maps an error of the client to an exit code.
func exitCode(err error) int {
	var apiErr *transferclient.APIError
	var netErr net.Error
	var urlErr *url.Error
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, transferclient.ErrWaitTimeout):
		return exitWaitTimeout
	case errors.As(err, &apiErr):
		switch {
		case apiErr.Status == http.StatusNotFound:
			return exitNotFound
		case apiErr.Temporary():
			return exitUnavailable
		case apiErr.Status >= 400 && apiErr.Status < 500:
			return exitRejected
		}
		return exitError
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr), errors.As(err, &urlErr),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return exitUnavailable
	}
	return exitError
}

// describe renders an error for people, naming the problem code and cleaning text that came from the API.
func describe(err error) string {
	return transferclient.Clean(err.Error())
}
