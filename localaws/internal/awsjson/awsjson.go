// Package awsjson is what the local stack's AWS JSON-protocol servers (the Step Functions API, the local
// EventBridge and its CloudWatch Logs reads) share: the error they answer, {"__type","message"} with the code also
// in X-Amzn-ErrorType, as the AWS SDKs decode it.
package awsjson

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// Error is an error answered with {"__type": Code, "message": Message} and HTTP Status.
type Error struct {
	Code    string
	Message string
	Status  int
	// Fields are the error shape's other members, written next to __type and message (for example
	// ValidationException's reason, ResourceNotFound's resourceName). Nil for most errors.
	Fields map[string]string
}

// Error returns "code: message".
func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf returns a client error (HTTP 400) with the code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Status: http.StatusBadRequest}
}

// Write answers e with contentType (application/x-amz-json-1.0 or -1.1, the protocol's).
func Write(w http.ResponseWriter, contentType string, e *Error) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("X-Amzn-ErrorType", e.Code)
	w.WriteHeader(e.Status)
	body := map[string]string{"__type": e.Code, "message": e.Message}
	for k, v := range e.Fields {
		if k != "__type" && k != "message" {
			body[k] = v
		}
	}
	_ = json.NewEncoder(w).Encode(body)
}
