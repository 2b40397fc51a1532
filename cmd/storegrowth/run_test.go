package main

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
)

func TestParseFlagsRefusesArguments(t *testing.T) {
	if _, err := parseFlags([]string{"--steps", "2", "extra"}, io.Discard); err == nil || !strings.Contains(err.Error(), "unexpected arguments") {
		t.Errorf("err = %v, want unexpected arguments", err)
	}
	o, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.cfg.Fill != "workload" || !o.cfg.Tokens || o.endpoint != "" || o.dbPath != "" {
		t.Errorf("defaults: fill %q, tokens %v, endpoint %q, db path %q", o.cfg.Fill, o.cfg.Tokens, o.endpoint, o.dbPath)
	}
}

// TestRunPrintsOneRowPerStep runs the command at a tiny scale on its own Dynoxide and checks the table it prints.
func TestRunPrintsOneRowPerStep(t *testing.T) {
	var out strings.Builder
	args := []string{"--steps", "2", "--step", "4", "--probe", "2", "--c", "2", "--accounts", "6"}
	if err := run(context.Background(), args, os.Getwd, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want a header and 3 rows:\n%s", len(lines), out.String())
	}
	for i, label := range []string{"row", "fresh", "step 1", "step 2"} {
		if got := strings.TrimSpace(lines[i]); !strings.HasPrefix(got, label) {
			t.Errorf("line %d = %q, want it to start with %q", i, got, label)
		}
	}
	if !strings.Contains(lines[0], "leg-notoken") || !strings.Contains(lines[0], "RSS MiB") {
		t.Errorf("header %q lacks the probe or memory columns", lines[0])
	}
}
