// Command probe is the Lambda function of saminvoke's tests: what it does depends on its event and, at start, on
// PROBE_INIT.
package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

type event struct {
	Respond  json.RawMessage `json:"respond"`
	Env      []string        `json:"env"`
	Error    string          `json:"error"`
	Panic    string          `json:"panic"`
	Sleep    string          `json:"sleep"`
	Allocate int             `json:"allocate"` // MiB, held until the invocation is killed
	Exit     int             `json:"exit"`
}

// ProbeError is the probe's function error.
type ProbeError struct{ msg string }

func (e *ProbeError) Error() string { return e.msg }

func handle(ctx context.Context, ev event) (any, error) {
	switch {
	case ev.Error != "":
		return nil, &ProbeError{ev.Error}
	case ev.Panic != "":
		panic(ev.Panic)
	case ev.Exit != 0:
		os.Exit(ev.Exit)
	case ev.Sleep != "":
		d, _ := time.ParseDuration(ev.Sleep)
		time.Sleep(d)
		return "slept", nil
	case ev.Allocate > 0:
		b := make([]byte, ev.Allocate<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		time.Sleep(time.Minute)
		return len(b), nil
	case len(ev.Env) > 0:
		lc, _ := lambdacontext.FromContext(ctx)
		deadline, _ := ctx.Deadline()
		vars := map[string]*string{}
		for _, name := range ev.Env {
			if v, ok := os.LookupEnv(name); ok {
				vars[name] = &v
			} else {
				vars[name] = nil
			}
		}
		return map[string]any{"requestId": lc.AwsRequestID, "functionArn": lc.InvokedFunctionArn,
			"deadlineLeft": time.Until(deadline).String(), "traceId": ctx.Value("x-amzn-trace-id"), "env": vars}, nil
	}
	return ev.Respond, nil
}

func main() {
	switch os.Getenv("PROBE_INIT") {
	case "exit":
		os.Exit(7)
	case "init-error":
		req, _ := http.NewRequest(http.MethodPost, "http://"+os.Getenv("AWS_LAMBDA_RUNTIME_API")+"/2018-06-01/runtime/init/error",
			strings.NewReader(`{"errorMessage":"probe cannot start","errorType":"ProbeInitError","stackTrace":[]}`))
		req.Header.Set("Lambda-Runtime-Function-Error-Type", "Runtime.ProbeInitError")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
		os.Exit(1)
	}
	lambda.Start(handle)
}
