package lambdahost

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// gate is a function body that holds every invocation until the test lets it go, so a test controls how many are
// in flight.
type gate struct {
	entered chan struct{}
	release chan struct{}
}

func newGate() *gate {
	return &gate{entered: make(chan struct{}, 100), release: make(chan struct{}, 100)}
}

// let lets n held invocations finish.
func (g *gate) let(n int) {
	for range n {
		g.release <- struct{}{}
	}
}

func (g *gate) handler() lambda.Handler {
	return lambda.NewHandler(func(ctx context.Context, in map[string]any) (map[string]any, error) {
		g.entered <- struct{}{}
		select {
		case <-g.release:
			return in, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
}

// gatedInvoker has functions A and B, each held by its own gate.
func gatedInvoker(t *testing.T, c Concurrency) (*Invoker, map[string]*gate) {
	t.Helper()
	var n atomic.Int64
	gates := map[string]*gate{"A": newGate(), "B": newGate()}
	var fns []Function
	for name, g := range gates {
		fns = append(fns, Function{Name: name, NewHandler: g.handler, Timeout: time.Minute})
	}
	inv := New("us-east-1", "000000000000", func() string { return "req-" + strconv.FormatInt(n.Add(1), 10) }, slog.New(slog.DiscardHandler), fns...)
	if err := inv.SetConcurrency(c); err != nil {
		t.Fatal(err)
	}
	return inv, gates
}

// burst starts n concurrent invocations of function and returns the errors of the throttled ones as they come back
// (they return at once) and a wait for the others.
func burst(inv *Invoker, function string, n int) (throttles <-chan error, wait func() []error) {
	ch := make(chan error, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := inv.Invoke(context.Background(), function, []byte(`{"x":1}`))
			var se *sfnengine.ServiceError
			if errors.As(err, &se) && se.Name == ErrTooManyRequests {
				ch <- err
				return
			}
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}()
	}
	return ch, func() []error { wg.Wait(); return errs }
}

// expectThrottles takes the outcome of each of the k+n invocations of a burst, which is immediate (throttled, or
// held in the function), and wants exactly k throttled with reason and n in flight.
func expectThrottles(t *testing.T, throttles <-chan error, g *gate, k, n int, reason string) {
	t.Helper()
	gotK, gotN := 0, 0
	for range k + n {
		select {
		case err := <-throttles:
			gotK++
			if !strings.Contains(err.Error(), reason) {
				t.Errorf("throttled: %v, want reason %s", err, reason)
			}
		case <-g.entered:
			gotN++
		}
	}
	if gotK != k || gotN != n {
		t.Fatalf("%d throttled and %d in flight, want %d and %d", gotK, gotN, k, n)
	}
}

func TestConcurrencyCapThrottlesTheExcess(t *testing.T) {
	const capN, extra = 3, 2
	inv, gates := gatedInvoker(t, Concurrency{Account: capN})
	throttles, wait := burst(inv, "A", capN+extra)
	expectThrottles(t, throttles, gates["A"], extra, capN, reasonAccount)
	gates["A"].let(capN)
	if errs := wait(); len(errs) != capN || errors.Join(errs...) != nil {
		t.Errorf("invocations within the cap: %v", errs)
	}

	// The finished invocations gave their slots back: a full cap is in flight again, none throttled.
	throttles, wait = burst(inv, "A", capN)
	expectThrottles(t, throttles, gates["A"], 0, capN, reasonAccount)
	gates["A"].let(capN)
	if errs := wait(); len(errs) != capN || errors.Join(errs...) != nil {
		t.Errorf("after the burst: %v", errs)
	}
}

func TestReservedConcurrencyIsTheFunctionsOwn(t *testing.T) {
	// Account 3, A reserves 1: A runs at most 1, B (unreserved) at most 3-1 = 2, and neither takes the other's.
	inv, gates := gatedInvoker(t, Concurrency{Account: 3, Reserved: map[string]int{"A": 1}})
	throttlesA, waitA := burst(inv, "A", 3)
	expectThrottles(t, throttlesA, gates["A"], 2, 1, reasonReserved)
	throttlesB, waitB := burst(inv, "B", 4)
	expectThrottles(t, throttlesB, gates["B"], 2, 2, reasonAccount)
	gates["A"].let(1)
	gates["B"].let(2)
	if errs := append(waitA(), waitB()...); len(errs) != 3 || errors.Join(errs...) != nil {
		t.Errorf("invocations within the caps: %v", errs)
	}
}

func TestReservedConcurrencyZeroThrottlesEverything(t *testing.T) {
	inv, _ := gatedInvoker(t, Concurrency{Reserved: map[string]int{"A": 0}})
	_, err := inv.Invoke(context.Background(), "A", []byte(`{}`))
	var se *sfnengine.ServiceError
	if !errors.As(err, &se) || se.Name != "Lambda.TooManyRequestsException" || !strings.Contains(se.Message, reasonReserved) {
		t.Fatalf("err = %v, want Lambda.TooManyRequestsException", err)
	}
}

func TestSetConcurrencyRejects(t *testing.T) {
	tests := []struct {
		name string
		c    Concurrency
		want string
	}{
		{"unknown function", Concurrency{Account: 10, Reserved: map[string]int{"Nope": 1}}, "reserved concurrency of Nope: no such function"},
		{"negative reservation", Concurrency{Reserved: map[string]int{"A": -1}}, "reserved concurrency of A: -1 must be >= 0"},
		{"negative account", Concurrency{Account: -1}, "lambda concurrency -1: must be >= 0"},
		{"reservations beyond the account", Concurrency{Account: 5, Reserved: map[string]int{"A": 3, "B": 3}}, "reserved concurrency 6 exceeds the account's concurrency 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv := New("us-east-1", "000000000000", func() string { return "id" }, slog.New(slog.DiscardHandler),
				Function{Name: "A", NewHandler: newGate().handler}, Function{Name: "B", NewHandler: newGate().handler})
			if err := inv.SetConcurrency(tt.c); err == nil || err.Error() != tt.want {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestThrottledTaskMatchesErrorEquals: through the Step Functions engine, a throttled lambda:invoke fails with the
// error name a workflow's Retry and Catch match.
func TestThrottledTaskMatchesErrorEquals(t *testing.T) {
	inv, _ := gatedInvoker(t, Concurrency{Reserved: map[string]int{"A": 0}})
	eng := sfnengine.New(sfnengine.Options{Lambda: inv, Region: "us-east-1", AccountID: "000000000000"})
	t.Cleanup(eng.Close)
	def := `{"StartAt":"Call","States":{
		"Call":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"` + inv.ARN("A") + `","Payload":{}},
			"Catch":[{"ErrorEquals":["Lambda.TooManyRequestsException"],"ResultPath":"$.error","Next":"Throttled"}],"End":true},
		"Throttled":{"Type":"Pass","End":true}}}`
	ctx := context.Background()
	sm, err := eng.CreateStateMachine(ctx, sfnengine.CreateInput{Name: "throttle", Definition: def, RoleArn: "arn:aws:iam::000000000000:role/r"})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := eng.StartExecution(ctx, sfnengine.StartInput{StateMachineArn: sm.Arn})
	if err != nil {
		t.Fatal(err)
	}
	if rec, err = eng.Wait(ctx, rec.Arn); err != nil {
		t.Fatal(err)
	}
	var out struct{ Error struct{ Error, Cause string } }
	if rec.Status != "SUCCEEDED" || rec.Output == nil || json.Unmarshal([]byte(*rec.Output), &out) != nil || out.Error.Error != "Lambda.TooManyRequestsException" {
		t.Fatalf("execution %s, output %v: want the throttle caught", rec.Status, rec.Output)
	}
}
