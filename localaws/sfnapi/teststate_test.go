package sfnapi_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
	"github.com/transferflow/orchestrator/localaws/stepfunctions"
)

// scriptedLambda answers with its payload under "echo", or fails with a FunctionError when the payload has
// "fail"; it counts its calls.
type scriptedLambda struct{ calls atomic.Int64 }

func (l *scriptedLambda) Invoke(_ context.Context, _ string, payload []byte) ([]byte, error) {
	l.calls.Add(1)
	var p map[string]any
	_ = json.Unmarshal(payload, &p)
	if p["fail"] != nil {
		return nil, &sfnengine.FunctionError{Type: "Boom", Message: "it failed"}
	}
	return json.Marshal(map[string]any{"echo": p})
}

const taskState = `{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke",
  "InputPath":"$.req","Parameters":{"FunctionName":"f","Payload.$":"$"},
  "ResultSelector":{"got.$":"$.Payload.echo"},"ResultPath":"$.res","OutputPath":"$.res",
  "Retry":[{"ErrorEquals":["Boom"],"IntervalSeconds":3,"BackoffRate":2,"MaxAttempts":2}],
  "Catch":[{"ErrorEquals":["States.ALL"],"ResultPath":"$.err","Next":"Handler"}],
  "Next":"After"}`

// TestTestState tests single states through the SDK's TestState: the data flow at DEBUG, the statuses (SUCCEEDED,
// RETRIABLE, CAUGHT_ERROR, FAILED), the next state, mocks, the context, a state of a whole definition, JSONata states
// and variables, and the requests the API refuses.
func TestTestState(t *testing.T) {
	lambda := &scriptedLambda{}
	srv := stepfunctions.RunT(t, stepfunctions.WithEngineOptions(sfnengine.Options{Lambda: lambda}))
	c := srv.Client()
	ctx := context.Background()
	s := aws.String
	tests := []struct {
		name       string
		in         sfn.TestStateInput
		wantStatus types.TestExecutionStatus
		wantOutput string
		wantNext   string
		wantError  string
		wantInsp   *types.InspectionData // compared when set: absent members must be absent; "…" ends a prefix
		wantCalls  int64
		// wantContext: the output is {"ctx": $$}, checked against AWS's recorded TestState context object.
		wantContext bool
		// wantVariables, when set, is inspectionData's variables: the request's and those the state assigned.
		wantVariables string
	}{
		{name: "pass at DEBUG", in: sfn.TestStateInput{
			Definition: s(`{"Type":"Pass","InputPath":"$.a","Parameters":{"x.$":"$.b"},"Result":{"r":1},"ResultPath":"$.out","OutputPath":"$.out","Next":"N"}`),
			Input:      s(`{"a":{"b":2}}`), InspectionLevel: types.InspectionLevelDebug},
			wantStatus: types.TestExecutionStatusSucceeded, wantOutput: `{"r":1}`, wantNext: "N",
			// A Pass with Result has no InputPath and Parameters steps (as AWS records it).
			wantInsp: &types.InspectionData{Input: s(`{"a":{"b":2}}`), Result: s(`{"r":1}`), AfterResultSelector: s(`{"r":1}`),
				AfterResultPath: s(`{"a":{"b":2},"out":{"r":1}}`)}},
		{name: "pass without Result at DEBUG", in: sfn.TestStateInput{
			Definition: s(`{"Type":"Pass","InputPath":"$.a","Parameters":{"x.$":"$.b"},"ResultPath":"$.out","End":true}`),
			Input:      s(`{"a":{"b":2}}`), InspectionLevel: types.InspectionLevelDebug},
			wantStatus: types.TestExecutionStatusSucceeded, wantOutput: `{"a":{"b":2},"out":{"x":2}}`,
			wantInsp: &types.InspectionData{Input: s(`{"a":{"b":2}}`), AfterInputPath: s(`{"b":2}`), AfterParameters: s(`{"x":2}`),
				AfterResultSelector: s(`{"x":2}`), AfterResultPath: s(`{"a":{"b":2},"out":{"x":2}}`)}},
		{name: "task at DEBUG", in: sfn.TestStateInput{Definition: s(taskState), RoleArn: s(role),
			Input: s(`{"req":{"k":"v"}}`), InspectionLevel: types.InspectionLevelTrace},
			wantStatus: types.TestExecutionStatusSucceeded, wantOutput: `{"got":{"k":"v"}}`, wantNext: "After", wantCalls: 1,
			wantInsp: &types.InspectionData{Input: s(`{"req":{"k":"v"}}`), AfterInputPath: s(`{"k":"v"}`),
				AfterParameters: s(`{"FunctionName":"f","Payload":{"k":"v"}}`), AfterResultSelector: s(`{"got":{"k":"v"}}`),
				Result: s(`{"ExecutedVersion":"$LATEST","Payload":{"echo":{"k":"v"}},"SdkHttpMetadata":…`), AfterResultPath: s(`{"req":{"k":"v"},"res":{"got":{"k":"v"}}}`)}},
		{name: "task at INFO has no inspection data", in: sfn.TestStateInput{Definition: s(taskState), RoleArn: s(role), Input: s(`{"req":{}}`)},
			wantStatus: types.TestExecutionStatusSucceeded, wantOutput: `{"got":{}}`, wantNext: "After", wantCalls: 1},
		{name: "a failure a retrier retries is RETRIABLE", in: sfn.TestStateInput{Definition: s(taskState), RoleArn: s(role),
			Input: s(`{"req":{"fail":true}}`), InspectionLevel: types.InspectionLevelDebug,
			StateConfiguration: &types.TestStateConfiguration{RetrierRetryCount: aws.Int32(1)}},
			wantStatus: types.TestExecutionStatusRetriable, wantError: "Boom", wantCalls: 1,
			wantInsp: &types.InspectionData{Input: s(`{"req":{"fail":true}}`), AfterInputPath: s(`{"fail":true}`),
				AfterParameters: s(`{"FunctionName":"f","Payload":{"fail":true}}`),
				ErrorDetails:    &types.InspectionErrorDetails{RetryIndex: aws.Int32(0), RetryBackoffIntervalSeconds: aws.Int32(6)}}},
		{name: "once the retrier is spent the catcher handles it", in: sfn.TestStateInput{Definition: s(taskState), RoleArn: s(role),
			Input: s(`{"req":{"fail":true}}`), InspectionLevel: types.InspectionLevelDebug,
			StateConfiguration: &types.TestStateConfiguration{RetrierRetryCount: aws.Int32(2)}},
			wantStatus: types.TestExecutionStatusCaughtError, wantNext: "Handler", wantError: "Boom", wantCalls: 1,
			wantOutput: `{"req":{"fail":true},"err":{"Error":"Boom","Cause":"{\"errorMessage\":\"it failed\",\"errorType\":\"Boom\"}"}}`,
			wantInsp: &types.InspectionData{Input: s(`{"req":{"fail":true}}`), AfterInputPath: s(`{"fail":true}`),
				AfterParameters: s(`{"FunctionName":"f","Payload":{"fail":true}}`),
				AfterResultPath: s(`{"req":{"fail":true},"err":{"Error":"Boom","Cause":"{\"errorMessage\":\"it failed\",\"errorType\":\"Boom\"}"}}`),
				ErrorDetails:    &types.InspectionErrorDetails{CatchIndex: aws.Int32(0)}}},
		{name: "mocked result, the function not called", in: sfn.TestStateInput{Definition: s(taskState), Input: s(`{"req":{}}`),
			Mock: &types.MockInput{Result: s(`{"Payload":{"echo":"mocked"}}`)}},
			wantStatus: types.TestExecutionStatusSucceeded, wantOutput: `{"got":"mocked"}`, wantNext: "After"},
		{name: "mocked error without a matching handler fails", in: sfn.TestStateInput{
			Definition: s(`{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f"},"End":true}`),
			Mock:       &types.MockInput{ErrorOutput: &types.MockErrorOutput{Error: s("Lambda.ServiceException"), Cause: s("down")}}},
			wantStatus: types.TestExecutionStatusFailed, wantError: "Lambda.ServiceException"},
		{name: "context with a mock", in: sfn.TestStateInput{
			Definition: s(`{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","Payload":{"id.$":"$$.Execution.Id"}},"ResultPath":null,"OutputPath":"$","End":true}`),
			Context:    s(`{"Execution":{"Id":"exec-1"}}`), InspectionLevel: types.InspectionLevelDebug,
			Mock: &types.MockInput{Result: s(`{}`)}},
			wantStatus: types.TestExecutionStatusSucceeded, wantOutput: `{}`,
			wantInsp: &types.InspectionData{Input: s(`{}`), AfterInputPath: s(`{}`), AfterParameters: s(`{"FunctionName":"f","Payload":{"id":"exec-1"}}`),
				Result: s(`{}`), AfterResultSelector: s(`{}`), AfterResultPath: s(`{}`)}},
		{name: "the context object without a context", in: sfn.TestStateInput{
			Definition: s(`{"Type":"Pass","Parameters":{"ctx.$":"$$"},"End":true}`), Input: s(`{"k":1}`)},
			wantStatus: types.TestExecutionStatusSucceeded, wantContext: true},
		{name: "choice", in: sfn.TestStateInput{
			Definition: s(`{"Type":"Choice","Choices":[{"Variable":"$.n","NumericGreaterThan":1,"Next":"Big"}],"Default":"Small"}`),
			Input:      s(`{"n":5}`)},
			wantStatus: types.TestExecutionStatusSucceeded, wantOutput: `{"n":5}`, wantNext: "Big"},
		{name: "fail", in: sfn.TestStateInput{Definition: s(`{"Type":"Fail","Error":"E","Cause":"C"}`)},
			wantStatus: types.TestExecutionStatusFailed, wantError: "E"},
		{name: "a state of a whole definition", in: sfn.TestStateInput{Definition: s(passChoice), StateName: s("Init"),
			Input: s(`{}`)},
			wantStatus: types.TestExecutionStatusSucceeded, wantOutput: `{"r":{"n":1}}`, wantNext: "Check"},
		{name: "map runs its iterations", in: sfn.TestStateInput{
			Definition: s(`{"Type":"Map","ItemsPath":"$.items","ItemSelector":{"v.$":"$$.Map.Item.Value","i.$":"$$.Map.Item.Index"},
			  "ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"MaxConcurrency":1,"ResultPath":"$.all","End":true}`),
			Input: s(`{"items":["a","b"]}`), InspectionLevel: types.InspectionLevelDebug},
			wantStatus: types.TestExecutionStatusSucceeded, wantOutput: `{"items":["a","b"],"all":[{"v":"a","i":0},{"v":"b","i":1}]}`,
			wantInsp: &types.InspectionData{Input: s(`{"items":["a","b"]}`), AfterInputPath: s(`{"items":["a","b"]}`), MaxConcurrency: aws.Int32(1),
				Result: s(`[{"v":"a","i":0},{"v":"b","i":1}]`), AfterResultSelector: s(`[{"v":"a","i":0},{"v":"b","i":1}]`),
				AfterResultPath: s(`{"items":["a","b"],"all":[{"v":"a","i":0},{"v":"b","i":1}]}`)}},
		{name: "parallel runs its branches, a failure caught", in: sfn.TestStateInput{
			Definition: s(`{"Type":"Parallel","Branches":[{"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}},
			  {"StartAt":"B","States":{"B":{"Type":"Fail","Error":"BranchBoom","Cause":"b"}}}],
			  "Catch":[{"ErrorEquals":["BranchBoom"],"Next":"Recover"}],"End":true}`), Input: s(`{}`)},
			wantStatus: types.TestExecutionStatusCaughtError, wantNext: "Recover", wantError: "BranchBoom",
			wantOutput: `{"Error":"BranchBoom","Cause":"b"}`},
		{name: "map with a mock", in: sfn.TestStateInput{
			Definition: s(`{"Type":"Map","ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"ResultPath":"$.all","End":true}`),
			Input:      s(`{"items":[1]}`), Mock: &types.MockInput{Result: s(`[1,2]`)}},
			wantStatus: types.TestExecutionStatusSucceeded, wantOutput: `{"items":[1],"all":[1,2]}`},
		// JSONata states (Output, Arguments, Condition, the catcher's Output) and the Assign of both query languages,
		// with the request's variables visible to the state.
		{name: "JSONata pass", in: sfn.TestStateInput{
			Definition: s(`{"Type":"Pass","QueryLanguage":"JSONata","Output":"{% $states.input.a + $x %}","Assign":{"y":"{% $x * 2 %}"},"Next":"N"}`),
			Input:      s(`{"a":2}`), Variables: s(`{"x":1}`), InspectionLevel: types.InspectionLevelDebug},
			wantStatus: types.TestExecutionStatusSucceeded, wantOutput: `3`, wantNext: "N", wantVariables: `{"x":1,"y":2}`},
		{name: "JSONata task with a mock", in: sfn.TestStateInput{
			Definition: s(`{"Type":"Task","QueryLanguage":"JSONata","Resource":"arn:aws:states:::lambda:invoke",
			  "Arguments":{"FunctionName":"f","Payload":"{% $x %}"},"Output":"{% $states.result.v %}","Assign":{"r":"{% $states.result.v + $x %}"},"End":true}`),
			Mock: &types.MockInput{Result: s(`{"v":5}`)}, Variables: s(`{"x":1}`), InspectionLevel: types.InspectionLevelDebug},
			wantStatus: types.TestExecutionStatusSucceeded, wantOutput: `5`, wantVariables: `{"r":6,"x":1}`},
		{name: "JSONata task calls with its Arguments", in: sfn.TestStateInput{
			Definition: s(`{"Type":"Task","QueryLanguage":"JSONata","Resource":"arn:aws:states:::lambda:invoke",
			  "Arguments":{"FunctionName":"f","Payload":{"n":"{% $x %}"}},"Output":"{% $states.result.Payload.echo %}","End":true}`),
			RoleArn: s(role), Variables: s(`{"x":1}`), InspectionLevel: types.InspectionLevelDebug},
			wantStatus: types.TestExecutionStatusSucceeded, wantOutput: `{"n":1}`, wantVariables: `{"x":1}`, wantCalls: 1},
		{name: "JSONata task caught", in: sfn.TestStateInput{
			Definition: s(`{"Type":"Task","QueryLanguage":"JSONata","Resource":"arn:aws:states:::lambda:invoke",
			  "Arguments":{"FunctionName":"f"},"Catch":[{"ErrorEquals":["States.ALL"],"Next":"H",
			  "Output":"{% $states.errorOutput.Error %}","Assign":{"failed":true}}],"End":true}`),
			Mock:            &types.MockInput{ErrorOutput: &types.MockErrorOutput{Error: s("Boom"), Cause: s("c")}},
			InspectionLevel: types.InspectionLevelDebug},
			wantStatus: types.TestExecutionStatusCaughtError, wantOutput: `"Boom"`, wantNext: "H", wantVariables: `{"failed":true}`,
			wantError: "Boom"},
		{name: "JSONata choice", in: sfn.TestStateInput{
			Definition: s(`{"Type":"Choice","QueryLanguage":"JSONata","Choices":[{"Condition":"{% $x > 0 %}","Next":"Pos",
			  "Assign":{"sign":"+"}}],"Default":"Neg"}`),
			Input: s(`{}`), Variables: s(`{"x":1}`), InspectionLevel: types.InspectionLevelDebug},
			wantStatus: types.TestExecutionStatusSucceeded, wantOutput: `{}`, wantNext: "Pos", wantVariables: `{"sign":"+","x":1}`},
		{name: "JSONPath pass reads and assigns variables", in: sfn.TestStateInput{
			Definition: s(`{"Type":"Pass","Parameters":{"w.$":"$x","a.$":"$.a"},"Assign":{"z.$":"$.a"},"End":true}`),
			Input:      s(`{"a":2}`), Variables: s(`{"x":7}`), InspectionLevel: types.InspectionLevelDebug},
			wantStatus: types.TestExecutionStatusSucceeded, wantOutput: `{"a":2,"w":7}`, wantVariables: `{"x":7,"z":2}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := lambda.calls.Load()
			out, err := c.TestState(ctx, &tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantContext {
				checkTestContext(t, aws.ToString(out.Output))
				tc.wantOutput = aws.ToString(out.Output)
			}
			checkTestStateAnswer(t, out, tc.wantStatus, tc.wantOutput, tc.wantNext, tc.wantError)
			if n := lambda.calls.Load() - before; n != tc.wantCalls {
				t.Errorf("%d calls of the function, want %d", n, tc.wantCalls)
			}
			if tc.in.InspectionLevel == "" && out.InspectionData != nil {
				t.Errorf("inspectionData at INFO: %+v", out.InspectionData)
			}
			if tc.wantVariables != "" && (out.InspectionData == nil || aws.ToString(out.InspectionData.Variables) != tc.wantVariables) {
				var got string
				if out.InspectionData != nil {
					got = aws.ToString(out.InspectionData.Variables)
				}
				t.Errorf("inspectionData.variables %s, want %s", got, tc.wantVariables)
			}
			if w := tc.wantInsp; w != nil {
				got := out.InspectionData
				if got == nil {
					t.Fatal("no inspectionData")
				}
				for _, f := range []struct {
					name      string
					got, want *string
				}{{"input", got.Input, w.Input}, {"afterInputPath", got.AfterInputPath, w.AfterInputPath},
					{"afterParameters", got.AfterParameters, w.AfterParameters}, {"result", got.Result, w.Result},
					{"afterResultSelector", got.AfterResultSelector, w.AfterResultSelector},
					{"afterResultPath", got.AfterResultPath, w.AfterResultPath}} {
					got, want := aws.ToString(f.got), aws.ToString(f.want)
					if prefix, ok := strings.CutSuffix(want, "…"); ok && strings.HasPrefix(got, prefix) {
						continue
					}
					if (f.got == nil) != (f.want == nil) || got != want {
						t.Errorf("%s = %v, want %v", f.name, got, want)
					}
				}
				if aws.ToInt32(got.MaxConcurrency) != aws.ToInt32(w.MaxConcurrency) || (got.MaxConcurrency == nil) != (w.MaxConcurrency == nil) {
					t.Errorf("maxConcurrency = %v, want %v", got.MaxConcurrency, w.MaxConcurrency)
				}
				if w.ErrorDetails != nil {
					g := got.ErrorDetails
					if g == nil || aws.ToInt32(g.RetryIndex) != aws.ToInt32(w.ErrorDetails.RetryIndex) ||
						aws.ToInt32(g.CatchIndex) != aws.ToInt32(w.ErrorDetails.CatchIndex) ||
						aws.ToInt32(g.RetryBackoffIntervalSeconds) != aws.ToInt32(w.ErrorDetails.RetryBackoffIntervalSeconds) ||
						(g.CatchIndex == nil) != (w.ErrorDetails.CatchIndex == nil) || (g.RetryIndex == nil) != (w.ErrorDetails.RetryIndex == nil) {
						t.Errorf("errorDetails = %+v, want %+v", g, w.ErrorDetails)
					}
				}
			}
		})
	}
}

// TestTestStateErrors: requests TestState refuses, with typed errors.
func TestTestStateErrors(t *testing.T) {
	srv := stepfunctions.RunT(t)
	c := srv.Client()
	ctx := context.Background()
	s := aws.String
	tests := []struct {
		name    string
		in      sfn.TestStateInput
		wantErr any
		wantMsg string
	}{
		{"invalid state", sfn.TestStateInput{Definition: s(`{"Type":"Pass","Bogus":1,"End":true}`)}, new(*types.InvalidDefinition), ""},
		{"not JSON", sfn.TestStateInput{Definition: s(`{`)}, new(*types.InvalidDefinition), ""},
		{"input not JSON", sfn.TestStateInput{Definition: s(`{"Type":"Pass","End":true}`), Input: s(`{`)}, new(*types.InvalidExecutionInput), ""},
		{"role not an ARN", sfn.TestStateInput{Definition: s(`{"Type":"Pass","End":true}`), RoleArn: s("role")}, new(*types.InvalidArn),
			"Invalid Arn: 'Invalid ARN prefix: role'"},
		{"mock on a Pass state", sfn.TestStateInput{Definition: s(`{"Type":"Pass","End":true}`), Mock: &types.MockInput{Result: s(`{}`)}},
			new(*types.ValidationException), "a mock can only be specified for Task, Map, or Parallel states"},
		{"context without a mock", sfn.TestStateInput{Definition: s(`{"Type":"Pass","End":true}`), Context: s(`{}`)},
			new(*types.ValidationException), "a context may only be specified with a mock"},
		{"bad mock field validation mode", sfn.TestStateInput{Definition: s(taskState), Mock: &types.MockInput{Result: s(`{}`), FieldValidationMode: "LOOSE"}},
			new(*types.ValidationException), "1 validation error detected: Value 'LOOSE' at 'mock.fieldValidationMode' failed to satisfy constraint: Member must satisfy enum value set: [STRICT, PRESENT, NONE]"},
		{"task without a role or a mock", sfn.TestStateInput{Definition: s(taskState)},
			new(*types.ValidationException), "RoleArn must be specified when testing a Task state"},
		{"unknown state name", sfn.TestStateInput{Definition: s(passChoice), StateName: s("Nope")},
			new(*types.ValidationException), `the definition has no state "Nope"`},
		{"bad inspection level", sfn.TestStateInput{Definition: s(`{"Type":"Pass","End":true}`), InspectionLevel: "LOUD"},
			new(*types.ValidationException), "1 validation error detected: Value 'LOUD' at 'inspectionLevel' failed to satisfy constraint: Member must satisfy enum value set: [INFO, DEBUG, TRACE]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.TestState(ctx, &tc.in)
			checkAPIError(t, err, tc.wantErr, tc.wantMsg)
		})
	}
}

// checkTestStateAnswer checks TestState's status, output, next state and error.
func checkTestStateAnswer(t *testing.T, out *sfn.TestStateOutput, status types.TestExecutionStatus, output, next, errorName string) {
	t.Helper()
	if out.Status != status || aws.ToString(out.Output) != output || aws.ToString(out.NextState) != next || aws.ToString(out.Error) != errorName {
		t.Fatalf("status %s, output %s, next %q, error %q (cause %q); want %s, %s, %q, %q", out.Status, aws.ToString(out.Output),
			aws.ToString(out.NextState), aws.ToString(out.Error), aws.ToString(out.Cause), status, output, next, errorName)
	}
}

// checkTestContext checks the context object a state tested alone sees, against AWS's recorded ones: an Express
// execution's ARN (express:<state machine>:<name>) without RedriveCount, a null RoleArn without a role, and the state
// named StateName.
func checkTestContext(t *testing.T, output string) {
	t.Helper()
	var out struct {
		Ctx struct {
			Execution    map[string]any
			StateMachine map[string]any
			State        map[string]any
		}
	}
	if err := json.Unmarshal([]byte(output), &out); err != nil {
		t.Fatalf("output %s: %v", output, err)
	}
	exec, sm := out.Ctx.Execution, out.Ctx.StateMachine
	smName, _ := sm["Name"].(string)
	name, _ := exec["Name"].(string)
	if smName == "" || name == "" || exec["Id"] != "arn:aws:states:us-east-1:123456789012:express:"+smName+":"+name ||
		sm["Id"] != "arn:aws:states:us-east-1:123456789012:stateMachine:"+smName {
		t.Errorf("context = %s", output)
	}
	if _, ok := exec["RedriveCount"]; ok {
		t.Errorf("Execution.RedriveCount in %s", output)
	}
	if role, ok := exec["RoleArn"]; !ok || role != nil {
		t.Errorf("Execution.RoleArn = %v, want null", role)
	}
	if out.Ctx.State["Name"] != "StateName" {
		t.Errorf("State.Name = %v, want StateName", out.Ctx.State["Name"])
	}
}
