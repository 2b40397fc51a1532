// Package runtimeapi serves the AWS Lambda Runtime API (version 2018-06-01) to one runtime process, as a Lambda
// execution environment does: the runtime (for Go, aws-lambda-go's lambda.Start, which finds the API through
// AWS_LAMBDA_RUNTIME_API) asks for the next invocation, works on it, and posts its response or its error; a runtime
// that cannot start posts an initialization error instead. A Server is one execution environment: it hands out one
// invocation at a time, to whichever GET /next is waiting.
//
//	GET  /2018-06-01/runtime/invocation/next          200: the event, with the Lambda-Runtime-* headers below
//	POST /2018-06-01/runtime/invocation/{id}/response 202: the invocation's result (at most MaxPayloadSize bytes)
//	POST /2018-06-01/runtime/invocation/{id}/error    202: a function error, Lambda-Runtime-Function-Error-Type and
//	                                                      {"errorMessage","errorType","stackTrace"}
//	POST /2018-06-01/runtime/init/error               202: the runtime could not initialise (same shape)
//
// Refusals have the runtime interface emulator's JSON body {"errorMessage","errorType"}: 400 InvalidRequestID for an
// id that is not the invocation in flight (or was answered already), 403 InvalidStateTransition for a request the
// runtime may not make now, 413 RequestEntityTooLarge for a payload over the limit.
package runtimeapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// The headers of the Runtime API.
const (
	HeaderRequestID          = "Lambda-Runtime-Aws-Request-Id"
	HeaderDeadlineMs         = "Lambda-Runtime-Deadline-Ms"
	HeaderInvokedFunctionArn = "Lambda-Runtime-Invoked-Function-Arn"
	HeaderTraceID            = "Lambda-Runtime-Trace-Id"
	// HeaderFunctionErrorType names a function or init error; aws-lambda-go sends it as a trailer of a response whose
	// body failed mid-stream, with the error document base64-encoded in HeaderFunctionErrorBody.
	HeaderFunctionErrorType = "Lambda-Runtime-Function-Error-Type"
	HeaderFunctionErrorBody = "Lambda-Runtime-Function-Error-Body"
)

// MaxPayloadSize is the largest response or error a runtime may post: Lambda's 6 MB limit for a synchronous
// invocation's response.
const MaxPayloadSize = 6 << 20

// errorTypeUnhandled is the error type Lambda reports when the runtime named none.
const errorTypeUnhandled = "Unhandled"

// The error types of the API's own refusals, as the runtime interface emulator names them.
const (
	errInvalidRequestID       = "InvalidRequestID"
	errInvalidStateTransition = "InvalidStateTransition"
	errRequestEntityTooLarge  = "RequestEntityTooLarge"
	errInvalidRequestFormat   = "InvalidRequestFormat"
)

// Invocation is one event for the runtime.
type Invocation struct {
	RequestID   string
	Payload     []byte
	Deadline    time.Time
	FunctionArn string
	TraceID     string
}

// Response is what the runtime answered an invocation with.
type Response struct {
	Payload     []byte
	ContentType string
}

// FunctionError is an error the runtime reported, for an invocation or for its initialisation.
type FunctionError struct {
	// Type is the Lambda-Runtime-Function-Error-Type header, else the document's errorType, else "Unhandled".
	Type string
	// Message is the document's errorMessage.
	Message string
	// Body is the error document exactly as the runtime posted it.
	Body []byte
}

// Error implements error.
func (e *FunctionError) Error() string { return e.Type + ": " + e.Message }

// Document is the error as Lambda returns it to the invoker: the runtime's own JSON document, or, when the runtime
// posted something else, {"errorType","errorMessage"}.
func (e *FunctionError) Document() []byte {
	var doc map[string]any
	if json.Unmarshal(e.Body, &doc) == nil && doc != nil {
		return bytes.TrimSpace(e.Body)
	}
	b, _ := json.Marshal(struct {
		ErrorType    string `json:"errorType"`
		ErrorMessage string `json:"errorMessage"`
	}{e.Type, e.Message})
	return b
}

// newFunctionError reads an error the runtime posted: its type from the header, else from the document.
func newFunctionError(header string, body []byte) *FunctionError {
	var doc struct {
		ErrorMessage string `json:"errorMessage"`
		ErrorType    string `json:"errorType"`
	}
	_ = json.Unmarshal(body, &doc)
	e := &FunctionError{Type: header, Message: doc.ErrorMessage, Body: body}
	if e.Type == "" {
		e.Type = doc.ErrorType
	}
	if e.Type == "" {
		e.Type = errorTypeUnhandled
	}
	if e.Message == "" && !json.Valid(body) {
		e.Message = string(body)
	}
	return e
}

// outcome ends a call: a response, or a *FunctionError.
type outcome struct {
	resp Response
	err  error
}

// call is an invocation on its way through the runtime.
type call struct {
	inv  Invocation
	done chan outcome // buffered: the runtime's answer never waits for the invoker
}

// Server is the Runtime API of one execution environment. It is an http.Handler.
type Server struct {
	mux        *http.ServeMux
	pending    chan *call // unbuffered: an invocation is handed out only to a waiting GET /next
	ready      chan struct{}
	initFailed chan struct{}
	readyOnce  sync.Once

	mu      sync.Mutex
	current *call // handed out and not answered yet
	initErr *FunctionError
}

// NewServer returns a Server with no invocation pending.
func NewServer() *Server {
	s := &Server{
		mux:        http.NewServeMux(),
		pending:    make(chan *call),
		ready:      make(chan struct{}),
		initFailed: make(chan struct{}),
	}
	for pattern, route := range map[string]func(*http.Request) reply{
		"GET /2018-06-01/runtime/invocation/next":           s.next,
		"POST /2018-06-01/runtime/invocation/{id}/response": s.response,
		"POST /2018-06-01/runtime/invocation/{id}/error":    s.invocationError,
		"POST /2018-06-01/runtime/init/error":               s.initError,
	} {
		s.mux.Handle(pattern, adapt(route))
	}
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Ready is closed when the runtime first asks for an invocation: its initialisation is over.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// InitFailed is closed when the runtime has posted an initialisation error (InitError returns it).
func (s *Server) InitFailed() <-chan struct{} { return s.initFailed }

// InitError is the initialisation error the runtime posted, or nil.
func (s *Server) InitError() *FunctionError {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.initErr
}

// Invoke hands inv to the runtime on its next GET /next and waits for its answer. It returns the response, a
// *FunctionError the runtime reported (for this invocation, or for its initialisation), or the context's error
// when ctx ends first (its deadline, or the runtime process exiting); an answer that arrives later is refused with
// 400 InvalidRequestID.
func (s *Server) Invoke(ctx context.Context, inv Invocation) (Response, error) {
	if err := s.InitError(); err != nil {
		return Response{}, err
	}
	c := &call{inv: inv, done: make(chan outcome, 1)}
	select {
	case s.pending <- c:
	case <-s.initFailed:
		return Response{}, s.InitError()
	case <-ctx.Done():
		return Response{}, context.Cause(ctx)
	}
	select {
	case o := <-c.done:
		return o.resp, o.err
	case <-ctx.Done():
		// Under the lock the runtime's answer has either arrived (an answer that came with the end of the context,
		// from a runtime that answers and then exits, wins) or will be refused.
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.current == c {
			s.current = nil
		}
		select {
		case o := <-c.done:
			return o.resp, o.err
		default:
			return Response{}, context.Cause(ctx)
		}
	}
}

// reply is an HTTP answer; a zero status writes nothing (the client has gone).
type reply struct {
	status int
	header http.Header
	body   []byte
}

// adapt writes a route's reply.
func adapt(route func(*http.Request) reply) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rep := route(r)
		if rep.status == 0 {
			return
		}
		for k, v := range rep.header {
			w.Header()[k] = v
		}
		w.WriteHeader(rep.status)
		_, _ = w.Write(rep.body)
	})
}

// refusal is the API's JSON error answer.
func refusal(status int, errorType, format string, args ...any) reply {
	b, _ := json.Marshal(struct {
		ErrorMessage string `json:"errorMessage"`
		ErrorType    string `json:"errorType"`
	}{fmt.Sprintf(format, args...), errorType})
	return reply{status: status, header: http.Header{"Content-Type": {"application/json"}}, body: b}
}

var accepted = reply{status: http.StatusAccepted, header: http.Header{"Content-Type": {"application/json"}}, body: []byte(`{"status":"OK"}`)}

func (s *Server) next(r *http.Request) reply {
	s.mu.Lock()
	switch {
	case s.initErr != nil:
		s.mu.Unlock()
		return refusal(http.StatusForbidden, errInvalidStateTransition, "the runtime reported an initialization error")
	case s.current != nil:
		s.mu.Unlock()
		return refusal(http.StatusForbidden, errInvalidStateTransition, "the invocation in flight has not been answered")
	}
	s.readyOnce.Do(func() { close(s.ready) })
	s.mu.Unlock()
	select {
	case c := <-s.pending:
		s.mu.Lock()
		s.current = c
		s.mu.Unlock()
		h := http.Header{
			"Content-Type":           {"application/json"},
			HeaderRequestID:          {c.inv.RequestID},
			HeaderDeadlineMs:         {strconv.FormatInt(c.inv.Deadline.UnixMilli(), 10)},
			HeaderInvokedFunctionArn: {c.inv.FunctionArn},
		}
		if c.inv.TraceID != "" {
			h.Set(HeaderTraceID, c.inv.TraceID)
		}
		return reply{status: http.StatusOK, header: h, body: c.inv.Payload}
	case <-r.Context().Done():
		return reply{}
	}
}

// answer ends the invocation id with o, if it is the one in flight.
func (s *Server) answer(id string, o outcome) reply {
	s.mu.Lock()
	c := s.current
	if c == nil || c.inv.RequestID != id {
		s.mu.Unlock()
		return refusal(http.StatusBadRequest, errInvalidRequestID, "Invalid request ID")
	}
	s.current = nil
	c.done <- o // buffered; under the lock, so an Invoke giving up sees either the answer or no invocation in flight
	s.mu.Unlock()
	return accepted
}

// readPayload reads a body of at most MaxPayloadSize bytes; ok is false, with the refusal, otherwise.
func readPayload(r *http.Request) (body []byte, refused reply, ok bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxPayloadSize+1))
	switch {
	case err != nil:
		return nil, refusal(http.StatusBadRequest, errInvalidRequestFormat, "reading the body: %v", err), false
	case len(body) > MaxPayloadSize:
		return nil, refusal(http.StatusRequestEntityTooLarge, errRequestEntityTooLarge,
			"Exceeded maximum allowed payload size (%d bytes).", MaxPayloadSize), false
	}
	return body, reply{}, true
}

func (s *Server) response(r *http.Request) reply {
	body, refused, ok := readPayload(r)
	if !ok {
		return refused
	}
	// A response whose body failed mid-stream ends with the error in trailers (read once the body is consumed).
	if typ := r.Trailer.Get(HeaderFunctionErrorType); typ != "" {
		doc, _ := base64.StdEncoding.DecodeString(r.Trailer.Get(HeaderFunctionErrorBody))
		return s.answer(r.PathValue("id"), outcome{err: newFunctionError(typ, doc)})
	}
	return s.answer(r.PathValue("id"), outcome{resp: Response{Payload: body, ContentType: r.Header.Get("Content-Type")}})
}

func (s *Server) invocationError(r *http.Request) reply {
	body, refused, ok := readPayload(r)
	if !ok {
		return refused
	}
	return s.answer(r.PathValue("id"), outcome{err: newFunctionError(r.Header.Get(HeaderFunctionErrorType), body)})
}

func (s *Server) initError(r *http.Request) reply {
	body, refused, ok := readPayload(r)
	if !ok {
		return refused
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.ready:
		return refusal(http.StatusForbidden, errInvalidStateTransition, "the runtime has already initialized")
	default:
	}
	if s.initErr != nil {
		return refusal(http.StatusForbidden, errInvalidStateTransition, "an initialization error was already reported")
	}
	s.initErr = newFunctionError(r.Header.Get(HeaderFunctionErrorType), body)
	close(s.initFailed)
	return accepted
}
