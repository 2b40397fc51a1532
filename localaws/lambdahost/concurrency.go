package lambdahost

import (
	"errors"
	"fmt"
	"sort"
	"sync/atomic"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// ErrTooManyRequests is the name of the Lambda service error a throttled invocation fails with
// (Lambda.TooManyRequestsException, HTTP 429 from Lambda's Invoke API), as Step Functions names it in ErrorEquals.
const ErrTooManyRequests = "Lambda.TooManyRequestsException"

// The Reason of a throttled invocation, as Lambda's Invoke API reports it in its TooManyRequestsException.
const (
	reasonAccount  = "ConcurrentInvocationLimitExceeded"
	reasonReserved = "ReservedFunctionConcurrentInvocationLimitExceeded"
)

// DefaultAccountConcurrency is the default concurrency quota of an AWS account in a region.
const DefaultAccountConcurrency = 1000

// Concurrency caps the in-flight invocations of the functions as Lambda does: a function with reserved concurrency
// runs at most that many invocations at once, and that many are taken out of the account's quota; the functions
// without a reservation share what is left of it. An invocation beyond its cap is throttled at once: it fails with
// a *sfnengine.ServiceError named ErrTooManyRequests and never reaches the function.
type Concurrency struct {
	// Account is the account's concurrency quota; zero means no limit (reservations still apply).
	Account int
	// Reserved is the reserved concurrency of functions, by name. Zero throttles every invocation of the function,
	// as on AWS.
	Reserved map[string]int
}

// slots counts the in-flight invocations under one cap. A nil *slots has no cap.
type slots struct {
	max    int64
	n      atomic.Int64
	reason string
}

// acquire takes a slot, or reports false when all max are taken.
func (s *slots) acquire() bool {
	if s == nil {
		return true
	}
	for {
		n := s.n.Load()
		if n >= s.max {
			return false
		}
		if s.n.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release gives back a slot acquire took.
func (s *slots) release() {
	if s != nil {
		s.n.Add(-1)
	}
}

// SetConcurrency caps the functions' concurrency (see Concurrency). It returns an error, and changes nothing, when
// a reservation names an unknown function, is negative, or the reservations together exceed the account's quota.
// It must be called before the first Invoke.
func (inv *Invoker) SetConcurrency(c Concurrency) error {
	if c.Account < 0 {
		return fmt.Errorf("lambda concurrency %d: must be >= 0", c.Account)
	}
	names := make([]string, 0, len(c.Reserved))
	for name := range c.Reserved {
		names = append(names, name)
	}
	sort.Strings(names)
	reserved := 0
	var errs []error
	for _, name := range names {
		n := c.Reserved[name]
		if _, ok := inv.funcs[name]; !ok {
			errs = append(errs, fmt.Errorf("reserved concurrency of %s: no such function", name))
		}
		if n < 0 {
			errs = append(errs, fmt.Errorf("reserved concurrency of %s: %d must be >= 0", name, n))
		}
		reserved += n
	}
	if c.Account > 0 && reserved > c.Account {
		errs = append(errs, fmt.Errorf("reserved concurrency %d exceeds the account's concurrency %d", reserved, c.Account))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	var shared *slots
	if c.Account > 0 {
		shared = &slots{max: int64(c.Account - reserved), reason: reasonAccount}
	}
	for name, f := range inv.funcs {
		if n, ok := c.Reserved[name]; ok {
			f.slots = &slots{max: int64(n), reason: reasonReserved}
		} else {
			f.slots = shared
		}
	}
	return nil
}

// throttled is the error of an invocation beyond its cap.
func throttled(s *slots) error {
	return &sfnengine.ServiceError{Name: ErrTooManyRequests, Message: "Rate Exceeded. (Reason: " + s.reason + ")"}
}
