// Package ddbproxy is a reverse proxy for DynamoDB's JSON protocol that counts what goes through it: requests by
// operation (the X-Amz-Target header), failed requests by error type, and the read and write capacity units each
// request consumed. A program that should be measured is given the proxy's URL as its DynamoDB endpoint; the proxy
// forwards every request unchanged to the real endpoint (Dynoxide, DynamoDB Local, or DynamoDB itself) and the
// answer unchanged back.
//
// Capacity comes from the answers' ConsumedCapacity. With Options.InjectCapacity the proxy adds
// "ReturnConsumedCapacity":"TOTAL" to data requests that do not ask for it, so every answer reports it. An error
// answer reports none; for a failed conditional write the proxy estimates DynamoDB's charge (see Estimated), and any
// other unreported consumption is counted as such (Unreported), never guessed.
//
// A table's stream reads (the DynamoDB Streams operations, X-Amz-Target DynamoDBStreams_20120810.*) are forwarded
// and not counted: the local stack's stream mapping makes them, as Lambda's poller does on AWS, where a trigger's
// stream reads consume no table capacity and are not billed.
//
// Snapshot and Sub attribute requests to phases: take a snapshot before and after, and subtract. Record keeps the
// request bodies of a phase, so they can be replayed elsewhere.
package ddbproxy

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// maxBody bounds a request or answer body the proxy holds in memory (DynamoDB's own request limit is 16 MB).
const maxBody = 32 << 20

// targetPrefix is the X-Amz-Target prefix of DynamoDB's operations; streamsPrefix that of DynamoDB Streams'.
const (
	targetPrefix  = "DynamoDB_20120810."
	streamsPrefix = "DynamoDBStreams_20120810."
)

// Options configures New.
type Options struct {
	// Upstream is the DynamoDB endpoint requests are forwarded to, for example http://127.0.0.1:8000.
	Upstream string
	// InjectCapacity adds "ReturnConsumedCapacity":"TOTAL" to data requests that do not set it.
	InjectCapacity bool
	// Client sends the forwarded requests; nil means a client with a connection pool sized for hundreds of
	// concurrent requests.
	Client *http.Client
}

// Proxy is the counting reverse proxy; it is an http.Handler and safe for concurrent use.
type Proxy struct {
	upstream *url.URL
	inject   bool
	client   *http.Client

	mu        sync.Mutex
	counts    Counts
	recording *[]Exchange
}

// Exchange is one recorded request.
type Exchange struct {
	// Operation is the DynamoDB operation, for example PutItem.
	Operation string `json:"operation"`
	// Body is the request body as the client sent it (before any ReturnConsumedCapacity was added).
	Body json.RawMessage `json:"body"`
	// Status is the HTTP status of the answer.
	Status int `json:"status"`
	// At is when the proxy received the request.
	At time.Time `json:"at"`
}

// New returns a proxy to opts.Upstream.
func New(opts Options) (*Proxy, error) {
	u, err := url.Parse(opts.Upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("ddbproxy: upstream %q is not an http(s) URL", opts.Upstream)
	}
	c := opts.Client
	if c == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConns = 1024
		t.MaxIdleConnsPerHost = 1024
		c = &http.Client{Transport: t}
	}
	return &Proxy{upstream: u, inject: opts.InjectCapacity, client: c, counts: Counts{}}, nil
}

// ServeHTTP forwards the request and counts it once its answer is complete.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(body) > maxBody {
		http.Error(w, "ddbproxy: request body unreadable or too large", http.StatusRequestEntityTooLarge)
		return
	}
	target := r.Header.Get("X-Amz-Target")
	op := strings.TrimPrefix(target, targetPrefix)
	streams := strings.HasPrefix(target, streamsPrefix)
	sent := body
	if streams {
		p.pass(w, r, body)
		return
	}
	if p.inject && kindOf(op) != kindControl {
		sent = withCapacity(body)
	}
	resp, respBody, err := p.forward(r, sent)
	if err != nil {
		p.count(op, body, at, http.StatusBadGateway, nil)
		http.Error(w, "ddbproxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	for k, vs := range resp.Header {
		if hopByHop[http.CanonicalHeaderKey(k)] {
			continue
		}
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(respBody)
	plain := respBody
	if strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
		plain = gunzip(respBody)
	}
	p.count(op, body, at, resp.StatusCode, plain)
}

// pass forwards a request it does not count and copies the answer back.
func (p *Proxy) pass(w http.ResponseWriter, r *http.Request, body []byte) {
	resp, respBody, err := p.forward(r, body)
	if err != nil {
		http.Error(w, "ddbproxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	for k, vs := range resp.Header {
		if !hopByHop[http.CanonicalHeaderKey(k)] {
			w.Header()[k] = vs
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(respBody)
}

// forward sends body to the upstream with r's method, path and headers and reads the whole answer.
func (p *Proxy) forward(r *http.Request, body []byte) (*http.Response, []byte, error) {
	u := *p.upstream
	u.Path = strings.TrimSuffix(p.upstream.Path, "/") + r.URL.Path
	u.RawQuery = r.URL.RawQuery
	out, err := http.NewRequestWithContext(r.Context(), r.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	for k, vs := range r.Header {
		if hopByHop[http.CanonicalHeaderKey(k)] || strings.EqualFold(k, "Content-Length") {
			continue
		}
		out.Header[k] = vs
	}
	out.ContentLength = int64(len(body))
	resp, err := p.client.Do(out)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, nil, fmt.Errorf("read upstream answer: %w", err)
	}
	return resp, b, nil
}

// hopByHop are the headers a proxy does not forward (RFC 9110 section 7.6.1).
var hopByHop = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Connection": true, "Proxy-Authenticate": true,
	"Proxy-Authorization": true, "Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
}

func gunzip(b []byte) []byte {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil
	}
	out, err := io.ReadAll(io.LimitReader(zr, maxBody))
	if err != nil {
		return nil
	}
	return out
}

// withCapacity returns body with "ReturnConsumedCapacity":"TOTAL" added, or body itself when it already sets the
// field or is not a JSON object.
func withCapacity(body []byte) []byte {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) < 2 || trimmed[0] != '{' || trimmed[len(trimmed)-1] != '}' {
		return body
	}
	var probe map[string]json.RawMessage
	if json.Unmarshal(trimmed, &probe) != nil {
		return body
	}
	if _, ok := probe["ReturnConsumedCapacity"]; ok {
		return body
	}
	inner := bytes.TrimSpace(trimmed[1 : len(trimmed)-1])
	out := make([]byte, 0, len(trimmed)+40)
	out = append(out, '{')
	out = append(out, inner...)
	if len(inner) > 0 {
		out = append(out, ',')
	}
	return append(out, `"ReturnConsumedCapacity":"TOTAL"}`...)
}

// count adds one finished request to the counts and, while recording, to the recording.
func (p *Proxy) count(op string, reqBody []byte, at time.Time, status int, respBody []byte) {
	if op == "" {
		op = "(none)"
	}
	u := usage(op, status, respBody)
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.counts[op]
	c.add(u)
	p.counts[op] = c
	if p.recording != nil && kindOf(op) != kindControl {
		*p.recording = append(*p.recording, Exchange{Operation: op, Body: append(json.RawMessage(nil), reqBody...), Status: status, At: at})
	}
}

// Snapshot returns the counts so far.
func (p *Proxy) Snapshot() Counts {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counts.clone()
}

// ErrRecording reports a Record call while another recording is open.
var ErrRecording = errors.New("ddbproxy: a recording is already open")

// Record starts keeping the data requests (not control operations such as CreateTable) that complete from now on.
// The returned stop ends the recording and returns them in the order they completed.
func (p *Proxy) Record() (stop func() []Exchange, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.recording != nil {
		return nil, ErrRecording
	}
	rec := &[]Exchange{}
	p.recording = rec
	return func() []Exchange {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.recording == rec {
			p.recording = nil
		}
		return *rec
	}, nil
}
