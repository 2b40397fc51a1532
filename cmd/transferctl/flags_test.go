package main

import (
	"flag"
	"io"
	"net/url"
	"strings"
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

func TestJoinSignValue(t *testing.T) {
	tests := []struct {
		name     string
		in, want []string
	}{
		{"a separate value", []string{"--sign", "true", "--operator", "get", "tr_1"}, []string{"--sign=true", "--operator", "get", "tr_1"}},
		{"after the command", []string{"get", "tr_1", "-sign", "false"}, []string{"get", "tr_1", "-sign=false"}},
		{"auto", []string{"--sign", "auto", "get", "tr_1"}, []string{"--sign=auto", "get", "tr_1"}},
		{"bare, before the command name", []string{"--sign", "get", "tr_1"}, []string{"--sign", "get", "tr_1"}},
		{"bare, last", []string{"get", "tr_1", "--sign"}, []string{"get", "tr_1", "--sign"}},
		{"only auto, true and false", []string{"--sign", "yes", "accounts"}, []string{"--sign", "yes", "accounts"}},
		{"already joined", []string{"--sign=true", "true"}, []string{"--sign=true", "true"}},
		{"not after --", []string{"accounts", "get", "--", "--sign", "true"}, []string{"accounts", "get", "--", "--sign", "true"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := joinSignValue(tc.in); strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("joinSignValue(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
