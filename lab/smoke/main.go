package smoke

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/transferflow/orchestrator/localaws/stack"
)

// Exit statuses of Main.
const (
	exitOK     = 0
	exitFailed = 1 // a check failed
	exitUsage  = 2 // bad flags; nothing was sent
	exitSetup  = 3 // the target could not be reached or started: no check ran
)

const usage = `usage:
  smoke --start-local [--local-bin bin/local] [--dir .]   start the local stack on free ports, smoke it, stop it
  smoke --local [--api URL] [--events URL] [--log-group NAME]   a running local stack (defaults: make run's)
  smoke --stack NAME [--profile P] [--operator-profile P] [--other-profile P] [--region R]   a deployed stack

common flags: --timeout DURATION (each wait, default 60s), --currency CCY (default EUR)
Each check prints "ok <check>" or "FAIL <check>: <why>"; the exit status is 1 when one failed, 3 when none could run.
`

// Main is cmd/smoke: it parses args, runs the checks against the target they name, and returns the exit status.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("smoke", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		startLocal, local  bool
		localBin, dir      string
		api, events, group string
		aws                AWSOptions
		timeout            time.Duration
		currency           string
	)
	fs.BoolVar(&startLocal, "start-local", false, "")
	fs.StringVar(&localBin, "local-bin", "bin/local", "")
	fs.StringVar(&dir, "dir", ".", "")
	fs.BoolVar(&local, "local", false, "")
	fs.StringVar(&api, "api", LocalAPI, "")
	fs.StringVar(&events, "events", LocalEvents, "")
	fs.StringVar(&group, "log-group", LocalLogGroup, "")
	fs.StringVar(&aws.Stack, "stack", "", "")
	fs.StringVar(&aws.Profile, "profile", "", "")
	fs.StringVar(&aws.OperatorProfile, "operator-profile", "", "")
	fs.StringVar(&aws.OtherProfile, "other-profile", "", "")
	fs.StringVar(&aws.Region, "region", "", "")
	fs.DurationVar(&timeout, "timeout", 60*time.Second, "")
	fs.StringVar(&currency, "currency", "EUR", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stderr, usage)
			return exitOK
		}
		fmt.Fprintf(stderr, "smoke: %v\n%s", err, usage)
		return exitUsage
	}
	modes := 0
	for _, on := range []bool{startLocal, local, aws.Stack != ""} {
		if on {
			modes++
		}
	}
	if modes != 1 || fs.NArg() > 0 || timeout <= 0 {
		fmt.Fprintf(stderr, "smoke: give exactly one of --start-local, --local, --stack NAME\n%s", usage)
		return exitUsage
	}

	var cfg Config
	switch {
	case startLocal:
		bin, err := localBinary(ctx, localBin, dir, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "smoke: %v\n", err)
			return exitSetup
		}
		var log bytes.Buffer
		p, c, err := StartLocal(ctx, bin, dir, &log, stdout)
		if err != nil {
			fmt.Fprintf(stderr, "smoke: start the local stack: %v\n%s", err, log.Bytes())
			return exitSetup
		}
		defer func() {
			if err := p.Close(); err != nil {
				fmt.Fprintf(stderr, "smoke: %v\n", err)
			}
		}()
		fmt.Fprintf(stdout, "local stack started: api=%s events=%s\n", p.API(), p.Endpoints["events"])
		cfg = c
	case local:
		cfg = LocalConfig(api, events, stdout)
		cfg.LogGroup = group
	default:
		c, err := AWSConfig(ctx, aws, stdout)
		if err != nil {
			fmt.Fprintf(stderr, "smoke: %v\n", err)
			return exitSetup
		}
		fmt.Fprintf(stdout, "stack %s: api=%s log group=%s\n", aws.Stack, c.Client.Endpoint, c.LogGroup)
		cfg = c
	}
	cfg.Timeout, cfg.Currency = timeout, currency
	res := Run(ctx, cfg)
	if !res.OK() {
		fmt.Fprintf(stdout, "smoke %s: %d of %d checks failed\n", res.RunID, len(res.Failed), len(res.Failed)+len(res.Passed))
		return exitFailed
	}
	fmt.Fprintf(stdout, "smoke %s: all %d checks passed; accounts %s%s-* remain\n", res.RunID, len(res.Passed), AccountPrefix, res.RunID)
	return exitOK
}

// localBinary returns the local stack's binary: bin as given when it exists, else built there from dir's module.
func localBinary(ctx context.Context, bin, dir string, stderr io.Writer) (string, error) {
	if !filepath.IsAbs(bin) {
		bin = filepath.Join(dir, bin)
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(abs); err == nil {
		return abs, nil
	}
	fmt.Fprintf(stderr, "smoke: building %s\n", abs)
	if err := stack.BuildBinary(ctx, dir, abs); err != nil {
		return "", err
	}
	return abs, nil
}
