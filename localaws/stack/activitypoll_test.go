package stack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/transferflow/orchestrator/localaws/internal/httpserver"
	"github.com/transferflow/orchestrator/localaws/sfnapi"
	"github.com/transferflow/orchestrator/localaws/sfnengine"
	"github.com/transferflow/orchestrator/localaws/stepfunctions"
)

// activityMachine runs one Task on the activity "review" and ends with its result.
const activityMachine = `{"StartAt":"Review","States":{"Review":{"Type":"Task",` +
	`"Resource":"arn:aws:states:us-east-1:123456789012:activity:review","End":true}}}`

// pollServer serves an engine with opts through the stack's Step Functions server with timeouts t, and returns the
// engine, an SDK client of it without retries, that client's transport, and the ARN of the activity "review".
func pollServer(t *testing.T, opts sfnengine.Options, timeouts httpserver.Timeouts) (*sfnengine.Engine, *sfn.Client, *http.Transport, string) {
	t.Helper()
	srv := stepfunctions.New(stepfunctions.WithEngineOptions(opts))
	t.Cleanup(srv.Close)
	addr := listen(t, sfnServer(srv.Handler(), timeouts, slog.New(slog.DiscardHandler)))
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	c := sfn.New(sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://" + addr), RetryMaxAttempts: 1,
		HTTPClient: &http.Client{Transport: tr}, Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")},
		sfnapi.WithoutHostPrefix)
	eng := srv.Engine()
	act, err := eng.CreateActivity(context.Background(), "review", nil)
	if err != nil {
		t.Fatal(err)
	}
	return eng, c, tr, act.Arn
}

// startReview starts an execution of activityMachine, which queues a task on "review".
func startReview(t *testing.T, eng *sfnengine.Engine) string {
	t.Helper()
	ctx := context.Background()
	sm, err := eng.CreateStateMachine(ctx, sfnengine.CreateInput{Name: "review", Definition: activityMachine,
		RoleArn: "arn:aws:iam::123456789012:role/r"})
	if err != nil {
		t.Fatal(err)
	}
	x, err := eng.StartExecution(ctx, sfnengine.StartInput{StateMachineArn: sm.Arn, Input: `{"doc":7}`})
	if err != nil {
		t.Fatal(err)
	}
	return x.Arn
}

// TestSFNServerAnswersAnIdlePollPastItsWriteTimeout: an idle GetActivityTask is held for the engine's ActivityPoll
// and then answered with an empty task, through the stack's Step Functions server whose write and read timeouts are
// shorter than that hold (as the stack's 60 s write timeout is no longer than AWS's 60 s poll).
func TestSFNServerAnswersAnIdlePollPastItsWriteTimeout(t *testing.T) {
	const hold = 1500 * time.Millisecond
	timeouts := httpserver.Timeouts{Header: 200 * time.Millisecond, Body: 200 * time.Millisecond, Write: 300 * time.Millisecond, Idle: time.Second}
	_, c, _, arn := pollServer(t, sfnengine.Options{ActivityPoll: hold}, timeouts)
	start := time.Now()
	out, err := c.GetActivityTask(context.Background(), &sfn.GetActivityTaskInput{ActivityArn: aws.String(arn), WorkerName: aws.String("w")})
	if err != nil {
		t.Fatalf("GetActivityTask on an idle activity: %v, want an empty task after the hold", err)
	}
	if out.TaskToken != nil || out.Input != nil {
		t.Fatalf("GetActivityTask on an idle activity: %v, want an empty task", describePoll(out, nil))
	}
	// Timers never fire early: an answer before the hold means the poll was not held.
	if waited := time.Since(start); waited < hold {
		t.Fatalf("the empty task came after %s, before the %s hold", waited, hold)
	}
}

// TestSFNServerHandsATaskToAWaitingPoll: a task scheduled while a GetActivityTask waits is handed to it at once
// (the engine's clock, a ManualClock, never reaches the hold), and its token completes the execution.
func TestSFNServerHandsATaskToAWaitingPoll(t *testing.T) {
	clock := sfnengine.NewManualClock(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	eng, c, _, arn := pollServer(t, sfnengine.Options{Clock: clock}, SFNTimeouts)
	ctx := context.Background()
	n, _ := clock.Waiters()
	type answer struct {
		out *sfn.GetActivityTaskOutput
		err error
	}
	got := make(chan answer, 1)
	go func() {
		out, err := c.GetActivityTask(ctx, &sfn.GetActivityTaskInput{ActivityArn: aws.String(arn), WorkerName: aws.String("w")})
		got <- answer{out, err}
	}()
	clock.MustAwaitWaiters(t, n+1) // the poll waits
	x := startReview(t, eng)
	a := <-got
	if a.err != nil || aws.ToString(a.out.TaskToken) == "" || aws.ToString(a.out.Input) != `{"doc":7}` {
		t.Fatalf("GetActivityTask while the task was scheduled: %v, want its token and input", describePoll(a.out, a.err))
	}
	if _, err := c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: a.out.TaskToken, Output: aws.String(`{"ok":true}`)}); err != nil {
		t.Fatal(err)
	}
	rec, err := eng.Wait(ctx, x)
	if err != nil || rec.Status != sfnengine.StatusSucceeded || aws.ToString(rec.Output) != `{"ok":true}` {
		t.Fatalf("execution: %v %+v, want SUCCEEDED with the worker's output", err, rec)
	}
}

// TestSFNServerEndsACancelledPoll: a client that gives up on its GetActivityTask ends the poll on the server too:
// no goroutine is left waiting in it, the goroutine count comes back to what it was, and a task scheduled afterwards
// goes to the next poll, not to the one that was given up.
func TestSFNServerEndsACancelledPoll(t *testing.T) {
	clock := sfnengine.NewManualClock(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	eng, c, tr, arn := pollServer(t, sfnengine.Options{Clock: clock}, SFNTimeouts)
	baseline := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	n, _ := clock.Waiters()
	done := make(chan error, 1)
	go func() {
		_, err := c.GetActivityTask(ctx, &sfn.GetActivityTaskInput{ActivityArn: aws.String(arn), WorkerName: aws.String("gone")})
		done <- err
	}()
	clock.MustAwaitWaiters(t, n+1) // the poll waits on the server
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled GetActivityTask returned %v, want context.Canceled", err)
	}
	tr.CloseIdleConnections()
	var polling bool
	var count int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		buf := make([]byte, 1<<20)
		polling = strings.Contains(string(buf[:runtime.Stack(buf, true)]), "sfnengine.(*Engine).GetActivityTask")
		count = runtime.NumGoroutine()
		if !polling && count <= baseline {
			break
		}
	}
	if polling || count > baseline {
		buf := make([]byte, 1<<20)
		t.Fatalf("after the client gave up: a goroutine still in GetActivityTask: %v; %d goroutines, %d before the poll\n%s",
			polling, count, baseline, buf[:runtime.Stack(buf, true)])
	}

	x := startReview(t, eng)
	out, err := c.GetActivityTask(context.Background(), &sfn.GetActivityTaskInput{ActivityArn: aws.String(arn), WorkerName: aws.String("next")})
	if err != nil || aws.ToString(out.TaskToken) == "" {
		t.Fatalf("GetActivityTask after the cancelled one: %v, want the task", describePoll(out, err))
	}
	// The task is handed to the worker first; the execution records ActivityStarted on its own goroutine just after.
	var worker string
	started := false
	for deadline := time.Now().Add(10 * time.Second); !started && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		h, err := eng.History(context.Background(), x)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range h {
			if e.Type == sfnengine.EventActivityStarted {
				worker, _ = e.Details["workerName"].(string)
				started = true
			}
		}
	}
	if !started {
		t.Fatal("no ActivityStarted in the execution's history 10 s after the task was handed out")
	}
	if worker != "next" {
		t.Fatalf("ActivityStarted names worker %q, want %q (the poll that was given up took no task)", worker, "next")
	}
}

// describePoll says what a GetActivityTask answered.
func describePoll(out *sfn.GetActivityTaskOutput, err error) string {
	if err != nil {
		return "error " + err.Error()
	}
	return fmt.Sprintf("taskToken %q, input %q", aws.ToString(out.TaskToken), aws.ToString(out.Input))
}
