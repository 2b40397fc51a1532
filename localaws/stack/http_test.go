package stack

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/localaws/gateway"
	"github.com/transferflow/orchestrator/localaws/internal/httpserver"
)

// shortTimeouts replace the stack's in these tests, so a body deadline passes quickly; no test asserts a duration.
var shortTimeouts = httpserver.Timeouts{Header: time.Second, Body: 200 * time.Millisecond, Write: 5 * time.Second, Idle: time.Second}

// listen serves srv on a free port and returns its address.
func listen(t *testing.T, srv *http.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// slowBody sends headers announcing a 100-byte body and only part of it, then reads the answer; closed reports
// whether the server then closed the connection.
func slowBody(t *testing.T, addr, headers string) (resp *http.Response, body []byte, closed bool) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second)) // only so a broken server fails the test instead of hanging it
	if _, err := io.WriteString(c, "POST / HTTP/1.1\r\nHost: local\r\n"+headers+"Content-Length: 100\r\n\r\n{\"sourceAccountId\":"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer to a body that stopped half-way: %v", err)
	}
	body, _ = io.ReadAll(resp.Body)
	_, err = br.ReadByte()
	var ne net.Error
	return resp, body, err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// TestAPIServerAnswersALateBodyWith408: the API server (as Run builds it) answers a body that stops arriving with a
// 408 problem document once the body deadline passes, closes the connection, and never reaches the gateway.
func TestAPIServerAnswersALateBodyWith408(t *testing.T) {
	reached := make(chan struct{}, 1)
	gw := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached <- struct{}{} })
	addr := listen(t, apiServer(gw, http.NotFoundHandler(), shortTimeouts, slog.New(slog.DiscardHandler)))
	resp, body, closed := slowBody(t, addr, "Content-Type: application/json\r\nIdempotency-Key: k\r\n")
	var p map[string]any
	_ = json.Unmarshal(body, &p)
	if resp.StatusCode != http.StatusRequestTimeout || resp.Header.Get("Content-Type") != "application/problem+json" ||
		p["code"] != "REQUEST_TIMEOUT" || p["status"] != 408.0 || p["type"] != "/problems/request-timeout" || p["title"] != "Request Timeout" {
		t.Errorf("answer %d %v %s, want a 408 REQUEST_TIMEOUT problem", resp.StatusCode, resp.Header, body)
	}
	if !closed {
		t.Error("the connection stayed open after the 408")
	}
	select {
	case <-reached:
		t.Error("the gateway was called for a body that never arrived")
	default:
	}
}

// TestSFNServerAnswersALateBodyWith408: the Step Functions API server answers a late body with 408 in the API's
// own error shape.
func TestSFNServerAnswersALateBodyWith408(t *testing.T) {
	addr := listen(t, sfnServer(http.NotFoundHandler(), shortTimeouts, slog.New(slog.DiscardHandler)))
	resp, body, closed := slowBody(t, addr, "Content-Type: application/x-amz-json-1.0\r\nX-Amz-Target: AWSStepFunctions.StartExecution\r\n")
	var e map[string]string
	_ = json.Unmarshal(body, &e)
	if resp.StatusCode != http.StatusRequestTimeout || e["__type"] != "RequestTimeoutException" || !closed {
		t.Errorf("answer %d %s, closed %v; want 408 RequestTimeoutException and the connection closed", resp.StatusCode, body, closed)
	}
}

// TestAPIServerNeverRedirects: paths a ServeMux would clean with a redirect (a double slash, a dot segment) reach
// the gateway, which answers them as API Gateway does; /healthz is the stack's own.
func TestAPIServerNeverRedirects(t *testing.T) {
	gw, err := gateway.New([]gateway.Route{{Method: "POST", Resource: "/transfers", Function: "Orchestrator"}}, nil,
		gateway.Options{NewID: func() string { return "req-1" }})
	if err != nil {
		t.Fatal(err)
	}
	health := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "healthy") })
	addr := listen(t, apiServer(gw, health, shortTimeouts, slog.New(slog.DiscardHandler)))
	client := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tt := range []struct {
		method, path string
		status       int
		body         string
	}{
		{"POST", "//transfers", http.StatusForbidden, `{"message":"Missing Authentication Token"}`},
		{"GET", "/a/../healthz", http.StatusForbidden, `{"message":"Missing Authentication Token"}`},
		{"POST", "/healthz", http.StatusForbidden, `{"message":"Missing Authentication Token"}`},
		{"GET", "/healthz", http.StatusOK, "healthy"},
	} {
		req, _ := http.NewRequest(tt.method, "http://"+addr+tt.path, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || string(b) != tt.body {
			t.Errorf("%s %s: %d %s, want %d %s", tt.method, tt.path, resp.StatusCode, b, tt.status, tt.body)
		}
	}
}

// TestHealthNamesWhatIsDown: /healthz is 200 with every check ok, and 503 SERVICE_UNAVAILABLE naming each check
// that failed.
func TestHealthNamesWhatIsDown(t *testing.T) {
	up := func(context.Context) error { return nil }
	down := func(context.Context) error { return errors.New("connection refused") }
	tests := []struct {
		name   string
		checks []check
		status int
		detail string
	}{
		{"all up", []check{{"dynamodb", up}, {"engine", up}}, http.StatusOK, ""},
		{"dynamodb down", []check{{"dynamodb", down}, {"engine", up}}, http.StatusServiceUnavailable, "down: dynamodb"},
		{"both down", []check{{"engine", down}, {"dynamodb", down}}, http.StatusServiceUnavailable, "down: dynamodb, engine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			(&health{checks: tt.checks, logger: slog.New(slog.DiscardHandler)}).ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
			var body map[string]any
			_ = json.Unmarshal(rec.Body.Bytes(), &body)
			if rec.Code != tt.status {
				t.Fatalf("status %d %s, want %d", rec.Code, rec.Body, tt.status)
			}
			checks, _ := body["checks"].(map[string]any)
			if tt.status == http.StatusOK {
				if body["status"] != "ok" || checks["dynamodb"] != "ok" || checks["engine"] != "ok" {
					t.Errorf("body %s", rec.Body)
				}
				return
			}
			if rec.Header().Get("Content-Type") != "application/problem+json" || body["code"] != "SERVICE_UNAVAILABLE" ||
				body["detail"] != tt.detail || rec.Header().Get("Retry-After") != "1" || strings.Contains(rec.Body.String(), "refused") {
				t.Errorf("answer %v %s, want a 503 problem with detail %q and no error text", rec.Header(), rec.Body, tt.detail)
			}
		})
	}
}
