package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/localaws/ddbserver"
)

// TestGatewayErrorsAreProblems: the errors API Gateway itself produces are the template's problem documents, and a
// path with a double slash is refused like any unknown path, never redirected.
func TestGatewayErrorsAreProblems(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	tests := []struct {
		name, method, path string
		body               []byte
		status             int
		code, detail       string
	}{
		{"unknown path", http.MethodGet, "/nope", nil, 403, "MISSING_AUTHENTICATION_TOKEN", "Missing Authentication Token"},
		{"double slash", http.MethodGet, "//transfers/tr_x", nil, 403, "MISSING_AUTHENTICATION_TOKEN", "Missing Authentication Token"},
		{"body over 10 MB", http.MethodPost, "/transfers", bytes.Repeat([]byte("x"), 10<<20+1), 413, "PAYLOAD_TOO_LARGE", "Request Too Long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, s.API+tt.path, bytes.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", "e2e-gateway-"+tt.name)
			resp, err := noRedirect.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			r := readResponse(t, resp)
			if r.Status != tt.status || r.Header.Get("Content-Type") != "application/problem+json" || r.Body["code"] != tt.code ||
				r.Body["detail"] != tt.detail || r.Body["status"] != float64(tt.status) || r.Body["title"] != http.StatusText(tt.status) ||
				r.Body["type"] != "/problems/"+strings.ReplaceAll(strings.ToLower(tt.code), "_", "-") || r.Header.Get("X-Amzn-RequestId") == "" {
				t.Errorf("%d %v %s, want %d %s as the template's problem document", r.Status, r.Header, r.RawBody, tt.status, tt.code)
			}
		})
	}
	if n := len(s.executions()); n != 0 {
		t.Errorf("refused requests started %d executions", n)
	}
}

// readResponse reads an answer as send does.
func readResponse(t *testing.T, resp *http.Response) response {
	t.Helper()
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	out := response{Status: resp.StatusCode, Header: resp.Header, RawBody: buf.Bytes()}
	_ = json.Unmarshal(buf.Bytes(), &out.Body)
	return out
}

// dynoxidePID finds the Dynoxide process the stack started: the live child of the stack's process named dynoxide.
func (s *stack) dynoxidePID(t *testing.T) int {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("finding the stack's Dynoxide child reads /proc, which only Linux has")
	}
	pid, ok := s.findDynoxide()
	if !ok {
		t.Fatalf("no dynoxide child of the stack (pid %d)", s.cmd.Process.Pid)
	}
	return pid
}

// findDynoxide is dynoxidePID without the test: ok false when the stack has no live dynoxide child.
func (s *stack) findDynoxide() (int, bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, false
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		lp, rp := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
		if lp < 0 || rp < lp {
			continue
		}
		// After the name: state, ppid. A zombie (Z) is a process that died and was not reaped yet.
		fields := strings.Fields(string(stat[rp+1:]))
		if len(fields) > 1 && fields[0] != "Z" && fields[1] == strconv.Itoa(s.cmd.Process.Pid) && string(stat[lp+1:rp]) == "dynoxide" {
			return pid, true
		}
	}
	return 0, false
}

// healthz polls GET /healthz until it answers want, and returns the last answer.
func (s *stack) healthz(t *testing.T, want int) response {
	t.Helper()
	deadline := time.Now().Add(settle)
	for {
		r := s.do(http.MethodGet, "/healthz", nil, nil)
		if r.Status == want {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("healthz: %d %s, want %d\n%s", r.Status, r.RawBody, want, tail(s.stderr.String(), 4000))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDynoxideIsRestartedAfterACrash: with --data-dir, a Dynoxide killed under the stack is restarted on the same
// port with the same data, logged; /healthz is healthy again, the transfers written before are there, and new
// ones complete.
func TestDynoxideIsRestartedAfterACrash(t *testing.T) {
	t.Parallel()
	s := startStackWithDynoxide(t, "--data-dir", t.TempDir())
	before := s.submitAccepted("submit", "e2e-ddb-before", transferBody("acc-alice", "acc-bob", 300, "EUR"))
	s.waitCompleted("transfer before the crash", before)
	if h := s.healthz(t, http.StatusOK); h.Body["checks"] == nil {
		t.Errorf("healthz names no checks: %s", h.RawBody)
	}
	pid := s.dynoxidePID(t)
	killed := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(settle)
	for {
		if again, ok := s.findDynoxide(); ok && again != pid {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new dynoxide after the kill of %d\n%s", pid, tail(s.stderr.String(), 4000))
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.healthz(t, http.StatusOK)
	t.Logf("healthy again %s after the kill", time.Since(killed).Round(time.Millisecond))
	// The new process answers before the supervisor has logged it: wait for the line.
	for !strings.Contains(s.stderr.String(), `"msg":"dynamodb restarted"`) {
		if time.Now().After(deadline) {
			t.Fatalf("the restart is not logged:\n%s", tail(s.stderr.String(), 4000))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(s.stderr.String(), `"msg":"dynamodb exited"`) {
		t.Errorf("the exit is not logged:\n%s", tail(s.stderr.String(), 4000))
	}
	if tr := s.do(http.MethodGet, "/transfers/"+before, nil, nil); tr.Status != http.StatusOK || tr.Body["status"] != "COMPLETED" {
		t.Errorf("transfer written before the crash: %d %s", tr.Status, tr.RawBody)
	}
	if a, b := s.balance("acc-alice"), s.balance("acc-bob"); a != 100000-300 || b != 5000+300 {
		t.Errorf("balances after the restart: alice %d bob %d", a, b)
	}
	s.waitCompleted("transfer after the restart", s.submitAccepted("submit after the restart", "e2e-ddb-after", transferBody("acc-alice", "acc-bob", 200, "EUR")))
}

// TestInMemoryDynoxideCrashStopsTheStack: without --data-dir the data died with the process, so the stack does not
// start an empty one: it exits non-zero, saying why.
func TestInMemoryDynoxideCrashStopsTheStack(t *testing.T) {
	t.Parallel()
	s := startStackWithDynoxide(t)
	if err := syscall.Kill(s.dynoxidePID(t), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.exited:
		err := s.waitErr
		var status syscall.WaitStatus
		if s.cmd.ProcessState != nil {
			status, _ = s.cmd.ProcessState.Sys().(syscall.WaitStatus)
		}
		if err == nil || status.ExitStatus() != 1 || !strings.Contains(s.stderr.String(), "its data was in memory") {
			t.Errorf("stack exit: %v\n%s", err, tail(s.stderr.String(), 2000))
		}
	case <-time.After(settle):
		t.Fatalf("the stack kept running without its DynamoDB\n%s", tail(s.stderr.String(), 2000))
	}
}

// TestHealthzNamesDynamoDBWhenItIsDown: /healthz checks DynamoDB for real: with --dynamodb-endpoint, stopping that
// server turns it into a 503 problem that names dynamodb, the engine still up.
func TestHealthzNamesDynamoDBWhenItIsDown(t *testing.T) {
	t.Parallel()
	ddb := ddbserver.StartT(t)
	s := startStack(t, "--dynamodb-endpoint", ddb.URL)
	s.healthz(t, http.StatusOK)
	if err := ddb.Close(); err != nil {
		t.Fatal(err)
	}
	r := s.healthz(t, http.StatusServiceUnavailable)
	checks, _ := r.Body["checks"].(map[string]any)
	if r.Header.Get("Content-Type") != "application/problem+json" || r.Body["code"] != "SERVICE_UNAVAILABLE" ||
		r.Body["detail"] != "down: dynamodb" || checks["dynamodb"] != "down" || checks["engine"] != "ok" {
		t.Errorf("healthz with DynamoDB down: %v %s", r.Header, r.RawBody)
	}
}
