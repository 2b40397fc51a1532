package gateway

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strconv"
)

// The gateway response types of API Gateway's own errors that the local gateway produces. An error of another kind
// (a function that failed, a Lambda service error, a malformed proxy response) has no type of its own and is
// answered by DEFAULT_4XX or DEFAULT_5XX, by its status, as on AWS.
const (
	ResponseDefault4XX                 = "DEFAULT_4XX"
	ResponseDefault5XX                 = "DEFAULT_5XX"
	ResponseMissingAuthenticationToken = "MISSING_AUTHENTICATION_TOKEN"
	ResponseInvalidSignature           = "INVALID_SIGNATURE"
	ResponseRequestTooLarge            = "REQUEST_TOO_LARGE"
	ResponseIntegrationTimeout         = "INTEGRATION_TIMEOUT"
)

// API Gateway's messages for its own errors ($context.error.message).
const (
	msgMissingAuthenticationToken = "Missing Authentication Token"
	msgRequestTooLong             = "Request Too Long"
	msgInternalServerError        = "Internal server error"
	msgEndpointTimedOut           = "Endpoint request timed out"
)

// Response is a gateway response as the template declares it (AWS::Serverless::Api GatewayResponses): StatusCode
// replaces the error's own status when not empty; Headers are ResponseParameters.Headers mapping expressions, of
// which the local gateway supports static values ('…'); Templates are the body mapping templates by content type,
// in which API Gateway substitutes $context variables and runs no VTL.
type Response struct {
	StatusCode string
	Headers    map[string]string
	Templates  map[string]string
}

// defaultResponse is API Gateway's own answer to an error no gateway response covers.
var defaultResponse = compiledResponse{contentType: "application/json", template: `{"message":$context.error.messageString}`}

// compiledResponse is a Response checked and ready to render.
type compiledResponse struct {
	status      int // 0: the error's own
	headers     map[string]string
	contentType string
	template    string
}

// contextVarRe finds the $context variables of a template; a variable name ends with a letter or digit, so a full
// stop after it is text.
var contextVarRe = regexp.MustCompile(`\$context(\.[A-Za-z][A-Za-z0-9]*)+`)

// errorContext is what a template can name about one error.
type errorContext struct {
	responseType, message, requestID, stage, apiID string
}

// contextVars are the $context variables the local gateway fills in a gateway response.
var contextVars = map[string]func(errorContext) string{
	"$context.error.message":       func(c errorContext) string { return c.message },
	"$context.error.messageString": func(c errorContext) string { b, _ := json.Marshal(c.message); return string(b) },
	"$context.error.responseType":  func(c errorContext) string { return c.responseType },
	"$context.requestId":           func(c errorContext) string { return c.requestID },
	"$context.extendedRequestId":   func(c errorContext) string { return c.requestID },
	"$context.stage":               func(c errorContext) string { return c.stage },
	"$context.apiId":               func(c errorContext) string { return c.apiID },
}

// compileResponses checks the responses: a status of three digits, static header values, known variables.
func compileResponses(rs map[string]Response) (map[string]compiledResponse, error) {
	out := make(map[string]compiledResponse, len(rs))
	for typ, r := range rs {
		c, err := compileResponse(r)
		if err != nil {
			return nil, fmt.Errorf("gateway: gateway response %s: %w", typ, err)
		}
		out[typ] = c
	}
	return out, nil
}

func compileResponse(r Response) (compiledResponse, error) {
	c := compiledResponse{headers: map[string]string{}}
	if r.StatusCode != "" {
		s, err := strconv.Atoi(r.StatusCode)
		if err != nil || s < 100 || s > 599 {
			return c, fmt.Errorf("StatusCode %q is not an HTTP status", r.StatusCode)
		}
		c.status = s
	}
	for k, v := range r.Headers {
		if len(v) < 2 || v[0] != '\'' || v[len(v)-1] != '\'' {
			return c, fmt.Errorf("header %s: %q: only static values ('…') are supported locally", k, v)
		}
		c.headers[http.CanonicalHeaderKey(k)] = v[1 : len(v)-1]
	}
	// API Gateway picks the template for the request's content type, else application/json's; the local gateway
	// uses application/json's, else the first by name.
	types := make([]string, 0, len(r.Templates))
	for ct := range r.Templates {
		types = append(types, ct)
	}
	sort.Strings(types)
	if _, ok := r.Templates["application/json"]; ok {
		types = []string{"application/json"}
	}
	if len(types) == 0 {
		c.contentType, c.template = defaultResponse.contentType, defaultResponse.template
	} else {
		c.contentType, c.template = types[0], r.Templates[types[0]]
	}
	for _, v := range contextVarRe.FindAllString(c.template, -1) {
		if contextVars[v] == nil {
			return c, fmt.Errorf("template: %s is not supported locally", v)
		}
	}
	return c, nil
}

// render returns the body of the response for the error.
func (c compiledResponse) render(e errorContext) string {
	return contextVarRe.ReplaceAllStringFunc(c.template, func(v string) string { return contextVars[v](e) })
}

// gatewayError is one of API Gateway's own errors: its response type ("" for none), its own status and message.
type gatewayError struct {
	typ     string
	status  int
	message string
}

// response returns the gateway response for e: its type's, else DEFAULT_4XX's or DEFAULT_5XX's, else API Gateway's
// built-in one.
func (g *Gateway) response(e gatewayError) compiledResponse {
	if r, ok := g.responses[e.typ]; ok && e.typ != "" {
		return r
	}
	def := ResponseDefault4XX
	if e.status >= 500 {
		def = ResponseDefault5XX
	}
	if r, ok := g.responses[def]; ok {
		return r
	}
	return defaultResponse
}

// fail writes e as API Gateway answers it, with the request id.
func (g *Gateway) fail(w http.ResponseWriter, requestID string, e gatewayError) {
	r := g.response(e)
	status := e.status
	if r.status != 0 {
		status = r.status
	}
	typ := e.typ
	if typ == "" {
		typ = ResponseDefault4XX
		if e.status >= 500 {
			typ = ResponseDefault5XX
		}
	}
	h := w.Header()
	h.Set("Content-Type", r.contentType)
	for k, v := range r.headers {
		h.Set(k, v)
	}
	h.Set("X-Amzn-RequestId", requestID)
	w.WriteHeader(status)
	_, _ = io.WriteString(w, r.render(errorContext{responseType: typ, message: e.message, requestID: requestID, stage: g.stage, apiID: g.apiID}))
}
