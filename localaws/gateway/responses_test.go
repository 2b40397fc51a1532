package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/transferflow/orchestrator/localaws/samtemplate"
	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// templateResponses reads the repository's template.yaml GatewayResponses, as the local stack does.
func templateResponses(t *testing.T) (map[string]Response, map[string]samtemplate.GatewayResponse) {
	t.Helper()
	tmpl, err := samtemplate.Load(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	grs, err := tmpl.GatewayResponses()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Response{}
	for typ, gr := range grs {
		out[typ] = Response{StatusCode: gr.StatusCode, Headers: gr.Headers, Templates: gr.Templates}
	}
	return out, grs
}

// TestTemplateGatewayResponsesAreProblems: every gateway response of template.yaml, the same text on AWS and
// locally, renders to an RFC 9457 problem document with the contract's members (type, title, status, detail, code),
// its status the response's StatusCode, as application/problem+json.
func TestTemplateGatewayResponsesAreProblems(t *testing.T) {
	responses, grs := templateResponses(t)
	for _, typ := range []string{ResponseDefault4XX, ResponseDefault5XX, ResponseMissingAuthenticationToken, ResponseInvalidSignature,
		ResponseRequestTooLarge, ResponseIntegrationTimeout, "ACCESS_DENIED", "EXPIRED_TOKEN", "THROTTLED"} {
		if _, ok := grs[typ]; !ok {
			t.Errorf("template.yaml declares no %s gateway response", typ)
		}
	}
	compiled, err := compileResponses(responses)
	if err != nil {
		t.Fatal(err)
	}
	for typ, c := range compiled {
		t.Run(typ, func(t *testing.T) {
			body := c.render(errorContext{responseType: typ, message: `a "quoted" message`, requestID: "req-1"})
			var p struct {
				Type, Title, Detail, Code string
				Status                    int
			}
			if err := json.Unmarshal([]byte(body), &p); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, body)
			}
			want := "/problems/" + strings.ReplaceAll(strings.ToLower(p.Code), "_", "-")
			if p.Code == "" || p.Type != want || p.Status != c.status || p.Title != http.StatusText(p.Status) || p.Detail != `a "quoted" message` {
				t.Errorf("problem %+v: want type %s, status %d and its reason phrase, the message as detail", p, want, c.status)
			}
			if c.headers["Content-Type"] != "application/problem+json" || c.headers["Cache-Control"] != "no-store" {
				t.Errorf("headers %v, want Content-Type: application/problem+json and Cache-Control: no-store", c.headers)
			}
		})
	}
}

// blocking is a function that answers only when its context ends.
type blocking struct{}

func (blocking) Invoke(ctx context.Context, _ string, _ []byte) ([]byte, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestGatewayAnswersTheTemplateDocuments: each of API Gateway's own errors the local gateway produces is answered
// with the template's document for its type, byte for byte (the template's text with the message substituted, as
// API Gateway substitutes it), its status and its headers, and no request is redirected.
func TestGatewayAnswersTheTemplateDocuments(t *testing.T) {
	responses, grs := templateResponses(t)
	routes := []Route{{Method: "POST", Resource: "/transfers", Function: "Orchestrator"}}
	start := func(t *testing.T, fn invoker) string {
		t.Helper()
		g, err := New(routes, fn, Options{NewID: func() string { return "req-1" }, Responses: responses, IntegrationTimeout: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(g)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	ok := &recorder{resp: events.APIGatewayProxyResponse{StatusCode: 200, Body: "{}"}}
	tests := []struct {
		name    string
		fn      invoker
		method  string
		path    string
		headers map[string]string
		body    string
		typ     string
		message string
	}{
		{"unknown path", ok, "GET", "/nope", nil, "", ResponseMissingAuthenticationToken, msgMissingAuthenticationToken},
		{"double slash", ok, "POST", "//transfers", nil, "{}", ResponseMissingAuthenticationToken, msgMissingAuthenticationToken},
		{"other method", ok, "DELETE", "/transfers", nil, "", ResponseMissingAuthenticationToken, msgMissingAuthenticationToken},
		{"malformed Authorization", ok, "POST", "/transfers", map[string]string{"Authorization": "Bearer sometoken"}, "{}",
			ResponseMissingAuthenticationToken, "'sometoken' not a valid key=value pair (missing equal-sign) in Authorization header: 'Bearer sometoken'."},
		{"signature that cannot match", ok, "POST", "/transfers", map[string]string{
			"Authorization": "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261123/us-east-1/execute-api/aws4_request, SignedHeaders=host, Signature=nothex",
			"X-Amz-Date":    "20261123T000000Z"}, "{}", ResponseInvalidSignature, msgSignatureMismatch},
		{"body over 10 MB", ok, "POST", "/transfers", nil, strings.Repeat("x", MaxBody+1), ResponseRequestTooLarge, msgRequestTooLong},
		{"function failed", &recorder{err: errors.New("boom")}, "POST", "/transfers", nil, "{}", ResponseDefault5XX, msgInternalServerError},
		{"malformed proxy response", &recorder{}, "POST", "/transfers", nil, "{}", ResponseDefault5XX, msgInternalServerError},
		{"Lambda throttled", &recorder{err: &sfnengine.ServiceError{Name: "Lambda.TooManyRequestsException", Message: "Rate Exceeded."}},
			"POST", "/transfers", nil, "{}", ResponseDefault5XX, msgInternalServerError},
		{"function slower than the integration timeout", blocking{}, "POST", "/transfers", nil, "{}", ResponseIntegrationTimeout, msgEndpointTimedOut},
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := start(t, tt.fn)
			var body io.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
			}
			req, _ := http.NewRequest(tt.method, url+tt.path, body)
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			gr := grs[tt.typ]
			quoted, _ := json.Marshal(tt.message)
			want := strings.ReplaceAll(gr.Templates["application/json"], "$context.error.messageString", string(quoted))
			if strconv.Itoa(resp.StatusCode) != gr.StatusCode || string(got) != want {
				t.Errorf("answer %d %s\nwant %s %s (template.yaml's %s)", resp.StatusCode, got, gr.StatusCode, want, tt.typ)
			}
			if resp.Header.Get("Content-Type") != "application/problem+json" || resp.Header.Get("X-Amzn-RequestId") != "req-1" ||
				resp.Header.Get("Location") != "" {
				t.Errorf("headers %v, want application/problem+json with the request id and no Location", resp.Header)
			}
		})
	}
}

// TestResponsesTheLocalGatewayCannotRender: a template the local gateway cannot answer as API Gateway would is
// refused when the gateway is built, not at the first error.
func TestResponsesTheLocalGatewayCannotRender(t *testing.T) {
	tests := []struct {
		name string
		r    Response
		want string
	}{
		{"header from the request", Response{Headers: map[string]string{"X-Origin": "method.request.header.Origin"}},
			`gateway: gateway response DEFAULT_4XX: header X-Origin: "method.request.header.Origin": only static values ('…') are supported locally`},
		{"unknown variable", Response{Templates: map[string]string{"application/json": `{"path":"$context.resourcePath"}`}},
			"gateway: gateway response DEFAULT_4XX: template: $context.resourcePath is not supported locally"},
		{"status", Response{StatusCode: "4xx"}, `gateway: gateway response DEFAULT_4XX: StatusCode "4xx" is not an HTTP status`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(nil, &recorder{}, Options{NewID: func() string { return "x" }, Responses: map[string]Response{ResponseDefault4XX: tt.r}})
			if err == nil || err.Error() != tt.want {
				t.Errorf("err = %v\nwant %s", err, tt.want)
			}
		})
	}
}

// TestWithoutResponsesAPIGatewaysOwnMessages: with no gateway responses the answers are API Gateway's defaults.
func TestWithoutResponsesAPIGatewaysOwnMessages(t *testing.T) {
	srv := newTestGateway(t, &recorder{})
	resp, err := http.Get(srv.URL + "/nope")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || string(b) != `{"message":"Missing Authentication Token"}` || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("%d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
}
