package sfnengine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/transferflow/orchestrator/localaws/asl"
	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// integration names a task resource: its resourceType and resource as history events report them.
type integration struct {
	resourceType string
	resource     string
	call         func(ctx context.Context, x *execution, params any) (any, *failure)
	// waitForToken: the task waits for its token after the call (callback.go); activity: the activity's ARN.
	waitForToken bool
	activity     string
	// sync: a .sync integration, which waits for the job it starts (no .waitForTaskToken on top of it).
	sync bool
}

const statesPrefix = "arn:aws:states:::"

// resolveResource maps a Task Resource ARN to an integration.
func resolveResource(arn string) (integration, error) {
	if integ, ok, err := resolveCallback(arn); ok {
		return integ, err
	}
	if rest, ok := strings.CutPrefix(arn, statesPrefix); ok {
		svc, api, _ := strings.Cut(rest, ":")
		switch {
		case svc == "lambda" && api == "invoke":
			return integration{resourceType: "lambda", resource: "invoke", call: callLambdaInvoke}, nil
		case svc == "dynamodb":
			if op, ok := dynamoOps[api]; ok {
				return integration{resourceType: "dynamodb", resource: api, call: op}, nil
			}
		case svc == "events" && api == "putEvents":
			return integration{resourceType: "events", resource: api, call: eventsPutEvents}, nil
		case svc == "sqs" && api == "sendMessage":
			return integration{resourceType: "sqs", resource: api, call: sqsSendMessage}, nil
		case svc == "sns" && api == "publish":
			return integration{resourceType: "sns", resource: api, call: snsPublish}, nil
		case svc == "states":
			if integ, ok := resolveNested(api); ok {
				return integ, nil
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
	if sr.resume != nil {
		return x.resumeTask(ctx, sr, input, th)
	}
	if w := x.openTaskWait(sr); w != nil {
		defer x.closeTaskWait(w)
	}
	st := sr.st
	params := eff
	if sr.sp.jArguments != nil {
		var fail *failure
		if params, fail = x.evalJ(sr, sr.sp.jArguments); fail != nil {
			return nil, fail
		}
	} else if sr.sp.parameters != nil {
		var fail *failure
		params, fail = x.payload(sr, sr.sp.parameters, eff)
		if fail != nil {
			return nil, fail
		}
	}
	integ := sr.sp.integ
	mocked, fail := x.mockedResponse(sr)
	if fail != nil {
		return nil, fail
	}
	if err := sr.sp.integErr; err != nil {
		return nil, x.runtimeErr(sr, "%v", err)
	}
	timeout := st.TimeoutSeconds
	if sr.sp.jTimeout != nil {
		var fail *failure
		if timeout, fail = x.evalJInt(sr, sr.sp.jTimeout, true); fail != nil {
			return nil, fail
		}
	}
	if st.TimeoutSecondsPath != "" {
		t, fail := x.longParam(sr, "TimeoutSecondsPath", st.TimeoutSecondsPath, eff, 1)
		if fail != nil {
			return nil, fail
		}
		timeout = t
	}
	heartbeat, fail := x.heartbeatSeconds(sr, eff)
	if fail != nil {
		return nil, fail
	}
	paramText := marshal(params)
	if len(paramText) > MaxPayloadBytes {
		return nil, dataLimitExceeded(st.Name, "was given parameters")
	}
	if sr.sp.integ.activity != "" {
		return x.runActivity(ctx, sr, input, paramText, timeout, heartbeat, th)
	}
	sched := map[string]any{"resourceType": sr.sp.resourceType, "resource": sr.sp.resource,
		"region": x.eng.opts.Region, "parameters": paramText}
	if timeout > 0 {
		sched["timeoutInSeconds"] = timeout
	}
	if heartbeat > 0 {
		sched["heartbeatInSeconds"] = heartbeat
	}
	x.emit(th, true, EventTaskScheduled, "taskScheduledEventDetails", sched)
	x.emit(th, true, EventTaskStarted, "taskStartedEventDetails", sr.sp.taskStarted)
	if mocked != nil {
		return x.runMocked(sr, mocked, input, th)
	}

	var res taskOutcome
	if integ.waitForToken {
		if res, fail = x.callAndWait(ctx, sr, integ, params, timeout, heartbeat, th); fail != nil {
			return nil, fail
		}
	} else if timeout > 0 {
		var fail *failure
		if res, fail = x.callWithTimeout(ctx, sr, integ, params, timeout, th); fail != nil {
			return nil, fail
		}
	} else {
		// Without a task timeout the call runs on the execution's goroutine: a stop or the execution's timeout
		// cancels its context, and the integrations return once their context is done (see LambdaInvoker).
		res.out, res.fail = safeCall(ctx, x, integ, params)
		if ctx.Err() != nil {
			return nil, stopped
		}
	}
	if res.fail != nil {
		return x.taskFailed(sr, th, res.fail)
	}
	out := res.out
	var text string
	if lr, ok := out.(lazyResult); ok {
		text = lr.text()
		// The result is built only when ResultSelector or ResultPath reads it.
		if rp := sr.sp.resultPath.opt; sr.sp.resultSel == nil && sr.sp.assign == nil && rp.Set && rp.Null {
			out = nil
		} else {
			out = lr.value()
		}
	} else {
		text = marshal(out)
	}
	return x.taskSucceeded(sr, input, out, text, th)
}

// taskDetails returns the members every Task event's details begin with: the task's resourceType and resource.
func taskDetails(sr *stateRun) map[string]any {
	return map[string]any{"resourceType": sr.sp.resourceType, "resource": sr.sp.resource}
}

// taskFailed emits TaskFailed for a Task state's failed call and returns the failure.
func (x *execution) taskFailed(sr *stateRun, th *thread, fail *failure) (any, *failure) {
	x.emitFailure(th, EventTaskFailed, "taskFailedEventDetails", taskDetails(sr), fail)
	return nil, fail
}

// taskSucceeded emits TaskSucceeded for a Task state's result, text being its JSON, and returns the state's output.
func (x *execution) taskSucceeded(sr *stateRun, input, result any, text string, th *thread) (any, *failure) {
	return x.emitResult(sr, input, result, text, th, EventTaskSucceeded, "taskSucceededEventDetails", taskDetails(sr))
}

// emitFailure emits the event typ (TaskFailed, ActivityFailed) with the details d, to which it adds fail's error
// and, when it has one, its cause.
func (x *execution) emitFailure(th *thread, typ, key string, d map[string]any, fail *failure) {
	d["error"] = fail.Error
	if fail.Cause != "" {
		d["cause"] = fail.Cause
	}
	x.emit(th, true, typ, key, d)
}

// emitResult emits the event typ (TaskSucceeded, ActivitySucceeded) with the details d, to which it adds the
// result's text, and returns the state's output; a text over MaxPayloadBytes fails the state instead
// (States.DataLimitExceeded).
func (x *execution) emitResult(sr *stateRun, input, result any, text string, th *thread, typ, key string, d map[string]any) (any, *failure) {
	if len(text) > MaxPayloadBytes {
		return nil, dataLimitExceeded(sr.st.Name, "returned a result")
	}
	d["output"], d["outputDetails"] = text, notTruncated
	x.emit(th, true, typ, key, d)
	return x.finishResult(sr, input, result)
}

// taskOutcome is what a task's call returned.
type taskOutcome struct {
	out  any
	fail *failure
}

// callWithTimeout runs the call on a goroutine of its own, so that the task's timeout (on the engine's Clock) or a
// stop need not wait for it. It returns States.Timeout, with its TaskTimedOut event, when the timeout comes first,
// and stopped when the execution is stopped first.
func (x *execution) callWithTimeout(ctx context.Context, sr *stateRun, integ integration, params any, timeout int64, th *thread) (taskOutcome, *failure) {
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	timer := x.eng.opts.Clock.After(time.Duration(timeout) * time.Second)
	ch := make(chan taskOutcome, 1)
	go func() {
		out, f := safeCall(tctx, x, integ, params)
		ch <- taskOutcome{out, f}
	}()
	select {
	case res := <-ch:
		return res, nil
	case <-timer:
		cancel()
		f := &failure{Error: ErrNameTimeout}
		x.emit(th, true, EventTaskTimedOut, "taskTimedOutEventDetails", map[string]any{"resourceType": sr.sp.resourceType,
			"resource": sr.sp.resource, "error": f.Error})
		return taskOutcome{}, f
	case <-ctx.Done():
		return taskOutcome{}, stopped
	}
}

// lazyResult is a task result that can write its JSON text without being built as a value. An integration returns
// one when building the value costs more than writing the text, and the value is often not read (ResultPath null).
type lazyResult interface {
	// text returns the JSON text of value(), exactly as marshal writes it.
	text() string
	value() any
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
	body, err := jsonvalue.Append(make([]byte, 0, 256), payload)
	if err != nil {
		body = []byte(marshal(payload))
	}
	out, err := x.eng.opts.Lambda.Invoke(ctx, name, body)
	if err != nil {
		return nil, lambdaFailure(err)
	}
	return out, nil
}

func decodePayload(b []byte) any {
	if len(bytes.TrimSpace(b)) == 0 {
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
	v, _ := jsonvalue.Lookup(params, "FunctionName")
	name, _ := v.(string)
	if name == "" {
		return nil, &failure{Error: "Lambda.InvalidParameterValueException", Cause: "FunctionName is required"}
	}
	if v, _ := jsonvalue.Lookup(params, "Qualifier"); v != nil {
		if q, ok := v.(string); ok && q != "" {
			name += ":" + q
		}
	}
	payload, ok := jsonvalue.Lookup(params, "Payload")
	if !ok {
		payload = jsonvalue.NewObject(0)
	}
	out, fail := invokeLambda(ctx, x, name, payload)
	if fail != nil {
		return nil, fail
	}
	return &lambdaResult{payload: decodePayload(out), length: strconv.Itoa(len(out)),
		date: httpDate(x.eng.opts.Clock.Now()), requestID: x.eng.opts.NewID()}, nil
}

// lambdaResult is the result of a lambda:invoke task: the function's decoded output and the response's metadata.
type lambdaResult struct {
	payload   any
	length    string // Content-Length
	date      string
	requestID string
}

// headerValues returns the response header values in the order of lambdaHeaderNames.
func (r *lambdaResult) headerValues() [7]string {
	return [7]string{"keep-alive", r.length, "application/json", r.date, "$LATEST", "0", r.requestID}
}

func (r *lambdaResult) value() any {
	headers := jsonvalue.NewObjectKeys(lambdaHeaderNames)
	for i, v := range r.headerValues() {
		headers.SetAt(i, v)
	}
	res := jsonvalue.NewObjectKeys(lambdaResultKeys)
	res.SetAt(0, "$LATEST")
	res.SetAt(1, r.payload)
	res.SetAt(2, httpMetadata(headers, 200))
	res.SetAt(3, jsonvalue.FromPairs("RequestId", r.requestID))
	res.SetAt(4, json.Number("200"))
	return res
}

// textBuffers holds scratch buffers for lambdaResult.text.
var textBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

func (r *lambdaResult) text() string {
	bp := textBuffers.Get().(*[]byte)
	b, err := r.appendText((*bp)[:0])
	text := string(b)
	if cap(b) <= 64<<10 {
		*bp = b[:0]
		textBuffers.Put(bp)
	}
	if err != nil {
		return marshal(r.value())
	}
	return text
}

func (r *lambdaResult) appendText(b []byte) ([]byte, error) {
	b = append(b, `{"ExecutedVersion":"$LATEST","Payload":`...)
	b, err := jsonvalue.Append(b, r.payload)
	if err != nil {
		return b, err
	}
	values := r.headerValues()
	b = append(b, `,"SdkHttpMetadata":{"AllHttpHeaders":{`...)
	for i, name := range lambdaHeaderNames {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonvalue.AppendString(b, name)
		b = append(b, ":["...)
		b = jsonvalue.AppendString(b, values[i])
		b = append(b, ']')
	}
	b = append(b, `},"HttpHeaders":{`...)
	for i, name := range lambdaHeaderNames {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonvalue.AppendString(b, name)
		b = append(b, ':')
		b = jsonvalue.AppendString(b, values[i])
	}
	b = append(b, `},"HttpStatusCode":200},"SdkResponseMetadata":{"RequestId":`...)
	b = jsonvalue.AppendString(b, r.requestID)
	b = append(b, `},"StatusCode":200}`...)
	return b, nil
}

// The keys of a lambda:invoke result and of its response headers, in the order AWS reports them (the headers
// sorted, as the SDK for Java's map prints them).
var (
	lambdaResultKeys  = []string{"ExecutedVersion", "Payload", "SdkHttpMetadata", "SdkResponseMetadata", "StatusCode"}
	lambdaHeaderNames = []string{"Connection", "Content-Length", "Content-Type", "Date", "X-Amz-Executed-Version",
		"x-amzn-Remapped-Content-Length", "x-amzn-RequestId"}
	httpMetadataKeys = []string{"AllHttpHeaders", "HttpHeaders", "HttpStatusCode"}
)

// lastHTTPDate caches the latest HTTP date text: every task result of the same second carries it.
var lastHTTPDate atomic.Pointer[httpDateText]

type httpDateText struct {
	unix int64
	text string
}

// httpDate returns t in the format of an HTTP Date header.
func httpDate(t time.Time) string {
	sec := t.Unix()
	if d := lastHTTPDate.Load(); d != nil && d.unix == sec {
		return d.text
	}
	d := &httpDateText{unix: sec, text: t.UTC().Format(http.TimeFormat)}
	lastHTTPDate.Store(d)
	return d.text
}

// callLambdaDirect runs a Task whose Resource is a Lambda function ARN: the result is the function's output.
func callLambdaDirect(ctx context.Context, x *execution, arn string, params any) (any, *failure) {
	out, fail := invokeLambda(ctx, x, arn, params)
	if fail != nil {
		return nil, fail
	}
	return decodePayload(out), nil
}

// status200 is the HttpStatusCode of a successful response, boxed once.
var status200 any = json.Number("200")

// httpMetadata builds the SdkHttpMetadata object of an AWS SDK for Java response from the response headers, an
// object of header names (sorted) and values.
func httpMetadata(headers *jsonvalue.Object, status int) *jsonvalue.Object {
	all := jsonvalue.NewObjectKeys(headers.Keys())
	for i, v := range headers.Values() {
		all.SetAt(i, []any{v})
	}
	md := jsonvalue.NewObjectKeys(httpMetadataKeys)
	md.SetAt(0, all)
	md.SetAt(1, headers)
	if status == 200 {
		md.SetAt(2, status200)
	} else {
		md.SetAt(2, json.Number(strconv.Itoa(status)))
	}
	return md
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
