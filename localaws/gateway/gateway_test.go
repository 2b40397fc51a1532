package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// recorder is a function that records the proxy event it got and answers with resp (or fails with err).
type recorder struct {
	function string
	got      events.APIGatewayProxyRequest
	resp     events.APIGatewayProxyResponse
	err      error
}

func (r *recorder) Invoke(_ context.Context, function string, payload []byte) ([]byte, error) {
	r.function = function
	if err := json.Unmarshal(payload, &r.got); err != nil {
		return nil, err
	}
	if r.err != nil {
		return nil, r.err
	}
	return json.Marshal(r.resp)
}

func newTestGateway(t *testing.T, fn *recorder) *httptest.Server {
	t.Helper()
	g, err := New([]Route{
		{Method: "POST", Resource: "/transfers", Function: "Orchestrator"},
		{Method: "GET", Resource: "/transfers/{transferId}", Function: "Orchestrator"},
		{Method: "GET", Resource: "/transfers/{transferId}/history", Function: "History"},
		{Method: "ANY", Resource: "/files/{path+}", Function: "Files"},
	}, fn, Options{NewID: func() string { return "req-1" }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	return srv
}

func TestRouting(t *testing.T) {
	tests := []struct {
		name, method, path string
		wantFunction       string
		wantResource       string
		wantParams         map[string]string
		wantStatus         int
	}{
		{name: "post", method: "POST", path: "/transfers", wantFunction: "Orchestrator", wantResource: "/transfers", wantStatus: 201},
		{name: "path parameter", method: "GET", path: "/transfers/tr_1", wantFunction: "Orchestrator", wantResource: "/transfers/{transferId}", wantParams: map[string]string{"transferId": "tr_1"}, wantStatus: 201},
		{name: "nested", method: "GET", path: "/transfers/tr_1/history", wantFunction: "History", wantResource: "/transfers/{transferId}/history", wantParams: map[string]string{"transferId": "tr_1"}, wantStatus: 201},
		{name: "greedy and ANY", method: "DELETE", path: "/files/a/b.txt", wantFunction: "Files", wantResource: "/files/{path+}", wantParams: map[string]string{"path": "a/b.txt"}, wantStatus: 201},
		{name: "unknown path", method: "GET", path: "/nope", wantStatus: 403},
		{name: "wrong method", method: "DELETE", path: "/transfers", wantStatus: 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fn := &recorder{resp: events.APIGatewayProxyResponse{StatusCode: 201, Body: "{}"}}
			srv := newTestGateway(t, fn)
			req, _ := http.NewRequest(tt.method, srv.URL+tt.path, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status = %d, want %d", resp.StatusCode, tt.wantStatus)
			}
			if tt.wantStatus == 403 {
				if fn.function != "" {
					t.Errorf("function %q invoked for an unmatched route", fn.function)
				}
				return
			}
			if fn.function != tt.wantFunction || fn.got.Resource != tt.wantResource || fn.got.Path != tt.path {
				t.Errorf("invoked %s with resource %s path %s", fn.function, fn.got.Resource, fn.got.Path)
			}
			if len(tt.wantParams) > 0 && !maps.Equal(fn.got.PathParameters, tt.wantParams) {
				t.Errorf("path parameters = %v, want %v", fn.got.PathParameters, tt.wantParams)
			}
		})
	}
}

func TestEventCarriesRequestAndIdentity(t *testing.T) {
	fn := &recorder{resp: events.APIGatewayProxyResponse{StatusCode: 202, Headers: map[string]string{"Location": "/transfers/x"}, Body: `{"ok":true}`}}
	srv := newTestGateway(t, fn)
	req, _ := http.NewRequest("POST", srv.URL+"/transfers?dry=1&dry=2", strings.NewReader(`{"a":1}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", `"k1"`)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 202 || resp.Header.Get("Location") != "/transfers/x" || string(body) != `{"ok":true}` || resp.Header.Get("X-Amzn-RequestId") != "req-1" {
		t.Errorf("response %d %v %s", resp.StatusCode, resp.Header, body)
	}
	ev := fn.got
	if ev.Body != `{"a":1}` || ev.IsBase64Encoded || ev.Headers["Idempotency-Key"] != `"k1"` || ev.HTTPMethod != "POST" {
		t.Errorf("event = %+v", ev)
	}
	if got := ev.MultiValueQueryStringParameters["dry"]; len(got) != 2 || ev.QueryStringParameters["dry"] != "2" {
		t.Errorf("query = %v %v", ev.QueryStringParameters, ev.MultiValueQueryStringParameters)
	}
	rc := ev.RequestContext
	if rc.RequestID != "req-1" || rc.Stage != "local" || rc.ResourcePath != "/transfers" || rc.Identity.SourceIP != "127.0.0.1" ||
		rc.Identity.UserArn != "arn:aws:iam::000000000000:user/local" {
		t.Errorf("request context = %+v", rc)
	}
}

func TestBinaryBodyIsBase64(t *testing.T) {
	fn := &recorder{resp: events.APIGatewayProxyResponse{StatusCode: 200}}
	srv := newTestGateway(t, fn)
	resp, err := http.Post(srv.URL+"/transfers", "application/octet-stream", strings.NewReader("\xff\xfe"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !fn.got.IsBase64Encoded || fn.got.Body != "//4=" {
		t.Errorf("body = %q base64 %v", fn.got.Body, fn.got.IsBase64Encoded)
	}
}

// TestLambdaServiceErrorIs500: when Lambda refuses the invocation (here a throttle) the function never runs and
// API Gateway answers 500, not the 502 of a failed function.
func TestLambdaServiceErrorIs500(t *testing.T) {
	srv := newTestGateway(t, &recorder{err: &sfnengine.ServiceError{Name: "Lambda.TooManyRequestsException", Message: "Rate Exceeded."}})
	resp, err := http.Post(srv.URL+"/transfers", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError || strings.TrimSpace(string(body)) != `{"message":"Internal server error"}` {
		t.Errorf("status %d body %s, want 500 {\"message\":\"Internal server error\"}", resp.StatusCode, body)
	}
}

func TestFunctionFailureIs502(t *testing.T) {
	for _, fn := range []*recorder{
		{err: errors.New("boom")},
		{resp: events.APIGatewayProxyResponse{}}, // no status code: not a proxy response
	} {
		srv := newTestGateway(t, fn)
		resp, err := http.Post(srv.URL+"/transfers", "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 502 || strings.Contains(string(body), "boom") {
			t.Errorf("status %d body %s", resp.StatusCode, body)
		}
	}
}
