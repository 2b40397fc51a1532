package sfnapi_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/smithy-go"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
	"github.com/transferflow/orchestrator/localaws/stepfunctions"
)

// apiErrorCase is a request the API refuses: call makes it and returns its error, which must be the typed error
// wantErr points to (for errors.As) and, when wantMsg is set, have that message exactly.
type apiErrorCase struct {
	name    string
	call    func() error
	wantErr any
	wantMsg string
}

// checkAPIErrors runs each case as a subtest named by the case.
func checkAPIErrors(t *testing.T, tests []apiErrorCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkAPIError(t, tt.call(), tt.wantErr, tt.wantMsg)
		})
	}
}

// checkAPIError checks that err is the typed error wantErr points to and, when wantMsg is set, that its message is
// wantMsg. A wantErr of *smithy.APIError is the generic API error the SDK reports for an error an operation does
// not model, which must then be a ValidationException.
func checkAPIError(t *testing.T, err error, wantErr any, wantMsg string) {
	t.Helper()
	if !errors.As(err, wantErr) {
		t.Fatalf("error = %v (%T), want %T", err, err, wantErr)
	}
	var generic smithy.APIError
	if _, ok := wantErr.(*smithy.APIError); ok && (!errors.As(err, &generic) || generic.ErrorCode() != "ValidationException") {
		t.Fatalf("err = %v, want ValidationException", err)
	}
	var api interface{ ErrorMessage() string }
	if wantMsg != "" && (!errors.As(err, &api) || api.ErrorMessage() != wantMsg) {
		t.Fatalf("message = %v, want %q", err, wantMsg)
	}
}

// startAndWait starts an execution of smArn, named name unless name is empty, and waits for eng to end it; it
// returns the execution's ARN.
func startAndWait(t *testing.T, c *sfn.Client, eng *sfnengine.Engine, smArn, name string) *string {
	t.Helper()
	in := &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn)}
	if name != "" {
		in.Name = aws.String(name)
	}
	out, err := c.StartExecution(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	waitDone(t, eng, aws.ToString(out.ExecutionArn))
	return out.ExecutionArn
}

// errOf is the error of an SDK call, its output dropped.
func errOf[T any](_ T, err error) error { return err }

// run starts an execution of arn, waits for it and describes it.
func run(t *testing.T, srv *stepfunctions.Server, arn string) *sfn.DescribeExecutionOutput {
	t.Helper()
	return runInput(t, srv, arn, "")
}

// runInput starts an execution of arn with input (none when empty), waits for it and describes it.
func runInput(t *testing.T, srv *stepfunctions.Server, arn, input string) *sfn.DescribeExecutionOutput {
	t.Helper()
	ctx := context.Background()
	c := srv.Client()
	in := &sfn.StartExecutionInput{StateMachineArn: aws.String(arn)}
	if input != "" {
		in.Input = aws.String(input)
	}
	out, err := c.StartExecution(ctx, in)
	if err != nil {
		t.Fatalf("StartExecution %s: %v", arn, err)
	}
	waitDone(t, srv.Engine(), aws.ToString(out.ExecutionArn))
	d, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: out.ExecutionArn})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// paginator is an SDK paginator of pages of type T.
type paginator[T any] interface {
	HasMorePages() bool
	NextPage(context.Context, ...func(*sfn.Options)) (T, error)
}

// eachPage calls got with each page p reads and its number from 0; it fails the test when a page is an error or
// when there is a page numbered above last (the paging does not end).
func eachPage[T any](t *testing.T, p paginator[T], last int, got func(page int, out T)) {
	t.Helper()
	for page := 0; p.HasMorePages(); page++ {
		if page > last {
			t.Fatal("paging does not end")
		}
		out, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got(page, out)
	}
}

// runClocked runs the API on an engine whose manual clock starts at noon on 1 March 2026.
func runClocked(t *testing.T) (*stepfunctions.Server, *sfnengine.ManualClock) {
	t.Helper()
	clock := sfnengine.NewManualClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	return stepfunctions.RunT(t, stepfunctions.WithClock(clock)), clock
}
