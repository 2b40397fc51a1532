package stepfunctions_test

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

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

// With a manual clock a Wait state of an hour passes when the clock is advanced, at once.
func ExampleWithClock() {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := sfnengine.NewManualClock(start)
	srv, err := stepfunctions.Run(stepfunctions.WithClock(clock))
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	ctx := context.Background()
	c := srv.Client()
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
		Name:       aws.String("Patient"),
		RoleArn:    aws.String("arn:aws:iam::123456789012:role/Patient"),
		Definition: aws.String(`{"StartAt": "Hour", "States": {"Hour": {"Type": "Wait", "Seconds": 3600, "End": true}}}`),
	})
	if err != nil {
		panic(err)
	}
	x, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn})
	if err != nil {
		panic(err)
	}
	// Advance only once the Wait state has set its timer.
	for n, grew := clock.Waiters(); n == 0; n, grew = clock.Waiters() {
		<-grew
	}
	clock.Advance(time.Hour)
	rec, err := srv.Engine().Wait(ctx, aws.ToString(x.ExecutionArn))
	if err != nil {
		panic(err)
	}
	fmt.Println(rec.Status, rec.StopDate.Sub(rec.StartDate))
	// Output: SUCCEEDED 1h0m0s
}
