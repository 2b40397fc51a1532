package docexample

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// sessionFor returns a session whose shell sees only PATH (bash is needed; every Linux machine this project builds
// on has it).
func sessionFor(t *testing.T) *Session {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash is required: %v", err)
	}
	return &Session{Dir: t.TempDir(), Env: []string{"PATH=" + os.Getenv("PATH")}, Bash: bash}
}

func parse(t *testing.T, src string) []Block {
	t.Helper()
	doc, err := Parse("doc.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return doc.Run()
}

func TestSessionSharesTheShell(t *testing.T) {
	blocks := parse(t, "```sh\nid=tr_1\ncd sub 2>/dev/null || mkdir sub\necho first; echo oops >&2\n```\n"+
		"```sh\necho \"$id\"\nexport X=1\n```\n"+
		"```sh\nbash -c 'echo $X'\nread -r line || echo \"stdin is empty\"\n```\n")
	res, err := sessionFor(t).Run(context.Background(), blocks)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ stdout, stderr string }{{"first\n", "oops\n"}, {"tr_1\n", ""}, {"1\nstdin is empty\n", ""}}
	for i, w := range want {
		r := res[i]
		if !r.Ran || !r.Finished || r.Err != nil || string(r.Stdout) != w.stdout || string(r.Stderr) != w.stderr {
			t.Errorf("block %d = %+v (stdout %q, stderr %q), want stdout %q, stderr %q", i, r, r.Stdout, r.Stderr, w.stdout, w.stderr)
		}
	}
}

// TestSessionStopsAtTheFirstFailure: set -euo pipefail holds across blocks, and the failing block says so.
func TestSessionStopsAtTheFirstFailure(t *testing.T) {
	tests := []struct{ name, failing string }{
		{"a failing command", "false"},
		{"an unset variable", "echo \"$nope\""},
		{"a failure inside a pipe", "false | cat"},
		{"a failing command substitution", "x=$(false)"},
		{"a syntax error", "if then fi"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			blocks := parse(t, "```sh\necho before\n```\n```sh\necho start\n"+tc.failing+"\necho after\n```\n```sh\necho never\n```\n")
			res, err := sessionFor(t).Run(context.Background(), blocks)
			if err != nil {
				t.Fatal(err)
			}
			if !res[0].Finished || res[0].Err != nil {
				t.Errorf("first block: %+v", res[0])
			}
			r := res[1]
			if !r.Ran || r.Finished || r.Err == nil || strings.Contains(string(r.Stdout), "after") {
				t.Errorf("failing block: ran %v finished %v err %v stdout %q", r.Ran, r.Finished, r.Err, r.Stdout)
			}
			if !strings.Contains(r.Err.Error(), "ended the session") {
				t.Errorf("err = %v", r.Err)
			}
			if res[2].Ran {
				t.Errorf("the block after the failure ran: %+v", res[2])
			}
		})
	}
}

func TestSessionRewritesAndIsolates(t *testing.T) {
	t.Setenv("DOCEXAMPLE_SECRET", "from the caller")
	s := sessionFor(t)
	s.Env = append(s.Env, "ENDPOINT=given")
	s.Rewrite = func(code string) string {
		return strings.ReplaceAll(code, "http://127.0.0.1:3000", "http://127.0.0.1:40001")
	}
	res, err := s.Run(context.Background(), parse(t, "```sh\necho http://127.0.0.1:3000/transfers \"$ENDPOINT\" \"${DOCEXAMPLE_SECRET:-unset}\"\npwd\n```\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := "http://127.0.0.1:40001/transfers given unset\n" + s.Dir + "\n"
	if string(res[0].Stdout) != want || !strings.Contains(res[0].Code, "40001") {
		t.Errorf("stdout %q, want %q", res[0].Stdout, want)
	}
}

// TestSessionTimeout: a block that never ends is killed with everything it started, and reported.
func TestSessionTimeout(t *testing.T) {
	s := sessionFor(t)
	s.Timeout = time.Second
	pidFile := s.Dir + "/child.pid"
	res, err := s.Run(context.Background(), parse(t, "```sh\nsleep 60 &\necho $! > "+pidFile+"\nsleep 60\n```\n```sh\necho never\n```\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r := res[0]; !r.Ran || r.Finished || r.Err == nil || !strings.Contains(r.Err.Error(), "timed out") {
		t.Errorf("block = %+v", r)
	}
	if res[1].Ran {
		t.Error("the block after the timeout ran")
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	// The background sleep was in the session's process group: it was killed. SIGKILL takes effect when the process
	// is next scheduled, so its state is polled: gone, or a zombie (dead, not yet reaped by its new parent).
	stat := "/proc/" + strings.TrimSpace(string(b)) + "/stat"
	for deadline := time.Now().Add(10 * time.Second); ; {
		st, err := os.ReadFile(stat)
		if err != nil || processState(st) == "Z" || processState(st) == "X" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the background process outlived the session: %s", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// processState is the state field of /proc/PID/stat, after the command name in parentheses.
func processState(stat []byte) string {
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+3 <= len(s) {
		return s[i+2 : i+3]
	}
	return ""
}
