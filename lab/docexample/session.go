package docexample

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// DefaultTimeout bounds a Session without a Timeout.
const DefaultTimeout = 5 * time.Minute

// Session runs the "sh" blocks of one document, in order, in one bash process with set -euo pipefail, so that a
// variable set in one block is seen by the next and a failing command ends the session. Each block's standard
// output and error are kept apart; its standard input is /dev/null.
type Session struct {
	// Dir is the working directory of the shell.
	Dir string
	// Env is the shell's whole environment: nothing is inherited from the caller.
	Env []string
	// Rewrite, when not nil, is applied to each block's code before it runs (the test uses it to turn the
	// documents' default addresses into the stack's).
	Rewrite func(string) string
	// Timeout bounds the whole session; 0 means DefaultTimeout. At the timeout the shell and everything it started
	// are killed.
	Timeout time.Duration
	// Bash is the shell's path; "" means bash on the caller's PATH.
	Bash string
}

// Result is what one block did.
type Result struct {
	Block Block
	// Code is the code that ran (after Rewrite).
	Code string
	// Ran is set when the block started; Finished when it ran to its end.
	Ran, Finished bool
	// Stdout and Stderr are what the block printed.
	Stdout, Stderr []byte
	// Err, for the block that ended the session, says how: the shell's exit status, or the timeout.
	Err error
}

// Run runs blocks (normally Document.Run()) and returns one Result per block, in order. The error is for the
// session itself (the shell could not start, or a work file could not be written or read); a block that fails
// is reported in its Result, and the blocks after it have Ran unset.
func (s *Session) Run(ctx context.Context, blocks []Block) ([]Result, error) {
	work, err := os.MkdirTemp("", "docexample-")
	if err != nil {
		return nil, fmt.Errorf("make session directory: %w", err)
	}
	defer os.RemoveAll(work)

	results := make([]Result, len(blocks))
	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	for i, b := range blocks {
		code := b.Code
		if s.Rewrite != nil {
			code = s.Rewrite(code)
		}
		results[i] = Result{Block: b, Code: code}
		base := filepath.Join(work, fmt.Sprint(i))
		if err := os.WriteFile(base+".sh", []byte(code), 0o600); err != nil {
			return nil, fmt.Errorf("write block %d: %w", b.Line, err)
		}
		// Sourced, so that the block runs in the session's shell; the marker is written only if it ran to its end.
		fmt.Fprintf(&script, ". %s >%s 2>%s </dev/null\n: >%s\n",
			shQuote(base+".sh"), shQuote(base+".out"), shQuote(base+".err"), shQuote(base+".done"))
	}
	driver := filepath.Join(work, "session.sh")
	if err := os.WriteFile(driver, []byte(script.String()), 0o600); err != nil {
		return nil, fmt.Errorf("write session script: %w", err)
	}
	shellOut, err := os.Create(filepath.Join(work, "shell.out"))
	if err != nil {
		return nil, fmt.Errorf("create shell output: %w", err)
	}
	defer shellOut.Close()

	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	bash := s.Bash
	if bash == "" {
		bash = "bash"
	}
	cmd := exec.CommandContext(ctx, bash, "--noprofile", "--norc", driver)
	cmd.Dir = s.Dir
	cmd.Env = s.Env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	// Files, not pipes: a command a block left running in the background cannot hold the session open.
	cmd.Stdout, cmd.Stderr = shellOut, shellOut
	// Its own process group, so that the timeout, and the end of the session, stop everything the blocks started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bash, err)
	}
	runErr := cmd.Wait()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what the blocks left in the background
	timedOut := ctx.Err() != nil

	for i := range results {
		r := &results[i]
		base := filepath.Join(work, fmt.Sprint(i))
		out, errOut := os.ReadFile(base + ".out")
		if errors.Is(errOut, os.ErrNotExist) {
			continue // never started
		}
		if errOut != nil {
			return nil, fmt.Errorf("read output of block %d: %w", r.Block.Line, errOut)
		}
		r.Ran, r.Stdout = true, out
		if r.Stderr, err = os.ReadFile(base + ".err"); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("read errors of block %d: %w", r.Block.Line, err)
		}
		if _, err := os.Stat(base + ".done"); err == nil {
			r.Finished = true
			continue
		}
		switch {
		case timedOut:
			r.Err = fmt.Errorf("the session timed out after %s while this block ran", timeout)
		case runErr != nil:
			r.Err = fmt.Errorf("the block ended the session: %w", runErr)
		default:
			r.Err = errors.New("the block ended the session (exit status 0: an exit in the block?)")
		}
		if b, _ := os.ReadFile(shellOut.Name()); len(b) > 0 {
			r.Stderr = append(r.Stderr, b...) // the shell's own messages, such as a syntax error in a block
		}
	}
	return results, nil
}

// shQuote quotes s for bash.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
