package stepfunctions_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
	"github.com/transferflow/orchestrator/localaws/stepfunctions"
)

// lambdaFunc is an sfnengine.LambdaInvoker made of a function.
type lambdaFunc func(ctx context.Context, name string, payload []byte) ([]byte, error)

func (f lambdaFunc) Invoke(ctx context.Context, name string, payload []byte) ([]byte, error) {
	return f(ctx, name, payload)
}

// TestUnregisteredLambdasGoToTheEngineOptions: a function no WithLambda registers is invoked through the engine
// options' Lambda; a func(context.Context, []byte) ([]byte, error) handler gets and returns raw JSON.
func TestUnregisteredLambdasGoToTheEngineOptions(t *testing.T) {
	raw := func(_ context.Context, payload []byte) ([]byte, error) {
		return []byte(`{"raw":` + string(payload) + `}`), nil
	}
	other := lambdaFunc(func(_ context.Context, name string, _ []byte) ([]byte, error) {
		return []byte(`{"invoked":"` + name + `"}`), nil
	})
	srv := stepfunctions.RunT(t, stepfunctions.WithLambda("Raw", raw), stepfunctions.WithEngineOptions(sfnengine.Options{Lambda: other}))
	ctx := t.Context()
	c := srv.Client()
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("Both"),
		RoleArn: aws.String("arn:aws:iam::123456789012:role/Both"), Definition: aws.String(`{"StartAt": "Raw", "States": {
  "Raw": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"FunctionName": "Raw", "Payload": [1]},
    "ResultSelector": {"p.$": "$.Payload"}, "ResultPath": "$.raw", "Next": "Other"},
  "Other": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"FunctionName": "Other"},
    "ResultSelector": {"p.$": "$.Payload"}, "ResultPath": "$.other", "End": true}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	x, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := srv.Engine().Wait(ctx, aws.ToString(x.ExecutionArn))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"raw":{"p":{"raw":[1]}},"other":{"p":{"invoked":"Other"}}}`; aws.ToString(rec.Output) != want {
		t.Errorf("status %s, output %s, error %s: %s; want output %s", rec.Status, aws.ToString(rec.Output), aws.ToString(rec.Error),
			aws.ToString(rec.Cause), want)
	}
}

// TestWithLambdaRefusesWhatIsNotAFunction: a handler lambda.Start could never call panics at once, naming the function.
func TestWithLambdaRefusesWhatIsNotAFunction(t *testing.T) {
	for _, h := range []any{nil, "Greet", struct{}{}} {
		func() {
			defer func() {
				if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), `WithLambda("Greet")`) {
					t.Errorf("WithLambda with a %T handler: recovered %v, want a panic naming the function", h, p)
				}
			}()
			stepfunctions.WithLambda("Greet", h)
		}()
	}
}
