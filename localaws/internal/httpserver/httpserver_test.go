package httpserver

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// short are the timeouts of these tests: short, so a test that waits for one to pass finishes quickly. No test
// asserts how long anything took; guard is only how long a test waits before it calls the server stuck.
var short = Timeouts{Header: 200 * time.Millisecond, Body: 200 * time.Millisecond, Write: 5 * time.Second, Idle: time.Second}

const guard = 10 * time.Second

// serve starts h behind New(opts) and returns its address.
func serve(t *testing.T, h http.Handler, opts Options) string {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	ts.Config = New(h, opts)
	ts.Start()
	t.Cleanup(ts.Close)
	return ts.Listener.Addr().String()
}

// dial opens a raw connection that gives up after guard.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_ = c.SetDeadline(time.Now().Add(guard))
	return c
}

// closed reports whether the server closed c: a read returns EOF (or a reset) rather than timing out.
func closed(c net.Conn, r *bufio.Reader) bool {
	_, err := r.ReadByte()
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// TestSlowBodyGets408AndTheConnectionCloses: a client that sends its headers and part of its body, then nothing,
// gets the server's 408 once the body deadline passes, and the connection is closed; the handler never runs.
func TestSlowBodyGets408AndTheConnectionCloses(t *testing.T) {
	called := make(chan struct{}, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { called <- struct{}{} })
	onTimeout := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusRequestTimeout)
		_, _ = io.WriteString(w, `{"status":408}`)
	}
	addr := serve(t, h, Options{Timeouts: short, MaxBody: 1 << 20, OnBodyTimeout: onTimeout})
	c := dial(t, addr)
	if _, err := io.WriteString(c, "POST /transfers HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"amount\":"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer to a body that stopped half-way (the server held the connection): %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || string(b) != `{"status":408}` || !resp.Close {
		t.Errorf("answer = %d %v %s, want 408 from OnBodyTimeout with Connection: close", resp.StatusCode, resp.Header, b)
	}
	if !closed(c, br) {
		t.Error("the connection stayed open after the 408")
	}
	select {
	case <-called:
		t.Error("the handler ran for a body that never arrived")
	default:
	}
}

// TestSlowHeadersCloseTheConnection: headers that never end are cut at the header timeout.
func TestSlowHeadersCloseTheConnection(t *testing.T) {
	addr := serve(t, http.NotFoundHandler(), Options{Timeouts: short})
	c := dial(t, addr)
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: "); err != nil {
		t.Fatal(err)
	}
	if !closed(c, bufio.NewReader(c)) {
		t.Error("the server kept a connection whose headers never ended")
	}
}

// TestSlowHandlersAreNotCut: a handler that takes longer than the header and body timeouts together, with a body
// or without, still answers, and its request's context is not cancelled on the way.
func TestSlowHandlersAreNotCut(t *testing.T) {
	slow := 3 * (short.Header + short.Body)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		select {
		case <-time.After(slow):
		case <-r.Context().Done():
			http.Error(w, "context cancelled: "+ctxErr(r), http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "done "+string(body))
	})
	addr := serve(t, h, Options{Timeouts: short, MaxBody: 1 << 10})
	client := &http.Client{Timeout: guard}
	for _, tt := range []struct {
		name, method, body, want string
	}{
		{"POST with a body", http.MethodPost, `{"a":1}`, `done {"a":1}`},
		{"GET without a body", http.MethodGet, "", "done "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
			}
			req, _ := http.NewRequest(tt.method, "http://"+addr+"/", body)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK || string(b) != tt.want {
				t.Errorf("%d %q, want 200 %q", resp.StatusCode, b, tt.want)
			}
		})
	}
}

func ctxErr(r *http.Request) string { return r.Context().Err().Error() }

// TestBodyOverMaxBodyReachesTheHandler: the handler sees more than MaxBody-1 bytes, so it can refuse the body with
// its own status, and a body within the limit arrives whole.
func TestBodyOverMaxBodyReachesTheHandler(t *testing.T) {
	const limit = 16
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
		switch {
		case err != nil:
			http.Error(w, err.Error(), http.StatusBadRequest)
		case len(b) > limit:
			http.Error(w, "too large", http.StatusRequestEntityTooLarge)
		default:
			_, _ = w.Write(b)
		}
	})
	addr := serve(t, h, Options{Timeouts: short, MaxBody: limit + 1})
	client := &http.Client{Timeout: guard}
	for _, tt := range []struct {
		body   string
		status int
	}{
		{strings.Repeat("x", limit), http.StatusOK},
		{strings.Repeat("x", 4*limit), http.StatusRequestEntityTooLarge},
	} {
		resp, err := client.Post("http://"+addr+"/", "text/plain", strings.NewReader(tt.body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || tt.status == http.StatusOK && string(b) != tt.body {
			t.Errorf("%d-byte body: %d %q, want %d", len(tt.body), resp.StatusCode, b, tt.status)
		}
	}
}
