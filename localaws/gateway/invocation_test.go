package gateway

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/transferflow/orchestrator/localaws/lambdahost"
)

// workingFunction serves POST /transfers with a function of the given Timeout run by the real in-process invoker. The
// function closes started when it starts, works for work unless its context ends first, and sends ended what ended
// it: nil when it worked to its end, else its context's error.
type workingFunction struct {
	g       *Gateway
	url     string
	started chan struct{}
	ended   chan error
}

func startWorkingFunction(t *testing.T, timeout, work time.Duration) *workingFunction {
	t.Helper()
	w := &workingFunction{started: make(chan struct{}), ended: make(chan error, 1)}
	fn := lambdahost.Function{Name: "Orchestrator", Timeout: timeout, NewHandler: func() lambda.Handler {
		return lambda.NewHandler(func(ctx context.Context, _ events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
			close(w.started)
			select {
			case <-time.After(work):
				w.ended <- nil
			case <-ctx.Done():
				w.ended <- ctx.Err()
			}
			return events.APIGatewayProxyResponse{StatusCode: http.StatusAccepted}, nil
		})
	}}
	inv := lambdahost.New("us-east-1", "000000000000", func() string { return "req-1" }, slog.New(slog.DiscardHandler), fn)
	g, err := New([]Route{{Method: "POST", Resource: "/transfers", Function: "Orchestrator"}}, inv,
		Options{NewID: func() string { return "req-1" }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	w.g, w.url = g, srv.URL
	return w
}

// post sends POST /transfers with ctx and returns the answer's status (0 when there is none) on the channel.
func (w *workingFunction) post(ctx context.Context) <-chan int {
	status := make(chan int, 1)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, w.url+"/transfers", strings.NewReader("{}"))
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			status <- 0
			return
		}
		resp.Body.Close()
		status <- resp.StatusCode
	}()
	return status
}

// stopped waits for the function to stop and returns what stopped it.
func (w *workingFunction) stopped(t *testing.T, within time.Duration) error {
	t.Helper()
	select {
	case err := <-w.ended:
		return err
	case <-time.After(within):
		t.Fatalf("the function still runs after %s", within)
		return nil
	}
}

// TestInvocationOutlivesTheClient: a client that goes away while its function runs does not end the invocation, as
// API Gateway does not end a Lambda invocation: the function runs to its end, or to its own timeout (the real
// in-process invoker's deadline).
func TestInvocationOutlivesTheClient(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration // the function's Timeout
		work    time.Duration // how long the function works unless its context ends first
		want    error         // what stopped the function; nil: it worked to its end
	}{
		{name: "function runs to its end", timeout: 10 * time.Second, work: time.Second, want: nil},
		{name: "function stops at its own timeout", timeout: 300 * time.Millisecond, work: 10 * time.Second, want: context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := startWorkingFunction(t, tt.timeout, tt.work)
			ctx, cancel := context.WithCancel(t.Context())
			status := w.post(ctx)
			<-w.started
			cancel() // the client goes away: its connection is closed
			if got := <-status; got != 0 {
				t.Fatalf("the client got %d, want it gone before the answer", got)
			}
			if got := w.stopped(t, tt.work+5*time.Second); !errors.Is(got, tt.want) || (tt.want == nil) != (got == nil) {
				t.Errorf("the function stopped with %v, want %v", got, tt.want)
			}
		})
	}
}

// TestCloseEndsTheInvocationsInFlight: Close, which the stack calls when it stops, ends an invocation still running,
// and the client that waited for it gets the gateway's 502.
func TestCloseEndsTheInvocationsInFlight(t *testing.T) {
	w := startWorkingFunction(t, 10*time.Second, time.Minute)
	status := w.post(t.Context())
	<-w.started
	w.g.Close()
	if got := w.stopped(t, 5*time.Second); !errors.Is(got, context.Canceled) {
		t.Errorf("the function stopped with %v, want %v", got, context.Canceled)
	}
	if got := <-status; got != http.StatusBadGateway {
		t.Errorf("the client got %d, want 502", got)
	}
}
