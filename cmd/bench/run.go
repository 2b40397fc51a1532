package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/transferflow/orchestrator/lab/loadbench"
	"github.com/transferflow/orchestrator/localaws/ddbserver/streamindex"
	"github.com/transferflow/orchestrator/localaws/samtemplate"
)

// options are the command line's settings beyond loadbench.Config.
type options struct {
	cfg      loadbench.Config
	out      string
	stackLog string
}

// usageError is a bad command line: the exit status is 2, not the harness failure's 1.
type usageError struct{ err error }

// Error implements error.
func (e *usageError) Error() string { return e.err.Error() }

// Unwrap returns the flag parsing or validation error.
func (e *usageError) Unwrap() error { return e.err }

// usage is the first line of --help, before the flags.
const usage = `usage: bench [flags]     (make bench, make bench-quick; lab/bench/README.md explains every figure)

flags:
`

// parseFlags reads the command line; output receives the usage and the flag package's errors. A bad command line
// is a *usageError. getwd finds the repository, whose template.yaml is the default --local-dir and whose
// lab/bench/results/ holds the default --out.
func parseFlags(args []string, getwd func() (string, error), output io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(output)
	fs.Usage = func() {
		fmt.Fprint(output, usage)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.cfg.LocalBin, "local-bin", "", "the local stack's binary (default: build ./cmd/local of --local-dir to a temporary file)")
	fs.StringVar(&o.cfg.LocalDir, "local-dir", "", "the directory the stack runs in, with its template.yaml and statemachine/ (default: this repository)")
	fs.StringVar(&o.cfg.DynamoDBEndpoint, "dynamodb-endpoint", "", "a fresh DynamoDB server to use (e.g. DynamoDB Local) instead of starting Dynoxide")
	scale := fs.String("scale", "quick", "how much to measure: quick (under 2 minutes), compare (the closed loop at c=32, 3,000 transfers per pass: two builds side by side), peak (the full run's c=8 and c=32 cells: with --only closed,store, the efficiency at the peak), contention (the closed loop at c=32 over 16 accounts: transfers that contend for the same items) or full (the performance figures)")
	store := fs.String("store", "memory", "where the stack and Dynoxide keep their data: memory, or disk (temporary folders)")
	fs.StringVar(&o.out, "out", "", "the JSON file to write, - for none (default: lab/bench/results/latest.json, or latest-quick.json with --scale quick)")
	fs.StringVar(&o.cfg.NodeDir, "node-dir", "", "where the engine comparison finds the npm engine (default: its own)")
	fs.StringVar(&o.stackLog, "stack-log", "", "write the stacks' own logs to this file (default: discarded)")
	stackArgs := fs.String("stack-args", "", "more flags for the measured stack, space-separated (e.g. \"--pprof-addr 127.0.0.1:6060\" to profile it)")
	only := fs.String("only", "", "measure only these sections, comma-separated: "+strings.Join(loadbench.Sections, ",")+" (default: all)")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return o, err
	} else if err != nil {
		return o, &usageError{err}
	}
	var err error
	if o.cfg.Only, err = loadbench.ParseOnly(*only); err != nil {
		return o, &usageError{err}
	}
	if fs.NArg() > 0 {
		return o, &usageError{fmt.Errorf("unexpected arguments: %v", fs.Args())}
	}
	o.cfg.StackArgs = strings.Fields(*stackArgs)
	if o.cfg.Scale, err = loadbench.ScaleByName(*scale); err != nil {
		return o, &usageError{err}
	}
	switch *store {
	case "memory":
	case "disk":
		o.cfg.Disk = true
	default:
		return o, &usageError{fmt.Errorf("store %q: want memory or disk", *store)}
	}
	if o.cfg.LocalDir == "" || o.out == "" {
		wd, err := getwd()
		if err != nil {
			return o, err
		}
		root, err := samtemplate.FindRoot(wd)
		if err != nil {
			return o, fmt.Errorf("find the repository (run from inside it, or give --local-dir and --out): %w", err)
		}
		if o.cfg.LocalDir == "" {
			o.cfg.LocalDir = root
		}
		if o.out == "" {
			name := "latest.json"
			if o.cfg.Scale.Name != "full" {
				name = "latest-" + o.cfg.Scale.Name + ".json"
			}
			o.out = filepath.Join(root, "lab", "bench", "results", name)
		}
	}
	return o, nil
}

// run parses the command line, measures, prints the table to stdout and writes the JSON. Progress goes to stderr;
// --help prints the usage to stdout, a bad command line the flag package's message and the usage to stderr.
func run(ctx context.Context, args []string, getwd func() (string, error), stdout, stderr io.Writer) error {
	var msg bytes.Buffer
	o, err := parseFlags(args, getwd, &msg)
	if errors.Is(err, flag.ErrHelp) {
		_, _ = msg.WriteTo(stdout)
		return nil
	}
	_, _ = msg.WriteTo(stderr)
	if err != nil {
		return err
	}
	o.cfg.Progress = stderr
	o.cfg.Engine = engine
	o.cfg.IndexStreams = streamindex.Apply
	if o.stackLog != "" {
		f, err := os.Create(o.stackLog)
		if err != nil {
			return fmt.Errorf("stack log: %w", err)
		}
		defer f.Close()
		o.cfg.StackLog = f
	}
	res, err := loadbench.Run(ctx, o.cfg)
	if err != nil {
		return err
	}
	loadbench.Report(stdout, *res)
	if o.out == "-" {
		return nil
	}
	if err := loadbench.WriteJSON(o.out, *res); err != nil {
		return err
	}
	fmt.Fprintln(stderr, "bench: wrote", o.out)
	return nil
}
