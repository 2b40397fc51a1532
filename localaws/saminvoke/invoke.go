// Package saminvoke is `sam local invoke` without Docker: `local invoke <LogicalId> --event FILE [--env-vars FILE]`
// builds one function of template.yaml as `sam build` does (build.go), resolves its environment as SAM
// does (the template's Environment with Globals, then env.json's Parameters, then the function's own entry), runs
// the binary as a child process under the Lambda Runtime API (localaws/runtimeapi) with the function's Timeout and
// MemorySize enforced, prints the function's response (or its error document) on standard output, and its logs with
// Lambda's START, END and REPORT lines on standard error.
//
// Two deviations from sam build, because the binary runs on this machine rather than in Lambda's image: it is built
// for the machine's architecture (GOARCH) rather than the template's Architectures, and on an operating system other
// than Linux for that system (GOOS). The exit status is SAM's: 0 whenever the function ran, whether it answered or
// failed; 1 when the invoke itself failed (no such function, a build error, an unreadable file); 2 for a usage error.
package saminvoke

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/transferflow/orchestrator/localaws/samtemplate"
	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// Exit statuses of Main.
const (
	ExitOK    = 0 // the function ran (its answer may be an error)
	ExitError = 1 // the invoke failed
	ExitUsage = 2 // the command line is wrong
)

// options is the command line.
type options struct {
	logicalID string
	event     string // a file, "-" for standard input, "" for the empty event {}
	envVars   string
	template  string
}

const usage = "usage: local invoke <LogicalId> [--event FILE|-] [--env-vars FILE] [--template FILE]"

func parseArgs(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("invoke", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, usage)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.event, "event", "", "JSON file with the event; - reads standard input; without it the event is {}")
	fs.StringVar(&o.event, "e", "", "shorthand for --event")
	fs.StringVar(&o.envVars, "env-vars", "", `JSON file of variable values: {"Parameters": {…}, "<LogicalId>": {…}}`)
	fs.StringVar(&o.envVars, "n", "", "shorthand for --env-vars")
	fs.StringVar(&o.template, "template", "", "the SAM template (default: the template.yaml next to this module's go.mod, found from the current directory up, else from the binary's)")
	fs.StringVar(&o.template, "t", "", "shorthand for --template")
	// The logical id may come before or after the flags, as with sam.
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return options{}, err
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(positional) != 1 {
		fs.Usage()
		return options{}, fmt.Errorf("want one function logical id, got %d arguments", len(positional))
	}
	o.logicalID = positional[0]
	return o, nil
}

// Main runs `local invoke` with the arguments after "invoke" and returns the exit status.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o, err := parseArgs(args, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return ExitOK
	case err != nil:
		fmt.Fprintln(stderr, "invoke:", err)
		return ExitUsage
	}
	logger := slog.New(slog.NewJSONHandler(stderr, nil))
	output, err := run(ctx, o, stdin, stderr, logger)
	if err != nil {
		fmt.Fprintln(stderr, "invoke:", err)
		return ExitError
	}
	fmt.Fprintf(stdout, "%s\n", output)
	return ExitOK
}

// run builds and invokes the function and returns what `sam local invoke` prints on standard output.
func run(ctx context.Context, o options, stdin io.Reader, logs io.Writer, logger *slog.Logger) ([]byte, error) {
	if o.template == "" {
		var err error
		if o.template, err = samtemplate.Locate(); err != nil {
			return nil, fmt.Errorf("find the template (give --template FILE): %w", err)
		}
		logger.Info("template", "path", o.template)
	}
	tmpl, err := samtemplate.Load(o.template)
	if err != nil {
		return nil, err
	}
	creds := credentialsFrom(os.Getenv)
	fns, err := tmpl.Functions(samtemplate.Env{Region: creds.region, AccountID: samAccountID}, samResolver{region: creds.region})
	if err != nil {
		return nil, err
	}
	fn, err := find(fns, o.logicalID)
	if err != nil {
		return nil, err
	}
	if fn.BuildMethod != "go1.x" || !strings.HasPrefix(fn.Runtime, "provided") {
		return nil, fmt.Errorf("%s: only Go functions (Metadata BuildMethod go1.x, Runtime provided.*) can be invoked, not BuildMethod %q Runtime %q",
			fn.LogicalID, fn.BuildMethod, fn.Runtime)
	}
	event, err := readEvent(o.event, stdin)
	if err != nil {
		return nil, err
	}
	file, err := readEnvFile(o.envVars)
	if err != nil {
		return nil, err
	}

	dir := filepath.Join(filepath.Dir(o.template), fn.CodeURI)
	bootstrap, err := build(ctx, dir, logger)
	if err != nil {
		return nil, err
	}
	env, ignored := environment(fn, file, creds, filepath.Dir(bootstrap))
	if len(ignored) > 0 {
		logger.Warn("env vars file sets variables the template does not declare for the function; ignored, as sam local invoke ignores them",
			"function", fn.LogicalID, "variables", ignored)
	}
	sb := &sandbox{
		bootstrap: bootstrap, env: environ(env), timeout: fn.Timeout, memoryMB: fn.MemorySize,
		arn: functionArn(creds.region, fn.LogicalID), initLimit: initLimit, logs: logs, newID: sfnengine.NewUUID,
	}
	logger.Info("invoking", "function", fn.LogicalID, "runtime", fn.Runtime, "bootstrap", bootstrap,
		"timeout", fn.Timeout.String(), "memorySizeMB", fn.MemorySize)
	res, err := sb.invoke(ctx, event)
	if err != nil {
		return nil, err
	}
	return res.output, nil
}

func find(fns []samtemplate.Function, logicalID string) (samtemplate.Function, error) {
	var ids []string
	for _, f := range fns {
		if f.LogicalID == logicalID {
			return f, nil
		}
		ids = append(ids, f.LogicalID)
	}
	sort.Strings(ids)
	return samtemplate.Function{}, fmt.Errorf("the template has no function %s (it has %s)", logicalID, strings.Join(ids, ", "))
}

// readEvent reads the event: a file, standard input for "-", or {} when none is given (as sam does).
func readEvent(path string, stdin io.Reader) ([]byte, error) {
	var (
		b   []byte
		err error
	)
	switch path {
	case "":
		return []byte("{}"), nil
	case "-":
		b, err = io.ReadAll(stdin)
	default:
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("event: %w", err)
	}
	return b, nil
}

// target is what the function is built for: Linux, as sam build does, on a Linux machine; the machine's own system
// elsewhere, where a Linux binary cannot run. Always the machine's architecture.
func target() (goos, goarch string) {
	if runtime.GOOS == "linux" {
		return "linux", runtime.GOARCH
	}
	return runtime.GOOS, runtime.GOARCH
}

// build builds the function in dir into a cache folder named after the function's folder, the target and the flags,
// in the temporary directory (where go build's own work directory is, so the finished binary is renamed into place
// atomically). go build rewrites the binary only when the code changed, so an invoke of unchanged code only checks.
// The folder's time is set to now on every use, and the cache is trimmed of folders unused for a while (trimCache).
func build(ctx context.Context, dir string, logger *slog.Logger) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	goos, goarch := target()
	key := sha256.Sum256([]byte(abs + "\x00" + goos + "/" + goarch + "\x00" + GOFLAGS()))
	cache := filepath.Join(os.TempDir(), "transferflow-invoke")
	out := filepath.Join(cache, hex.EncodeToString(key[:8]), "bootstrap")
	// Marked as used before the build, so that another invoke's trim cannot take it away in between.
	now := time.Now()
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", err
	}
	if err := os.Chtimes(filepath.Dir(out), now, now); err != nil {
		return "", err
	}
	logger.Info("building", "dir", abs, "GOOS", goos, "GOARCH", goarch, "GOFLAGS", GOFLAGS(), "output", out)
	if err := Build(ctx, BuildOptions{Dir: abs, Out: out, GOOS: goos, GOARCH: goarch}); err != nil {
		return "", err
	}
	if n, err := trimCache(cache, now); err != nil {
		logger.Warn("trimming the build cache", "dir", cache, "error", err.Error())
	} else if n > 0 {
		logger.Info("trimmed the build cache", "dir", cache, "removed", n)
	}
	return out, nil
}

// The build cache keeps a binary for each function folder, target and flags ever invoked, about 10 MB each, and every
// clone of the repository has folders of its own. As Go's build cache does, trimCache removes the binaries not used
// for cacheUnused, and looks at most once per trimInterval (the time of the file trimStamp says when it last did).
const (
	cacheUnused  = 5 * 24 * time.Hour
	trimInterval = 24 * time.Hour
	trimStamp    = "trimmed"
)

// trimCache removes the folders of cache whose time (build sets it on every use) is older than cacheUnused, unless it
// did so within trimInterval, and returns how many it removed. A stamp from the future (a clock set back) counts as
// old. A folder it cannot remove does not stop it; the errors are returned together.
func trimCache(cache string, now time.Time) (int, error) {
	stamp := filepath.Join(cache, trimStamp)
	if fi, err := os.Stat(stamp); err == nil {
		if age := now.Sub(fi.ModTime()); age >= 0 && age < trimInterval {
			return 0, nil
		}
	}
	if err := os.WriteFile(stamp, nil, 0o644); err != nil {
		return 0, err
	}
	if err := os.Chtimes(stamp, now, now); err != nil {
		return 0, err
	}
	entries, err := os.ReadDir(cache)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		fi, err := e.Info()
		if err != nil || now.Sub(fi.ModTime()) < cacheUnused {
			continue
		}
		if err := os.RemoveAll(filepath.Join(cache, e.Name())); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}
