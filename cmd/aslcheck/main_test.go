package main

import (
	"bytes"
	"path/filepath"
	"testing"
)

func TestRun(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
	}{
		{name: "valid file", args: []string{"../../internal/sfnlocal/testdata/saga.asl.json"}, wantCode: 0,
			wantOut: "../../internal/sfnlocal/testdata/saga.asl.json: ok\n"},
		{name: "invalid file lists positioned errors", args: []string{filepath.Join("testdata", "bad.asl.json")}, wantCode: 1,
			wantOut: "testdata/bad.asl.json: States.Debit.Retry[0].BackoffRate: must be >= 1\n" +
				"testdata/bad.asl.json: States.Debit.Next: missing transition target: state \"Gone\" does not exist\n"},
		{name: "no arguments", args: nil, wantCode: 2},
		{name: "missing file", args: []string{"testdata/none.json"}, wantCode: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := run(tt.args, &out, &errOut); code != tt.wantCode {
				t.Fatalf("exit %d, want %d (stderr %s)", code, tt.wantCode, errOut.String())
			}
			if tt.wantOut != "" && out.String() != tt.wantOut {
				t.Fatalf("stdout:\n%s\nwant:\n%s", out.String(), tt.wantOut)
			}
		})
	}
}
