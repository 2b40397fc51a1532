package runtimeapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const base = "/2018-06-01/runtime"

// runtime is a test's Runtime API server and an HTTP client that plays the runtime.
type runtime struct {
	t   *testing.T
	srv *Server
	url string
}

func newRuntime(t *testing.T) *runtime {
	t.Helper()
	srv := NewServer()
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return &runtime{t: t, srv: srv, url: ts.URL + base}
}

// answer is an HTTP reply the runtime received.
type answer struct {
	status int
	header http.Header
	body   string
}

func (rt *runtime) do(method, path string, header http.Header, body []byte) answer {
	rt.t.Helper()
	req, err := http.NewRequest(method, rt.url+path, bytes.NewReader(body))
	if err != nil {
		rt.t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		rt.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// invoke starts an invocation and returns where its outcome arrives.
func (rt *runtime) invoke(ctx context.Context, inv Invocation) <-chan outcome {
	done := make(chan outcome, 1)
	go func() {
		resp, err := rt.srv.Invoke(ctx, inv)
		done <- outcome{resp: resp, err: err}
	}()
	return done
}

var deadline = time.UnixMilli(1795255210123)

func testInvocation(id string) Invocation {
	return Invocation{RequestID: id, Payload: []byte(`{"leg":"DEBIT"}`), Deadline: deadline,
		FunctionArn: "arn:aws:lambda:us-east-1:123456789012:function:DebitFunction", TraceID: "Root=1-5bef4de7-ad49b0e87f6ef6c87fc2e700;Parent=9a9197af755a6419;Sampled=0"}
}

func TestInvocationRoundTrip(t *testing.T) {
	rt := newRuntime(t)
	done := rt.invoke(context.Background(), testInvocation("req-1"))
	next := rt.do(http.MethodGet, "/invocation/next", nil, nil)
	if next.status != http.StatusOK || next.body != `{"leg":"DEBIT"}` {
		t.Fatalf("next = %d %s", next.status, next.body)
	}
	for k, want := range map[string]string{
		HeaderRequestID:          "req-1",
		HeaderDeadlineMs:         "1795255210123",
		HeaderInvokedFunctionArn: "arn:aws:lambda:us-east-1:123456789012:function:DebitFunction",
		HeaderTraceID:            "Root=1-5bef4de7-ad49b0e87f6ef6c87fc2e700;Parent=9a9197af755a6419;Sampled=0",
	} {
		if got := next.header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	select {
	case <-rt.srv.Ready():
	default:
		t.Error("Ready is not closed after the first GET /next")
	}
	resp := rt.do(http.MethodPost, "/invocation/req-1/response", http.Header{"Content-Type": {"application/json"}}, []byte(`{"balanceAfter":3750}`))
	if resp.status != http.StatusAccepted || resp.body != `{"status":"OK"}` {
		t.Errorf("response = %d %s", resp.status, resp.body)
	}
	o := <-done
	if o.err != nil || string(o.resp.Payload) != `{"balanceAfter":3750}` || o.resp.ContentType != "application/json" {
		t.Errorf("Invoke = %+v, %v", o.resp, o.err)
	}
	// The invocation is over: answering it again is refused, and the runtime may ask for the next one.
	again := rt.do(http.MethodPost, "/invocation/req-1/response", nil, []byte(`{}`))
	if again.status != http.StatusBadRequest || again.body != `{"errorMessage":"Invalid request ID","errorType":"InvalidRequestID"}` {
		t.Errorf("second answer = %d %s", again.status, again.body)
	}
}

// TestFunctionErrors posts errors as aws-lambda-go and other runtimes do, and checks what the invoker gets back.
func TestFunctionErrors(t *testing.T) {
	goBody := `{"errorMessage":"account acc-x has insufficient funds for transfer tr_1","errorType":"InsufficientFunds"}`
	tests := []struct {
		name     string
		header   string
		body     string
		wantType string
		wantMsg  string
		wantDoc  string
	}{
		{name: "aws-lambda-go: type in the document", body: goBody, wantType: "InsufficientFunds",
			wantMsg: "account acc-x has insufficient funds for transfer tr_1", wantDoc: goBody},
		{name: "the header names the type", header: "Runtime.HandlerError", body: goBody, wantType: "Runtime.HandlerError",
			wantMsg: "account acc-x has insufficient funds for transfer tr_1", wantDoc: goBody},
		{name: "no type at all", body: `{"errorMessage":"boom"}`, wantType: "Unhandled", wantMsg: "boom", wantDoc: `{"errorMessage":"boom"}`},
		{name: "not JSON", header: "Runtime.Crash", body: "segfault", wantType: "Runtime.Crash", wantMsg: "segfault",
			wantDoc: `{"errorType":"Runtime.Crash","errorMessage":"segfault"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t)
			done := rt.invoke(context.Background(), testInvocation("req-e"))
			rt.do(http.MethodGet, "/invocation/next", nil, nil)
			h := http.Header{"Content-Type": {"application/json"}}
			if tt.header != "" {
				h.Set(HeaderFunctionErrorType, tt.header)
			}
			if a := rt.do(http.MethodPost, "/invocation/req-e/error", h, []byte(tt.body)); a.status != http.StatusAccepted {
				t.Fatalf("error post = %d %s", a.status, a.body)
			}
			o := <-done
			var fe *FunctionError
			if !errors.As(o.err, &fe) {
				t.Fatalf("Invoke err = %v, want a *FunctionError", o.err)
			}
			if fe.Type != tt.wantType || fe.Message != tt.wantMsg || string(fe.Document()) != tt.wantDoc {
				t.Errorf("error = %q %q %s", fe.Type, fe.Message, fe.Document())
			}
		})
	}
}

// trailerBody fails like aws-lambda-go's reader of a response that breaks mid-stream: after the payload it sets the
// error trailers.
type trailerBody struct {
	r       io.Reader
	trailer http.Header
}

func (b *trailerBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		b.trailer.Set(HeaderFunctionErrorType, "ErrStream")
		b.trailer.Set(HeaderFunctionErrorBody, base64.StdEncoding.EncodeToString([]byte(`{"errorMessage":"stream broke","errorType":"ErrStream"}`)))
	}
	return n, err
}

func TestResponseFailedMidStream(t *testing.T) {
	rt := newRuntime(t)
	done := rt.invoke(context.Background(), testInvocation("req-s"))
	rt.do(http.MethodGet, "/invocation/next", nil, nil)
	trailer := http.Header{HeaderFunctionErrorType: nil, HeaderFunctionErrorBody: nil}
	req, _ := http.NewRequest(http.MethodPost, rt.url+"/invocation/req-s/response", &trailerBody{r: strings.NewReader("partial"), trailer: trailer})
	req.Trailer = trailer
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("status %d", resp.StatusCode)
	}
	o := <-done
	var fe *FunctionError
	if !errors.As(o.err, &fe) || fe.Type != "ErrStream" || fe.Message != "stream broke" {
		t.Errorf("Invoke = %+v, %v", o.resp, o.err)
	}
}

func TestRefusals(t *testing.T) {
	rt := newRuntime(t)
	rt.invoke(context.Background(), testInvocation("req-r"))
	rt.do(http.MethodGet, "/invocation/next", nil, nil)
	tests := []struct {
		name     string
		method   string
		path     string
		body     []byte
		status   int
		wantType string
	}{
		{"answer for another invocation", http.MethodPost, "/invocation/req-other/response", []byte(`{}`), http.StatusBadRequest, "InvalidRequestID"},
		{"error for another invocation", http.MethodPost, "/invocation/req-other/error", []byte(`{}`), http.StatusBadRequest, "InvalidRequestID"},
		{"next before answering", http.MethodGet, "/invocation/next", nil, http.StatusForbidden, "InvalidStateTransition"},
		{"init error after initialization", http.MethodPost, "/init/error", []byte(`{}`), http.StatusForbidden, "InvalidStateTransition"},
		{"response over 6 MB", http.MethodPost, "/invocation/req-r/response", bytes.Repeat([]byte("x"), MaxPayloadSize+1), http.StatusRequestEntityTooLarge, "RequestEntityTooLarge"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := rt.do(tt.method, tt.path, nil, tt.body)
			var doc struct{ ErrorMessage, ErrorType string }
			if err := json.Unmarshal([]byte(a.body), &doc); err != nil || a.status != tt.status || doc.ErrorType != tt.wantType || doc.ErrorMessage == "" {
				t.Errorf("%s %s = %d %s, want %d %s", tt.method, tt.path, a.status, a.body, tt.status, tt.wantType)
			}
		})
	}
	// The refusals left the invocation in flight: it can still be answered.
	if a := rt.do(http.MethodPost, "/invocation/req-r/response", nil, []byte(`{}`)); a.status != http.StatusAccepted {
		t.Errorf("answer after the refusals = %d %s", a.status, a.body)
	}
}

func TestInitError(t *testing.T) {
	rt := newRuntime(t)
	body := `{"errorMessage":"TABLE_NAME is required","errorType":"ConfigurationError","stackTrace":[]}`
	a := rt.do(http.MethodPost, "/init/error", http.Header{HeaderFunctionErrorType: {"Runtime.ConfigurationError"}}, []byte(body))
	if a.status != http.StatusAccepted {
		t.Fatalf("init error = %d %s", a.status, a.body)
	}
	select {
	case <-rt.srv.InitFailed():
	default:
		t.Fatal("InitFailed is not closed")
	}
	_, err := rt.srv.Invoke(context.Background(), testInvocation("req-i"))
	var fe *FunctionError
	if !errors.As(err, &fe) || fe.Type != "Runtime.ConfigurationError" || fe.Message != "TABLE_NAME is required" || string(fe.Document()) != body {
		t.Errorf("Invoke after an init error = %v", err)
	}
	if a := rt.do(http.MethodGet, "/invocation/next", nil, nil); a.status != http.StatusForbidden {
		t.Errorf("next after an init error = %d %s", a.status, a.body)
	}
	if a := rt.do(http.MethodPost, "/init/error", nil, []byte(body)); a.status != http.StatusForbidden {
		t.Errorf("second init error = %d %s", a.status, a.body)
	}
}

// TestInvokeEndsWithItsContext: an invocation whose context ends (its deadline, or its runtime process exiting)
// returns the cause, and the runtime's late answer is refused.
func TestInvokeEndsWithItsContext(t *testing.T) {
	rt := newRuntime(t)
	errGone := errors.New("runtime exited")
	ctx, cancel := context.WithCancelCause(context.Background())
	done := rt.invoke(ctx, testInvocation("req-c"))
	rt.do(http.MethodGet, "/invocation/next", nil, nil)
	cancel(errGone)
	if o := <-done; !errors.Is(o.err, errGone) {
		t.Errorf("Invoke = %v, want the context's cause", o.err)
	}
	if a := rt.do(http.MethodPost, "/invocation/req-c/response", nil, []byte(`{}`)); a.status != http.StatusBadRequest {
		t.Errorf("late answer = %d %s", a.status, a.body)
	}
	// Before any runtime asked for it, the invocation is withdrawn and never handed out.
	ctx2, cancel2 := context.WithCancelCause(context.Background())
	cancel2(errGone)
	if _, err := rt.srv.Invoke(ctx2, testInvocation("req-never")); !errors.Is(err, errGone) {
		t.Errorf("Invoke with an ended context = %v", err)
	}
}
