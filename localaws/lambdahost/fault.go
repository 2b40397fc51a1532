package lambdahost

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// Fault is an injected misbehaviour of one function, parsed from the local stack's --fault flag:
//
//	FUNCTION:error=NAME[:times=N][:leg=LEG]   fail with NAME: a Lambda service error when NAME starts with
//	                                          "Lambda.", else a function error of that type
//	FUNCTION:delay=DURATION[:times=N][:leg=LEG]  answer DURATION late
//	FUNCTION:crash=POINT                       crash at POINT (the orchestrator's after-reserve, the credit's
//	                                          after-credit)
//
// FUNCTION is matched case-insensitively against the function's name with any "Function" suffix removed, so
// "credit" names CreditFunction. times bounds how many invocations misbehave (default: all). leg restricts the fault
// to invocations whose payload's "leg" field has that value.
type Fault struct {
	Function string
	Error    string
	Delay    time.Duration
	Crash    string
	Leg      string
	// remaining is how many more invocations misbehave; negative means unlimited.
	remaining int
}

// ParseFault parses one --fault value.
func ParseFault(s string) (*Fault, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || parts[0] == "" {
		return nil, fmt.Errorf("fault %q: want FUNCTION:KEY=VALUE[:KEY=VALUE…]", s)
	}
	f := &Fault{Function: strings.ToLower(parts[0]), remaining: -1}
	for _, kv := range parts[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || v == "" {
			return nil, fmt.Errorf("fault %q: %q is not KEY=VALUE", s, kv)
		}
		switch k {
		case "error":
			f.Error = v
		case "delay":
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return nil, fmt.Errorf("fault %q: delay %q is not a positive duration", s, v)
			}
			f.Delay = d
		case "crash":
			f.Crash = v
		case "times":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("fault %q: times %q is not a positive integer", s, v)
			}
			f.remaining = n
		case "leg":
			f.Leg = v
		default:
			return nil, fmt.Errorf("fault %q: unknown key %q (error, delay, crash, times, leg)", s, k)
		}
	}
	if boolCount(f.Error != "", f.Delay > 0, f.Crash != "") != 1 {
		return nil, fmt.Errorf("fault %q: exactly one of error, delay or crash is needed", s)
	}
	return f, nil
}

func boolCount(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// Matches reports whether the fault is about the function named name.
func (f *Fault) Matches(name string) bool {
	return f.Function == strings.ToLower(strings.TrimSuffix(name, "Function"))
}

// take reports whether this invocation misbehaves, counting it down.
func (f *Fault) take(payload []byte) bool {
	if f.remaining == 0 {
		return false
	}
	if f.Leg != "" {
		var p struct {
			Leg string `json:"leg"`
		}
		if json.Unmarshal(payload, &p) != nil || p.Leg != f.Leg {
			return false
		}
	}
	if f.remaining > 0 {
		f.remaining--
	}
	return true
}

// applyFaults applies the error and delay faults of the function to this invocation. Crash faults are the wiring's:
// it places them in the function (see CrashPoint).
func (inv *Invoker) applyFaults(ctx context.Context, name string, payload []byte) error {
	inv.mu.Lock()
	var delay time.Duration
	var fail string
	for _, f := range inv.faults {
		if f.Crash != "" || !f.Matches(name) || !f.take(payload) {
			continue
		}
		if f.Delay > 0 {
			delay += f.Delay
		}
		if f.Error != "" && fail == "" {
			fail = f.Error
		}
	}
	inv.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	switch {
	case fail == "":
		return nil
	case strings.HasPrefix(fail, "Lambda."):
		return &sfnengine.ServiceError{Name: fail, Message: "injected fault"}
	default:
		return &sfnengine.FunctionError{Type: fail, Message: "injected fault"}
	}
}

// CrashPoint returns a function that, when the named crash fault is armed for function, makes the invocation crash
// as a Lambda process that dies would (the Runtime.ExitError function error). The wiring calls it at that point of
// the function, e.g. the orchestrator's after-reserve or the credit function's after-credit.
func (inv *Invoker) CrashPoint(function, point string) func() {
	return func() {
		inv.mu.Lock()
		crash := false
		for _, f := range inv.faults {
			if f.Crash == point && f.Matches(function) && f.take(nil) {
				crash = true
				break
			}
		}
		inv.mu.Unlock()
		if crash {
			panic(errCrash{point: point})
		}
	}
}
