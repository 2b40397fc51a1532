package stepfunctions_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
	"github.com/transferflow/orchestrator/localaws/sfnmock"
	"github.com/transferflow/orchestrator/localaws/stepfunctions"
)

// awsExample is AWS's documentation example of Step Functions Local's mocked service integrations (its README).
const awsExample = "../sfnmock/testdata/aws-example"

const mockRole = "arn:aws:iam::123456789012:role/Mocked"

// recordingSQS is an sfnengine.SQSAPI that records the message bodies it is sent.
type recordingSQS struct {
	mu     sync.Mutex
	bodies []string
}

func (q *recordingSQS) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.bodies = append(q.bodies, aws.ToString(in.MessageBody))
	return &sqs.SendMessageOutput{MessageId: aws.String("real-message"), MD5OfMessageBody: aws.String("real-md5")}, nil
}

func (q *recordingSQS) sent() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.bodies
	q.bodies = nil
	return out
}

// readFile returns the file's text, failing the test when it cannot be read.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// loadMocks loads a mock configuration file, failing the test when it is refused.
func loadMocks(t *testing.T, path string) *sfnmock.Config {
	t.Helper()
	c, err := sfnmock.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// createMachine creates a state machine and returns its ARN.
func createMachine(t *testing.T, c *sfn.Client, name, definition string, typ types.StateMachineType) string {
	t.Helper()
	out, err := c.CreateStateMachine(t.Context(), &sfn.CreateStateMachineInput{Name: aws.String(name), RoleArn: aws.String(mockRole),
		Definition: aws.String(definition), Type: typ})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.StateMachineArn)
}

// advanceWhileRunning moves the manual clock forward a second at a time whenever at least pending timers wait
// (retry back-offs, plus the execution's own timeout when it has one), until the test ends.
func advanceWhileRunning(t *testing.T, clock *sfnengine.ManualClock, pending int) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			if clock.AwaitWaiters(pending, 10*time.Millisecond) >= pending {
				clock.Advance(time.Second)
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
}

// run starts an execution through the API, waits until it closes and returns its record and its history.
func run(t *testing.T, srv *stepfunctions.Server, arn, name, input string) (*sfnengine.ExecutionRecord, []types.HistoryEvent) {
	t.Helper()
	ctx := t.Context()
	c := srv.Client()
	in := &sfn.StartExecutionInput{StateMachineArn: aws.String(arn), Input: aws.String(input)}
	if name != "" {
		in.Name = aws.String(name)
	}
	x, err := c.StartExecution(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := srv.Engine().Wait(ctx, aws.ToString(x.ExecutionArn))
	if err != nil {
		t.Fatal(err)
	}
	h, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: x.ExecutionArn, MaxResults: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return rec, h.Events
}

// eventTypes returns the events' types.
func eventTypes(events []types.HistoryEvent) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = string(e.Type)
	}
	return out
}

// statesEntered returns the names of the states entered, in order.
func statesEntered(events []types.HistoryEvent) []string {
	var out []string
	for _, e := range events {
		if d := e.StateEnteredEventDetails; d != nil {
			out = append(out, aws.ToString(d.Name))
		}
	}
	return out
}

// ofType returns the events of the type typ.
func ofType(events []types.HistoryEvent, typ types.HistoryEventType) []types.HistoryEvent {
	var out []types.HistoryEvent
	for _, e := range events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// TestMockAWSDocumentationExample runs the three test cases of AWS's documentation example through the SDK, and the
// same state machine without a test case: HappyPath's Task states get their mocked results, RetryPath's LambdaState
// fails three times and is retried after 2, 4 and 8 seconds (its Retry policy) before it succeeds, HybridPath's
// SQSState calls SQS with the mocked Lambda result; no mocked state calls its service, and the unmocked execution
// calls both.
func TestMockAWSDocumentationExample(t *testing.T) {
	clock := sfnengine.NewManualClock(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	var invoked atomic.Int32
	hello := func(context.Context, json.RawMessage) (map[string]any, error) {
		invoked.Add(1)
		return map[string]any{"body": "from the real function"}, nil
	}
	queue := &recordingSQS{}
	srv := stepfunctions.RunT(t, stepfunctions.WithMockConfig(loadMocks(t, awsExample+"/MockConfigFile.json")),
		stepfunctions.WithEngineOptions(sfnengine.Options{SQS: queue}), stepfunctions.WithClock(clock),
		stepfunctions.WithLambda("HelloWorldFunction", hello))
	advanceWhileRunning(t, clock, 1)
	c := srv.Client()
	sm := createMachine(t, c, "LambdaSQSIntegration", readFile(t, awsExample+"/LambdaSQSIntegration.asl.json"), types.StateMachineTypeStandard)
	lambdaReturn := `{"StatusCode":200,"Payload":{"StatusCode":200,"body":"Hello from Lambda!"}}`
	sqsReturn := `{"MD5OfMessageBody":"3bcb6e8e-7h85-4375-b0bc-1a59812c6e51","MessageId":"3bcb6e8e-8b51-4375-b0bc-1a59812c6e51"}`
	oneTask := []string{"TaskStateEntered", "TaskScheduled", "TaskStarted", "TaskSucceeded", "TaskStateExited"}

	t.Run("HappyPath", func(t *testing.T) {
		x, err := c.StartExecution(t.Context(), &sfn.StartExecutionInput{StateMachineArn: aws.String(sm + "#HappyPath"),
			Name: aws.String("executionWithHappyPathMockedServices")})
		if err != nil {
			t.Fatal(err)
		}
		// The execution belongs to the state machine without the suffix, as in AWS's example answer.
		if want := "arn:aws:states:us-east-1:123456789012:execution:LambdaSQSIntegration:executionWithHappyPathMockedServices"; aws.ToString(x.ExecutionArn) != want {
			t.Errorf("executionArn %s, want %s", aws.ToString(x.ExecutionArn), want)
		}
		d, err := c.DescribeExecution(t.Context(), &sfn.DescribeExecutionInput{ExecutionArn: x.ExecutionArn})
		if err != nil || aws.ToString(d.StateMachineArn) != sm {
			t.Fatalf("DescribeExecution: %v, %v; want the state machine %s", d, err, sm)
		}
		rec, events := run(t, srv, sm+"#HappyPath", "", `{}`)
		if rec.Status != sfnengine.StatusSucceeded || aws.ToString(rec.Output) != sqsReturn {
			t.Fatalf("%s with %s (%s: %s), want SUCCEEDED with %s", rec.Status, aws.ToString(rec.Output), aws.ToString(rec.Error), aws.ToString(rec.Cause), sqsReturn)
		}
		want := append(append(append([]string{"ExecutionStarted"}, oneTask...), oneTask...), "ExecutionSucceeded")
		if got := eventTypes(events); !reflect.DeepEqual(got, want) {
			t.Fatalf("events %v, want %v", got, want)
		}
		succeeded := ofType(events, types.HistoryEventTypeTaskSucceeded)
		lambda, queueTask := succeeded[0].TaskSucceededEventDetails, succeeded[1].TaskSucceededEventDetails
		if aws.ToString(lambda.ResourceType) != "lambda" || aws.ToString(lambda.Resource) != "invoke" || aws.ToString(lambda.Output) != lambdaReturn {
			t.Errorf("LambdaState's TaskSucceeded: %s %s %s", aws.ToString(lambda.ResourceType), aws.ToString(lambda.Resource), aws.ToString(lambda.Output))
		}
		if aws.ToString(queueTask.ResourceType) != "sqs" || aws.ToString(queueTask.Resource) != "sendMessage" || aws.ToString(queueTask.Output) != sqsReturn {
			t.Errorf("SQSState's TaskSucceeded: %s %s %s", aws.ToString(queueTask.ResourceType), aws.ToString(queueTask.Resource), aws.ToString(queueTask.Output))
		}
		// The mocked result flows on as a real one would: LambdaState's output is SQSState's input.
		if in := aws.ToString(ofType(events, types.HistoryEventTypeTaskStateEntered)[1].StateEnteredEventDetails.Input); in != lambdaReturn {
			t.Errorf("SQSState's input %s, want %s", in, lambdaReturn)
		}
		params := aws.ToString(ofType(events, types.HistoryEventTypeTaskScheduled)[0].TaskScheduledEventDetails.Parameters)
		if params != `{"FunctionName":"HelloWorldFunction","Payload":{}}` {
			t.Errorf("LambdaState's parameters %s", params)
		}
		if n, sent := invoked.Load(), queue.sent(); n != 0 || len(sent) != 0 {
			t.Errorf("the mocked states called their services: %d invocations, messages %v", n, sent)
		}
	})

	t.Run("RetryPath", func(t *testing.T) {
		rec, events := run(t, srv, sm+"#RetryPath", "", `{}`)
		if rec.Status != sfnengine.StatusSucceeded || aws.ToString(rec.Output) != sqsReturn {
			t.Fatalf("%s with %s (%s: %s)", rec.Status, aws.ToString(rec.Output), aws.ToString(rec.Error), aws.ToString(rec.Cause))
		}
		var errs []string
		for _, e := range ofType(events, types.HistoryEventTypeTaskFailed) {
			errs = append(errs, aws.ToString(e.TaskFailedEventDetails.Error)+": "+aws.ToString(e.TaskFailedEventDetails.Cause))
		}
		wantErrs := []string{"Lambda.ResourceNotReadyException: Lambda resource is not ready.", "Lambda.TimeoutException: Lambda timed out.",
			"Lambda.TimeoutException: Lambda timed out."}
		if !reflect.DeepEqual(errs, wantErrs) {
			t.Errorf("TaskFailed %q, want %q", errs, wantErrs)
		}
		scheduled := ofType(events, types.HistoryEventTypeTaskScheduled)
		if len(scheduled) != 5 { // LambdaState 4 times, SQSState once
			t.Fatalf("%d TaskScheduled, want 5", len(scheduled))
		}
		for i, want := range []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second} {
			if gap := scheduled[i+1].Timestamp.Sub(*scheduled[i].Timestamp); gap != want {
				t.Errorf("retry %d came %v after the attempt before it, want %v (IntervalSeconds 2, BackoffRate 2)", i+1, gap, want)
			}
		}
		if got := aws.ToString(ofType(events, types.HistoryEventTypeTaskSucceeded)[0].TaskSucceededEventDetails.Output); got != lambdaReturn {
			t.Errorf("the fourth attempt returned %s, want %s", got, lambdaReturn)
		}
		if invoked.Load() != 0 {
			t.Error("the mocked LambdaState invoked the function")
		}
	})

	t.Run("HybridPath", func(t *testing.T) {
		rec, _ := run(t, srv, sm+"#HybridPath", "", `{}`)
		if rec.Status != sfnengine.StatusSucceeded || !strings.Contains(aws.ToString(rec.Output), `"MessageId":"real-message"`) {
			t.Fatalf("%s with %s (%s: %s); want the real SQS answer", rec.Status, aws.ToString(rec.Output), aws.ToString(rec.Error), aws.ToString(rec.Cause))
		}
		if sent := queue.sent(); len(sent) != 1 || sent[0] != lambdaReturn {
			t.Errorf("SQS was sent %q, want the mocked Lambda result %s", sent, lambdaReturn)
		}
		if invoked.Load() != 0 {
			t.Error("the mocked LambdaState invoked the function")
		}
	})

	t.Run("without a test case", func(t *testing.T) {
		rec, _ := run(t, srv, sm, "", `{}`)
		if rec.Status != sfnengine.StatusSucceeded || invoked.Load() != 1 || len(queue.sent()) != 1 {
			t.Fatalf("%s (%s: %s), %d invocations: want the real function and queue called once", rec.Status,
				aws.ToString(rec.Error), aws.ToString(rec.Cause), invoked.Load())
		}
	})
}

// TestMockInvocationsRunOut: a retry past the last invocation a mocked response gives fails the execution with
// States.Runtime (AWS's documentation: without a mocked response for an invocation, the execution fails), which
// neither Retry nor Catch of States.ALL handles.
func TestMockInvocationsRunOut(t *testing.T) {
	cfg, err := sfnmock.Parse("inline.json", []byte(`{"StateMachines": {"LambdaSQSIntegration": {"TestCases": {
		"NotReady": {"LambdaState": "LambdaMockedResourceNotReady"}}}},
		"MockedResponses": {"LambdaMockedResourceNotReady": {"0": {"Throw": {"Error": "Lambda.ResourceNotReadyException", "Cause": "Lambda resource is not ready."}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	clock := sfnengine.NewManualClock(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	srv := stepfunctions.RunT(t, stepfunctions.WithMockConfig(cfg), stepfunctions.WithClock(clock))
	advanceWhileRunning(t, clock, 1)
	sm := createMachine(t, srv.Client(), "LambdaSQSIntegration", readFile(t, awsExample+"/LambdaSQSIntegration.asl.json"), types.StateMachineTypeStandard)
	rec, events := run(t, srv, sm+"#NotReady", "", `{}`)
	cause := aws.ToString(rec.Cause)
	if rec.Status != sfnengine.StatusFailed || aws.ToString(rec.Error) != "States.Runtime" ||
		!strings.Contains(cause, "'LambdaMockedResourceNotReady'") || !strings.Contains(cause, "invocation 1 of the state: it gives invocations 0 to 0") {
		t.Fatalf("%s with %s: %s; want FAILED with States.Runtime naming the response and invocation 1", rec.Status, aws.ToString(rec.Error), cause)
	}
	want := []string{"ExecutionStarted", "TaskStateEntered", "TaskScheduled", "TaskStarted", "TaskFailed", "TaskScheduled", "TaskStarted", "ExecutionFailed"}
	if got := eventTypes(events); !reflect.DeepEqual(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
}

// TestMockStartErrors: a test case the file does not have, or a state machine it has none for, is refused with a
// ValidationException naming them and the file; a state machine that does not exist is refused as without a
// suffix; and without a mock configuration a '#' is part of the ARN, as on AWS.
func TestMockStartErrors(t *testing.T) {
	def := readFile(t, awsExample+"/LambdaSQSIntegration.asl.json")
	file := awsExample + "/MockConfigFile.json"
	srv := stepfunctions.RunT(t, stepfunctions.WithMockConfig(loadMocks(t, file)))
	c := srv.Client()
	sm := createMachine(t, c, "LambdaSQSIntegration", def, types.StateMachineTypeStandard)
	other := createMachine(t, c, "Other", def, types.StateMachineTypeStandard)
	plain := stepfunctions.RunT(t)
	plainSM := createMachine(t, plain.Client(), "LambdaSQSIntegration", def, types.StateMachineTypeStandard)
	start := func(c *sfn.Client, arn string) error {
		_, err := c.StartExecution(t.Context(), &sfn.StartExecutionInput{StateMachineArn: aws.String(arn)})
		return err
	}
	cases := []struct {
		name    string
		err     error
		code    string
		message []string
	}{
		{"unknown test case", start(c, sm+"#SadPath"), "ValidationException",
			[]string{`no test case "SadPath"`, `"LambdaSQSIntegration"`, file, "HappyPath, HybridPath, RetryPath"}},
		{"no test case after '#'", start(c, sm+"#"), "ValidationException", []string{"names no test case"}},
		{"state machine not in the file", start(c, other+"#HappyPath"), "ValidationException",
			[]string{`no test cases for the state machine "Other"`, file}},
		{"state machine that does not exist", start(c, strings.Replace(sm, "LambdaSQSIntegration", "Nope", 1)+"#HappyPath"),
			"StateMachineDoesNotExist", []string{"stateMachine:Nope'"}},
		{"no mock configuration", start(plain.Client(), plainSM+"#HappyPath"), "StateMachineDoesNotExist",
			[]string{"LambdaSQSIntegration#HappyPath"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var ae smithy.APIError
			if !errors.As(tc.err, &ae) || ae.ErrorCode() != tc.code {
				t.Fatalf("error %v, want %s", tc.err, tc.code)
			}
			for _, m := range tc.message {
				if !strings.Contains(ae.ErrorMessage(), m) {
					t.Errorf("message %q does not name %q", ae.ErrorMessage(), m)
				}
			}
		})
	}
	list, err := c.ListExecutions(t.Context(), &sfn.ListExecutionsInput{StateMachineArn: aws.String(sm)})
	if err != nil || len(list.Executions) != 0 {
		t.Errorf("refused starts left executions: %v, %v", list, err)
	}
}

// TestMockCallbackAndExpress: a mocked .waitForTaskToken task gets a task token (its parameters carry it) and ends
// with the mocked result as if the callback had come, without TaskSubmitted and with no SQS or SNS client behind
// the engine; an Express state machine's StartSyncExecution takes the test case too.
func TestMockCallbackAndExpress(t *testing.T) {
	cfg, err := sfnmock.Parse("inline.json", []byte(`{"StateMachines": {
		"Approval": {"TestCases": {"Approved": {"AskApproval": "Approved", "Notify": "Published"}}},
		"ExpressIntegration": {"TestCases": {"HappyPath": {"LambdaState": "Hello", "SQSState": "Sent"}}}},
		"MockedResponses": {
		"Approved": {"0": {"Return": {"approved": true}}},
		"Published": {"0": {"Return": {"MessageId": "n-1"}}},
		"Hello": {"0": {"Return": {"StatusCode": 200, "Payload": "hello"}}},
		"Sent": {"0": {"Return": {"MessageId": "m-1"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := stepfunctions.RunT(t, stepfunctions.WithMockConfig(cfg))
	c := srv.Client()
	approval := createMachine(t, c, "Approval", `{"StartAt": "AskApproval", "States": {
		"AskApproval": {"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
			"Parameters": {"QueueUrl": "https://sqs.us-east-1.amazonaws.com/123456789012/approvals", "MessageBody": {"token.$": "$$.Task.Token"}},
			"ResultPath": "$.approval", "Next": "Notify"},
		"Notify": {"Type": "Task", "Resource": "arn:aws:states:::sns:publish",
			"Parameters": {"TopicArn": "arn:aws:sns:us-east-1:123456789012:approvals", "Message.$": "$.approval"}, "ResultPath": "$.sns", "End": true}}}`,
		types.StateMachineTypeStandard)
	rec, events := run(t, srv, approval+"#Approved", "", `{}`)
	if want := `{"approval":{"approved":true},"sns":{"MessageId":"n-1"}}`; rec.Status != sfnengine.StatusSucceeded || aws.ToString(rec.Output) != want {
		t.Fatalf("%s with %s (%s: %s), want SUCCEEDED with %s", rec.Status, aws.ToString(rec.Output), aws.ToString(rec.Error), aws.ToString(rec.Cause), want)
	}
	if n := len(ofType(events, types.HistoryEventTypeTaskSubmitted)); n != 0 {
		t.Errorf("%d TaskSubmitted events for a mocked callback", n)
	}
	params := aws.ToString(ofType(events, types.HistoryEventTypeTaskScheduled)[0].TaskScheduledEventDetails.Parameters)
	if !regexp.MustCompile(`"token":"[A-Za-z0-9_-]{40,}"`).MatchString(params) {
		t.Errorf("the callback task's parameters %s carry no task token", params)
	}
	var resources []string
	for _, e := range ofType(events, types.HistoryEventTypeTaskSucceeded) {
		resources = append(resources, aws.ToString(e.TaskSucceededEventDetails.ResourceType)+" "+aws.ToString(e.TaskSucceededEventDetails.Resource))
	}
	if want := []string{"sqs sendMessage.waitForTaskToken", "sns publish"}; !reflect.DeepEqual(resources, want) {
		t.Errorf("TaskSucceeded resources %q, want %q", resources, want)
	}

	express := createMachine(t, c, "ExpressIntegration", readFile(t, awsExample+"/LambdaSQSIntegration.asl.json"), types.StateMachineTypeExpress)
	out, err := c.StartSyncExecution(t.Context(), &sfn.StartSyncExecutionInput{StateMachineArn: aws.String(express + "#HappyPath")})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != types.SyncExecutionStatusSucceeded || aws.ToString(out.Output) != `{"MessageId":"m-1"}` ||
		!strings.Contains(aws.ToString(out.ExecutionArn), ":express:ExpressIntegration:") {
		t.Errorf("StartSyncExecution: %s %s %s (%s: %s)", out.Status, aws.ToString(out.ExecutionArn), aws.ToString(out.Output),
			aws.ToString(out.Error), aws.ToString(out.Cause))
	}
	if _, err := c.StartSyncExecution(t.Context(), &sfn.StartSyncExecutionInput{StateMachineArn: aws.String(express + "#SadPath")}); err == nil ||
		!strings.Contains(err.Error(), `no test case "SadPath"`) {
		t.Errorf("StartSyncExecution of an unknown test case: %v", err)
	}
}

// transferInput is a transfer the workflow settles; no account or record exists anywhere.
const transferInput = `{"id":"t1","transferId":"t1","sourceAccountId":"a","destinationAccountId":"b","amount":5,"currency":"EUR","reference":"","createdAt":"2026-11-23T10:00:00Z","recordKey":"TRANSFER#t1","authority":"owner:test"}`

// transferDefinition returns statemachine/transfer.asl.json with its DefinitionSubstitutions as the local stack
// fills them from template.yaml: the functions' live aliases and the table's logical id.
func transferDefinition(t *testing.T) string {
	t.Helper()
	return sfnengine.SubstituteDefinition(readFile(t, filepath.Join("..", "..", "statemachine", "transfer.asl.json")), map[string]string{
		"DebitFunctionArn":  "arn:aws:lambda:us-east-1:000000000000:function:DebitFunction:live",
		"CreditFunctionArn": "arn:aws:lambda:us-east-1:000000000000:function:CreditFunction:live",
		"TableName":         "TransfersTable",
	})
}

// TestMockTransferSagaPaths runs the transfer workflow with no Lambda function and no DynamoDB table behind it, one
// test case per path of the saga (testdata/transfer-mocks.json): each ends as the workflow says, through the states
// it says, and a throttled debit is retried by the Retry that lists Lambda.TooManyRequestsException.
func TestMockTransferSagaPaths(t *testing.T) {
	clock := sfnengine.NewManualClock(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	srv := stepfunctions.RunT(t, stepfunctions.WithMockConfig(loadMocks(t, "testdata/transfer-mocks.json")), stepfunctions.WithClock(clock))
	advanceWhileRunning(t, clock, 2) // a retry's back-off and the execution's TimeoutSeconds
	sm := createMachine(t, srv.Client(), "TransferStateMachine", transferDefinition(t), types.StateMachineTypeStandard)
	cases := []struct {
		testCase string
		path     []string
		debits   int // TaskScheduled events of Debit
		output   string
	}{
		{"Completed", []string{"Debit", "Credit"}, 1, `"settled":{"completedAt":"2026-06-01T00:00:00.100Z"}`},
		{"InsufficientFunds", []string{"Debit", "InsufficientFunds", "MarkFailed"}, 1, `"outcome":{"code":"INSUFFICIENT_FUNDS"},"settled":{"completedAt":"2026-06-01T00:00:00.200Z"}`},
		{"CreditFailedRefunded", []string{"Debit", "Credit", "Refund", "CreditFailedRefunded", "MarkFailed"}, 1, `"outcome":{"code":"CREDIT_FAILED_REFUNDED"}`},
		{"RefundFindsTheCredit", []string{"Debit", "Credit", "Refund", "CompleteCredited"}, 1, `"settled":{"completedAt":"2026-06-01T00:00:00.100Z"}`},
		{"ThrottledThenRetried", []string{"Debit", "Credit"}, 3, `"settled":{"completedAt":"2026-06-01T00:00:00.100Z"}`},
	}
	for _, tc := range cases {
		t.Run(tc.testCase, func(t *testing.T) {
			rec, events := run(t, srv, sm+"#"+tc.testCase, tc.testCase, transferInput)
			if rec.Status != sfnengine.StatusSucceeded || !strings.Contains(aws.ToString(rec.Output), tc.output) {
				t.Fatalf("%s with %s (%s: %s), want SUCCEEDED with …%s…", rec.Status, aws.ToString(rec.Output), aws.ToString(rec.Error),
					aws.ToString(rec.Cause), tc.output)
			}
			if got := statesEntered(events); !reflect.DeepEqual(got, tc.path) {
				t.Errorf("states %v, want %v", got, tc.path)
			}
			debits := 0
			for _, e := range ofType(events, types.HistoryEventTypeTaskScheduled) {
				if strings.Contains(aws.ToString(e.TaskScheduledEventDetails.Parameters), `"leg":"DEBIT"`) {
					debits++
				}
			}
			if debits != tc.debits {
				t.Errorf("Debit was scheduled %d times, want %d", debits, tc.debits)
			}
		})
	}
	t.Run("the mocked failure reaches MarkFailed", func(t *testing.T) {
		rec, events := run(t, srv, sm+"#InsufficientFunds", "", transferInput)
		params := aws.ToString(ofType(events, types.HistoryEventTypeTaskScheduled)[1].TaskScheduledEventDetails.Parameters)
		if !strings.Contains(params, `"TableName":"TransfersTable"`) || !strings.Contains(params, `\"Error\":\"InsufficientFunds\"`) {
			t.Errorf("MarkFailed's parameters %s: want the table and the debit's error", params)
		}
		if !strings.Contains(aws.ToString(rec.Output), `"failure":{"Error":"InsufficientFunds","Cause":`) {
			t.Errorf("output %s", aws.ToString(rec.Output))
		}
	})
}

// TestMockRedriveKeepsTheTestCase: a redriven execution runs with the test case it was started with; its
// invocations are counted again from 0 (the counts are not saved with the execution).
func TestMockRedriveKeepsTheTestCase(t *testing.T) {
	cfg, err := sfnmock.Parse("inline.json", []byte(`{"StateMachines": {"Once": {"TestCases": {"Fails": {"Call": "Fails"}}}},
		"MockedResponses": {"Fails": {"0": {"Throw": {"Error": "Mocked.Failure", "Cause": "mocked"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := stepfunctions.RunT(t, stepfunctions.WithMockConfig(cfg))
	c := srv.Client()
	sm := createMachine(t, c, "Once", `{"StartAt": "Call", "States": {"Call": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
		"Parameters": {"FunctionName": "Absent"}, "End": true}}}`, types.StateMachineTypeStandard)
	rec, _ := run(t, srv, sm+"#Fails", "first", `{}`)
	if rec.Status != sfnengine.StatusFailed || aws.ToString(rec.Error) != "Mocked.Failure" {
		t.Fatalf("%s with %s: %s", rec.Status, aws.ToString(rec.Error), aws.ToString(rec.Cause))
	}
	if _, err := c.RedriveExecution(t.Context(), &sfn.RedriveExecutionInput{ExecutionArn: aws.String(rec.Arn)}); err != nil {
		t.Fatal(err)
	}
	rec, err = srv.Engine().Wait(t.Context(), rec.Arn)
	if err != nil {
		t.Fatal(err)
	}
	// Without the test case the task would have called the absent function (Lambda.ServiceException).
	if rec.Status != sfnengine.StatusFailed || aws.ToString(rec.Error) != "Mocked.Failure" || rec.RedriveCount() != 1 {
		t.Errorf("after the redrive: %s with %s: %s (redrives %d)", rec.Status, aws.ToString(rec.Error), aws.ToString(rec.Cause), rec.RedriveCount())
	}
}
