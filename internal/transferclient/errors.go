package transferclient

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// ErrWaitTimeout reports that a transfer was still IN_PROGRESS when the caller's deadline passed.
var ErrWaitTimeout = errors.New("transferclient: transfer not terminal before the deadline")

// Codes of the API's problem responses that the client branches on.
const (
	CodeRequestInProgress  = "REQUEST_IN_PROGRESS"
	CodeServiceUnavailable = "SERVICE_UNAVAILABLE"
)

// APIError is a non-2xx answer of the API. Code, Detail and Errors come from the application/problem+json body;
// for other bodies (API Gateway's own {"message": ...} answers, or none) Code is empty and Detail is the message or
// the status text.
type APIError struct {
	// Status is the HTTP status code.
	Status int
	// Code is the problem's machine-readable code, such as IDEMPOTENCY_KEY_REUSED.
	Code string
	// Detail is the problem's human-readable explanation.
	Detail string
	// Errors lists the invalid fields of a VALIDATION_ERROR.
	Errors []FieldError
	// RetryAfter is the parsed Retry-After header; zero when absent or unparsable.
	RetryAfter time.Duration
}

// FieldError names one invalid field of a rejected request.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Error renders the status, the code and the detail: "422 Unprocessable Entity IDEMPOTENCY_KEY_REUSED: …".
func (e *APIError) Error() string {
	s := fmt.Sprintf("%d %s", e.Status, http.StatusText(e.Status))
	if e.Code != "" {
		s += " " + e.Code
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Temporary reports whether the same request may succeed later: 5xx, 429 and 409 REQUEST_IN_PROGRESS.
func (e *APIError) Temporary() bool {
	switch {
	case e.Status >= 500:
		return true
	case e.Status == http.StatusTooManyRequests:
		return true
	case e.Status == http.StatusConflict && e.Code == CodeRequestInProgress:
		return true
	}
	return false
}

// RetryError reports that a request was given up after Attempts attempts; Err is the last attempt's error
// (an *APIError, a transport error, or the context's error).
type RetryError struct {
	Attempts int
	Err      error
	// NotSent is true when no attempt reached the API: every one failed to connect (connection refused, no route,
	// a name that does not resolve), so the request was never sent and cannot have been acted on.
	NotSent bool
}

// Error says how many attempts were made and why the last one failed.
func (e *RetryError) Error() string {
	return fmt.Sprintf("gave up after %d attempts: %v", e.Attempts, e.Err)
}

// Unwrap returns the last attempt's error.
func (e *RetryError) Unwrap() error { return e.Err }

// unsent reports whether err is a failure to connect: the request was not sent.
func unsent(err error) bool {
	var op *net.OpError
	var dns *net.DNSError
	return errors.As(err, &op) && op.Op == "dial" || errors.As(err, &dns)
}
