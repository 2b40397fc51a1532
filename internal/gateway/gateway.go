// Package gateway serves HTTP as API Gateway's REST API with Lambda proxy integration does: it matches the request
// against the routes of template.yaml, builds an events.APIGatewayProxyRequest (with a request context and a caller
// identity), invokes the route's function through the same JSON round trip Lambda does, and writes the function's
// proxy response.
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
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/transferflow/orchestrator/internal/sfnlocal"
)

// maxBody is API Gateway's payload limit (10 MB).
const maxBody = 10 << 20

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
	routes  []compiled
	lambda  invoker
	stage   string
	account string
	apiID   string
	newID   func() string
	now     func() time.Time
	logger  *slog.Logger
}

type compiled struct {
	Route
	re     *regexp.Regexp
	params []string
}

// Options configures New.
type Options struct {
	Stage     string // default "local"
	AccountID string // default 000000000000
	NewID     func() string
	Now       func() time.Time
	Logger    *slog.Logger
}

// New returns a Gateway for the routes. A resource may use {name} segments and a final greedy {name+}.
func New(routes []Route, lambda invoker, opts Options) (*Gateway, error) {
	g := &Gateway{lambda: lambda, stage: opts.Stage, account: opts.AccountID, apiID: "local", newID: opts.NewID, now: opts.Now, logger: opts.Logger}
	if g.stage == "" {
		g.stage = "local"
	}
	if g.account == "" {
		g.account = "000000000000"
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

// ServeHTTP implements http.Handler.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	route, params, ok := g.match(r.Method, r.URL.EscapedPath())
	if !ok {
		// What a REST API answers for a path or method it has no resource for.
		writeJSON(w, http.StatusForbidden, map[string]string{"message": "Missing Authentication Token"})
		return
	}
	id, err := g.caller(r)
	if err != nil {
		// A request API Gateway cannot authenticate never reaches the function.
		writeJSON(w, http.StatusForbidden, map[string]string{"message": err.Error()})
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"message": "could not read the request body"})
		return
	}
	if len(body) > maxBody {
		writeJSON(w, http.StatusRequestEntityTooLarge, map[string]string{"message": "Request Too Long"})
		return
	}
	ev := g.event(r, route, params, body, id)
	payload, err := json.Marshal(ev)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"message": "Internal server error"})
		return
	}
	out, err := g.lambda.Invoke(r.Context(), route.Function, payload)
	if err != nil {
		// API Gateway never shows the error. It answers 500 when Lambda refused the invocation (a service error:
		// throttled beyond the function's concurrency, function not found) and 502 when the function ran and failed
		// or crashed ("Handling Lambda errors with an API Gateway API", AWS Lambda developer guide).
		status := http.StatusBadGateway
		var se *sfnlocal.ServiceError
		if errors.As(err, &se) {
			status = http.StatusInternalServerError
		}
		g.logger.WarnContext(r.Context(), "function failed", "function", route.Function, "requestId", ev.RequestContext.RequestID, "status", status, "error", err.Error())
		writeJSON(w, status, map[string]string{"message": "Internal server error"})
		return
	}
	var resp events.APIGatewayProxyResponse
	if err := json.Unmarshal(out, &resp); err != nil || resp.StatusCode == 0 {
		g.logger.WarnContext(r.Context(), "malformed proxy response", "function", route.Function)
		writeJSON(w, http.StatusBadGateway, map[string]string{"message": "Internal server error"})
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
	h.Set("X-Amzn-RequestId", ev.RequestContext.RequestID)
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

// event builds the proxy event API Gateway would send for r from the caller id.
func (g *Gateway) event(r *http.Request, route compiled, params map[string]string, body []byte, id events.APIGatewayRequestIdentity) events.APIGatewayProxyRequest {
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
		RequestID:        g.newID(),
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

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
