package main

import (
	"flag"
	"io"
	"net/url"
	"testing"
)

func newTestFlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Bool("wait", false, "")
	return fs
}

func TestSignModeEnabled(t *testing.T) {
	tests := []struct {
		mode, endpoint string
		want           bool
	}{
		{"auto", "http://127.0.0.1:3000", false},
		{"auto", "http://localhost:3000", false},
		{"auto", "http://[::1]:3000", false},
		{"auto", "https://abc.execute-api.eu-west-1.amazonaws.com/Prod", true},
		{"auto", "https://10.0.0.5", true},
		{"true", "http://127.0.0.1:3000", true},
		{"false", "https://abc.execute-api.eu-west-1.amazonaws.com", false},
	}
	for _, tc := range tests {
		t.Run(tc.mode+" "+tc.endpoint, func(t *testing.T) {
			u, _ := url.Parse(tc.endpoint)
			if got := signMode(tc.mode).enabled(u); got != tc.want {
				t.Errorf("enabled = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestGlobalsBeforeAndAfterTheCommand(t *testing.T) {
	g := defaultGlobals(func(string) string { return "" })
	top := flag.NewFlagSet("top", flag.ContinueOnError)
	g.bind(top)
	if err := top.Parse([]string{"--output", "json", "--timeout", "5s", "get"}); err != nil {
		t.Fatal(err)
	}
	sub := flag.NewFlagSet("sub", flag.ContinueOnError)
	g.bind(sub)
	if err := sub.Parse([]string{"--region", "eu-west-1"}); err != nil {
		t.Fatal(err)
	}
	if g.output != "json" || g.timeout.String() != "5s" || g.region != "eu-west-1" {
		t.Errorf("globals = %+v", g)
	}
}

func TestShellQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"GENERATEDKEY0001", "GENERATEDKEY0001"},
		{"order-118/a", "order-118/a"},
		{`x"y\z`, `'x"y\z'`},
		{"it's", `'it'\''s'`},
		{"a;rm", "'a;rm'"},
	}
	for _, tc := range tests {
		if got := shellQuote(tc.in); got != tc.want {
			t.Errorf("shellQuote(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
