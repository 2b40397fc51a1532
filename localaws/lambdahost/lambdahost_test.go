package lambdahost

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

type InsufficientFunds struct{ Account string }

func (e *InsufficientFunds) Error() string { return "insufficient funds in " + e.Account }

type echoIn struct {
	Leg  string `json:"leg"`
	N    int    `json:"n"`
	Mode string `json:"mode"`
}

func echo(ctx context.Context, in echoIn) (map[string]any, error) {
	lc, _ := lambdacontext.FromContext(ctx)
	switch in.Mode {
	case "typed":
		return nil, &InsufficientFunds{Account: "a"}
	case "wrapped":
		return nil, fmt.Errorf("debit: %w", &InsufficientFunds{Account: "a"})
	case "panic":
		panic("boom")
	case "slow":
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return map[string]any{"n": in.N, "requestId": lc.AwsRequestID, "arn": lc.InvokedFunctionArn}, nil
}

func newInvoker() *Invoker { return newInvokerWithTimeout(200 * time.Millisecond) }

// newInvokerWithTimeout is newInvoker with EchoFunction's timeout set to d.
func newInvokerWithTimeout(d time.Duration) *Invoker {
	var n atomic.Int64
	return New("us-east-1", "000000000000", func() string { return "req-" + strconv.FormatInt(n.Add(1), 10) }, slog.New(slog.DiscardHandler),
		Function{Name: "EchoFunction", NewHandler: func() lambda.Handler { return lambda.NewHandler(echo) }, Timeout: d})
}

func TestInvokeResolvesNamesAndARNs(t *testing.T) {
	inv := newInvoker()
	for _, ref := range []string{
		"EchoFunction",
		"arn:aws:lambda:us-east-1:000000000000:function:EchoFunction",
		"arn:aws:lambda:us-east-1:000000000000:function:EchoFunction:$LATEST",
		"000000000000:function:EchoFunction",
	} {
		out, err := inv.Invoke(context.Background(), ref, []byte(`{"n":7}`))
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		want := `{"arn":"arn:aws:lambda:us-east-1:000000000000:function:EchoFunction","n":7,"requestId":"req-`
		if string(out[:len(want)]) != want {
			t.Errorf("%s: %s", ref, out)
		}
	}
	_, err := inv.Invoke(context.Background(), "Nope", []byte(`{}`))
	var se *sfnengine.ServiceError
	if !errors.As(err, &se) || se.Name != "Lambda.ResourceNotFoundException" {
		t.Errorf("unknown function: %v", err)
	}
}

func TestFunctionErrorsAreNamedAsTheRuntimeNamesThem(t *testing.T) {
	inv := newInvoker()
	tests := []struct{ mode, wantType string }{
		{"typed", "InsufficientFunds"},
		{"wrapped", "wrapError"},
		{"panic", "string"},
		{"slow", "Sandbox.Timedout"},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			_, err := inv.Invoke(context.Background(), "EchoFunction", []byte(`{"mode":"`+tt.mode+`"}`))
			var fe *sfnengine.FunctionError
			if !errors.As(err, &fe) || fe.Type != tt.wantType || fe.Message == "" {
				t.Fatalf("err = %#v, want a function error of type %s", err, tt.wantType)
			}
		})
	}
}

// TestConcurrentResultsAreNotShared: the handler's output buffer is reused between invocations; each caller must
// keep its own result.
func TestConcurrentResultsAreNotShared(t *testing.T) {
	// 200 invocations at once under the race detector on a busy machine: the function's timeout is not what this
	// test is about (at 200 ms it cut some invocations off), so it is generous here.
	inv := newInvokerWithTimeout(time.Minute)
	var wg sync.WaitGroup
	results := make([][]byte, 200)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := inv.Invoke(context.Background(), "EchoFunction", []byte(fmt.Sprintf(`{"n":%d}`, i)))
			if err != nil {
				t.Error(err)
			}
			results[i] = out
		}()
	}
	wg.Wait()
	for i, out := range results {
		if want := fmt.Sprintf(`{"arn":"arn:aws:lambda:us-east-1:000000000000:function:EchoFunction","n":%d,`, i); !strings.HasPrefix(string(out), want) {
			t.Fatalf("result %d = %s", i, out)
		}
	}
}

func TestFaults(t *testing.T) {
	inv := newInvoker()
	for _, spec := range []string{"echo:error=Lambda.ServiceException:times=2", "echo:error=CreditRejected:leg=CREDIT"} {
		f, err := ParseFault(spec)
		if err != nil {
			t.Fatal(err)
		}
		inv.AddFault(f)
	}
	call := func(payload string) error {
		_, err := inv.Invoke(context.Background(), "EchoFunction", []byte(payload))
		return err
	}
	var se *sfnengine.ServiceError
	for i := range 2 {
		if err := call(`{"leg":"REFUND"}`); !errors.As(err, &se) || se.Name != "Lambda.ServiceException" {
			t.Fatalf("call %d: %v, want Lambda.ServiceException", i, err)
		}
	}
	if err := call(`{"leg":"REFUND"}`); err != nil {
		t.Fatalf("third call: %v, want the times=2 fault spent", err)
	}
	var fe *sfnengine.FunctionError
	if err := call(`{"leg":"CREDIT"}`); !errors.As(err, &fe) || fe.Type != "CreditRejected" {
		t.Fatalf("credit leg: %v, want CreditRejected", err)
	}

	crash, err := ParseFault("echo:crash=after-reserve:times=1")
	if err != nil {
		t.Fatal(err)
	}
	inv.AddFault(crash)
	point := inv.CrashPoint("EchoFunction", "after-reserve")
	func() {
		defer func() {
			if p := recover(); p == nil {
				t.Error("armed crash point did not crash")
			} else if fe, ok := panicError(p).(*sfnengine.FunctionError); !ok || fe.Type != "Runtime.ExitError" {
				t.Errorf("crash reported as %#v", panicError(p))
			}
		}()
		point()
	}()
	point() // spent: no crash
}

func TestParseFault(t *testing.T) {
	tests := []struct {
		spec string
		ok   bool
	}{
		{"debit:error=Lambda.ServiceException:times=2", true},
		{"credit:delay=5s", true},
		{"orchestrator:crash=after-reserve", true},
		{"credit:error=X:leg=CREDIT", true},
		{"credit", false},
		{"credit:delay=fast", false},
		{"credit:times=0:error=X", false},
		{"credit:error=X:delay=1s", false},
		{"credit:colour=red", false},
		{":error=X", false},
	}
	for _, tt := range tests {
		if _, err := ParseFault(tt.spec); (err == nil) != tt.ok {
			t.Errorf("ParseFault(%q) err = %v", tt.spec, err)
		}
	}
}

func TestLogHandlerAddsRequestID(t *testing.T) {
	var buf strings.Builder
	logger := slog.New(LogHandler(slog.NewJSONHandler(&buf, nil))).With("function", "Echo")
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-9"})
	logger.InfoContext(ctx, "hello", "transferId", "tr_1")
	logger.Info("no context")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"requestId":"req-9"`) || !strings.Contains(lines[0], `"function":"Echo"`) || strings.Contains(lines[1], "requestId") {
		t.Errorf("logs = %q", lines)
	}
}

// BenchmarkInvoke measures the invoker's own cost per invocation (the handler echoes a small payload), from many
// goroutines at once as the engine and the gateway call it, without a concurrency cap and under the account's
// default one.
func BenchmarkInvoke(b *testing.B) {
	payload := []byte(`{"leg":"DEBIT","n":1}`)
	for _, bc := range []struct {
		name string
		c    *Concurrency
	}{
		{"uncapped", nil},
		{"capped", &Concurrency{Account: DefaultAccountConcurrency}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			inv := newInvoker()
			if bc.c != nil {
				if err := inv.SetConcurrency(*bc.c); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := inv.Invoke(context.Background(), "EchoFunction", payload); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// deepStack recurses n frames of about 300 bytes each, as a handler whose calls go through the AWS SDK's deep
// middleware chain uses tens of kilobytes of stack.
//
//go:noinline
func deepStack(n int) int {
	var pad [256]byte
	pad[n%256] = byte(n)
	if n == 0 {
		return int(pad[0])
	}
	return deepStack(n-1) + int(pad[n%256])
}

// BenchmarkInvokeDeepStack measures invocations whose handler needs about 64 KB of stack: what each invocation
// costs in stack growth depends on the goroutine it runs on.
func BenchmarkInvokeDeepStack(b *testing.B) {
	inv := New("us-east-1", "000000000000", func() string { return "req" }, slog.New(slog.DiscardHandler),
		Function{Name: "Deep", Timeout: time.Minute, NewHandler: func() lambda.Handler {
			return lambda.NewHandler(func(in struct{ N int }) (int, error) { return deepStack(in.N), nil })
		}})
	payload := []byte(`{"N":200}`)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := inv.Invoke(context.Background(), "Deep", payload); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// TestCloseEndsTheInstances: Close ends an idle instance's goroutine at once (its calls channel is closed) and a busy
// one's when its invocation returns, instead of putting it back in the pool.
func TestCloseEndsTheInstances(t *testing.T) {
	inv := newInvokerWithTimeout(time.Minute)
	if _, err := inv.Invoke(context.Background(), "EchoFunction", []byte(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	pool := inv.funcs["EchoFunction"].pool
	idle := pool.get() // the instance that ran the invocation
	pool.put(idle)
	ctx, cancel := context.WithCancel(context.Background())
	busy := make(chan error, 1)
	go func() {
		_, err := inv.Invoke(ctx, "EchoFunction", []byte(`{"mode":"slow"}`)) // takes idle; waits for ctx
		busy <- err
	}()
	for deadline := time.Now().Add(10 * time.Second); ; {
		pool.mu.Lock()
		n := len(pool.idle)
		pool.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the slow invocation never took the idle instance")
		}
		time.Sleep(time.Millisecond)
	}
	other := pool.get() // a second instance, idle when Close is called
	pool.put(other)

	inv.Close()
	if !closedChan(other.calls) {
		t.Error("the idle instance still waits for calls after Close")
	}
	cancel()
	<-busy
	for deadline := time.Now().Add(10 * time.Second); !closedChan(idle.calls); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the busy instance went on waiting for calls after its invocation returned")
		}
	}
	pool.mu.Lock()
	defer pool.mu.Unlock()
	if len(pool.idle) != 0 {
		t.Errorf("%d instances back in the pool after Close", len(pool.idle))
	}
}

// closedChan reports whether c is closed (an open channel of this pool has no sender waiting).
func closedChan(c chan call) bool {
	select {
	case _, ok := <-c:
		return !ok
	default:
		return false
	}
}
