// Package gateway serves HTTP as API Gateway's REST API with Lambda proxy integration does: it matches the request
// against the routes of template.yaml, authenticates the caller (a SigV4 header, not verified), authorizes it with
// its IAM policies and the API's resource policy as API Gateway does for AWS_IAM methods, builds an
// events.APIGatewayProxyRequest (with a request context and a caller identity), invokes the route's function
// through the same JSON round trip Lambda does, and writes the function's proxy response. Its own errors (no route,
// a refused signature, a caller not authorized, a body over 10 MB, a failed function, no answer within the
// integration timeout) are answered with the API's gateway responses (template.yaml's GatewayResponses), rendered as
// API Gateway renders them, or API Gateway's default {"message": …} without them.
package gateway

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/transferflow/orchestrator/localaws/iampolicy"
	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// MaxBody is API Gateway's payload limit (10 MB): a longer body is answered 413 (REQUEST_TOO_LARGE).
const MaxBody = 10 << 20

// DefaultIntegrationTimeout is API Gateway's integration timeout (29 s): a function that has not answered by then
// is answered 504 (INTEGRATION_TIMEOUT).
const DefaultIntegrationTimeout = 29 * time.Second

// invoker runs a function by name with a JSON payload.
type invoker interface {
	Invoke(ctx context.Context, function string, payload []byte) ([]byte, error)
}

// Route sends requests for Method and Resource (API Gateway's resource path, e.g. /transfers/{transferId}) to
// Function.
type Route struct {
	Method   string
	Resource string
	Function string
}

// Gateway is an http.Handler in front of the functions.
type Gateway struct {
	routes    []compiled
	lambda    invoker
	stage     string
	account   string
	region    string
	apiID     string
	authz     authorizer
	newID     func() string
	now       func() time.Time
	logger    *slog.Logger
	responses map[string]compiledResponse
	timeout   time.Duration
	closed    chan struct{} // closed by Close
	closeOnce sync.Once
}

type compiled struct {
	Route
	re     *regexp.Regexp
	params []string
}

// DefaultAPIID is the API's id when Options give none: requestContext.apiId and the id in its execute-api ARNs.
const DefaultAPIID = "local"

// Options configures New.
type Options struct {
	Stage     string // default "local"
	AccountID string // default 000000000000
	Region    string // default us-east-1, in the API's execute-api ARNs
	APIID     string // default DefaultAPIID
	NewID     func() string
	Now       func() time.Time
	Logger    *slog.Logger
	// Responses are the API's gateway responses by type (template.yaml's GatewayResponses); without them API
	// Gateway's own {"message": …} answers.
	Responses map[string]Response
	// IntegrationTimeout bounds a function's answer (default DefaultIntegrationTimeout).
	IntegrationTimeout time.Duration
	// IdentityPolicies gives the IAM policies of a caller, evaluated with ResourcePolicy for execute-api:Invoke on
	// the method's ARN before the function is invoked; nil: IAM allows every caller every route. Without either,
	// nothing is evaluated: every caller, of any account, may invoke every route.
	IdentityPolicies func(Principal) []*iampolicy.Policy
	// ResourcePolicy is the API's resource policy document as decoded JSON (samtemplate.APIResourcePolicy), its
	// resources written as ARNs or with API Gateway's shorthand for this API's methods, execute-api:/STAGE/METHOD/PATH;
	// nil: none.
	ResourcePolicy map[string]any
}

// New returns a Gateway for the routes. A resource may use {name} segments and a final greedy {name+}.
func New(routes []Route, lambda invoker, opts Options) (*Gateway, error) {
	g := &Gateway{lambda: lambda, stage: opts.Stage, account: opts.AccountID, region: opts.Region, apiID: opts.APIID, newID: opts.NewID,
		now: opts.Now, logger: opts.Logger, timeout: opts.IntegrationTimeout, closed: make(chan struct{})}
	if g.timeout <= 0 {
		g.timeout = DefaultIntegrationTimeout
	}
	var err error
	if g.responses, err = compileResponses(opts.Responses); err != nil {
		return nil, err
	}
	if g.stage == "" {
		g.stage = "local"
	}
	if g.account == "" {
		g.account = "000000000000"
	}
	if g.region == "" {
		g.region = "us-east-1"
	}
	if g.apiID == "" {
		g.apiID = DefaultAPIID
	}
	g.authz = authorizer{identity: opts.IdentityPolicies, account: g.account}
	if opts.ResourcePolicy != nil {
		if g.authz.resource, err = expandResourcePolicy(opts.ResourcePolicy, g.apiARNPrefix()); err != nil {
			return nil, err
		}
	}
	if g.now == nil {
		g.now = time.Now
	}
	if g.logger == nil {
		g.logger = slog.New(slog.DiscardHandler)
	}
	if g.newID == nil {
		return nil, errors.New("gateway: NewID is required")
	}
	for _, r := range routes {
		c, err := compile(r)
		if err != nil {
			return nil, err
		}
		g.routes = append(g.routes, c)
	}
	return g, nil
}

var segmentRe = regexp.MustCompile(`^\{([A-Za-z0-9_.-]+)(\+?)\}$`)

func compile(r Route) (compiled, error) {
	if !strings.HasPrefix(r.Resource, "/") {
		return compiled{}, fmt.Errorf("gateway: resource %q must start with /", r.Resource)
	}
	c := compiled{Route: r}
	var b strings.Builder
	b.WriteString("^")
	segs := strings.Split(strings.Trim(r.Resource, "/"), "/")
	for i, seg := range segs {
		if seg == "" && len(segs) == 1 {
			break
		}
		b.WriteString("/")
		m := segmentRe.FindStringSubmatch(seg)
		switch {
		case m == nil:
			b.WriteString(regexp.QuoteMeta(seg))
		case m[2] == "+":
			if i != len(segs)-1 {
				return compiled{}, fmt.Errorf("gateway: greedy segment must be last in %q", r.Resource)
			}
			b.WriteString("(.+)")
			c.params = append(c.params, m[1])
		default:
			b.WriteString("([^/]+)")
			c.params = append(c.params, m[1])
		}
	}
	b.WriteString("/?$")
	c.re = regexp.MustCompile(b.String())
	return c, nil
}

// match finds the route for the request; ok false with pathMatched true means only the method differs.
func (g *Gateway) match(method, path string) (c compiled, params map[string]string, ok bool) {
	for _, r := range g.routes {
		m := r.re.FindStringSubmatch(path)
		if m == nil || !strings.EqualFold(r.Method, method) && r.Method != "ANY" {
			continue
		}
		params = map[string]string{}
		for i, name := range r.params {
			v, err := url.PathUnescape(m[i+1])
			if err != nil {
				v = m[i+1]
			}
			params[name] = v
		}
		return r, params, true
	}
	return compiled{}, nil, false
}

// ServeHTTP implements http.Handler. Every answer that is not the function's is a gateway response; no request is
// redirected (a path with a double slash matches no resource, as on AWS).
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	requestID := g.newID()
	route, params, ok := g.match(r.Method, r.URL.EscapedPath())
	if !ok {
		// What a REST API answers for a path or method it has no resource for.
		g.fail(w, requestID, gatewayError{ResponseMissingAuthenticationToken, http.StatusForbidden, msgMissingAuthenticationToken})
		return
	}
	id, principal, err := g.caller(r)
	if err != nil {
		// A request API Gateway cannot authenticate never reaches the function.
		var ae authError
		typ := ResponseMissingAuthenticationToken
		if errors.As(err, &ae) && ae.signature {
			typ = ResponseInvalidSignature
		}
		g.fail(w, requestID, gatewayError{typ, http.StatusForbidden, err.Error()})
		return
	}
	if denied := g.authz.decide(principal, g.methodARN(r.Method, r.URL.Path)); denied != nil {
		// Nor does one that IAM or the resource policy does not allow.
		g.logger.InfoContext(r.Context(), "access denied", "requestId", requestID, "caller", principal.UserARN, "method", r.Method,
			"resource", route.Resource)
		g.fail(w, requestID, *denied)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	if err != nil {
		// The connection failed under the body (a body that is too slow is answered 408 before it gets here).
		g.fail(w, requestID, gatewayError{"", http.StatusBadRequest, "could not read the request body"})
		return
	}
	if len(body) > MaxBody {
		g.fail(w, requestID, gatewayError{ResponseRequestTooLarge, http.StatusRequestEntityTooLarge, msgRequestTooLong})
		return
	}
	ev := g.event(r, route, params, body, id, requestID)
	payload, err := json.Marshal(ev)
	if err != nil {
		g.fail(w, requestID, gatewayError{"", http.StatusInternalServerError, msgInternalServerError})
		return
	}
	ctx, cancel := g.invocationContext(r)
	defer cancel()
	out, err := g.lambda.Invoke(ctx, route.Function, payload)
	if err == nil && errors.Is(ctx.Err(), context.Canceled) {
		// Close ended the invocation while its answer raced the end: the stack stopped it, so it did not answer.
		err = ctx.Err()
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		g.logger.WarnContext(r.Context(), "integration timed out", "function", route.Function, "requestId", requestID, "timeout", g.timeout.String())
		g.fail(w, requestID, gatewayError{ResponseIntegrationTimeout, http.StatusGatewayTimeout, msgEndpointTimedOut})
		return
	}
	if err != nil {
		// API Gateway never shows the error. It answers 500 when Lambda refused the invocation (a service error:
		// throttled beyond the function's concurrency, function not found) and 502 when the function ran and failed
		// or crashed ("Handling Lambda errors with an API Gateway API", AWS Lambda developer guide); neither has a
		// response type, so DEFAULT_5XX answers both.
		status := http.StatusBadGateway
		var se *sfnengine.ServiceError
		if errors.As(err, &se) {
			status = http.StatusInternalServerError
		}
		g.logger.WarnContext(r.Context(), "function failed", "function", route.Function, "requestId", requestID, "status", status, "error", err.Error())
		g.fail(w, requestID, gatewayError{"", status, msgInternalServerError})
		return
	}
	var resp events.APIGatewayProxyResponse
	if err := json.Unmarshal(out, &resp); err != nil || resp.StatusCode == 0 {
		g.logger.WarnContext(r.Context(), "malformed proxy response", "function", route.Function, "requestId", requestID)
		g.fail(w, requestID, gatewayError{"", http.StatusBadGateway, msgInternalServerError})
		return
	}
	h := w.Header()
	for k, v := range resp.Headers {
		h.Set(k, v)
	}
	for k, vs := range resp.MultiValueHeaders {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	h.Set("X-Amzn-RequestId", requestID)
	w.WriteHeader(resp.StatusCode)
	if resp.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(resp.Body)
		if err == nil {
			_, _ = w.Write(b)
		}
		return
	}
	_, _ = io.WriteString(w, resp.Body)
}

// invocationContext returns the context of the function's invocation for r. API Gateway does not end a Lambda
// invocation when its client goes away: the function runs to its end or to its own timeout (the invoker's deadline).
// So the invocation keeps the request's values but not its cancellation; it ends at the integration timeout, or
// when Close is called.
func (g *Gateway) invocationContext(r *http.Request) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), g.timeout)
	go func() {
		select {
		case <-g.closed:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// Close ends the invocations in flight, as a stack that stops ends its functions; an invocation that starts later
// is ended at once. It does not stop the server that serves the gateway.
func (g *Gateway) Close() {
	g.closeOnce.Do(func() { close(g.closed) })
}

// event builds the proxy event API Gateway would send for r from the caller id.
func (g *Gateway) event(r *http.Request, route compiled, params map[string]string, body []byte, id events.APIGatewayRequestIdentity, requestID string) events.APIGatewayProxyRequest {
	ev := events.APIGatewayProxyRequest{
		Resource:          route.Resource,
		Path:              r.URL.Path,
		HTTPMethod:        r.Method,
		Headers:           map[string]string{},
		MultiValueHeaders: map[string][]string{},
		PathParameters:    params,
	}
	for k, vs := range r.Header {
		ev.Headers[k] = vs[len(vs)-1]
		ev.MultiValueHeaders[k] = vs
	}
	if q := r.URL.Query(); len(q) > 0 {
		ev.QueryStringParameters = map[string]string{}
		ev.MultiValueQueryStringParameters = map[string][]string{}
		for k, vs := range q {
			ev.QueryStringParameters[k] = vs[len(vs)-1]
			ev.MultiValueQueryStringParameters[k] = vs
		}
	}
	if len(params) == 0 {
		ev.PathParameters = nil
	}
	if len(body) > 0 {
		if utf8.Valid(body) {
			ev.Body = string(body)
		} else {
			ev.Body = base64.StdEncoding.EncodeToString(body)
			ev.IsBase64Encoded = true
		}
	}
	now := g.now()
	ev.RequestContext = events.APIGatewayProxyRequestContext{
		AccountID:        g.account,
		ResourceID:       "local",
		Stage:            g.stage,
		RequestID:        requestID,
		ResourcePath:     route.Resource,
		HTTPMethod:       r.Method,
		APIID:            g.apiID,
		Path:             "/" + g.stage + r.URL.Path,
		Protocol:         r.Proto,
		RequestTime:      now.UTC().Format("02/Jan/2006:15:04:05 -0700"),
		RequestTimeEpoch: now.UnixMilli(),
		Identity:         id,
	}
	return ev
}
