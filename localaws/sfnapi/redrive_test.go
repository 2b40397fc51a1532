package sfnapi_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
	"github.com/transferflow/orchestrator/localaws/stepfunctions"
)

// brokenLambda fails with a function error until fixed.
type brokenLambda struct{ fixed atomic.Bool }

func (l *brokenLambda) Invoke(_ context.Context, name string, _ []byte) ([]byte, error) {
	if !l.fixed.Load() {
		return nil, &sfnengine.FunctionError{Type: "AccountLocked", Message: name + " is locked"}
	}
	return []byte(`{"done":true}`), nil
}

const debitMachine = `{"StartAt":"Validate","States":{
  "Validate":{"Type":"Pass","Result":"ok","ResultPath":"$.validated","Next":"Debit"},
  "Debit":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"debit","Payload.$":"$"},
    "ResultSelector":{"done.$":"$.Payload.done"},"ResultPath":"$.debit","End":true}}}`

// failedDebit is a local Step Functions whose debit Lambda is broken, with the debits state machine created and
// its execution tr-1 failed on the debit, ready to be redriven once the Lambda is fixed.
type failedDebit struct {
	lambda *brokenLambda
	srv    *stepfunctions.Server
	c      *sfn.Client
	smArn  string
	arn    *string // execution tr-1's ARN
}

// runFailedDebit starts the failedDebit fixture, stopped when t ends.
func runFailedDebit(t *testing.T) failedDebit {
	t.Helper()
	f := failedDebit{lambda: &brokenLambda{}}
	f.srv = stepfunctions.RunT(t, stepfunctions.WithEngineOptions(sfnengine.Options{Lambda: f.lambda}))
	f.c = f.srv.Client()
	f.smArn = create(t, f.c, "debits", debitMachine)
	f.arn = startAndWait(t, f.c, f.srv.Engine(), f.smArn, "tr-1")
	return f
}

// TestRedriveExecutionThroughTheSDK: a failed execution is REDRIVABLE in DescribeExecution; RedriveExecution
// resumes it; a clientToken repeated answers the same redriveDate without a second redrive; DescribeExecution,
// ListExecutions (redriveFilter) and GetExecutionHistory (ExecutionRedriven) show the redrive; errors are typed.
func TestRedriveExecutionThroughTheSDK(t *testing.T) {
	f := runFailedDebit(t)
	lambda, srv, c, smArn, arn := f.lambda, f.srv, f.c, f.smArn, f.arn
	ctx := context.Background()
	other := startAndWait(t, c, srv.Engine(), smArn, "tr-2")
	d, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: arn})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != types.ExecutionStatusFailed || d.RedriveStatus != types.ExecutionRedriveStatusRedrivable ||
		d.RedriveStatusReason != nil || aws.ToInt32(d.RedriveCount) != 0 || d.RedriveDate != nil {
		t.Fatalf("failed execution: %s, redrive %s %v, count %d, date %v", d.Status, d.RedriveStatus,
			aws.ToString(d.RedriveStatusReason), aws.ToInt32(d.RedriveCount), d.RedriveDate)
	}

	lambda.fixed.Store(true)
	r1, err := c.RedriveExecution(ctx, &sfn.RedriveExecutionInput{ExecutionArn: arn, ClientToken: aws.String("retry-1")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Engine().Wait(ctx, aws.ToString(arn)); err != nil {
		t.Fatal(err)
	}
	r2, err := c.RedriveExecution(ctx, &sfn.RedriveExecutionInput{ExecutionArn: arn, ClientToken: aws.String("retry-1")})
	if err != nil {
		t.Fatalf("the same clientToken again: %v", err)
	}
	if !aws.ToTime(r1.RedriveDate).Equal(aws.ToTime(r2.RedriveDate)) {
		t.Fatalf("redriveDate %v then %v for one clientToken", r1.RedriveDate, r2.RedriveDate)
	}
	_, err = c.RedriveExecution(ctx, &sfn.RedriveExecutionInput{ExecutionArn: arn}) // the SDK makes a new token
	var nr *types.ExecutionNotRedrivable
	if !errors.As(err, &nr) || aws.ToString(nr.Message) != "Execution is SUCCEEDED and cannot be redriven" {
		t.Fatalf("redrive of a succeeded execution: %v, want ExecutionNotRedrivable", err)
	}

	d, err = c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: arn})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != types.ExecutionStatusSucceeded || aws.ToString(d.Output) != `{"validated":"ok","debit":{"done":true}}` ||
		aws.ToInt32(d.RedriveCount) != 1 || !aws.ToTime(d.RedriveDate).Equal(aws.ToTime(r1.RedriveDate)) ||
		d.RedriveStatus != types.ExecutionRedriveStatusNotRedrivable ||
		aws.ToString(d.RedriveStatusReason) != "Execution is SUCCEEDED and cannot be redriven" {
		t.Fatalf("redriven execution: %s %s, count %d, date %v, status %s (%s)", d.Status, aws.ToString(d.Output),
			aws.ToInt32(d.RedriveCount), d.RedriveDate, d.RedriveStatus, aws.ToString(d.RedriveStatusReason))
	}

	h, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: arn, MaxResults: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var redriven []types.HistoryEvent
	for _, e := range h.Events {
		if e.Type == types.HistoryEventTypeExecutionRedriven {
			redriven = append(redriven, e)
		}
	}
	if len(redriven) != 1 || redriven[0].ExecutionRedrivenEventDetails == nil ||
		aws.ToInt32(redriven[0].ExecutionRedrivenEventDetails.RedriveCount) != 1 ||
		h.Events[redriven[0].Id-2].Type != types.HistoryEventTypeExecutionFailed {
		t.Fatalf("ExecutionRedriven events: %+v", redriven)
	}

	for _, tc := range []struct {
		filter types.ExecutionRedriveFilter
		want   string
	}{{types.ExecutionRedriveFilterRedriven, aws.ToString(arn)}, {types.ExecutionRedriveFilterNotRedriven, aws.ToString(other)}} {
		l, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(smArn), RedriveFilter: tc.filter})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Executions) != 1 || aws.ToString(l.Executions[0].ExecutionArn) != tc.want {
			t.Fatalf("redriveFilter %s: %+v", tc.filter, l.Executions)
		}
		e := l.Executions[0]
		if tc.filter == types.ExecutionRedriveFilterRedriven && (aws.ToInt32(e.RedriveCount) != 1 || e.RedriveDate == nil) {
			t.Fatalf("redriven item: count %d, date %v", aws.ToInt32(e.RedriveCount), e.RedriveDate)
		}
	}

	checkAPIErrors(t, []apiErrorCase{
		{"unknown execution", func() error {
			return errOf(c.RedriveExecution(ctx, &sfn.RedriveExecutionInput{ExecutionArn: aws.String("arn:aws:states:us-east-1:123456789012:execution:debits:nope")}))
		}, new(*types.ExecutionDoesNotExist), ""},
		{"bad ARN", func() error {
			return errOf(c.RedriveExecution(ctx, &sfn.RedriveExecutionInput{ExecutionArn: aws.String("nope")}))
		}, new(*types.InvalidArn), ""},
		{"a 65-character clientToken", func() error {
			return errOf(c.RedriveExecution(ctx, &sfn.RedriveExecutionInput{ExecutionArn: other, ClientToken: aws.String(string(make([]byte, 65)))}))
		}, new(*types.ValidationException), ""},
	})
}

// TestRedriveWhileRunningIsRefused: a running execution (a first run or a redriven one) is NOT_REDRIVABLE.
func TestRedriveWhileRunningIsRefused(t *testing.T) {
	srv, _ := runClocked(t)
	c := srv.Client()
	ctx := context.Background()
	smArn := create(t, c, "waits", waitForever)
	out, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.RedriveExecution(ctx, &sfn.RedriveExecutionInput{ExecutionArn: out.ExecutionArn})
	var nr *types.ExecutionNotRedrivable
	if !errors.As(err, &nr) || aws.ToString(nr.Message) != "Execution is RUNNING and cannot be redriven" {
		t.Fatalf("redrive of a running execution: %v", err)
	}
	d, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: out.ExecutionArn})
	if err != nil {
		t.Fatal(err)
	}
	if d.RedriveStatus != types.ExecutionRedriveStatusNotRedrivable || aws.ToString(d.RedriveStatusReason) != "Execution is RUNNING and cannot be redriven" {
		t.Fatalf("running: %s (%s)", d.RedriveStatus, aws.ToString(d.RedriveStatusReason))
	}
	if _, err := c.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: out.ExecutionArn}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RedriveExecution(ctx, &sfn.RedriveExecutionInput{ExecutionArn: out.ExecutionArn}); err != nil {
		t.Fatalf("redrive of an aborted execution: %v", err)
	}
	_, err = c.RedriveExecution(ctx, &sfn.RedriveExecutionInput{ExecutionArn: out.ExecutionArn})
	if !errors.As(err, &nr) || aws.ToString(nr.Message) != "Execution is RUNNING and cannot be redriven" {
		t.Fatalf("second redrive while redriven: %v", err)
	}
	l, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(smArn), StatusFilter: types.ExecutionStatusRunning})
	if err != nil || len(l.Executions) != 1 || aws.ToInt32(l.Executions[0].RedriveCount) != 1 {
		t.Fatalf("running after the redrive: %v %+v", err, l)
	}
}

// TestRedriveAfterUpdateStateMachine: an execution that failed, redriven after UpdateStateMachine replaced the
// definition, resumes on the definition it started with (its debit Lambda called, as AWS documents that a redrive
// uses the same definition), and DescribeStateMachineForExecution answers that definition before and after the
// redrive, while an execution started after the update describes the new one.
func TestRedriveAfterUpdateStateMachine(t *testing.T) {
	f := runFailedDebit(t)
	lambda, srv, c, smArn, arn := f.lambda, f.srv, f.c, f.smArn, f.arn
	ctx := context.Background()
	const newDefinition = `{"StartAt":"Debit","States":{"Debit":{"Type":"Pass","Result":"new","End":true}}}`
	u, err := c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(smArn),
		Definition: aws.String(newDefinition)})
	if err != nil {
		t.Fatal(err)
	}
	later := startAndWait(t, c, srv.Engine(), smArn, "tr-2")
	describe := func(arn *string, want string) {
		t.Helper()
		d, err := c.DescribeStateMachineForExecution(ctx, &sfn.DescribeStateMachineForExecutionInput{ExecutionArn: arn})
		if err != nil {
			t.Fatal(err)
		}
		if aws.ToString(d.Definition) != want {
			t.Fatalf("DescribeStateMachineForExecution(%s): %s, want %s", aws.ToString(arn), aws.ToString(d.Definition), want)
		}
		if (want == newDefinition) != (aws.ToString(d.RevisionId) == aws.ToString(u.RevisionId)) {
			t.Fatalf("DescribeStateMachineForExecution(%s): revision %q (the update's: %q)", aws.ToString(arn),
				aws.ToString(d.RevisionId), aws.ToString(u.RevisionId))
		}
	}
	describe(arn, debitMachine)
	describe(later, newDefinition)

	d, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: arn})
	if err != nil {
		t.Fatal(err)
	}
	if d.RedriveStatus != types.ExecutionRedriveStatusRedrivable {
		t.Fatalf("after the update: %s %s", d.RedriveStatus, aws.ToString(d.RedriveStatusReason))
	}
	lambda.fixed.Store(true)
	if _, err := c.RedriveExecution(ctx, &sfn.RedriveExecutionInput{ExecutionArn: arn}); err != nil {
		t.Fatal(err)
	}
	waitDone(t, srv.Engine(), aws.ToString(arn))
	d, err = c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: arn})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != types.ExecutionStatusSucceeded || aws.ToString(d.Output) != `{"validated":"ok","debit":{"done":true}}` {
		t.Fatalf("after the redrive: %s %s", d.Status, aws.ToString(d.Output))
	}
	describe(arn, debitMachine)
}
