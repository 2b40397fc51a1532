// This file builds a Go Lambda function the way `sam build` does for a function with Metadata BuildMethod
// go1.x on an OS-only runtime (provided.al2023): go build, in the function's CodeUri folder, of one static binary
// named bootstrap, for Linux, with the flags of the goflags file in this folder. The Makefile's sam-build target
// passes `sam build` the same file's flags, so the flags live in one place.

package saminvoke

import (
	"context"
	_ "embed" // the goflags file
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

//go:embed goflags
var goflags string

// GOFLAGS is the flags every function binary is built with (the goflags file): -trimpath, stripped symbols
// (-ldflags=-s) and no RPC shim (-tags=lambda.norpc), which only the retired go1.x runtime used.
func GOFLAGS() string { return strings.TrimSpace(goflags) }

// BuildOptions says what to build.
type BuildOptions struct {
	// Dir is the function's source folder (its CodeUri, resolved against the template's folder).
	Dir string
	// Out is the binary to write; Lambda runs a file named bootstrap.
	Out string
	// GOOS and GOARCH are the target; sam build always builds for linux and the function's Architectures.
	GOOS, GOARCH string
}

// Build runs go build as sam build does: with the environment passed through (so GOPROXY, GOCACHE and the like
// apply), CGO_ENABLED=0, the target's GOOS and GOARCH, and GOFLAGS with the environment's own flags first and the
// project's after them (the later of two settings of a flag wins). Go's build cache makes a build of unchanged code
// cheap, and an up-to-date Out is not written again.
func Build(ctx context.Context, o BuildOptions) error {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return errors.New("build: the go command is not on PATH (building a function needs it, as sam build does)")
	}
	cmd := exec.CommandContext(ctx, gobin, "build", "-o", o.Out, ".")
	cmd.Dir = o.Dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+o.GOOS, "GOARCH="+o.GOARCH,
		"GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" "+GOFLAGS()))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build in %s: %w\n%s", o.Dir, err, out)
	}
	return nil
}
