package main

import (
	"flag"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/transferflow/orchestrator/internal/transferclient"
)

// globals are the flags every command accepts, before or after its name.
type globals struct {
	endpoint    string
	output      outputFormat
	sign        signMode
	region      string
	timeout     time.Duration
	maxAttempts int
	quiet       bool
}

func defaultGlobals(getenv func(string) string) globals {
	ep := getenv("TRANSFERCTL_ENDPOINT")
	if ep == "" {
		ep = defaultEndpoint
	}
	return globals{
		endpoint:    ep,
		output:      "text",
		sign:        "auto",
		timeout:     60 * time.Second,
		maxAttempts: transferclient.DefaultMaxAttempts,
	}
}

// bind registers the global flags on fs with their current values as defaults, so that binding them again on a
// command's flag set keeps what was parsed before the command name.
func (g *globals) bind(fs *flag.FlagSet) {
	fs.StringVar(&g.endpoint, "endpoint", g.endpoint, "")
	fs.Var(&g.output, "output", "")
	fs.Var(&g.sign, "sign", "")
	fs.StringVar(&g.region, "region", g.region, "")
	fs.DurationVar(&g.timeout, "timeout", g.timeout, "")
	fs.IntVar(&g.maxAttempts, "max-attempts", g.maxAttempts, "")
	fs.BoolVar(&g.quiet, "quiet", g.quiet, "")
}

// check validates values flag parsing cannot.
func (g *globals) check() error {
	if g.timeout <= 0 {
		return fmt.Errorf("--timeout must be positive, got %s", g.timeout)
	}
	if g.maxAttempts < 1 || g.maxAttempts > 20 {
		return fmt.Errorf("--max-attempts must be 1 to 20, got %d", g.maxAttempts)
	}
	return nil
}

// outputFormat is --output: text or json.
type outputFormat string

// String returns the format's name.
func (o *outputFormat) String() string { return string(*o) }

// Set accepts text or json.
func (o *outputFormat) Set(s string) error {
	switch s {
	case "text", "json":
		*o = outputFormat(s)
		return nil
	}
	return fmt.Errorf("want text or json, got %q", s)
}

// signMode is --sign: auto (sign unless the endpoint is loopback), true or false. A bare --sign means true.
type signMode string

// String returns the mode's name.
func (m *signMode) String() string { return string(*m) }

// Set accepts auto, true or false (and 1/0, yes/no).
func (m *signMode) Set(s string) error {
	switch strings.ToLower(s) {
	case "auto":
		*m = "auto"
	case "true", "1", "yes":
		*m = "true"
	case "false", "0", "no":
		*m = "false"
	default:
		return fmt.Errorf("want auto, true or false, got %q", s)
	}
	return nil
}

// IsBoolFlag lets --sign stand alone.
func (m *signMode) IsBoolFlag() bool { return true }

// enabled decides whether requests to u are signed.
func (m signMode) enabled(u *url.URL) bool {
	switch m {
	case "true":
		return true
	case "false":
		return false
	}
	return !isLoopback(u.Hostname())
}
