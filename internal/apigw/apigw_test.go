package apigw

import (
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

func TestHeaderValues(t *testing.T) {
	req := events.APIGatewayProxyRequest{
		Headers:           map[string]string{"content-type": "application/json"},
		MultiValueHeaders: map[string][]string{"Idempotency-Key": {"a", "b"}},
	}
	if got := HeaderValues(req, "Content-Type"); len(got) != 1 || got[0] != "application/json" {
		t.Errorf("Content-Type = %v", got)
	}
	if got := HeaderValues(req, "idempotency-key"); len(got) != 2 {
		t.Errorf("multi-value header = %v, want both values", got)
	}
	if got := HeaderValues(req, "X-Missing"); got != nil {
		t.Errorf("missing header = %v", got)
	}
	// Found by FuzzProxyEvent (testdata/fuzz/FuzzProxyEvent): with two spellings of a name, the answer depended on
	// map order. Every spelling's values count, so two Idempotency-Key spellings are two values.
	twice := events.APIGatewayProxyRequest{Headers: map[string]string{"idempotency-key": "a", "Idempotency-Key": "b"}}
	for range 20 {
		if got := HeaderValues(twice, "IDEMPOTENCY-KEY"); !slices.Equal(got, []string{"b", "a"}) {
			t.Fatalf("two spellings = %v, want [b a]", got)
		}
	}
}

func TestBody(t *testing.T) {
	tests := []struct {
		name    string
		req     events.APIGatewayProxyRequest
		want    string
		wantErr error
	}{
		{name: "plain", req: events.APIGatewayProxyRequest{Body: "abc"}, want: "abc"},
		{name: "base64", req: events.APIGatewayProxyRequest{Body: base64.StdEncoding.EncodeToString([]byte("héllo")), IsBase64Encoded: true}, want: "héllo"},
		{name: "at the limit", req: events.APIGatewayProxyRequest{Body: strings.Repeat("a", 8)}, want: strings.Repeat("a", 8)},
		{name: "over the limit", req: events.APIGatewayProxyRequest{Body: strings.Repeat("a", 9)}, wantErr: ErrBodyTooLarge},
		{name: "base64 over the limit", req: events.APIGatewayProxyRequest{Body: base64.StdEncoding.EncodeToString([]byte(strings.Repeat("a", 9))), IsBase64Encoded: true}, wantErr: ErrBodyTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Body(tt.req, 8)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && string(got) != tt.want) {
				t.Fatalf("got %q, %v; want %q, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestProblemResponse(t *testing.T) {
	p := NewProblem(503, "SERVICE_UNAVAILABLE", "retry")
	p.RetryAfter = 3
	r := Encode(ProblemResponse(p))
	if r.StatusCode != 503 || r.Headers["Content-Type"] != "application/problem+json" || r.Headers["Retry-After"] != "3" {
		t.Errorf("response = %+v", r)
	}
	want := `{"type":"/problems/service-unavailable","title":"Service Unavailable","status":503,"detail":"retry","code":"SERVICE_UNAVAILABLE"}`
	if r.Body != want {
		t.Errorf("body = %s\nwant   %s", r.Body, want)
	}
}
