// This file runs the local stack (bin/local, cmd/local) as a separate, owned process, as programs that
// drive it from outside do (cmd/bench): it builds the binary when asked, starts it on free ports, waits for its
// ready line (docs/local-stack.md) and stops it with SIGTERM, then SIGKILL after the 5 seconds docs/local-stack.md promises.

package stack

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// stopGrace is how long the stack has to stop after SIGTERM (docs/local-stack.md).
const stopGrace = 5 * time.Second

// ProcessOptions configures Start.
type ProcessOptions struct {
	// Binary is the local stack's executable.
	Binary string
	// Dir is the directory it runs in: it reads template.yaml and statemachine/ from there.
	Dir string
	// Args are flags added after the free-port addresses (--api-addr, --sfn-addr, --dynamodb-addr 127.0.0.1:0, and
	// --events-addr 127.0.0.1:0 when the stack has that flag), which they may override.
	Args []string
	// Stderr receives the stack's logs; nil discards them.
	Stderr io.Writer
	// ReadyTimeout bounds the wait for the ready line (default 2 minutes: seeding many accounts takes a while).
	ReadyTimeout time.Duration
}

// hasFlag reports whether the stack's usage (--help) lists flag: a stack built before the flag existed (an older
// build of main measured by cmd/bench) would refuse it.
func hasFlag(ctx context.Context, binary, dir, flag string) bool {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "--help")
	cmd.Dir = dir
	out, _ := cmd.CombinedOutput() // the usage is what counts, whatever the exit status (older builds exit 1 after --help)
	return strings.Contains(string(out), "-"+flag+" ")
}

// Process is a running local stack.
type Process struct {
	// Endpoints are the ready line's name=url pairs: api, sfn, dynamodb, and any the stack adds.
	Endpoints map[string]string

	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// API is the URL of the transfer API.
func (p *Process) API() string { return p.Endpoints["api"] }

// SFN is the URL of the Step Functions API.
func (p *Process) SFN() string { return p.Endpoints["sfn"] }

// PID is the stack's process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// StartProcess runs the stack and returns once it has printed its ready line. The process is stopped when ctx is
// cancelled or Close is called.
func StartProcess(ctx context.Context, opts ProcessOptions) (*Process, error) {
	args := []string{"--api-addr", "127.0.0.1:0", "--sfn-addr", "127.0.0.1:0", "--dynamodb-addr", "127.0.0.1:0"}
	if hasFlag(ctx, opts.Binary, opts.Dir, "events-addr") {
		args = append(args, "--events-addr", "127.0.0.1:0")
	}
	args = append(args, opts.Args...)
	cmd := exec.CommandContext(ctx, opts.Binary, args...)
	cmd.Dir = opts.Dir
	cmd.Stderr = opts.Stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = stopGrace
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("local stack: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("local stack: start %s: %w", opts.Binary, err)
	}
	p := &Process{cmd: cmd, done: make(chan struct{})}
	ready := make(chan string, 1)
	var drained sync.WaitGroup
	drained.Add(1)
	go func() {
		defer drained.Done()
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, "ready ") {
				select {
				case ready <- line:
				default:
				}
			}
		}
	}()
	go func() {
		drained.Wait()
		p.err = cmd.Wait()
		close(p.done)
	}()
	timeout := opts.ReadyTimeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	select {
	case line := <-ready:
		eps, err := ParseReady(line)
		if err != nil {
			_ = p.Close()
			return nil, err
		}
		p.Endpoints = eps
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("local stack exited before it was ready: %v", p.err)
	case <-time.After(timeout):
		_ = p.Close()
		return nil, fmt.Errorf("local stack not ready after %s", timeout)
	case <-ctx.Done():
		_ = p.Close()
		return nil, ctx.Err()
	}
}

// ParseReady reads the ready line, `ready api=http://… sfn=http://… dynamodb=http://…`, into its name=url pairs;
// api and sfn are required.
func ParseReady(line string) (map[string]string, error) {
	fields := strings.Fields(line)
	if len(fields) == 0 || fields[0] != "ready" {
		return nil, fmt.Errorf("not a ready line: %q", line)
	}
	eps := map[string]string{}
	for _, f := range fields[1:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("ready line %q: %q is not name=url", line, f)
		}
		eps[k] = v
	}
	if eps["api"] == "" || eps["sfn"] == "" {
		return nil, fmt.Errorf("ready line %q: want api= and sfn=", line)
	}
	return eps, nil
}

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Close stops the stack (SIGTERM, then SIGKILL after 5 seconds) and waits for it to exit. It reports an error when
// the stack did not stop on SIGTERM in time.
func (p *Process) Close() error {
	select {
	case <-p.done:
		return nil
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(stopGrace):
		_ = p.cmd.Process.Kill()
		<-p.done
		return errors.New("local stack did not stop within 5 seconds of SIGTERM; killed")
	}
}

// BuildBinary compiles ./cmd/local of the module in srcDir to out.
func BuildBinary(ctx context.Context, srcDir, out string) error {
	return buildMain(ctx, srcDir, "./cmd/local", out)
}

// buildMain compiles the main package pkg (such as ./cmd/local) of the module in srcDir to out.
func buildMain(ctx context.Context, srcDir, pkg, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = srcDir
	cmd.Env = os.Environ()
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s in %s: %v\n%s", pkg, srcDir, err, b)
	}
	return nil
}

// KeptBinary compiles the main package pkg (such as ./cmd/local) of the module in srcDir into srcDir's bin/kept/OWNER/
// folder, which outlives the run, and returns the binary's path. go build writes a binary again only when its code or
// flags changed, so an unchanged one costs a check, where a build into a new folder links it every time (about 3 s
// of CPU time for cmd/local). The binary is under the module's bin/ as make build's are, so it finds the template
// above it as bin/local does (samtemplate.Locate); owners that may build at the same time (test packages running
// at once) each name their own folder, so that no two write one file.
func KeptBinary(ctx context.Context, srcDir, pkg, owner string) (string, error) {
	abs, err := filepath.Abs(srcDir)
	if err != nil {
		return "", err
	}
	out := filepath.Join(abs, "bin", "kept", owner, filepath.Base(pkg))
	if err := buildMain(ctx, abs, pkg, out); err != nil {
		return "", err
	}
	return out, nil
}

// SeedAccount is one account of the stack's --seed file (docs/local-stack.md).
type SeedAccount struct {
	AccountID string `json:"accountId"`
	Currency  string `json:"currency"`
	Balance   int64  `json:"balance"`
	// Owner is the principal ARN of the account's owner (LocalCaller for the unsigned requests a load sends); an
	// account without one only operators may spend.
	Owner string `json:"owner,omitempty"`
}

// LocalCaller is the principal of the local gateway's unsigned requests: the owner of the accounts a load spends.
const LocalCaller = "arn:aws:iam::000000000000:user/local"

// WriteSeed writes a --seed file that opens accounts.
func WriteSeed(path string, accounts []SeedAccount) error {
	if accounts == nil {
		accounts = []SeedAccount{}
	}
	b, err := json.Marshal(accounts)
	if err != nil {
		return fmt.Errorf("seed file: %w", err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("seed file: %w", err)
	}
	return nil
}
