package main

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/transferflow/orchestrator/lab/loadbench"
)

func TestParseFlags(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(filepath.Dir(wd))
	noWD := func() (string, error) { return "", errors.New("no working directory") }
	tests := []struct {
		name    string
		args    []string
		getwd   func() (string, error)
		check   func(t *testing.T, o options)
		wantErr string
	}{
		{name: "defaults: quick, this repository, latest-quick.json", args: nil, getwd: os.Getwd, check: func(t *testing.T, o options) {
			if o.cfg.Scale.Name != "quick" || o.cfg.LocalDir != root || o.cfg.LocalBin != "" || o.cfg.Disk ||
				o.out != filepath.Join(root, "lab", "bench", "results", "latest-quick.json") {
				t.Errorf("options = %+v, out %s", o.cfg, o.out)
			}
		}},
		{name: "full writes latest.json", args: []string{"--scale", "full"}, getwd: os.Getwd, check: func(t *testing.T, o options) {
			if o.cfg.Scale.Name != "full" || o.out != filepath.Join(root, "lab", "bench", "results", "latest.json") {
				t.Errorf("scale %s, out %s", o.cfg.Scale.Name, o.out)
			}
		}},
		{name: "an older build, no file, on disk, through DynamoDB Local", getwd: noWD,
			args: []string{"--local-bin", "/work/baseline/local", "--local-dir", "/work/baseline/src", "--out", "-", "--store", "disk", "--dynamodb-endpoint", "http://127.0.0.1:8000"},
			check: func(t *testing.T, o options) {
				if o.cfg.LocalBin != "/work/baseline/local" || o.cfg.LocalDir != "/work/baseline/src" || o.out != "-" || !o.cfg.Disk || o.cfg.DynamoDBEndpoint != "http://127.0.0.1:8000" {
					t.Errorf("options = %+v, out %s", o.cfg, o.out)
				}
			}},
		{name: "unknown scale", args: []string{"--scale", "huge"}, getwd: os.Getwd, wantErr: `scale "huge"`},
		{name: "unknown store", args: []string{"--store", "tape"}, getwd: os.Getwd, wantErr: `store "tape"`},
		{name: "stray argument", args: []string{"now"}, getwd: os.Getwd, wantErr: "unexpected arguments"},
		{name: "no repository to default to", args: nil, getwd: noWD, wantErr: "no working directory"},
		{name: "help", args: []string{"--help"}, getwd: os.Getwd, wantErr: flag.ErrHelp.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseFlags(tt.args, tt.getwd, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, o)
		})
	}
}

// TestScaleUsageNamesEveryScale: --scale's help names each preset of loadbench.Scales, so that the help cannot list
// a scale that is gone or leave out a new one.
func TestScaleUsageNamesEveryScale(t *testing.T) {
	var out strings.Builder
	if _, err := parseFlags([]string{"--help"}, os.Getwd, &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("err = %v, want flag.ErrHelp", err)
	}
	for name := range loadbench.Scales {
		if !strings.Contains(out.String(), name+" (") {
			t.Errorf("--scale's help does not name the scale %q:\n%s", name, out.String())
		}
	}
}
