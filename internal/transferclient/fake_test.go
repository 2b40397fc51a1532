package transferclient

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/internal/clocktest"
)

// step is one scripted answer of the fake API.
type step struct {
	status     int
	body       string
	retryAfter string
	replayed   bool
	// drop closes the connection without answering (after reading the request), as a crash or a network cut does.
	drop bool
}

// received is one request the fake API saw.
type received struct {
	method, path, query string
	header              http.Header
	body                []byte
}

// fakeAPI answers each request with the next scripted step, repeating the last one.
type fakeAPI struct {
	t     *testing.T
	srv   *httptest.Server
	mu    sync.Mutex
	steps []step
	reqs  []received
}

// startFake starts a fake transfer API that answers with steps in order and stops it at the end of the test.
func startFake(t *testing.T, steps ...step) *fakeAPI {
	t.Helper()
	f := &fakeAPI{t: t, steps: steps}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.reqs = append(f.reqs, received{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Clone(), body})
	s := f.steps[min(len(f.reqs), len(f.steps))-1]
	f.mu.Unlock()
	if s.drop {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			f.t.Errorf("hijack: %v", err)
			return
		}
		conn.Close()
		return
	}
	ct := "application/json"
	if s.status >= 400 {
		ct = "application/problem+json"
	}
	w.Header().Set("Content-Type", ct)
	if s.retryAfter != "" {
		w.Header().Set("Retry-After", s.retryAfter)
	}
	if s.replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	w.WriteHeader(s.status)
	io.WriteString(w, s.body)
}

func (f *fakeAPI) requests() []received {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]received(nil), f.reqs...)
}

// newFakeClock returns a clock that only Sleep moves, at the tests' usual start.
func newFakeClock() *clocktest.Clock {
	return clocktest.New(time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC))
}

// newTestClient returns a client of f on the fake clock, with jitter fixed at 0.5.
func newTestClient(f *fakeAPI, clk *clocktest.Clock) *Client {
	return &Client{
		Endpoint: f.srv.URL,
		HTTP:     f.srv.Client(),
		Now:      clk.Now,
		Sleep:    clk.Sleep,
		Jitter:   func() float64 { return 0.5 },
	}
}

func transferJSON(id, status string) string {
	s := `{"transferId":"` + id + `","status":"` + status + `","sourceAccountId":"acc-alice","destinationAccountId":"acc-bob",` +
		`"amount":1250,"currency":"EUR","reference":"invoice 2026-118","executionArn":"arn:aws:states:eu-west-1:123456789012:execution:sm:` + id + `",` +
		`"createdAt":"2026-11-21T10:00:00.123Z","updatedAt":"2026-11-21T10:00:00.123Z"`
	if status == StatusFailed {
		s += `,"completedAt":"2026-11-21T10:00:01.000Z","failure":{"code":"INSUFFICIENT_FUNDS","message":"the source account's balance does not cover the amount"}`
	}
	return s + `,"links":{"self":"/transfers/` + id + `","history":"/transfers/` + id + `/history"}}`
}

func problemJSON(status int, code, detail string) string {
	return `{"type":"/problems/x","title":"` + http.StatusText(status) + `","status":` + strconv.Itoa(status) +
		`,"detail":"` + detail + `","code":"` + code + `"}`
}
