package sfnapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/transferflow/orchestrator/localaws/sfnapi"
	"github.com/transferflow/orchestrator/localaws/sfnengine"
	"github.com/transferflow/orchestrator/localaws/stepfunctions"
)

func createExpress(t *testing.T, c *sfn.Client, name, def string) string {
	t.Helper()
	out, err := c.CreateStateMachine(context.Background(), &sfn.CreateStateMachineInput{
		Name: aws.String(name), Definition: aws.String(def), RoleArn: aws.String(role), Type: types.StateMachineTypeExpress})
	if err != nil {
		t.Fatalf("CreateStateMachine %s: %v", name, err)
	}
	return aws.ToString(out.StateMachineArn)
}

const waitTwoSeconds = `{"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 2, "Next": "P"},
  "P": {"Type": "Pass", "Result": "done", "ResultPath": "$.r", "End": true}}}`

// TestStartSyncExecution runs Express executions to their end through the SDK's StartSyncExecution: the answer
// carries the outcome as AWS answers it (members, express ARN, billing rounded up to 100 ms, 64 MB).
func TestStartSyncExecution(t *testing.T) {
	srv, clock := runClocked(t)
	c := srv.Client()
	ctx := context.Background()
	smArn := createExpress(t, c, "sync", passChoice)
	out, err := c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: aws.String(smArn),
		Name: aws.String("run-1"), Input: aws.String(`{"a":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	arnRE := regexp.MustCompile(`^arn:aws:states:us-east-1:123456789012:express:sync:run-1:[0-9a-f-]{36}$`)
	if !arnRE.MatchString(aws.ToString(out.ExecutionArn)) {
		t.Errorf("executionArn = %s, want express:sync:run-1:<uuid>", aws.ToString(out.ExecutionArn))
	}
	if out.Status != types.SyncExecutionStatusSucceeded || aws.ToString(out.Output) != `{"a":1,"r":{"n":1}}` ||
		aws.ToString(out.Input) != `{"a":1}` || aws.ToString(out.Name) != "run-1" || aws.ToString(out.StateMachineArn) != smArn {
		t.Errorf("answer = %+v (output %s)", out, aws.ToString(out.Output))
	}
	if out.Error != nil || out.Cause != nil || out.InputDetails == nil || !out.InputDetails.Included ||
		out.OutputDetails == nil || !out.OutputDetails.Included {
		t.Errorf("error/cause/details = %v %v %+v %+v", out.Error, out.Cause, out.InputDetails, out.OutputDetails)
	}
	if out.BillingDetails == nil || out.BillingDetails.BilledDurationInMilliseconds != 100 || out.BillingDetails.BilledMemoryUsedInMB != 64 {
		t.Errorf("billingDetails = %+v, want 100 ms and 64 MB", out.BillingDetails)
	}
	if !out.StartDate.Equal(clock.Now()) || !out.StopDate.Equal(clock.Now()) {
		t.Errorf("dates = %v %v, want %v", out.StartDate, out.StopDate, clock.Now())
	}

	// The context object of a synchronous Express execution has no RedriveCount (AWS's recorded ones).
	ctxArn := createExpress(t, c, "ctx", `{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"e.$":"$$.Execution"},"End":true}}}`)
	withCtx, err := c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: aws.String(ctxArn), Name: aws.String("c")})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"e":{"Id":"` + aws.ToString(withCtx.ExecutionArn) + `","Input":{},"StartTime":"2026-03-01T12:00:00.000Z","Name":"c","RoleArn":"` + role + `"}}`; aws.ToString(withCtx.Output) != want {
		t.Errorf("output = %s, want %s", aws.ToString(withCtx.Output), want)
	}

	// The same name again is another execution (Express names are not idempotent).
	again, err := c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: aws.String(smArn), Name: aws.String("run-1")})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(again.ExecutionArn) == aws.ToString(out.ExecutionArn) || !arnRE.MatchString(aws.ToString(again.ExecutionArn)) {
		t.Errorf("second run-1 = %s, first %s: want a new express ARN", aws.ToString(again.ExecutionArn), aws.ToString(out.ExecutionArn))
	}

	// A failure is a 200 answer with status FAILED, error and cause, and no output.
	failArn := createExpress(t, c, "fails", `{"StartAt":"F","States":{"F":{"Type":"Fail","Error":"Boom","Cause":"it failed"}}}`)
	failed, err := c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: aws.String(failArn)})
	if err != nil {
		t.Fatal(err)
	}
	if failed.Status != types.SyncExecutionStatusFailed || aws.ToString(failed.Error) != "Boom" ||
		aws.ToString(failed.Cause) != "it failed" || failed.Output != nil || aws.ToString(failed.Input) != "{}" {
		t.Errorf("failed = %+v", failed)
	}

	// Billing counts the execution's time, rounded up to 100 ms.
	waitArn := createExpress(t, c, "waits", waitTwoSeconds)
	done := make(chan *sfn.StartSyncExecutionOutput, 1)
	go func() {
		o, err := c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: aws.String(waitArn)})
		if err != nil {
			t.Error(err)
		}
		done <- o
	}()
	clock.MustAwaitWaiters(t, 2) // the execution's 5-minute limit and the Wait state
	clock.Advance(2*time.Second + 30*time.Millisecond)
	o := <-done
	if o == nil || o.Status != types.SyncExecutionStatusSucceeded || o.BillingDetails.BilledDurationInMilliseconds != 2100 {
		t.Fatalf("waited = %+v", o)
	}
}

// TestExpressDurationLimit: an Express execution still running after five minutes ends TIMED_OUT with
// States.Timeout, whatever its definition's TimeoutSeconds.
func TestExpressDurationLimit(t *testing.T) {
	srv, clock := runClocked(t)
	c := srv.Client()
	smArn := createExpress(t, c, "forever", `{"TimeoutSeconds": 3600, "StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 3600, "End": true}}}`)
	done := make(chan *sfn.StartSyncExecutionOutput, 1)
	go func() {
		o, err := c.StartSyncExecution(context.Background(), &sfn.StartSyncExecutionInput{StateMachineArn: aws.String(smArn)})
		if err != nil {
			t.Error(err)
		}
		done <- o
	}()
	clock.MustAwaitWaiters(t, 2)
	clock.Advance(5*time.Minute - time.Millisecond)
	select {
	case o := <-done:
		t.Fatalf("ended before five minutes: %+v", o)
	case <-time.After(50 * time.Millisecond):
	}
	clock.Advance(time.Millisecond)
	o := <-done
	if o == nil || o.Status != types.SyncExecutionStatusTimedOut || aws.ToString(o.Error) != "States.Timeout" ||
		o.BillingDetails.BilledDurationInMilliseconds != 300_000 {
		t.Fatalf("answer = %+v", o)
	}
}

// TestExpressAPIErrors: the operations AWS does not offer for Express executions answer as AWS does (recorded),
// and StartSyncExecution of a Standard state machine is StateMachineTypeNotSupported.
func TestExpressAPIErrors(t *testing.T) {
	srv, _ := runClocked(t)
	c := srv.Client()
	ctx := context.Background()
	expressArn := createExpress(t, c, "express", waitForever)
	standardArn := create(t, c, "standard", passChoice)

	// StartExecution of an Express state machine returns at once, while the execution waits.
	started, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(expressArn), Name: aws.String("n")})
	if err != nil {
		t.Fatal(err)
	}
	execArn := aws.ToString(started.ExecutionArn)
	if !regexp.MustCompile(`^arn:aws:states:us-east-1:123456789012:express:express:n:[0-9a-f-]{36}$`).MatchString(execArn) {
		t.Fatalf("executionArn = %s", execArn)
	}
	second, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(expressArn), Name: aws.String("n")})
	if err != nil || aws.ToString(second.ExecutionArn) == execArn {
		t.Fatalf("second start with the same name = %v, %v: want a new execution", second, err)
	}

	const notInContext = "Invalid Arn: 'Resource type not valid in this context: express'"
	const notSupported = "This operation is not supported by this type of state machine"
	tests := []apiErrorCase{
		{"DescribeExecution", func() error {
			return errOf(c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(execArn)}))
		}, new(*types.InvalidArn), notInContext},
		{"GetExecutionHistory", func() error {
			return errOf(c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(execArn)}))
		}, new(*types.InvalidArn), notInContext},
		{"StopExecution", func() error {
			return errOf(c.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: aws.String(execArn)}))
		}, new(*types.InvalidArn), notInContext},
		{"DescribeStateMachineForExecution", func() error {
			return errOf(c.DescribeStateMachineForExecution(ctx, &sfn.DescribeStateMachineForExecutionInput{ExecutionArn: aws.String(execArn)}))
		}, new(*types.InvalidArn), notInContext},
		{"UpdateStateMachine of an Express machine to a callback task", func() error {
			return errOf(c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(expressArn),
				Definition: aws.String(`{"StartAt":"S","States":{"S":{"Type":"Task","Resource":"arn:aws:states:::states:startExecution.sync:2","Parameters":{"StateMachineArn":"x"},"End":true}}}`)}))
		}, new(*types.InvalidDefinition), "Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: Express state machine does not support '.sync' service integration at /States/S/Resource'"},
		{"ListExecutions", func() error {
			return errOf(c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(expressArn)}))
		}, new(*types.StateMachineTypeNotSupported), notSupported},
		{"StartSyncExecution of a Standard state machine", func() error {
			return errOf(c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: aws.String(standardArn)}))
		}, new(*types.StateMachineTypeNotSupported), notSupported},
		{"StartSyncExecution of a missing state machine", func() error {
			return errOf(c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: aws.String(standardArn + "x")}))
		}, new(*types.StateMachineDoesNotExist), "State Machine Does Not Exist: '" + standardArn + "x'"},
		{"StartSyncExecution with input that is not JSON", func() error {
			return errOf(c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: aws.String(expressArn), Input: aws.String("{")}))
		}, new(*types.InvalidExecutionInput), ""},
		{"StartSyncExecution with a bad name", func() error {
			return errOf(c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: aws.String(expressArn), Name: aws.String("a b")}))
		}, new(*types.InvalidName), "Invalid Name: 'a b'"},
		{"Express definition with a callback task", func() error {
			return errOf(c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("cb"), RoleArn: aws.String(role),
				Type: types.StateMachineTypeExpress, Definition: aws.String(`{"StartAt":"Publish","States":{"Publish":{"Type":"Task",
				"Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken","Parameters":{"FunctionName":"f","Payload":{"t.$":"$$.Task.Token"}},"End":true}}}`)}))
		}, new(*types.InvalidDefinition), "Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: Express state machine does not support '.waitForTaskToken' service integration  at /States/Publish/Resource'"},
		{"Express definition with an activity", func() error {
			return errOf(c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("act"), RoleArn: aws.String(role),
				Type: types.StateMachineTypeExpress, Definition: aws.String(`{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[
				{"StartAt":"ActivityTask","States":{"ActivityTask":{"Type":"Task","Resource":"arn:aws:states:us-east-1:123456789012:activity:a","End":true}}}]}}}`)}))
		}, new(*types.InvalidDefinition), "Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: Express state machine does not support Activity ARN at /States/P/Branches/0/States/ActivityTask/Resource'"},
	}
	checkAPIErrors(t, tests)
}

// hostRecorder is an sfn HTTPClient that records the host of each request and sends none.
type hostRecorder struct{ hosts []string }

var errNotSent = errors.New("not sent")

func (h *hostRecorder) Do(r *http.Request) (*http.Response, error) {
	h.hosts = append(h.hosts, r.URL.Host)
	return nil, errNotSent
}

// TestHostPrefix shows why the local endpoint needs WithoutHostPrefix (or, for the AWS CLI and boto3,
// AWS_DISABLE_HOST_PREFIX_INJECTION): aws-sdk-go-v2 sends StartSyncExecution and TestState to sync-<host> even with
// a BaseEndpoint, and with WithoutHostPrefix to the host as given, where the local API answers them.
func TestHostPrefix(t *testing.T) {
	srv := stepfunctions.RunT(t)
	host := srv.URL()[len("http://"):]
	rec := &hostRecorder{}
	opts := sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL()), HTTPClient: rec,
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""), RetryMaxAttempts: 1}
	ctx := context.Background()
	plain := sfn.New(opts)
	_, _ = plain.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: aws.String("arn:aws:states:us-east-1:123456789012:stateMachine:x")})
	_, _ = plain.TestState(ctx, &sfn.TestStateInput{Definition: aws.String(`{"Type":"Pass","End":true}`)})
	_, _ = plain.ListStateMachines(ctx, &sfn.ListStateMachinesInput{})
	without := sfn.New(opts, sfnapi.WithoutHostPrefix)
	_, _ = without.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: aws.String("arn:aws:states:us-east-1:123456789012:stateMachine:x")})
	_, _ = without.TestState(ctx, &sfn.TestStateInput{Definition: aws.String(`{"Type":"Pass","End":true}`)})
	want := []string{"sync-" + host, "sync-" + host, host, host, host}
	if len(rec.hosts) != len(want) {
		t.Fatalf("hosts = %v, want %v", rec.hosts, want)
	}
	for i := range want {
		if rec.hosts[i] != want[i] {
			t.Fatalf("hosts = %v, want %v", rec.hosts, want)
		}
	}
	// Through the network, with WithoutHostPrefix (srv.Client has it), StartSyncExecution reaches the local API.
	c := srv.Client()
	smArn := createExpress(t, c, "reach", passChoice)
	out, err := c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: aws.String(smArn)})
	if err != nil || out.Status != types.SyncExecutionStatusSucceeded {
		t.Fatalf("StartSyncExecution = %+v, %v", out, err)
	}
}

// slowLambda answers after its delay.
type slowLambda struct{ delay time.Duration }

func (l slowLambda) Invoke(ctx context.Context, _ string, _ []byte) ([]byte, error) {
	select {
	case <-time.After(l.delay):
		return []byte(`{"slow":true}`), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// TestSyncOutlivesWriteTimeout: StartSyncExecution answers after the server's write timeout has passed (the local
// stack's is a minute, an Express execution may run five): the API extends the deadline for it.
func TestSyncOutlivesWriteTimeout(t *testing.T) {
	eng := sfnengine.New(sfnengine.Options{Lambda: slowLambda{delay: 600 * time.Millisecond}})
	defer eng.Close()
	hs := httptest.NewUnstartedServer(sfnapi.New(eng, nil))
	hs.Config.WriteTimeout = 100 * time.Millisecond
	hs.Start()
	defer hs.Close()
	c := sfn.New(sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String(hs.URL), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}, sfnapi.WithoutHostPrefix)
	smArn := createExpress(t, c, "slow", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:f","End":true}}}`)
	out, err := c.StartSyncExecution(context.Background(), &sfn.StartSyncExecutionInput{StateMachineArn: aws.String(smArn)})
	if err != nil || aws.ToString(out.Output) != `{"slow":true}` {
		t.Fatalf("StartSyncExecution = %+v, %v", out, err)
	}
}
