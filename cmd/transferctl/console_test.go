package main

import "testing"

// TestConsoleUsageErrors: the console's flags are checked before anything listens or is read.
func TestConsoleUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"an argument", []string{"console", "extra"}, `console takes no arguments, got ["extra"]`},
		{"plain http to another host", []string{"console", "--sfn-endpoint", "http://example.com:8083"}, `--sfn-endpoint "http://example.com:8083": plain http is allowed only to loopback`},
		{"not a URL", []string{"console", "--sfn-endpoint", "states"}, `--sfn-endpoint "states": want http(s)://host:port or "aws"`},
		{"plain http API", []string{"--endpoint", "http://example.com", "console"}, "plain http is allowed only to loopback"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			newHarness(t, nil).wantUsageError(tc.args, tc.want)
		})
	}
}
