// Package lambdahost runs Lambda functions in-process for the local stack: the real handler behind
// lambda.NewHandler, invoked with the same JSON round trip the Lambda runtime does, a deadline from the function's
// Timeout, and a Lambda context carrying a request id. Function errors are named as the runtime names them (the Go
// type of the returned error), so Step Functions' ErrorEquals match exactly as on AWS. Concurrency is capped as
// Lambda caps it (SetConcurrency): beyond a function's reserved concurrency or the account's, an invocation is
// throttled with Lambda.TooManyRequestsException.
package lambdahost

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// Function is one function the invoker can run.
type Function struct {
	// Name is the function's name (locally, its logical id in template.yaml).
	Name string
	// NewHandler makes one instance of the function's handler, e.g. func() lambda.Handler { return
	// lambda.NewHandler(h.Handle) }. Like a Lambda sandbox, an instance serves one invocation at a time (the
	// runtime's handler adapter reuses its output buffer); concurrent invocations get more instances.
	NewHandler func() lambda.Handler
	// Timeout bounds one invocation (the template's Timeout).
	Timeout time.Duration
}

// instance is one sandbox of a function: a handler and the goroutine that runs its invocations one at a time. As a
// Lambda sandbox's process does, the goroutine serves invocation after invocation, so the stack the first one grew
// (the SDK's middleware chain is deep) is there for the next instead of being grown again on a new goroutine.
type instance struct {
	h     lambda.Handler
	calls chan call
}

// call is one invocation handed to an instance.
type call struct {
	ctx     context.Context
	payload []byte
	done    chan<- result
}

// result is an invocation's outcome.
type result struct {
	out []byte
	err error // already named as Step Functions will see it
}

// instances is a function's pool of idle instances.
type instances struct {
	mu     sync.Mutex
	idle   []*instance
	closed bool // Close was called: an instance that becomes idle ends
	make   func() lambda.Handler
}

// get returns an idle instance, or starts a new one.
func (p *instances) get() *instance {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		in := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return in
	}
	p.mu.Unlock()
	in := &instance{h: p.make(), calls: make(chan call)}
	go p.serve(in)
	return in
}

func (p *instances) put(in *instance) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		close(in.calls)
		return
	}
	p.idle = append(p.idle, in)
}

// close ends the idle instances' goroutines now and the busy ones' when their invocation returns.
func (p *instances) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, in := range p.idle {
		close(in.calls)
	}
	p.idle = nil
}

// serve runs the instance's invocations until one crashes: a crashed sandbox is not reused.
func (p *instances) serve(in *instance) {
	for c := range in.calls {
		r, crashed := in.run(c)
		if !crashed {
			// The instance goes back only when its invocation has really finished, even after a timeout.
			p.put(in)
		}
		c.done <- r
		if crashed {
			return
		}
	}
}

// run invokes the handler once, naming its error or panic as the Lambda runtime does.
func (in *instance) run(c call) (r result, crashed bool) {
	defer func() {
		if p := recover(); p != nil {
			r, crashed = result{err: panicError(p)}, true
		}
	}()
	out, err := in.h.Invoke(c.ctx, c.payload)
	if err != nil {
		err = functionError(err)
	}
	// The handler's result aliases a buffer the next invocation reuses.
	return result{out: bytes.Clone(out), err: err}, false
}

// function is a Function the invoker runs, with its idle instances and the cap on its in-flight invocations.
type function struct {
	Function
	arn   string
	pool  *instances
	slots *slots // nil: no cap
}

// Invoker runs functions by name, ARN or partial ARN. It satisfies sfnengine.LambdaInvoker and the gateway's invoker.
type Invoker struct {
	region, account string
	newID           func() string
	logger          *slog.Logger
	funcs           map[string]*function

	mu      sync.Mutex
	faults  []*Fault
	reports *reporter
}

// New returns an Invoker for functions in the given region and account (which appear in their ARNs). Their
// concurrency has no cap until SetConcurrency sets one.
func New(region, account string, newID func() string, logger *slog.Logger, funcs ...Function) *Invoker {
	inv := &Invoker{region: region, account: account, newID: newID, logger: logger, funcs: map[string]*function{}}
	for _, f := range funcs {
		inv.funcs[f.Name] = &function{Function: f, arn: inv.ARN(f.Name), pool: &instances{make: f.NewHandler}}
	}
	return inv
}

// ARN is the function ARN the invoker answers to for name.
func (inv *Invoker) ARN(name string) string {
	return fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", inv.region, inv.account, name)
}

// Close ends the goroutines of the functions' instances: the idle ones at once, the busy ones when their invocation
// returns. Call it once nothing invokes the functions any more.
func (inv *Invoker) Close() {
	for _, f := range inv.funcs {
		f.pool.close()
	}
}

// AddFault makes the named function misbehave as f says.
func (inv *Invoker) AddFault(f *Fault) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	inv.faults = append(inv.faults, f)
}

// resolve finds the function for a name, a full ARN (possibly with a qualifier) or a partial ARN (account:function:name).
func (inv *Invoker) resolve(ref string) (*function, bool) {
	name := ref
	if i := strings.Index(ref, ":function:"); i >= 0 {
		name = ref[i+len(":function:"):]
		if j := strings.IndexByte(name, ':'); j >= 0 {
			name = name[:j] // qualifier: version or alias
		}
	}
	f, ok := inv.funcs[name]
	return f, ok
}

// Invoke runs the function synchronously. It returns the function's JSON result; a function error as
// *sfnengine.FunctionError named as the Lambda runtime names it; and Lambda service errors (unknown function,
// throttling beyond the function's concurrency, injected faults) as *sfnengine.ServiceError.
func (inv *Invoker) Invoke(ctx context.Context, name string, payload []byte) ([]byte, error) {
	f, ok := inv.resolve(name)
	if !ok {
		return nil, &sfnengine.ServiceError{Name: "Lambda.ResourceNotFoundException", Message: "Function not found: " + name}
	}
	// The invocation holds its slot until it returns, an injected delay included: a slow function occupies its
	// concurrency as on AWS. A timed-out invocation gives its slot back as Lambda does, though its handler may run on.
	if !f.slots.acquire() {
		return nil, throttled(f.slots)
	}
	defer f.slots.release()
	if err := inv.applyFaults(ctx, f.Name, payload); err != nil {
		return nil, err
	}
	requestID := inv.newID()
	timeout := f.Timeout
	if timeout <= 0 {
		timeout = 3 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ctx = lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{AwsRequestID: requestID, InvokedFunctionArn: f.arn})

	start := time.Now()
	out, err := inv.run(ctx, f, payload, requestID, timeout)
	if r := inv.reporter(); r != nil {
		now := time.Now()
		r.report(now, f.Name, requestID, now.Sub(start), err)
	}
	return out, err
}

// run hands one invocation to an instance of f and waits for its result or its timeout.
func (inv *Invoker) run(ctx context.Context, f *function, payload []byte, requestID string, timeout time.Duration) ([]byte, error) {
	done := make(chan result, 1)
	f.pool.get().calls <- call{ctx: ctx, payload: payload, done: done}
	select {
	case r := <-done:
		return r.out, r.err
	case <-ctx.Done():
		if errors.Is(context.Cause(ctx), context.DeadlineExceeded) && ctx.Err() != nil {
			inv.logger.WarnContext(ctx, "function timed out", "function", f.Name, "requestId", requestID)
			return nil, &sfnengine.FunctionError{Type: "Sandbox.Timedout", Message: fmt.Sprintf("Task timed out after %.2f seconds", timeout.Seconds())}
		}
		return nil, ctx.Err()
	}
}

// errCrash is what a crash fault panics with; the invocation then fails as a crashed runtime does.
type errCrash struct{ point string }

func (e errCrash) Error() string { return "injected crash " + e.point }

// panicError names a recovered panic as the Lambda runtime does (Runtime.ExitError for a crash of the process).
func panicError(p any) error {
	if c, ok := p.(errCrash); ok {
		return &sfnengine.FunctionError{Type: "Runtime.ExitError", Message: "RequestId: local Error: Runtime exited: " + c.Error()}
	}
	return &sfnengine.FunctionError{Type: typeName(p), Message: fmt.Sprint(p)}
}

// functionError names err as aws-lambda-go's runtime does: messages.InvokeResponse_Error keeps its type; any other
// error is named by its Go type (a wrapped error is "wrapError", as on AWS).
func functionError(err error) error {
	var ive messages.InvokeResponse_Error
	if errors.As(err, &ive) {
		return &sfnengine.FunctionError{Type: ive.Type, Message: ive.Message}
	}
	var ivp *messages.InvokeResponse_Error
	if errors.As(err, &ivp) {
		return &sfnengine.FunctionError{Type: ivp.Type, Message: ivp.Message}
	}
	return &sfnengine.FunctionError{Type: typeName(err), Message: err.Error()}
}

func typeName(v any) string {
	t := reflect.TypeOf(v)
	if t == nil {
		return "nil"
	}
	if t.Kind() == reflect.Pointer {
		return t.Elem().Name()
	}
	return t.Name()
}
