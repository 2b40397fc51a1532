package fnconfig

import (
	"strings"
	"testing"
)

func TestCommandLine(t *testing.T) {
	tests := []struct {
		name           string
		args           []string
		code           int
		exit           bool
		stdout, stderr []string
	}{
		{name: "as Lambda starts it: no arguments", args: nil, exit: false},
		{name: "--", args: []string{"--"}, exit: false},
		{name: "--help", args: []string{"--help"}, code: 0, exit: true,
			stdout: []string{"usage: bootstrap [--help]", "Debits. (DebitFunction in template.yaml)", "bin/local invoke DebitFunction", "-h, --help"}},
		{name: "-h", args: []string{"-h"}, code: 0, exit: true, stdout: []string{"usage: bootstrap"}},
		{name: "unknown flag", args: []string{"--nope"}, code: 2, exit: true,
			stderr: []string{"bootstrap: flag provided but not defined: -nope", "usage: bootstrap"}},
		{name: "argument", args: []string{"serve"}, code: 2, exit: true, stderr: []string{"unexpected arguments: [serve]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			code, exit := CommandLine(tt.args, "DebitFunction", "Debits.", &stdout, &stderr)
			if code != tt.code || exit != tt.exit {
				t.Errorf("CommandLine = %d, %v; want %d, %v", code, exit, tt.code, tt.exit)
			}
			for _, s := range tt.stdout {
				if !strings.Contains(stdout.String(), s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout.String())
				}
			}
			for _, s := range tt.stderr {
				if !strings.Contains(stderr.String(), s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr.String())
				}
			}
			if len(tt.stdout) == 0 && stdout.Len() > 0 || len(tt.stderr) == 0 && stderr.Len() > 0 {
				t.Errorf("unexpected output: stdout %q, stderr %q", stdout.String(), stderr.String())
			}
		})
	}
}
