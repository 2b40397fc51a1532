package stepfunctions_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
	"github.com/transferflow/orchestrator/localaws/stepfunctions"
)

// A Task state calls a Go Lambda handler registered with WithLambda; the state machine is created and run through
// the aws-sdk-go-v2 sfn client.
func ExampleRun() {
	greet := func(ctx context.Context, in struct{ Name string }) (string, error) { return "Hello, " + in.Name, nil }
	srv, err := stepfunctions.Run(stepfunctions.WithLambda("Greet", greet))
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	ctx := context.Background()
	c := srv.Client()
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
		Name:    aws.String("Greeter"),
		RoleArn: aws.String("arn:aws:iam::123456789012:role/Greeter"),
		Definition: aws.String(`{"StartAt": "Greet", "States": {"Greet": {"Type": "Task",
			"Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"FunctionName": "Greet", "Payload.$": "$"},
			"OutputPath": "$.Payload", "End": true}}}`),
	})
	if err != nil {
		panic(err)
	}
	x, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Input: aws.String(`{"Name":"Ada"}`)})
	if err != nil {
		panic(err)
	}
	if _, err := srv.Engine().Wait(ctx, aws.ToString(x.ExecutionArn)); err != nil {
		panic(err)
	}
	out, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: x.ExecutionArn})
	if err != nil {
		panic(err)
	}
	fmt.Println(out.Status, aws.ToString(out.Output))
	// Output: SUCCEEDED "Hello, Ada"
}

// With a manual clock a Wait state of an hour passes when the clock is advanced, at once. The state machine is
// created and run through the engine itself here, without the API.
func ExampleWithClock() {
	clock := sfnengine.NewManualClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	srv := stepfunctions.New(stepfunctions.WithClock(clock))
	defer srv.Close()

	ctx := context.Background()
	eng := srv.Engine()
	sm, err := eng.CreateStateMachine(ctx, sfnengine.CreateInput{Name: "Patient",
		Definition: `{"StartAt": "Hour", "States": {"Hour": {"Type": "Wait", "Seconds": 3600, "End": true}}}`})
	if err != nil {
		panic(err)
	}
	x, err := eng.StartExecution(ctx, sfnengine.StartInput{StateMachineArn: sm.Arn})
	if err != nil {
		panic(err)
	}
	// Advance only once the Wait state has set its timer.
	for n, grew := clock.Waiters(); n == 0; n, grew = clock.Waiters() {
		<-grew
	}
	clock.Advance(time.Hour)
	rec, err := eng.Wait(ctx, x.Arn)
	if err != nil {
		panic(err)
	}
	fmt.Println(rec.Status, rec.StopDate.Sub(rec.StartDate))
	// Output: SUCCEEDED 1h0m0s
}

// InvalidAmount is the charge function's error for an amount that is not positive; the state machine catches it by
// this name.
type InvalidAmount struct{ Amount int }

func (e *InvalidAmount) Error() string { return fmt.Sprintf("invalid amount %d", e.Amount) }

// charge approves amounts up to 100.
func charge(_ context.Context, in struct{ Amount int }) (map[string]bool, error) {
	if in.Amount <= 0 {
		return nil, &InvalidAmount{Amount: in.Amount}
	}
	return map[string]bool{"approved": in.Amount <= 100}, nil
}

// paymentDefinition calls charge (by ARN), chooses on its answer and catches its InvalidAmount.
const paymentDefinition = `{
  "StartAt": "Charge",
  "States": {
    "Charge": {
      "Type": "Task",
      "Resource": "arn:aws:states:::lambda:invoke",
      "Parameters": {"FunctionName": "arn:aws:lambda:us-east-1:123456789012:function:Charge", "Payload.$": "$"},
      "ResultSelector": {"approved.$": "$.Payload.approved"},
      "ResultPath": "$.charge",
      "Catch": [{"ErrorEquals": ["InvalidAmount"], "ResultPath": "$.error", "Next": "Rejected"}],
      "Next": "Approved?"
    },
    "Approved?": {
      "Type": "Choice",
      "Choices": [{"Variable": "$.charge.approved", "BooleanEquals": true, "Next": "Approved"}],
      "Default": "Declined"
    },
    "Approved": {"Type": "Pass", "Parameters": {"status": "approved", "amount.$": "$.Amount"}, "End": true},
    "Declined": {"Type": "Fail", "Error": "Declined", "Cause": "over the limit"},
    "Rejected": {"Type": "Pass", "Parameters": {"status": "rejected", "error.$": "$.error.Error"}, "End": true}
  }
}`

// TestPaymentStateMachine tests a state machine as a user of the package would: a Go Lambda handler, the state
// machine created and run through the aws-sdk-go-v2 client, its output and its history checked.
func TestPaymentStateMachine(t *testing.T) {
	srv := stepfunctions.RunT(t, stepfunctions.WithLambda("Charge", charge))
	ctx := t.Context()
	c := srv.Client()
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("Payment"),
		RoleArn: aws.String("arn:aws:iam::123456789012:role/Payment"), Definition: aws.String(paymentDefinition)})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, input string
		status      types.ExecutionStatus
		output      string // when it succeeds
		error       string // when it fails
		entered     []string
		taskError   string // the TaskFailed event's error, if any
	}{
		{name: "approved", input: `{"Amount":50}`, status: types.ExecutionStatusSucceeded,
			output: `{"status":"approved","amount":50}`, entered: []string{"Charge", "Approved?", "Approved"}},
		{name: "declined", input: `{"Amount":500}`, status: types.ExecutionStatusFailed,
			error: "Declined", entered: []string{"Charge", "Approved?", "Declined"}},
		{name: "caught", input: `{"Amount":-5}`, status: types.ExecutionStatusSucceeded,
			output: `{"status":"rejected","error":"InvalidAmount"}`, entered: []string{"Charge", "Rejected"}, taskError: "InvalidAmount"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Name: aws.String(tt.name),
				Input: aws.String(tt.input)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := srv.Engine().Wait(ctx, aws.ToString(x.ExecutionArn)); err != nil {
				t.Fatal(err)
			}
			d, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: x.ExecutionArn})
			if err != nil {
				t.Fatal(err)
			}
			if d.Status != tt.status || aws.ToString(d.Output) != tt.output || aws.ToString(d.Error) != tt.error {
				t.Errorf("status %s, output %s, error %s; want %s, %s, %s", d.Status, aws.ToString(d.Output), aws.ToString(d.Error),
					tt.status, tt.output, tt.error)
			}
			h, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: x.ExecutionArn})
			if err != nil {
				t.Fatal(err)
			}
			var entered []string
			var taskError string
			for _, e := range h.Events {
				if e.StateEnteredEventDetails != nil {
					entered = append(entered, aws.ToString(e.StateEnteredEventDetails.Name))
				}
				if e.Type == types.HistoryEventTypeLambdaFunctionFailed || e.Type == types.HistoryEventTypeTaskFailed {
					taskError = aws.ToString(e.TaskFailedEventDetails.Error)
				}
			}
			if !slices.Equal(entered, tt.entered) || taskError != tt.taskError {
				t.Errorf("states entered %v, task error %q; want %v, %q", entered, taskError, tt.entered, tt.taskError)
			}
		})
	}
}
