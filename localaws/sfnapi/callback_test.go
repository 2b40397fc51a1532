package sfnapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
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

// tokenLambda is a LambdaInvoker that hands each payload's "token" to the test, as a function that passes its task
// token on to a worker would.
type tokenLambda struct {
	tokens chan string
	calls  atomic.Int64
}

func newTokenLambda() *tokenLambda { return &tokenLambda{tokens: make(chan string, 16)} }

func (l *tokenLambda) Invoke(_ context.Context, _ string, payload []byte) ([]byte, error) {
	l.calls.Add(1)
	var p struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal(payload, &p); err != nil {
		return nil, err
	}
	l.tokens <- p.Token
	return []byte(`{"queued":true}`), nil
}

// next returns the next token a task handed out; the test fails when none comes.
func (l *tokenLambda) next(t *testing.T) string {
	t.Helper()
	select {
	case tok := <-l.tokens:
		return tok
	case <-time.After(30 * time.Second): // a guard against a hang, not a wait for time to pass
		t.Fatal("no task token was handed out")
		return ""
	}
}

// callbackStore is a FileStore that reports each save of an execution waiting for its token.
type callbackStore struct {
	*sfnengine.FileStore
	waiting chan struct{}
}

func (s *callbackStore) SaveExecution(ctx context.Context, rec *sfnengine.ExecutionRecord, events []byte) error {
	err := s.FileStore.SaveExecution(ctx, rec, events)
	if err == nil && rec.Checkpoint != nil && rec.Checkpoint.Callback != nil {
		select {
		case s.waiting <- struct{}{}:
		default:
		}
	}
	return err
}

// engineServer serves eng's API on a real listener and returns a client for it.
func engineServer(t *testing.T, eng *sfnengine.Engine) (*sfn.Client, func()) {
	t.Helper()
	hs := httptest.NewServer(sfnapi.New(eng, nil))
	c := sfn.New(sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String(hs.URL),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")})
	return c, hs.Close
}

// servedEngine starts an engine with opts and serves its API; stop closes the server and the engine, as a restart
// would.
func servedEngine(t *testing.T, opts sfnengine.Options) (c *sfn.Client, stop func()) {
	t.Helper()
	eng := sfnengine.New(opts)
	c, stopServer := engineServer(t, eng)
	return c, func() {
		stopServer()
		eng.Close()
	}
}

// stopWhileWaiting starts an execution of def, created as name, with input ("" for none) on an engine with opts
// over a callbackStore in dir, checkpointing every state and invoking lambda; once the execution is saved waiting
// for its task token, it stops the engine and returns the execution's ARN and the token.
func stopWhileWaiting(t *testing.T, dir string, lambda *tokenLambda, opts sfnengine.Options, name, def, input string) (arn, token string) {
	t.Helper()
	store := newCallbackStore(t, dir)
	opts.Store, opts.Lambda, opts.CheckpointEveryState = store, lambda, true
	c, stop := servedEngine(t, opts)
	in := &sfn.StartExecutionInput{StateMachineArn: aws.String(create(t, c, name, def))}
	if input != "" {
		in.Input = aws.String(input)
	}
	start, err := c.StartExecution(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	token = lambda.next(t)
	store.awaitSave(t, "waiting task")
	stop()
	return aws.ToString(start.ExecutionArn), token
}

// newCallbackStore is a callbackStore on a FileStore in dir.
func newCallbackStore(t *testing.T, dir string) *callbackStore {
	t.Helper()
	return &callbackStore{FileStore: mustFileStore(t, dir), waiting: make(chan struct{}, 1)}
}

// awaitSave waits until the store has saved an execution waiting for its token; what names that task.
func (s *callbackStore) awaitSave(t *testing.T, what string) {
	t.Helper()
	select {
	case <-s.waiting:
	case <-time.After(30 * time.Second):
		t.Fatalf("the %s was never saved", what)
	}
}

// restartEngine starts an engine with opts on a FileStore in dir, restores what the directory holds and serves the
// engine's API; the server and the engine are closed when the test ends.
func restartEngine(t *testing.T, dir string, opts sfnengine.Options) (*sfnengine.Engine, *sfn.Client) {
	t.Helper()
	opts.Store = mustFileStore(t, dir)
	eng := sfnengine.New(opts)
	t.Cleanup(eng.Close)
	if err := eng.Restore(context.Background()); err != nil {
		t.Fatal(err)
	}
	c, stop := engineServer(t, eng)
	t.Cleanup(stop)
	return eng, c
}

func historyTypes(t *testing.T, c *sfn.Client, arn string) ([]string, []types.HistoryEvent) {
	t.Helper()
	h, err := c.GetExecutionHistory(context.Background(), &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn), MaxResults: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range h.Events {
		names = append(names, string(e.Type))
	}
	return names, h.Events
}

func waitDone(t *testing.T, eng *sfnengine.Engine, arn string) *sfnengine.ExecutionRecord {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rec, err := eng.Wait(ctx, arn)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

const approvalMachine = `{"StartAt":"Approve","States":{
  "Approve":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
    "Parameters":{"FunctionName":"approver","Payload":{"token.$":"$$.Task.Token","id.$":"$.id"}},
    "ResultPath":"$.approval","Next":"Done"},
  "Done":{"Type":"Pass","End":true}}}`

// TestCallbackAcrossRestart: a callback task's token, handed out by an engine with a file store, completes the
// execution on a new engine started on the same directory: the task waits again for the same token, without
// calling its function again.
func TestCallbackAcrossRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	lambda := newTokenLambda()
	clock := sfnengine.NewManualClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	arn, token := stopWhileWaiting(t, dir, lambda, sfnengine.Options{Clock: clock}, "approval", approvalMachine, `{"id":"tr_1"}`)

	second, c2 := restartEngine(t, dir, sfnengine.Options{Lambda: lambda, Clock: clock, CheckpointEveryState: true})
	if _, err := c2.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(token), Output: aws.String(`{"approved":true}`)}); err != nil {
		t.Fatalf("SendTaskSuccess after the restart: %v", err)
	}
	rec := waitDone(t, second, arn)
	if rec.Status != sfnengine.StatusSucceeded || rec.Output == nil || *rec.Output != `{"id":"tr_1","approval":{"approved":true}}` {
		t.Fatalf("after the restart: %s, output %v; want SUCCEEDED with the callback's output", rec.Status, aws.ToString(rec.Output))
	}
	if n := lambda.calls.Load(); n != 1 {
		t.Fatalf("the function was called %d times, want once (the restored task waits, it does not call again)", n)
	}
	names, events := historyTypes(t, c2, arn)
	want := []string{"ExecutionStarted", "TaskStateEntered", "TaskScheduled", "TaskStarted", "TaskSubmitted",
		"TaskSucceeded", "TaskStateExited", "PassStateEntered", "PassStateExited", "ExecutionSucceeded"}
	if !slices.Equal(names, want) {
		t.Fatalf("history = %v, want %v", names, want)
	}
	for i, e := range events {
		if e.Id != int64(i+1) || (i > 1 && e.PreviousEventId != int64(i)) {
			t.Fatalf("event %d (%s): id %d, previous %d", i, e.Type, e.Id, e.PreviousEventId)
		}
	}
	sched := events[2].TaskScheduledEventDetails
	var params struct {
		FunctionName string
		Payload      struct{ Token, ID string }
	}
	if err := json.Unmarshal([]byte(aws.ToString(sched.Parameters)), &params); err != nil || params.FunctionName != "approver" ||
		params.Payload.Token != token || params.Payload.ID != "tr_1" || aws.ToString(sched.Resource) != "invoke.waitForTaskToken" ||
		aws.ToString(sched.ResourceType) != "lambda" {
		t.Fatalf("TaskScheduled = %s %s %s", aws.ToString(sched.ResourceType), aws.ToString(sched.Resource), aws.ToString(sched.Parameters))
	}
	if out := aws.ToString(events[4].TaskSubmittedEventDetails.Output); !json.Valid([]byte(out)) || out == "" {
		t.Fatalf("TaskSubmitted output = %q, want the lambda:invoke result", out)
	}
	if out := aws.ToString(events[5].TaskSucceededEventDetails.Output); out != `{"approved":true}` {
		t.Fatalf("TaskSucceeded output = %s", out)
	}
	// The task is over: its token is refused as AWS refuses it.
	_, err := c2.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(token), Output: aws.String(`{}`)})
	var timedOut *types.TaskTimedOut
	if !errors.As(err, &timedOut) || timedOut.ErrorMessage() != "Task Timed Out: 'Provided task does not exist anymore'" {
		t.Fatalf("second SendTaskSuccess: %v, want TaskTimedOut", err)
	}
}

func mustFileStore(t *testing.T, dir string) *sfnengine.FileStore {
	t.Helper()
	s, err := sfnengine.NewFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCallbackFailureIsCaught: SendTaskFailure fails the task with the given error and cause (TaskFailed), which
// Catch handles; each attempt has its own token.
func TestCallbackFailureIsCaught(t *testing.T) {
	lambda := newTokenLambda()
	clock := sfnengine.NewManualClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	srv := stepfunctions.RunT(t, stepfunctions.WithEngineOptions(sfnengine.Options{Lambda: lambda, Clock: clock}))
	c := srv.Client()
	ctx := context.Background()
	smArn := create(t, c, "reject", `{"StartAt":"Approve","States":{
	  "Approve":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
	    "Parameters":{"FunctionName":"approver","Payload":{"token.$":"$$.Task.Token"}},
	    "Retry":[{"ErrorEquals":["Busy"],"IntervalSeconds":2,"MaxAttempts":1}],
	    "Catch":[{"ErrorEquals":["Rejected"],"ResultPath":"$.error","Next":"Rejected"}],"End":true},
	  "Rejected":{"Type":"Pass","End":true}}}`)
	start, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn)})
	if err != nil {
		t.Fatal(err)
	}
	arn := aws.ToString(start.ExecutionArn)
	first := lambda.next(t)
	if _, err := c.SendTaskFailure(ctx, &sfn.SendTaskFailureInput{TaskToken: aws.String(first), Error: aws.String("Busy"), Cause: aws.String("try later")}); err != nil {
		t.Fatal(err)
	}
	clock.MustAwaitWaiters(t, 1) // the retry's back-off
	clock.Advance(2 * time.Second)
	second := lambda.next(t)
	if second == first {
		t.Fatal("the retry reused the first attempt's token")
	}
	if _, err := c.SendTaskFailure(ctx, &sfn.SendTaskFailureInput{TaskToken: aws.String(second), Error: aws.String("Rejected"), Cause: aws.String("limit exceeded")}); err != nil {
		t.Fatal(err)
	}
	rec := waitDone(t, srv.Engine(), arn)
	if rec.Status != sfnengine.StatusSucceeded || aws.ToString(rec.Output) != `{"error":{"Error":"Rejected","Cause":"limit exceeded"}}` {
		t.Fatalf("%s, output %s; want the caught failure", rec.Status, aws.ToString(rec.Output))
	}
	names, events := historyTypes(t, c, arn)
	want := []string{"ExecutionStarted", "TaskStateEntered", "TaskScheduled", "TaskStarted", "TaskSubmitted", "TaskFailed",
		"TaskScheduled", "TaskStarted", "TaskSubmitted", "TaskFailed", "TaskStateExited", "PassStateEntered",
		"PassStateExited", "ExecutionSucceeded"}
	if !slices.Equal(names, want) {
		t.Fatalf("history = %v, want %v", names, want)
	}
	f := events[9].TaskFailedEventDetails
	if aws.ToString(f.Error) != "Rejected" || aws.ToString(f.Cause) != "limit exceeded" || aws.ToString(f.Resource) != "invoke.waitForTaskToken" {
		t.Fatalf("TaskFailed = %+v", f)
	}
}

// TestCallbackHeartbeatAndTaskTimeouts: a task without a heartbeat for HeartbeatSeconds times out (TaskTimedOut,
// States.Timeout as AWS records it, caught by States.HeartbeatTimeout); SendTaskHeartbeat restarts the count; a task
// past its TimeoutSeconds fails the execution with States.Timeout.
func TestCallbackHeartbeatAndTaskTimeouts(t *testing.T) {
	ctx := context.Background()
	// Each case has its own engine and clock, so that the clock's pending timers are the case's own.
	setup := func(t *testing.T) (*tokenLambda, *sfnengine.ManualClock, *stepfunctions.Server, *sfn.Client) {
		lambda := newTokenLambda()
		clock := sfnengine.NewManualClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
		srv := stepfunctions.RunT(t, stepfunctions.WithEngineOptions(sfnengine.Options{Lambda: lambda, Clock: clock}))
		return lambda, clock, srv, srv.Client()
	}

	t.Run("heartbeat", func(t *testing.T) {
		lambda, clock, srv, c := setup(t)
		smArn := create(t, c, "heartbeat", `{"StartAt":"Work","States":{
		  "Work":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
		    "Parameters":{"FunctionName":"worker","Payload":{"token.$":"$$.Task.Token"}},
		    "TimeoutSeconds":100,"HeartbeatSeconds":10,
		    "Catch":[{"ErrorEquals":["States.HeartbeatTimeout"],"Next":"Lost"}],"End":true},
		  "Lost":{"Type":"Pass","End":true}}}`)
		start, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn)})
		if err != nil {
			t.Fatal(err)
		}
		arn := aws.ToString(start.ExecutionArn)
		token := lambda.next(t)
		// Pending: the call's timeout, the task's timeout and its heartbeat.
		clock.MustAwaitWaiters(t, 3)
		clock.Advance(5 * time.Second)
		if _, err := c.SendTaskHeartbeat(ctx, &sfn.SendTaskHeartbeatInput{TaskToken: aws.String(token)}); err != nil {
			t.Fatal(err)
		}
		clock.Advance(6 * time.Second) // 11 s after the submission, 6 s after the heartbeat
		clock.MustAwaitWaiters(t, 3)   // the heartbeat is armed again, from the heartbeat
		if d, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)}); err != nil || d.Status != types.ExecutionStatusRunning {
			t.Fatalf("after a heartbeat: %v %v, want RUNNING", d.Status, err)
		}
		clock.Advance(5 * time.Second) // 11 s after the heartbeat
		rec := waitDone(t, srv.Engine(), arn)
		var caught struct{ Error string }
		if rec.Status != sfnengine.StatusSucceeded || json.Unmarshal([]byte(aws.ToString(rec.Output)), &caught) != nil ||
			caught.Error != "States.Timeout" {
			t.Fatalf("%s, output %s; want the heartbeat timeout caught", rec.Status, aws.ToString(rec.Output))
		}
		names, events := historyTypes(t, c, arn)
		i := slices.Index(names, "TaskTimedOut")
		if i < 0 || names[i-1] != "TaskSubmitted" || aws.ToString(events[i].TaskTimedOutEventDetails.Error) != "States.Timeout" {
			t.Fatalf("history = %v", names)
		}
		_, err = c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(token), Output: aws.String(`{}`)})
		var timedOut *types.TaskTimedOut
		if !errors.As(err, &timedOut) {
			t.Fatalf("SendTaskSuccess after the timeout: %v, want TaskTimedOut", err)
		}
	})

	t.Run("timeout", func(t *testing.T) {
		lambda, clock, srv, c := setup(t)
		smArn := create(t, c, "timeout", `{"StartAt":"Work","States":{
		  "Work":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
		    "Parameters":{"FunctionName":"worker","Payload":{"token.$":"$$.Task.Token"}},
		    "TimeoutSeconds":30,"End":true}}}`)
		start, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn)})
		if err != nil {
			t.Fatal(err)
		}
		arn := aws.ToString(start.ExecutionArn)
		lambda.next(t)
		clock.MustAwaitWaiters(t, 2) // the task's timeout, besides the call's
		clock.Advance(30 * time.Second)
		rec := waitDone(t, srv.Engine(), arn)
		if rec.Status != sfnengine.StatusFailed || aws.ToString(rec.Error) != "States.Timeout" {
			t.Fatalf("%s %s, want FAILED States.Timeout", rec.Status, aws.ToString(rec.Error))
		}
		names, _ := historyTypes(t, c, arn)
		if want := []string{"ExecutionStarted", "TaskStateEntered", "TaskScheduled", "TaskStarted", "TaskSubmitted",
			"TaskTimedOut", "ExecutionFailed"}; !slices.Equal(names, want) {
			t.Fatalf("history = %v, want %v", names, want)
		}
	})
}

// TestCallbackTokenErrors: a token the engine did not issue is InvalidToken; one of another engine's execution is
// TaskDoesNotExist; output that is not JSON is InvalidOutput; a stopped execution's token is TaskTimedOut.
func TestCallbackTokenErrors(t *testing.T) {
	ctx := context.Background()
	lambda := newTokenLambda()
	srv := stepfunctions.RunT(t, stepfunctions.WithEngineOptions(sfnengine.Options{Lambda: lambda}))
	c := srv.Client()
	smArn := create(t, c, "approval", approvalMachine)
	start, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn), Input: aws.String(`{"id":"a"}`)})
	if err != nil {
		t.Fatal(err)
	}
	token := lambda.next(t)
	other := stepfunctions.RunT(t).Client()
	// AWS accepts a callback task whose Parameters do not pass the token on (LocalStack's AWS-validated tests run
	// one); such a task waits for its timeout or a stop.
	create(t, c, "no-token", `{"StartAt":"Wait","States":{"Wait":{"Type":"Task",
	  "Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken","Parameters":{"FunctionName":"f"},"End":true}}}`)

	var invalidToken *types.InvalidToken
	_, err = c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String("not-a-token"), Output: aws.String(`{}`)})
	if !errors.As(err, &invalidToken) {
		t.Fatalf("made-up token: %v, want InvalidToken", err)
	}
	var noTask *types.TaskDoesNotExist
	_, err = other.SendTaskHeartbeat(ctx, &sfn.SendTaskHeartbeatInput{TaskToken: aws.String(token)})
	if !errors.As(err, &noTask) {
		t.Fatalf("another engine's token: %v, want TaskDoesNotExist", err)
	}
	var invalidOutput *types.InvalidOutput
	_, err = c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(token), Output: aws.String(`{"approved":`)})
	if !errors.As(err, &invalidOutput) {
		t.Fatalf("output not JSON: %v, want InvalidOutput", err)
	}
	if _, err := c.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: start.ExecutionArn}); err != nil {
		t.Fatal(err)
	}
	var timedOut *types.TaskTimedOut
	_, err = c.SendTaskFailure(ctx, &sfn.SendTaskFailureInput{TaskToken: aws.String(token), Error: aws.String("E")})
	if !errors.As(err, &timedOut) {
		t.Fatalf("a stopped execution's token: %v, want TaskTimedOut", err)
	}
}

// TestActivities drives the activity operations and an activity worker loop (GetActivityTask, SendTaskHeartbeat,
// SendTaskSuccess or SendTaskFailure) through the SDK.
func TestActivities(t *testing.T) {
	ctx := context.Background()
	clock := sfnengine.NewManualClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	srv := stepfunctions.RunT(t, stepfunctions.WithClock(clock))
	c := srv.Client()

	created, err := c.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("review"),
		Tags: []types.Tag{{Key: aws.String("team"), Value: aws.String("ops")}}})
	if err != nil {
		t.Fatal(err)
	}
	actArn := aws.ToString(created.ActivityArn)
	if actArn != "arn:aws:states:us-east-1:123456789012:activity:review" {
		t.Fatalf("activity ARN = %s", actArn)
	}
	again, err := c.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("review")})
	if err != nil || aws.ToString(again.ActivityArn) != actArn || !again.CreationDate.Equal(*created.CreationDate) {
		t.Fatalf("CreateActivity again: %v %+v, want the same activity (idempotent)", err, again)
	}
	if _, err := c.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("archive")}); err != nil {
		t.Fatal(err)
	}
	var invalidName *types.InvalidName
	if _, err := c.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("bad name")}); !errors.As(err, &invalidName) {
		t.Fatalf("CreateActivity with a space: %v, want InvalidName", err)
	}
	d, err := c.DescribeActivity(ctx, &sfn.DescribeActivityInput{ActivityArn: aws.String(actArn)})
	if err != nil || aws.ToString(d.Name) != "review" || aws.ToString(d.ActivityArn) != actArn {
		t.Fatalf("DescribeActivity: %v %+v", err, d)
	}
	page1, err := c.ListActivities(ctx, &sfn.ListActivitiesInput{MaxResults: 1})
	if err != nil || len(page1.Activities) != 1 || aws.ToString(page1.Activities[0].Name) != "archive" || page1.NextToken == nil {
		t.Fatalf("ListActivities page 1: %v %+v", err, page1)
	}
	page2, err := c.ListActivities(ctx, &sfn.ListActivitiesInput{MaxResults: 1, NextToken: page1.NextToken})
	if err != nil || len(page2.Activities) != 1 || aws.ToString(page2.Activities[0].Name) != "review" || page2.NextToken != nil {
		t.Fatalf("ListActivities page 2: %v %+v", err, page2)
	}

	smArn := create(t, c, "reviewed", `{"StartAt":"Review","States":{
	  "Review":{"Type":"Task","Resource":"`+actArn+`","Parameters":{"doc.$":"$.doc"},
	    "TimeoutSeconds":300,"HeartbeatSeconds":60,"ResultPath":"$.review","End":true}}}`)

	// A worker: take a task, report progress, answer.
	worker := func(answer func(token, input string) error) {
		t.Helper()
		task, err := c.GetActivityTask(ctx, &sfn.GetActivityTaskInput{ActivityArn: aws.String(actArn), WorkerName: aws.String("worker-1")})
		if err != nil || task.TaskToken == nil {
			t.Fatalf("GetActivityTask: %v %+v", err, task)
		}
		if _, err := c.SendTaskHeartbeat(ctx, &sfn.SendTaskHeartbeatInput{TaskToken: task.TaskToken}); err != nil {
			t.Fatal(err)
		}
		if err := answer(aws.ToString(task.TaskToken), aws.ToString(task.Input)); err != nil {
			t.Fatal(err)
		}
	}

	ok, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn), Input: aws.String(`{"doc":"d-1"}`)})
	if err != nil {
		t.Fatal(err)
	}
	worker(func(token, input string) error {
		if input != `{"doc":"d-1"}` {
			t.Errorf("task input = %s", input)
		}
		_, err := c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(token), Output: aws.String(`{"ok":true}`)})
		return err
	})
	rec := waitDone(t, srv.Engine(), aws.ToString(ok.ExecutionArn))
	if rec.Status != sfnengine.StatusSucceeded || aws.ToString(rec.Output) != `{"doc":"d-1","review":{"ok":true}}` {
		t.Fatalf("%s, output %s", rec.Status, aws.ToString(rec.Output))
	}
	names, events := historyTypes(t, c, aws.ToString(ok.ExecutionArn))
	want := []string{"ExecutionStarted", "TaskStateEntered", "ActivityScheduled", "ActivityStarted", "ActivitySucceeded",
		"TaskStateExited", "ExecutionSucceeded"}
	if !slices.Equal(names, want) {
		t.Fatalf("history = %v, want %v", names, want)
	}
	s := events[2].ActivityScheduledEventDetails
	if aws.ToString(s.Resource) != actArn || aws.ToString(s.Input) != `{"doc":"d-1"}` || aws.ToInt64(s.TimeoutInSeconds) != 300 ||
		aws.ToInt64(s.HeartbeatInSeconds) != 60 {
		t.Fatalf("ActivityScheduled = %+v", s)
	}
	if w := aws.ToString(events[3].ActivityStartedEventDetails.WorkerName); w != "worker-1" {
		t.Fatalf("ActivityStarted workerName = %q", w)
	}
	if out := aws.ToString(events[4].ActivitySucceededEventDetails.Output); out != `{"ok":true}` {
		t.Fatalf("ActivitySucceeded output = %s", out)
	}

	failed, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn), Input: aws.String(`{"doc":"d-2"}`)})
	if err != nil {
		t.Fatal(err)
	}
	worker(func(token, _ string) error {
		_, err := c.SendTaskFailure(ctx, &sfn.SendTaskFailureInput{TaskToken: aws.String(token), Error: aws.String("Unreadable"), Cause: aws.String("page 3")})
		return err
	})
	rec = waitDone(t, srv.Engine(), aws.ToString(failed.ExecutionArn))
	if rec.Status != sfnengine.StatusFailed || aws.ToString(rec.Error) != "Unreadable" || aws.ToString(rec.Cause) != "page 3" {
		t.Fatalf("%s %s %s, want FAILED Unreadable", rec.Status, aws.ToString(rec.Error), aws.ToString(rec.Cause))
	}
	if names, _ := historyTypes(t, c, aws.ToString(failed.ExecutionArn)); !slices.Contains(names, "ActivityFailed") {
		t.Fatalf("history = %v, want ActivityFailed", names)
	}

	// No task: the long poll answers empty once 60 s have passed on the engine's clock.
	var wg sync.WaitGroup
	wg.Add(1)
	var empty *sfn.GetActivityTaskOutput
	var pollErr error
	n, _ := clock.Waiters()
	go func() {
		defer wg.Done()
		empty, pollErr = c.GetActivityTask(ctx, &sfn.GetActivityTaskInput{ActivityArn: aws.String(actArn)})
	}()
	clock.MustAwaitWaiters(t, n+1)
	clock.Advance(sfnengine.MaxActivityPoll)
	wg.Wait()
	if pollErr != nil || empty.TaskToken != nil || empty.Input != nil {
		t.Fatalf("GetActivityTask without a task: %v %+v, want an empty answer", pollErr, empty)
	}

	if _, err := c.DeleteActivity(ctx, &sfn.DeleteActivityInput{ActivityArn: aws.String(actArn)}); err != nil {
		t.Fatal(err)
	}
	var noActivity *types.ActivityDoesNotExist
	if _, err := c.DescribeActivity(ctx, &sfn.DescribeActivityInput{ActivityArn: aws.String(actArn)}); !errors.As(err, &noActivity) ||
		noActivity.ErrorMessage() != "Activity Does Not Exist: '"+actArn+"'" {
		t.Fatalf("DescribeActivity after DeleteActivity: %v, want ActivityDoesNotExist", err)
	}
	if _, err := c.GetActivityTask(ctx, &sfn.GetActivityTaskInput{ActivityArn: aws.String(actArn)}); !errors.As(err, &noActivity) {
		t.Fatalf("GetActivityTask after DeleteActivity: %v, want ActivityDoesNotExist", err)
	}
}

// TestActivityAcrossRestart: an activity and a task scheduled on it survive a restart (file store): the new
// engine's worker gets the same task and completes the execution.
func TestActivityAcrossRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clock := sfnengine.NewManualClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	store := newCallbackStore(t, dir)
	c1, stop1 := servedEngine(t, sfnengine.Options{Store: store, Clock: clock, CheckpointEveryState: true})
	act, err := c1.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("sign")})
	if err != nil {
		t.Fatal(err)
	}
	smArn := create(t, c1, "signed", `{"StartAt":"Sign","States":{
	  "Sign":{"Type":"Task","Resource":"`+aws.ToString(act.ActivityArn)+`","TimeoutSeconds":3600,"End":true}}}`)
	start, err := c1.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn), Input: aws.String(`{"doc":7}`)})
	if err != nil {
		t.Fatal(err)
	}
	store.awaitSave(t, "scheduled activity task")
	stop1()

	second, c2 := restartEngine(t, dir, sfnengine.Options{Clock: clock, CheckpointEveryState: true})
	list, err := c2.ListActivities(ctx, &sfn.ListActivitiesInput{})
	if err != nil || len(list.Activities) != 1 || aws.ToString(list.Activities[0].ActivityArn) != aws.ToString(act.ActivityArn) {
		t.Fatalf("ListActivities after the restart: %v %+v", err, list)
	}
	task, err := c2.GetActivityTask(ctx, &sfn.GetActivityTaskInput{ActivityArn: act.ActivityArn, WorkerName: aws.String("w")})
	if err != nil || aws.ToString(task.Input) != `{"doc":7}` {
		t.Fatalf("GetActivityTask after the restart: %v %+v", err, task)
	}
	if _, err := c2.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: task.TaskToken, Output: aws.String(`"signed"`)}); err != nil {
		t.Fatal(err)
	}
	rec := waitDone(t, second, aws.ToString(start.ExecutionArn))
	if rec.Status != sfnengine.StatusSucceeded || aws.ToString(rec.Output) != `"signed"` {
		t.Fatalf("%s, output %s", rec.Status, aws.ToString(rec.Output))
	}
}

// TestCallbackTimeoutAcrossRestart: a waiting task's TimeoutSeconds keeps counting from when the task started, not
// from the restart: 40 s before it and 20 s after it, the task times out.
func TestCallbackTimeoutAcrossRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	lambda := newTokenLambda()
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	arn, token := stopWhileWaiting(t, dir, lambda, sfnengine.Options{Clock: sfnengine.NewManualClock(t0)}, "deadline", `{"StartAt":"Approve","States":{
	  "Approve":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
	    "Parameters":{"FunctionName":"approver","Payload":{"token.$":"$$.Task.Token"}},"TimeoutSeconds":60,"End":true}}}`, "")

	clock := sfnengine.NewManualClock(t0.Add(40 * time.Second)) // the engine was down for 40 s
	second, c2 := restartEngine(t, dir, sfnengine.Options{Lambda: lambda, Clock: clock, CheckpointEveryState: true})
	clock.MustAwaitWaiters(t, 1)
	clock.Advance(20 * time.Second)
	rec := waitDone(t, second, arn)
	if rec.Status != sfnengine.StatusFailed || aws.ToString(rec.Error) != "States.Timeout" || !rec.StopDate.Equal(t0.Add(60*time.Second)) {
		t.Fatalf("%s %s at %v, want FAILED States.Timeout 60 s after the start", rec.Status, aws.ToString(rec.Error), rec.StopDate)
	}
	names, _ := historyTypes(t, c2, arn)
	if want := []string{"ExecutionStarted", "TaskStateEntered", "TaskScheduled", "TaskStarted", "TaskSubmitted",
		"TaskTimedOut", "ExecutionFailed"}; !slices.Equal(names, want) {
		t.Fatalf("history = %v, want %v", names, want)
	}
	var timedOut *types.TaskTimedOut
	if _, err := c2.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(token), Output: aws.String(`{}`)}); !errors.As(err, &timedOut) {
		t.Fatalf("SendTaskSuccess after the timeout: %v, want TaskTimedOut", err)
	}
}
