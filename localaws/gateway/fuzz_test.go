package gateway

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/transferflow/orchestrator/internal/apigw"
)

// fuzzRequests are raw HTTP/1.1 requests for the seed corpus: the API's routes, signed and unsigned, with text,
// binary and chunked bodies, escaped path parameters and repeated headers and query parameters.
var fuzzRequests = []string{
	"POST /transfers HTTP/1.1\r\nHost: localhost:3000\r\nContent-Type: application/json\r\nIdempotency-Key: \"k1\"\r\nContent-Length: 7\r\n\r\n{\"a\":1}",
	"GET /transfers/tr_1?x=1&x=2&y= HTTP/1.1\r\nHost: localhost\r\n\r\n",
	"GET /transfers/tr%2F1/history HTTP/1.1\r\nHost: localhost\r\nAccept: a\r\nAccept: b\r\n\r\n",
	"GET /accounts/acc-alice/ HTTP/1.1\r\nHost: localhost\r\n\r\n",
	"DELETE /files/a/b%20c.txt HTTP/1.1\r\nHost: localhost\r\n\r\n",
	"PUT /transfers HTTP/1.1\r\nHost: localhost\r\n\r\n",
	"GET /nope HTTP/1.1\r\nHost: localhost\r\n\r\n",
	"POST /transfers HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/octet-stream\r\nContent-Length: 2\r\n\r\n\xff\xfe",
	"POST /transfers HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
	"POST /transfers HTTP/1.1\r\nHost: localhost\r\nX-Amz-Date: 20261121T100000Z\r\n" +
		"Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20261121/us-east-1/execute-api/aws4_request, " +
		"SignedHeaders=host;x-amz-date, Signature=fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024\r\n\r\n",
	"GET /transfers/tr_1 HTTP/1.1\r\nHost: localhost\r\nX-Amz-Date: 20261121T100000Z\r\nX-Amz-Security-Token: payments-writer\r\n" +
		"Authorization: AWS4-HMAC-SHA256 Credential=ASIAXAMPLESESSION1/20261121/us-east-1/execute-api/aws4_request, " +
		"SignedHeaders=host;x-amz-date, Signature=fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024\r\n\r\n",
	"GET /transfers/tr_1 HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer x\r\n\r\n",
}

// FuzzRequestToEvent sends any HTTP request through the gateway to a function that records its proxy event. A
// request the gateway does not pass on gets a 4xx; one it passes on becomes an event that carries the request
// exactly: method, path, every header and query value, and the body byte for byte (base64 when it is not UTF-8);
// that survives Lambda's JSON round trip unchanged; and whose caller the orchestrator's CallerScope accepts.
func FuzzRequestToEvent(f *testing.F) {
	for _, r := range fuzzRequests {
		f.Add([]byte(r))
	}
	fn := &recorder{resp: events.APIGatewayProxyResponse{StatusCode: http.StatusTeapot, Body: "ok"}}
	g, err := New([]Route{
		{Method: "POST", Resource: "/transfers", Function: "Orchestrator"},
		{Method: "GET", Resource: "/transfers/{transferId}", Function: "Orchestrator"},
		{Method: "GET", Resource: "/transfers/{transferId}/history", Function: "Orchestrator"},
		{Method: "GET", Resource: "/accounts/{accountId}", Function: "Orchestrator"},
		{Method: "ANY", Resource: "/files/{path+}", Function: "Files"},
	}, fn, Options{NewID: func() string { return "req-1" }})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) > 64<<10 {
			return
		}
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
		if err != nil {
			return
		}
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.RemoteAddr = "203.0.113.10:50000"
		*fn = recorder{resp: fn.resp}
		w := httptest.NewRecorder()
		g.ServeHTTP(w, req)
		if fn.function == "" {
			if w.Code < 400 || w.Code >= 500 {
				t.Fatalf("%s %s not passed on, answered %d", req.Method, req.URL, w.Code)
			}
			return
		}
		if w.Code != fn.resp.StatusCode {
			t.Fatalf("the function answered %d, the client got %d", fn.resp.StatusCode, w.Code)
		}
		ev := fn.got
		if ev.HTTPMethod != req.Method || ev.RequestContext.HTTPMethod != req.Method || ev.Resource != ev.RequestContext.ResourcePath {
			t.Fatalf("request %s %s became method %q, resource %q / %q", req.Method, req.URL, ev.HTTPMethod, ev.Resource, ev.RequestContext.ResourcePath)
		}
		if utf8.ValidString(req.URL.Path) && ev.Path != req.URL.Path {
			t.Fatalf("path %q became %q", req.URL.Path, ev.Path)
		}

		// The body, byte for byte.
		got := []byte(ev.Body)
		if ev.IsBase64Encoded {
			if got, err = base64.StdEncoding.DecodeString(ev.Body); err != nil {
				t.Fatalf("base64 body %q: %v", ev.Body, err)
			}
		}
		if !bytes.Equal(got, body) || ev.IsBase64Encoded == utf8.Valid(body) && len(body) > 0 {
			t.Fatalf("body %q became %q (base64 %v)", body, ev.Body, ev.IsBase64Encoded)
		}

		// Every header and query value, as the function reads them.
		for k, vs := range req.Header {
			if !allUTF8(vs) {
				continue
			}
			if !slices.Equal(ev.MultiValueHeaders[k], vs) || ev.Headers[k] != vs[len(vs)-1] {
				t.Fatalf("header %s %q became %q / %q", k, vs, ev.MultiValueHeaders[k], ev.Headers[k])
			}
			if got := apigw.HeaderValues(ev, strings.ToLower(k)); !slices.Equal(got, vs) {
				t.Fatalf("header %s %q read by the function as %q", k, vs, got)
			}
		}
		if len(ev.Headers) != len(req.Header) || len(ev.MultiValueHeaders) != len(req.Header) {
			t.Fatalf("%d headers became %d and %d", len(req.Header), len(ev.Headers), len(ev.MultiValueHeaders))
		}
		for k, vs := range req.URL.Query() {
			if utf8.ValidString(k) && allUTF8(vs) && (!slices.Equal(ev.MultiValueQueryStringParameters[k], vs) ||
				ev.QueryStringParameters[k] != vs[len(vs)-1]) {
				t.Fatalf("query parameter %s %q became %q / %q", k, vs, ev.MultiValueQueryStringParameters[k], ev.QueryStringParameters[k])
			}
		}

		// Lambda's JSON round trip changes nothing more.
		payload, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		var back events.APIGatewayProxyRequest
		if err := json.Unmarshal(payload, &back); err != nil || !reflect.DeepEqual(back, ev) {
			t.Fatalf("event %s changed in a JSON round trip (%v)", payload, err)
		}

		// The caller the gateway authenticated is one the orchestrator can scope.
		if scope, err := apigw.CallerScope(ev); err != nil || scope == "anonymous" {
			t.Fatalf("identity %+v: the orchestrator's scope is %q, %v", ev.RequestContext.Identity, scope, err)
		}
	})
}

func allUTF8(vs []string) bool {
	for _, v := range vs {
		if !utf8.ValidString(v) {
			return false
		}
	}
	return true
}
