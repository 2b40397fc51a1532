package stepfunctions_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

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

// TestIdleActivityPollAnswersEmpty: on a Server started by RunT, a GetActivityTask with no task to hand out is held
// for the engine's ActivityPoll and answered with an empty task (no token), as AWS answers after its 60 s.
func TestIdleActivityPollAnswersEmpty(t *testing.T) {
	const hold = 200 * time.Millisecond
	srv := stepfunctions.RunT(t, stepfunctions.WithEngineOptions(sfnengine.Options{ActivityPoll: hold}))
	ctx := t.Context()
	c := srv.Client()
	act, err := c.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("idle")})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, err := c.GetActivityTask(ctx, &sfn.GetActivityTaskInput{ActivityArn: act.ActivityArn})
	if err != nil {
		t.Fatalf("GetActivityTask on an idle activity: %v, want an empty task", err)
	}
	if out.TaskToken != nil || out.Input != nil {
		t.Fatalf("GetActivityTask on an idle activity: token %q, want an empty task", aws.ToString(out.TaskToken))
	}
	// Timers never fire early: an answer before the hold means the poll was not held.
	if waited := time.Since(start); waited < hold {
		t.Fatalf("the empty task came after %s, before the %s hold", waited, hold)
	}
}
