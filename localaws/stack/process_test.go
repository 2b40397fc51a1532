package stack

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestParseReady(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		want    map[string]string
		wantErr string
	}{
		{name: "spec line", line: "ready api=http://127.0.0.1:3000 sfn=http://127.0.0.1:8083 dynamodb=http://127.0.0.1:8000",
			want: map[string]string{"api": "http://127.0.0.1:3000", "sfn": "http://127.0.0.1:8083", "dynamodb": "http://127.0.0.1:8000"}},
		{name: "more pairs may follow", line: "ready api=http://a sfn=http://b dynamodb=http://c events=http://d",
			want: map[string]string{"api": "http://a", "sfn": "http://b", "dynamodb": "http://c", "events": "http://d"}},
		{name: "not ready", line: "starting api=http://a", wantErr: "not a ready line"},
		{name: "no sfn", line: "ready api=http://a", wantErr: "want api= and sfn="},
		{name: "not a pair", line: "ready api=http://a sfn", wantErr: "is not name=url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseReady(tt.line)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseReady = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// fakeStack writes a script that behaves like the stack: it checks it got the free-port flags, prints its ready
// line and waits to be stopped.
func fakeStack(t *testing.T, ready string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake stack is a shell script")
	}
	p := filepath.Join(t.TempDir(), "local")
	script := "#!/bin/sh\n[ \"$1 $2\" = \"--api-addr 127.0.0.1:0\" ] || exit 3\necho starting\n" + ready + "\nexec sleep 30\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestStartWaitsForTheReadyLineAndCloseStops(t *testing.T) {
	bin := fakeStack(t, "echo ready api=http://127.0.0.1:1 sfn=http://127.0.0.1:2 dynamodb=http://127.0.0.1:3")
	p, err := StartProcess(context.Background(), ProcessOptions{Binary: bin, Dir: t.TempDir(), ReadyTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if p.API() != "http://127.0.0.1:1" || p.SFN() != "http://127.0.0.1:2" || p.PID() == 0 {
		t.Errorf("endpoints %v, pid %d", p.Endpoints, p.PID())
	}
	start := time.Now()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 3*time.Second {
		t.Errorf("Close took %s", time.Since(start))
	}
	select {
	case <-p.Done():
	default:
		t.Error("the process is still running after Close")
	}
}

func TestStartReportsAnEarlyExit(t *testing.T) {
	bin := fakeStack(t, "exit 2")
	if _, err := StartProcess(context.Background(), ProcessOptions{Binary: bin, ReadyTimeout: 10 * time.Second}); err == nil || !strings.Contains(err.Error(), "exited before it was ready") {
		t.Errorf("err = %v, want an early exit", err)
	}
}

// TestKeptBinaryIsLinkedOnce: KeptBinary builds into the module's bin/kept, one folder per owner; a second build of
// unchanged code leaves the binary as it is, a change of the code writes it again.
func TestKeptBinaryIsLinkedOnce(t *testing.T) {
	src := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(src, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/kept\n\ngo 1.26\n")
	write("cmd/hello/main.go", "package main\n\nfunc main() { println(\"one\") }\n")
	ctx := context.Background()

	bin, err := KeptBinary(ctx, src, "./cmd/hello", "first")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(src, "bin", "kept", "first", "hello"); bin != want {
		t.Fatalf("binary at %s, want %s", bin, want)
	}
	built, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	// An unchanged build is not linked again: go build leaves the file in place (it only updates its time), where a
	// link would put a new file there.
	again, err := KeptBinary(ctx, src, "./cmd/hello", "first")
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(again); err != nil || again != bin || !os.SameFile(st, built) {
		t.Fatalf("second build: %s (%v), want %s as it was", again, err, bin)
	}
	other, err := KeptBinary(ctx, src, "./cmd/hello", "second")
	if err != nil {
		t.Fatal(err)
	}
	if other == bin {
		t.Fatalf("two owners share %s", bin)
	}
	write("cmd/hello/main.go", "package main\n\nfunc main() { println(\"two\") }\n")
	if _, err := KeptBinary(ctx, src, "./cmd/hello", "first"); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "two" {
		t.Fatalf("after a change of the code the binary says %q (%v), want two", out, err)
	}
}
