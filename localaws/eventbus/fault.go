package eventbus

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// FaultTarget is the name a --fault for the local EventBridge starts with: events:KEY=VALUE[:times=N].
const FaultTarget = "events"

// The kinds of fault the server injects into PutEvents.
const (
	faultError       = "error"        // the call fails with a service error of that code
	faultFailedEntry = "failed-entry" // the call succeeds, every entry failing with that ErrorCode
)

// Fault makes PutEvents calls fail: error=CODE answers the call with that service error (HTTP 500 for
// InternalException and InternalFailure, 400 otherwise); failed-entry=CODE answers 200 with every entry failed with
// that ErrorCode (the caller sees FailedEntryCount > 0). times=N limits it to the next N calls (default: every call).
type Fault struct {
	Kind      string
	Code      string
	remaining int // -1: no limit
	spec      string
}

// ParseFault reads "events:error=CODE[:times=N]" or "events:failed-entry=CODE[:times=N]".
func ParseFault(s string) (*Fault, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || parts[0] != FaultTarget {
		return nil, fmt.Errorf("fault %q: want %s:error=CODE|failed-entry=CODE[:times=N]", s, FaultTarget)
	}
	f := &Fault{remaining: -1, spec: s}
	for _, kv := range parts[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || v == "" {
			return nil, fmt.Errorf("fault %q: %q is not KEY=VALUE", s, kv)
		}
		switch k {
		case faultError, faultFailedEntry:
			if f.Kind != "" {
				return nil, fmt.Errorf("fault %q: exactly one of error or failed-entry is needed", s)
			}
			f.Kind, f.Code = k, v
		case "times":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("fault %q: times %q is not a positive integer", s, v)
			}
			f.remaining = n
		default:
			return nil, fmt.Errorf("fault %q: unknown key %q (error, failed-entry, times)", s, k)
		}
	}
	if f.Kind == "" {
		return nil, fmt.Errorf("fault %q: exactly one of error or failed-entry is needed", s)
	}
	return f, nil
}

// AddFault injects f into the PutEvents calls that follow.
func (s *Server) AddFault(f *Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, f)
}

// takeFault returns the first fault of kind that still applies, counting the call against it.
func (s *Server) takeFault(kind string) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.faults {
		if f.Kind != kind || f.remaining == 0 {
			continue
		}
		if f.remaining > 0 {
			f.remaining--
		}
		return f
	}
	return nil
}

func (f *Fault) apiError() *apiError {
	status := http.StatusBadRequest
	if f.Code == codeInternal || f.Code == "InternalFailure" {
		status = http.StatusInternalServerError
	}
	return &apiError{Code: f.Code, Message: "injected by --fault " + f.spec, Status: status}
}
