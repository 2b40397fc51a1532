package sfnengine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// The nested-workflow integration (arn:aws:states:::states:startExecution) starts an execution of another state
// machine of this engine, in-process. Its three forms, as AWS defines them:
//   - startExecution: the result is StartExecution's answer, {"ExecutionArn", "StartDate"} with the SDK's HTTP
//     metadata, as AWS records it;
//   - startExecution.sync: the task waits for the child to close; the result is the child's DescribeExecution
//     answer with capitalised keys, its Input and Output as JSON text (with StateMachineVersionArn and
//     StateMachineAliasArn when the child was started with a version or an alias ARN, as DescribeExecution has them);
//   - startExecution.sync:2: the same, with Input and Output as JSON values.
//
// A .sync child of an EXPRESS state machine runs as StartSyncExecution runs it (an Express execution keeps no state
// that could be waited on), with the same result.
//
// A child that fails, times out or is aborted fails a .sync task with States.TaskFailed and the child's
// description as the cause. A .sync task that is stopped (the parent stopped, timed out, or the task's own
// TimeoutSeconds passed) stops its child, as AWS does for its .sync jobs. A refused start is named
// StepFunctions.<Exception>, as AWS names the errors of its optimized integrations.
const (
	startExecutionAPI = "startExecution"
	syncSuffix        = ".sync"
	sync2Suffix       = ".sync:2"
)

// nestedErrorCodes names the StartExecution errors a nested start can meet, with the API's error code and AWS's
// message, whose one argument is what the error is about.
var nestedErrorCodes = []struct {
	err          error
	code, format string
}{
	{ErrInvalidArn, "InvalidArn", "Invalid Arn: '%s'"},
	{ErrStateMachineDoesNotExist, "StateMachineDoesNotExist", "State Machine Does Not Exist: '%s'"},
	{ErrInvalidName, "InvalidName", "Invalid Name: '%s'"},
	{ErrInvalidExecutionInput, "InvalidExecutionInput", "Invalid State Machine Execution Input: '%s'"},
	{ErrExecutionAlreadyExists, "ExecutionAlreadyExists", "Execution Already Exists: '%s'"},
}

// resolveNested resolves states:startExecution and its .sync forms; ok is false for any other states: API.
func resolveNested(api string) (integration, bool) {
	var sync, parsed bool
	switch api {
	case startExecutionAPI:
	case startExecutionAPI + syncSuffix:
		sync = true
	case startExecutionAPI + sync2Suffix:
		sync, parsed = true, true
	default:
		return integration{}, false
	}
	return integration{resourceType: "states", resource: api, sync: sync,
		call: func(ctx context.Context, x *execution, params any) (any, *failure) {
			return callStartExecution(ctx, x, params, sync, parsed)
		}}, true
}

// callStartExecution runs one nested start, and for .sync waits for the child.
func callStartExecution(ctx context.Context, x *execution, params any, sync, parsed bool) (any, *failure) {
	in, f := nestedStartInput(params)
	if f != nil {
		return nil, f
	}
	eng := x.eng
	if sync {
		// An Express child keeps no state to wait on: it runs as StartSyncExecution runs it, which stops it when
		// this task's context ends.
		if eng.machineType(in.StateMachineArn) == TypeExpress {
			done, err := eng.StartSyncExecution(ctx, in)
			if err != nil {
				if ctx.Err() != nil {
					return nil, stopped
				}
				return nil, nestedFailure(err)
			}
			return syncResult(done, parsed)
		}
	}
	rec, err := eng.StartExecution(ctx, in)
	if err != nil {
		return nil, nestedFailure(err)
	}
	if !sync {
		headers := jsonvalue.FromPairs("Content-Type", "application/x-amz-json-1.0", "Date", httpDate(eng.opts.Clock.Now()),
			"x-amzn-RequestId", NewUUID())
		return jsonvalue.FromPairs("ExecutionArn", rec.Arn, "StartDate", nestedDate(rec.StartDate),
			"SdkHttpMetadata", httpMetadata(headers, 200), "SdkResponseMetadata", jsonvalue.FromPairs("RequestId", NewUUID())), nil
	}
	done, err := eng.Wait(ctx, rec.Arn)
	if err != nil {
		if ctx.Err() != nil {
			// The task was stopped: stop the child too, on a context of its own (this one is done).
			stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			_, _ = eng.StopExecution(stopCtx, rec.Arn, "", "")
			return nil, stopped
		}
		return nil, &failure{Error: ErrNameTaskFailed, Cause: fmt.Sprintf("wait for the nested execution %s: %v", rec.Arn, err)}
	}
	return syncResult(done, parsed)
}

// syncResult is a .sync task's outcome for its closed child: the child's description, or States.TaskFailed with
// the description as the cause when the child did not succeed.
func syncResult(done *ExecutionRecord, parsed bool) (any, *failure) {
	desc := describeNested(done, parsed)
	if done.Status != StatusSucceeded {
		return nil, &failure{Error: ErrNameTaskFailed, Cause: marshal(desc)}
	}
	return desc, nil
}

// nestedStartInput reads the task's Parameters ({"StateMachineArn", "Input", "Name"}) into a StartInput. Input may
// be a JSON value (sent as its text) or a string (sent as it is); absent or null, the child's input is {}.
func nestedStartInput(params any) (StartInput, *failure) {
	bad := func(format string, args ...any) *failure {
		return &failure{Error: ErrNameRuntime, Cause: "states:startExecution: " + fmt.Sprintf(format, args...)}
	}
	var in StartInput
	v, _ := jsonvalue.Lookup(params, "StateMachineArn")
	arn, ok := v.(string)
	if !ok || arn == "" {
		return in, bad("Parameters.StateMachineArn must be a state machine ARN")
	}
	in.StateMachineArn = arn
	if v, present := jsonvalue.Lookup(params, "Name"); present && v != nil {
		name, ok := v.(string)
		if !ok {
			return in, bad("Parameters.Name must be a string")
		}
		in.Name = name
	}
	switch v, _ := jsonvalue.Lookup(params, "Input"); v := v.(type) {
	case nil:
	case string:
		in.Input = v
	default:
		in.Input = marshal(v)
	}
	return in, nil
}

// nestedFailure names a refused nested start StepFunctions.<Code>Exception, with AWS's message and the SDK's
// service details as the cause.
func nestedFailure(err error) *failure {
	for _, n := range nestedErrorCodes {
		if errors.Is(err, n.err) {
			subject := strings.Trim(strings.TrimPrefix(err.Error(), n.err.Error()+": "), `"`)
			return &failure{Error: "StepFunctions." + n.code + "Exception",
				Cause: fmt.Sprintf(n.format+" (Service: AWSStepFunctions; Status Code: 400; Error Code: %s; Request ID: %s; Proxy: null)",
					subject, n.code, NewUUID())}
		}
	}
	return &failure{Error: ErrNameTaskFailed, Cause: "states:startExecution: " + err.Error()}
}

// describeNested is a closed child's description as the .sync integrations return it: DescribeExecution's
// members with capitalised keys; Input and Output as text (.sync) or as JSON values (.sync:2); the version and
// alias the child was started with, as DescribeExecution answers them (absent when it was started with the state
// machine's own ARN).
func describeNested(r *ExecutionRecord, parsed bool) *jsonvalue.Object {
	payload := func(s string) any {
		if !parsed {
			return s
		}
		if v, err := jsonvalue.DecodeString(s); err == nil {
			return v
		}
		return s
	}
	o := jsonvalue.NewObject(16)
	o.Set("ExecutionArn", r.Arn)
	o.Set("Input", payload(r.Input))
	o.Set("InputDetails", jsonvalue.FromPairs("Included", true))
	o.Set("Name", r.Name)
	if r.Output != nil {
		o.Set("Output", payload(*r.Output))
		o.Set("OutputDetails", jsonvalue.FromPairs("Included", true))
	}
	if r.Error != nil {
		o.Set("Error", *r.Error)
	}
	if r.Cause != nil {
		o.Set("Cause", *r.Cause)
	}
	o.Set("StartDate", nestedDate(r.StartDate))
	if r.StateMachineAliasArn != "" {
		o.Set("StateMachineAliasArn", r.StateMachineAliasArn)
	}
	o.Set("StateMachineArn", r.StateMachineArn)
	if r.StateMachineVersionArn != "" {
		o.Set("StateMachineVersionArn", r.StateMachineVersionArn)
	}
	o.Set("Status", r.Status)
	if r.StopDate != nil {
		o.Set("StopDate", nestedDate(*r.StopDate))
	}
	return o
}

// nestedDate is a date as the nested integration writes it: ISO 8601 in UTC with milliseconds
// ("2022-02-24T19:21:30.313Z"), as a .sync result recorded on AWS shows it.
func nestedDate(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}
