// Package httpserver builds the local stack's HTTP servers with every timeout set, so that no client, however slow
// or hostile, holds a connection or a handler longer than the server allows:
//
//   - Header: the request line and headers must arrive within it (http.Server.ReadHeaderTimeout);
//   - Body: the body must arrive within it, counted from the moment the handler starts; a body that is late is
//     answered 408 (by the server's OnBodyTimeout) and the connection is closed;
//   - Write: the response must be written within it, counted from the end of the headers (http.Server.WriteTimeout),
//     so it must exceed Body plus the slowest legitimate handler;
//   - Idle: a kept-alive connection waits at most this long for its next request (http.Server.IdleTimeout).
//
// The read timeout of a request (http.Server.ReadTimeout) is Header plus Body, a bound on the whole request that
// the body deadline then narrows. Neither cuts a slow handler: the deadline is lifted once the body has been read
// (net/http also clears it when it starts watching the connection for a client that goes away), so a handler that
// takes up to the write timeout (a Lambda invocation running up to its timeout) keeps its request's context.
package httpserver

import (
	"bytes"
	"errors"
	"io"
	"log"
	"net/http"
	"os"
	"time"
)

// Timeouts bound a server's connections; see the package comment. A zero field is no limit.
type Timeouts struct {
	Header time.Duration
	Body   time.Duration
	Write  time.Duration
	Idle   time.Duration
}

// Options configures New.
type Options struct {
	Timeouts
	// MaxBody is how many bytes of a body are read under the Body deadline before the handler runs: the handler's
	// own limit plus one, so that the handler sees whether a body is over its limit. The rest of a longer body is
	// still read under the deadline, by the handler if it wants it.
	MaxBody int64
	// OnBodyTimeout writes the answer to a request whose body did not arrive within Body; nil writes a plain 408.
	// The connection is closed after it.
	OnBodyTimeout http.HandlerFunc
	// ErrorLog receives net/http's own errors (e.g. TLS handshakes, panics); nil is the log package's logger.
	ErrorLog *log.Logger
}

// New returns an http.Server for h with the options' timeouts, h wrapped in BodyDeadline.
func New(h http.Handler, o Options) *http.Server {
	if o.Body > 0 {
		h = BodyDeadline(h, o.Body, o.MaxBody, o.OnBodyTimeout)
	}
	var read time.Duration
	if o.Header > 0 && o.Body > 0 {
		read = o.Header + o.Body
	}
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: o.Header,
		ReadTimeout:       read,
		WriteTimeout:      o.Write,
		IdleTimeout:       o.Idle,
		ErrorLog:          o.ErrorLog,
	}
}

// BodyDeadline returns a handler that reads the first maxBody bytes of a request's body within d of the request
// reaching it, then calls next with the body as read. A body that does not arrive in time is answered by onTimeout
// (a plain 408 when nil) with Connection: close, and next is not called. Requests without a body pass straight
// through, with no deadline: a long GET is never cut.
func BodyDeadline(next http.Handler, d time.Duration, maxBody int64, onTimeout http.HandlerFunc) http.Handler {
	if onTimeout == nil {
		onTimeout = func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusRequestTimeout)
			_, _ = io.WriteString(w, "the request body did not arrive in time\n")
		}
	}
	if maxBody <= 0 {
		maxBody = 1
	}
	return &bodyDeadline{next: next, d: d, max: maxBody, onTimeout: onTimeout}
}

type bodyDeadline struct {
	next      http.Handler
	d         time.Duration
	max       int64
	onTimeout http.HandlerFunc
}

// ServeHTTP implements http.Handler.
func (b *bodyDeadline) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		b.next.ServeHTTP(w, r)
		return
	}
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Now().Add(b.d)); err != nil {
		// Not a connection net/http serves (a test recorder): nothing to bound.
		b.next.ServeHTTP(w, r)
		return
	}
	body := r.Body
	buf, err := io.ReadAll(io.LimitReader(body, b.max))
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		w.Header().Set("Connection", "close")
		b.onTimeout(w, r)
		return
	case err != nil:
		// The client went away or sent a malformed body: the handler meets the same error where it reads.
		r.Body = readCloser{io.MultiReader(bytes.NewReader(buf), errReader{err}), body}
	case int64(len(buf)) < b.max:
		// The whole body is here: lift the deadline, so it cannot cancel a slow handler's context (net/http reads
		// the connection in the background while the handler runs, and a read that fails cancels the request; it
		// clears the deadline itself when it starts that read, which this does not rely on).
		_ = rc.SetReadDeadline(time.Time{})
		r.Body = readCloser{bytes.NewReader(buf), body}
	default:
		// Longer than the read-ahead: the deadline stays for whatever the handler reads of the rest, and is lifted if
		// it reads to the end.
		r.Body = readCloser{io.MultiReader(bytes.NewReader(buf), liftAtEOF{body, rc}), body}
	}
	b.next.ServeHTTP(w, r)
}

type readCloser struct {
	io.Reader
	io.Closer
}

// liftAtEOF reads r and lifts the connection's read deadline once r is at its end.
type liftAtEOF struct {
	r  io.Reader
	rc *http.ResponseController
}

func (l liftAtEOF) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	if err == io.EOF {
		_ = l.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
