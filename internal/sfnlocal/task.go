package sfnlocal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/transferflow/orchestrator/internal/asl"
	"github.com/transferflow/orchestrator/internal/jsonvalue"
)

// integration names a task resource: its resourceType and resource as history events report them.
type integration struct {
	resourceType string
	resource     string
	call         func(ctx context.Context, x *execution, params any) (any, *failure)
}

const statesPrefix = "arn:aws:states:::"

// resolveResource maps a Task Resource ARN to an integration.
func resolveResource(arn string) (integration, error) {
	if rest, ok := strings.CutPrefix(arn, statesPrefix); ok {
		svc, api, _ := strings.Cut(rest, ":")
		switch {
		case svc == "lambda" && api == "invoke":
			return integration{resourceType: "lambda", resource: "invoke", call: callLambdaInvoke}, nil
		case svc == "dynamodb":
			if op, ok := dynamoOps[api]; ok {
				return integration{resourceType: "dynamodb", resource: api, call: op}, nil
			}
		}
		return integration{}, fmt.Errorf("the resource %q is not supported by the local engine", arn)
	}
	parts := strings.Split(arn, ":")
	if len(parts) >= 7 && parts[0] == "arn" && parts[2] == "lambda" && parts[5] == "function" {
		return integration{resourceType: "lambda", resource: arn, call: func(ctx context.Context, x *execution, params any) (any, *failure) {
			return callLambdaDirect(ctx, x, arn, params)
		}}, nil
	}
	return integration{}, fmt.Errorf("the resource %q is not supported by the local engine", arn)
}

func (x *execution) attemptTask(ctx context.Context, sr *stateRun, eff, input any, th *thread) (any, *failure) {
	st := sr.st
	params := eff
	if sr.sp.parameters != nil {
		var fail *failure
		params, fail = x.payload(sr, sr.sp.parameters, eff)
		if fail != nil {
			return nil, fail
		}
	}
	integ := sr.sp.integ
	if err := sr.sp.integErr; err != nil {
		return nil, x.runtimeErr(sr, "%v", err)
	}
	timeout := st.TimeoutSeconds
	if st.TimeoutSecondsPath != "" {
		v, err := x.get(sr, st.TimeoutSecondsPath, eff)
		n, ok := v.(json.Number)
		t, perr := strconv.ParseInt(string(n), 10, 64)
		if err != nil || !ok || perr != nil || t <= 0 {
			return nil, x.runtimeErr(sr, "The TimeoutSecondsPath parameter does not reference a positive integer: %s", st.TimeoutSecondsPath)
		}
		timeout = t
	}
	sched := map[string]any{"resourceType": integ.resourceType, "resource": integ.resource,
		"region": x.eng.opts.Region, "parameters": marshal(params)}
	if timeout > 0 {
		sched["timeoutInSeconds"] = timeout
	}
	if st.HeartbeatSeconds > 0 {
		sched["heartbeatInSeconds"] = st.HeartbeatSeconds
	}
	x.emit(th, true, EventTaskScheduled, "taskScheduledEventDetails", sched)
	x.emit(th, true, EventTaskStarted, "taskStartedEventDetails", map[string]any{"resourceType": integ.resourceType, "resource": integ.resource})

	type result struct {
		out  any
		fail *failure
	}
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan result, 1)
	go func() {
		out, f := safeCall(tctx, x, integ, params)
		ch <- result{out, f}
	}()
	var timer <-chan time.Time
	if timeout > 0 {
		timer = x.eng.opts.Clock.After(time.Duration(timeout) * time.Second)
	}
	var res result
	select {
	case res = <-ch:
	case <-timer:
		cancel()
		f := &failure{Error: ErrNameTimeout}
		x.emit(th, true, EventTaskTimedOut, "taskTimedOutEventDetails", map[string]any{"resourceType": integ.resourceType,
			"resource": integ.resource, "error": f.Error})
		return nil, f
	case <-ctx.Done():
		return nil, stopped
	}
	if res.fail != nil {
		d := map[string]any{"resourceType": integ.resourceType, "resource": integ.resource, "error": res.fail.Error}
		if res.fail.Cause != "" {
			d["cause"] = res.fail.Cause
		}
		x.emit(th, true, EventTaskFailed, "taskFailedEventDetails", d)
		return nil, res.fail
	}
	text := marshal(res.out)
	if len(text) > maxPayloadBytes {
		return nil, &failure{Error: ErrNameDataLimitExceeded, Cause: fmt.Sprintf(
			"The state/task '%s' returned a result with a size exceeding the maximum number of bytes service limit.", st.Name)}
	}
	x.emit(th, true, EventTaskSucceeded, "taskSucceededEventDetails", map[string]any{"resourceType": integ.resourceType,
		"resource": integ.resource, "output": text, "outputDetails": map[string]any{"truncated": false}})
	return x.finishResult(sr, input, res.out)
}

// lambdaFailure translates an invoker error into the task failure AWS reports.
func lambdaFailure(err error) *failure {
	var fe *FunctionError
	if errors.As(err, &fe) {
		name := fe.Type
		if name == "" {
			name = "Lambda.Unknown"
		}
		return &failure{Error: name, Cause: marshal(jsonvalue.FromPairs("errorMessage", fe.Message, "errorType", fe.Type))}
	}
	var se *ServiceError
	if errors.As(err, &se) {
		return &failure{Error: se.Name, Cause: se.Message}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &failure{Error: "Lambda.SdkClientException", Cause: "Unable to execute HTTP request: " + err.Error()}
	}
	return &failure{Error: "Lambda.ServiceException", Cause: err.Error()}
}

func invokeLambda(ctx context.Context, x *execution, name string, payload any) ([]byte, *failure) {
	if x.eng.opts.Lambda == nil {
		return nil, lambdaFailure(errNoLambda)
	}
	body := []byte(marshal(payload))
	out, err := x.eng.opts.Lambda.Invoke(ctx, name, body)
	if err != nil {
		return nil, lambdaFailure(err)
	}
	return out, nil
}

func decodePayload(b []byte) any {
	if len(strings.TrimSpace(string(b))) == 0 {
		return nil
	}
	v, err := asl.Decode(b)
	if err != nil {
		return string(b)
	}
	return v
}

// callLambdaInvoke runs arn:aws:states:::lambda:invoke and shapes the result like AWS.
func callLambdaInvoke(ctx context.Context, x *execution, params any) (any, *failure) {
	p, _ := jsonvalue.AsMap(params)
	name, _ := p["FunctionName"].(string)
	if name == "" {
		return nil, &failure{Error: "Lambda.InvalidParameterValueException", Cause: "FunctionName is required"}
	}
	if q, ok := p["Qualifier"].(string); ok && q != "" {
		name += ":" + q
	}
	payload, ok := p["Payload"]
	if !ok {
		payload = jsonvalue.NewObject(0)
	}
	out, fail := invokeLambda(ctx, x, name, payload)
	if fail != nil {
		return nil, fail
	}
	reqID := x.eng.opts.NewID()
	headers := map[string]string{
		"Connection": "keep-alive", "Content-Type": "application/json", "Content-Length": strconv.Itoa(len(out)),
		"Date": x.eng.opts.Clock.Now().UTC().Format(http.TimeFormat), "X-Amz-Executed-Version": "$LATEST", "x-amzn-Remapped-Content-Length": "0",
		"x-amzn-RequestId": reqID,
	}
	return jsonvalue.FromPairs(
		"ExecutedVersion", "$LATEST",
		"Payload", decodePayload(out),
		"SdkHttpMetadata", httpMetadata(headers, 200),
		"SdkResponseMetadata", jsonvalue.FromPairs("RequestId", reqID),
		"StatusCode", json.Number("200"),
	), nil
}

// callLambdaDirect runs a Task whose Resource is a Lambda function ARN: the result is the function's output.
func callLambdaDirect(ctx context.Context, x *execution, arn string, params any) (any, *failure) {
	out, fail := invokeLambda(ctx, x, arn, params)
	if fail != nil {
		return nil, fail
	}
	return decodePayload(out), nil
}

// httpMetadata builds the SdkHttpMetadata object of an AWS SDK for Java response.
func httpMetadata(headers map[string]string, status int) map[string]any {
	all := map[string]any{}
	single := map[string]any{}
	for k, v := range headers {
		all[k] = []any{v}
		single[k] = v
	}
	return map[string]any{"AllHttpHeaders": all, "HttpHeaders": single, "HttpStatusCode": json.Number(strconv.Itoa(status))}
}

// safeCall runs an integration; a panic in it (for example in a LambdaInvoker) fails the task with
// States.TaskFailed instead of taking the process down.
func safeCall(ctx context.Context, x *execution, integ integration, params any) (out any, fail *failure) {
	defer func() {
		if r := recover(); r != nil {
			x.eng.opts.Logger.Error("task integration panic", "executionArn", x.rec.Arn, "resource", integ.resource, "panic", fmt.Sprint(r))
			out, fail = nil, &failure{Error: ErrNameTaskFailed, Cause: fmt.Sprintf("the integration panicked: %v", r)}
		}
	}()
	return integ.call(ctx, x, params)
}
