// Package apigw holds the API Gateway proxy-integration helpers of the transfer API: reading headers and bodies of
// events.APIGatewayProxyRequest, identifying the caller, and writing JSON and RFC 9457 problem responses.
package apigw

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-lambda-go/events"
)

// ErrBodyTooLarge reports a body over the caller's limit.
var ErrBodyTooLarge = errors.New("apigw: body too large")

// HeaderValues returns every value of the header name (case-insensitively), from the multi-value map when API
// Gateway filled it and from the single-value map otherwise. Header names are case-insensitive, so the values of
// every spelling of name are returned, spellings in sorted order: the answer does not depend on map order.
func HeaderValues(req events.APIGatewayProxyRequest, name string) []string {
	if keys := spellings(req.MultiValueHeaders, name); len(keys) > 0 {
		var out []string
		for _, k := range keys {
			out = append(out, req.MultiValueHeaders[k]...)
		}
		return out
	}
	var out []string
	for _, k := range spellings(req.Headers, name) {
		out = append(out, req.Headers[k])
	}
	return out
}

// spellings returns the keys of m equal to name under case folding, sorted.
func spellings[V any](m map[string]V, name string) []string {
	var keys []string
	for k := range m {
		if strings.EqualFold(k, name) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// Body returns the request body, decoding base64 when API Gateway encoded it, and ErrBodyTooLarge past limit bytes.
func Body(req events.APIGatewayProxyRequest, limit int) ([]byte, error) {
	if !req.IsBase64Encoded {
		if len(req.Body) > limit {
			return nil, ErrBodyTooLarge
		}
		return []byte(req.Body), nil
	}
	if base64.StdEncoding.DecodedLen(len(req.Body)) > limit+3 {
		return nil, ErrBodyTooLarge
	}
	b, err := base64.StdEncoding.DecodeString(req.Body)
	if err != nil {
		return nil, err
	}
	if len(b) > limit {
		return nil, ErrBodyTooLarge
	}
	return b, nil
}

// Problem is an RFC 9457 problem detail with the API's machine-readable code.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	Code   string `json:"code"`
	// Errors lists invalid fields for VALIDATION_ERROR.
	Errors any `json:"errors,omitempty"`
	// RetryAfter, in seconds, becomes the Retry-After header when positive.
	RetryAfter int `json:"-"`
}

// NewProblem returns a problem whose type URI and title derive from code.
func NewProblem(status int, code, detail string) *Problem {
	return &Problem{
		Type:   "/problems/" + strings.ReplaceAll(strings.ToLower(code), "_", "-"),
		Title:  http.StatusText(status),
		Status: status,
		Detail: detail,
		Code:   code,
	}
}

// Response is what a route returns: a status, headers and a JSON body. One adapter, Encode, turns it into the
// proxy response.
type Response struct {
	Status  int
	Headers map[string]string
	Body    any
}

// JSON returns a JSON response.
func JSON(status int, body any) Response { return Response{Status: status, Body: body} }

// ProblemResponse returns the problem as application/problem+json.
func ProblemResponse(p *Problem) Response {
	r := Response{Status: p.Status, Body: p, Headers: map[string]string{"Content-Type": "application/problem+json"}}
	if p.RetryAfter > 0 {
		r.Headers["Retry-After"] = strconv.Itoa(p.RetryAfter)
	}
	return r
}

// WithHeader returns r with one more header.
func (r Response) WithHeader(k, v string) Response {
	h := make(map[string]string, len(r.Headers)+1)
	for k, v := range r.Headers {
		h[k] = v
	}
	h[k] = v
	r.Headers = h
	return r
}

// Encode renders r as an API Gateway proxy response.
func Encode(r Response) events.APIGatewayProxyResponse {
	body, err := json.Marshal(r.Body)
	if err != nil {
		r = ProblemResponse(NewProblem(http.StatusInternalServerError, "INTERNAL_ERROR", "the response could not be encoded"))
		body, _ = json.Marshal(r.Body)
	}
	headers := map[string]string{"Content-Type": "application/json", "Cache-Control": "no-store"}
	for k, v := range r.Headers {
		headers[k] = v
	}
	return events.APIGatewayProxyResponse{StatusCode: r.Status, Headers: headers, Body: string(body)}
}
