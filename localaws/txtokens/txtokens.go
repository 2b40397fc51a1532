// Package txtokens keeps the idempotency tokens of DynamoDB's TransactWriteItems (ClientRequestToken) on the
// client's side of the connection, for a local DynamoDB server whose own keeping of them costs time that grows with
// the tokens it holds.
//
// Dynoxide 1.2.1 walks every token of the last 10 minutes on each transaction that carries one (docs/dynamodb.md,
// "Dynoxide under the transfer workload"): after a few thousand transfers each leg pays milliseconds for it. The
// local stack wraps its functions' AWS SDK HTTP client in a Client; once a response says it comes from Dynoxide (its
// Server header), the Client takes the token off each TransactWriteItems, forwards the rest, and answers a repeated
// token itself, as DynamoDB would: the same token with the same items within the window is answered with the first
// call's answer and writes nothing again; with other items, IdempotentParameterMismatchException; while the first
// call is still in flight, TransactionInProgressException. A call that failed, or whose answer never came, is not
// kept: the same token then runs the transaction again (the ledger's conditions answer a leg that had committed).
// Against any other server (DynamoDB Local, AWS) the Client passes every request through untouched.
package txtokens

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"hash/maphash"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// target is the X-Amz-Target of the one operation whose tokens the Client keeps.
const target = "DynamoDB_20120810.TransactWriteItems"

// serverPrefix starts the Server header of the responses of a server whose token keeping the Client replaces.
const serverPrefix = "Dynoxide/"

// Doer sends an HTTP request: an *http.Client, or the AWS SDK's aws.HTTPClient.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// Client is an HTTP client (the AWS SDK's aws.HTTPClient) that keeps TransactWriteItems tokens for a Dynoxide
// server (see the package comment). The zero value is not usable: build one with New.
type Client struct {
	base   Doer
	window time.Duration
	now    func() time.Time
	start  time.Time // times are kept as durations since then, on the monotonic clock
	armed  atomic.Bool

	mu       sync.Mutex
	inflight map[key]digest // the calls sent and not answered yet
	done     map[key]done   // the calls that succeeded within the window
	bodies   map[key][]byte // the answers of those that were not "{}" (rare: asked for capacity or metrics)
	queue    []queued       // the done calls in the order they finished: the oldest first
	head     int            // queue[:head] have left the window
}

// A sustained load holds tens of thousands of tokens, so what is kept of each is small (about 60 bytes with the
// maps' and the queue's room) and holds no pointers (the garbage collector does not scan it): a token and the
// request's items are kept as 64-bit hashes (maphash, keyed per process; two tokens alike in 64 bits among the tens
// of thousands kept are a chance of about 1 in 10^10), and the answer only when it is not "{}".
type (
	key    uint64 // a hash of the token
	digest uint64 // a hash of the request's items, whatever the order of the members of their objects
	done   struct {
		digest digest
		at     time.Duration // when the call finished, since the Client's start
	}
	queued struct {
		key key
		at  time.Duration
	}
)

// emptyObject is the body of most answers to TransactWriteItems.
var emptyObject = []byte("{}")

// New returns a Client over base that keeps each token for window after its call finished (DynamoDB keeps them
// for 10 minutes; a client that reuses a token only within one call, as the AWS SDK and the ledger do, needs no more
// than that call's longest duration). now is the clock (time.Now when nil).
func New(base Doer, window time.Duration, now func() time.Time) *Client {
	if now == nil {
		now = time.Now
	}
	return &Client{base: base, window: window, now: now, start: now(),
		inflight: map[key]digest{}, done: map[key]done{}, bodies: map[key][]byte{}}
}

// Keeping reports whether the Client has seen a Dynoxide answer and so keeps the tokens itself.
func (t *Client) Keeping() bool { return t.armed.Load() }

// Kept is how many tokens the Client holds: calls in flight and finished calls within the window.
func (t *Client) Kept() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.evict(t.since())
	return len(t.inflight) + len(t.done)
}

// Do sends req, or answers it from the tokens kept.
func (t *Client) Do(req *http.Request) (*http.Response, error) {
	if !t.armed.Load() || req.Header.Get("X-Amz-Target") != target || req.Body == nil {
		return t.pass(req)
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("txtokens: reading the request: %w", err)
	}
	token, stripped, items, ok := split(body)
	if !ok {
		return t.pass(withBody(req, body))
	}
	k := key(maphash.String(seed, token))

	t.mu.Lock()
	t.evict(t.since())
	if d, found := t.done[k]; found {
		answer := t.bodies[k]
		t.mu.Unlock()
		if d.digest != items {
			return mismatch(req, token), nil
		}
		if answer == nil {
			answer = emptyObject
		}
		return response(req, http.StatusOK, answer), nil
	}
	if d, found := t.inflight[k]; found {
		t.mu.Unlock()
		if d != items {
			return mismatch(req, token), nil
		}
		return refusal(req, "TransactionInProgressException", "The transaction with the given request token is already in progress."), nil
	}
	t.inflight[k] = items
	t.mu.Unlock()

	resp, err := t.base.Do(withBody(req, stripped))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.forget(k)
		return resp, err
	}
	answer, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		t.forget(k)
		return nil, fmt.Errorf("txtokens: reading the answer: %w", err)
	}
	t.mu.Lock()
	delete(t.inflight, k)
	at := t.since()
	t.done[k] = done{digest: items, at: at}
	if !bytes.Equal(answer, emptyObject) {
		t.bodies[k] = bytes.Clone(answer)
	}
	t.queue = append(t.queue, queued{key: k, at: at})
	t.mu.Unlock()
	resp.Body = io.NopCloser(bytes.NewReader(answer))
	return resp, nil
}

// pass sends req on unchanged and arms the Client when the answer comes from Dynoxide.
func (t *Client) pass(req *http.Request) (*http.Response, error) {
	resp, err := t.base.Do(req)
	if err == nil && !t.armed.Load() && strings.HasPrefix(resp.Header.Get("Server"), serverPrefix) {
		t.armed.Store(true)
	}
	return resp, err
}

// since is the time since the Client's start (a wall clock set back or forward moves nothing).
func (t *Client) since() time.Duration { return t.now().Sub(t.start) }

// forget drops the token of a call that failed or whose answer never came.
func (t *Client) forget(k key) {
	t.mu.Lock()
	delete(t.inflight, k)
	t.mu.Unlock()
}

// evict drops the finished calls older than the window, amortised O(1) per call: the queue is in the order they
// finished, so the expired ones are at its front. t.mu is held.
func (t *Client) evict(now time.Duration) {
	for t.head < len(t.queue) && now-t.queue[t.head].at >= t.window {
		q := t.queue[t.head]
		t.head++
		if d, ok := t.done[q.key]; ok && d.at == q.at { // not a later call with the same token
			delete(t.done, q.key)
			delete(t.bodies, q.key)
		}
	}
	if t.head > 1024 && t.head*2 > len(t.queue) {
		t.queue = slices.Clone(t.queue[t.head:])
		t.head = 0
	}
}

// mismatch is DynamoDB's answer to a token used again with other items.
func mismatch(req *http.Request, token string) *http.Response {
	return refusal(req, "IdempotentParameterMismatchException", "ClientRequestToken "+strconv.Quote(token)+" was used with other parameters")
}

// refusal is an error answer in DynamoDB's JSON protocol.
func refusal(req *http.Request, errType, message string) *http.Response {
	body, _ := json.Marshal(map[string]string{"__type": "com.amazonaws.dynamodb.v20120810#" + errType, "message": message})
	return response(req, http.StatusBadRequest, body)
}

// response is an answer in DynamoDB's JSON protocol, with the CRC32 header the AWS SDK checks.
func response(req *http.Request, status int, body []byte) *http.Response {
	h := http.Header{}
	h.Set("Content-Type", "application/x-amz-json-1.0")
	h.Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 10))
	h.Set("Content-Length", strconv.Itoa(len(body)))
	return &http.Response{
		Status: strconv.Itoa(status) + " " + http.StatusText(status), StatusCode: status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: req,
	}
}

// withBody is req with body as its body.
func withBody(req *http.Request, body []byte) *http.Request {
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	r.ContentLength = int64(len(body))
	r.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return r
}
