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
	// operator sends every request to the operator routes (transferclient.Client.Operator).
	operator bool
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
	fs.BoolVar(&g.operator, "operator", g.operator, "")
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

// signWords are the values --sign also takes as the next argument, as usage writes it ("--sign true"); the flag
// package takes a bool flag's value only after "=".
var signWords = map[string]bool{"auto": true, "true": true, "false": true}

// joinSignValue returns args with "--sign WORD" (or "-sign WORD") written "--sign=WORD" when WORD is auto, true or
// false, up to a "--". A bare --sign followed by anything else (the command name, an argument) stays true.
func joinSignValue(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if (a == "--sign" || a == "-sign") && i+1 < len(args) && signWords[args[i+1]] {
			out = append(out, a+"="+args[i+1])
			i++
			continue
		}
		out = append(out, a)
	}
	return out
}

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
