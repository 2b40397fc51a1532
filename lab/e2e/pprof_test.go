package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestPprofAddr: --pprof-addr serves Go's profiles on its own address, named on the ready line; without it the
// ready line has no pprof and the API does not serve them.
func TestPprofAddr(t *testing.T) {
	t.Parallel()
	s := startStack(t, "--pprof-addr", "127.0.0.1:0")
	ready := strings.TrimSpace(s.stdout.String())
	_, pprofURL, ok := strings.Cut(ready, " pprof=")
	if !ok || !strings.HasPrefix(pprofURL, "http://127.0.0.1:") || strings.Contains(pprofURL, " ") {
		t.Fatalf("ready line %q: want it to end with pprof=http://127.0.0.1:PORT", ready)
	}
	resp, err := http.Get(pprofURL + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "goroutine profile:") {
		t.Errorf("goroutine profile: %d %.200s", resp.StatusCode, body)
	}

	plain := startStack(t)
	if line := plain.stdout.String(); strings.Contains(line, "pprof") {
		t.Errorf("ready line without --pprof-addr: %q", line)
	}
	if r := plain.raw(http.MethodGet, "/debug/pprof/", nil, nil); r.Status == http.StatusOK {
		t.Errorf("the API serves /debug/pprof/: %d", r.Status)
	}
}
