package sfnapi_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
	"github.com/transferflow/orchestrator/localaws/stepfunctions"
)

const role = "arn:aws:iam::123456789012:role/sfn"

const passChoice = `{
  "StartAt": "Init",
  "States": {
    "Init": {"Type": "Pass", "Result": {"n": 1}, "ResultPath": "$.r", "Next": "Check"},
    "Check": {"Type": "Choice", "Choices": [{"Variable": "$.r.n", "NumericEquals": 1, "Next": "Done"}], "Default": "Bad"},
    "Bad": {"Type": "Fail", "Error": "Bad", "Cause": "n is not 1"},
    "Done": {"Type": "Succeed"}
  }
}`

// waitForever never finishes unless the clock moves: it keeps an execution RUNNING.
const waitForever = `{"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 3600, "End": true}}}`

func create(t *testing.T, c *sfn.Client, name, def string) string {
	t.Helper()
	out, err := c.CreateStateMachine(context.Background(), &sfn.CreateStateMachineInput{
		Name: aws.String(name), Definition: aws.String(def), RoleArn: aws.String(role)})
	if err != nil {
		t.Fatalf("CreateStateMachine %s: %v", name, err)
	}
	return aws.ToString(out.StateMachineArn)
}

func TestCreateAndDescribeStateMachine(t *testing.T) {
	srv := stepfunctions.RunT(t)
	c := srv.Client()
	ctx := context.Background()
	arn := create(t, c, "pass-choice", passChoice)
	if want := "arn:aws:states:us-east-1:123456789012:stateMachine:pass-choice"; arn != want {
		t.Fatalf("arn = %s, want %s", arn, want)
	}
	d, err := c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(arn)})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(d.Definition) != passChoice || d.Type != types.StateMachineTypeStandard || d.Status != types.StateMachineStatusActive {
		t.Fatalf("describe = %+v", d)
	}
	l, err := c.ListStateMachines(ctx, &sfn.ListStateMachinesInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.StateMachines) != 1 || aws.ToString(l.StateMachines[0].Name) != "pass-choice" {
		t.Fatalf("list = %+v", l.StateMachines)
	}
}

func TestAPIErrors(t *testing.T) {
	srv := stepfunctions.RunT(t, stepfunctions.WithClock(sfnengine.NewManualClock(time.Unix(1_700_000_000, 0))))
	c := srv.Client()
	ctx := context.Background()
	smArn := create(t, c, "sm", passChoice)
	tests := []struct {
		name    string
		call    func() error
		wantErr any
		wantMsg string
	}{
		{
			name: "invalid definition lists every positioned problem",
			call: func() error {
				return errOf(c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("bad"), RoleArn: aws.String(role),
					Definition: aws.String(`{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Retry":[{"ErrorEquals":["States.ALL"],"BackoffRate":0.5}],"Next":"Nowhere"}}}`)}))
			},
			wantErr: new(*types.InvalidDefinition),
			wantMsg: "States.A.Retry[0].BackoffRate: must be >= 1, States.A.Next: missing transition target: state \"Nowhere\" does not exist",
		},
		{
			name: "definition that is not JSON",
			call: func() error {
				return errOf(c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("bad2"), RoleArn: aws.String(role), Definition: aws.String(`{`)}))
			},
			wantErr: new(*types.InvalidDefinition),
			wantMsg: "definition is not valid JSON",
		},
		{
			name: "invalid state machine name",
			call: func() error {
				return errOf(c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("has space"), RoleArn: aws.String(role), Definition: aws.String(passChoice)}))
			},
			wantErr: new(*types.InvalidName),
		},
		{
			name: "unknown state machine",
			call: func() error {
				return errOf(c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String("arn:aws:states:us-east-1:123456789012:stateMachine:nope")}))
			},
			wantErr: new(*types.StateMachineDoesNotExist),
		},
		{
			name: "start on unknown state machine",
			call: func() error {
				return errOf(c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String("arn:aws:states:us-east-1:123456789012:stateMachine:nope")}))
			},
			wantErr: new(*types.StateMachineDoesNotExist),
		},
		{
			name: "malformed arn",
			call: func() error {
				return errOf(c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String("not-an-arn")}))
			},
			wantErr: new(*types.InvalidArn),
		},
		{
			name: "unknown execution",
			call: func() error {
				return errOf(c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String("arn:aws:states:us-east-1:123456789012:execution:sm:nope")}))
			},
			wantErr: new(*types.ExecutionDoesNotExist),
		},
		{
			name: "input that is not JSON",
			call: func() error {
				return errOf(c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn), Input: aws.String("{nope")}))
			},
			wantErr: new(*types.InvalidExecutionInput),
		},
		{
			name: "invalid execution name",
			call: func() error {
				return errOf(c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn), Name: aws.String("a/b")}))
			},
			wantErr: new(*types.InvalidName),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.As(err, tt.wantErr) {
				t.Fatalf("error %T %v, want %T", err, err, tt.wantErr)
			}
			if tt.wantMsg != "" && !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("message %q does not contain %q", err.Error(), tt.wantMsg)
			}
		})
	}
}

// stores are the engine's stores; a closed execution is read back from the one in use.
var stores = []struct {
	name  string
	store func(t *testing.T) sfnengine.Store
}{
	{name: "memory", store: func(*testing.T) sfnengine.Store { return sfnengine.NewMemoryStore() }},
	{name: "files", store: func(t *testing.T) sfnengine.Store {
		s, err := sfnengine.NewFileStore(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}},
}

func TestExecutionLifecycle(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) { testExecutionLifecycle(t, st.store(t)) })
	}
}

func testExecutionLifecycle(t *testing.T, store sfnengine.Store) {
	srv := stepfunctions.RunT(t, stepfunctions.WithEngineOptions(sfnengine.Options{Store: store}))
	c := srv.Client()
	ctx := context.Background()
	smArn := create(t, c, "pass-choice", passChoice)
	start, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn), Name: aws.String("run-1"), Input: aws.String(`{"a":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Engine().Wait(ctx, aws.ToString(start.ExecutionArn)); err != nil {
		t.Fatal(err)
	}
	d, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: start.ExecutionArn})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != types.ExecutionStatusSucceeded || aws.ToString(d.Output) != `{"a":1,"r":{"n":1}}` || d.StopDate == nil {
		t.Fatalf("describe = status %s output %s stop %v", d.Status, aws.ToString(d.Output), d.StopDate)
	}
	wantTypes := []types.HistoryEventType{"ExecutionStarted", "PassStateEntered", "PassStateExited", "ChoiceStateEntered",
		"ChoiceStateExited", "SucceedStateEntered", "SucceedStateExited", "ExecutionSucceeded"}
	var got []types.HistoryEventType
	var token *string
	for pages := 0; ; pages++ {
		h, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: start.ExecutionArn, MaxResults: 3, NextToken: token})
		if err != nil {
			t.Fatal(err)
		}
		if len(h.Events) > 3 {
			t.Fatalf("page of %d events with maxResults 3", len(h.Events))
		}
		for _, e := range h.Events {
			got = append(got, e.Type)
		}
		if token = h.NextToken; token == nil {
			break
		}
		if pages > 5 {
			t.Fatal("pagination does not end")
		}
	}
	if strings.Join(toStrings(got), ",") != strings.Join(toStrings(wantTypes), ",") {
		t.Fatalf("history = %v, want %v", got, wantTypes)
	}
	rev, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: start.ExecutionArn, ReverseOrder: true, MaxResults: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rev.Events[0].Type != types.HistoryEventTypeExecutionSucceeded || rev.Events[0].Id != 8 || rev.Events[0].PreviousEventId != 7 {
		t.Fatalf("last event = %+v", rev.Events[0])
	}
	if det := rev.Events[0].ExecutionSucceededEventDetails; det == nil || aws.ToString(det.Output) != `{"a":1,"r":{"n":1}}` {
		t.Fatalf("ExecutionSucceeded details = %+v", det)
	}
	l, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(smArn), StatusFilter: types.ExecutionStatusSucceeded})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Executions) != 1 || aws.ToString(l.Executions[0].Name) != "run-1" {
		t.Fatalf("list = %+v", l.Executions)
	}
	// A closed execution's name cannot be reused, whatever the input.
	_, err = c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn), Name: aws.String("run-1"), Input: aws.String(`{"a":1}`)})
	var exists *types.ExecutionAlreadyExists
	if !errors.As(err, &exists) {
		t.Fatalf("restart of a closed name: %v, want ExecutionAlreadyExists", err)
	}
}

func toStrings(ts []types.HistoryEventType) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return out
}

func TestRunningNameReuseAndStop(t *testing.T) {
	clock := sfnengine.NewManualClock(time.Unix(1_700_000_000, 0))
	srv := stepfunctions.RunT(t, stepfunctions.WithClock(clock))
	c := srv.Client()
	ctx := context.Background()
	smArn := create(t, c, "waiter", waitForever)
	first, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn), Name: aws.String("same"), Input: aws.String(`{"x":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn), Name: aws.String("same"), Input: aws.String(`{"x":1}`)})
	if err != nil {
		t.Fatalf("same name and input while running: %v", err)
	}
	if aws.ToString(again.ExecutionArn) != aws.ToString(first.ExecutionArn) || !again.StartDate.Equal(*first.StartDate) {
		t.Fatalf("same name and input returned %v, want %v", again, first)
	}
	_, err = c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn), Name: aws.String("same"), Input: aws.String(`{"x":2}`)})
	var exists *types.ExecutionAlreadyExists
	if !errors.As(err, &exists) {
		t.Fatalf("same name, other input: %v, want ExecutionAlreadyExists", err)
	}
	stop, err := c.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: first.ExecutionArn, Error: aws.String("Manual"), Cause: aws.String("stopped by test")})
	if err != nil {
		t.Fatal(err)
	}
	if stop.StopDate == nil {
		t.Fatal("no stop date")
	}
	d, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: first.ExecutionArn})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != types.ExecutionStatusAborted || aws.ToString(d.Error) != "Manual" || aws.ToString(d.Cause) != "stopped by test" {
		t.Fatalf("after stop: %s %s %s", d.Status, aws.ToString(d.Error), aws.ToString(d.Cause))
	}
	h, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: first.ExecutionArn, ReverseOrder: true, MaxResults: 1})
	if err != nil {
		t.Fatal(err)
	}
	if h.Events[0].Type != types.HistoryEventTypeExecutionAborted || aws.ToString(h.Events[0].ExecutionAbortedEventDetails.Error) != "Manual" {
		t.Fatalf("last event = %+v", h.Events[0])
	}
}

// TestMissingRequiredFields: each operation refuses a request without its ARN with AWS's ValidationException. The
// requests go over the wire by hand: the Go SDK checks required members before sending, other clients do not.
// ListExecutions, whose stateMachineArn is optional beside mapRunArn, is checked in
// TestMapRunChildExecutionsThroughTheSDK.
func TestMissingRequiredFields(t *testing.T) {
	srv := stepfunctions.RunT(t)
	for op, member := range map[string]string{
		"DescribeStateMachine": "stateMachineArn", "DeleteStateMachine": "stateMachineArn", "UpdateStateMachine": "stateMachineArn",
		"StartExecution": "stateMachineArn", "DescribeExecution": "executionArn",
		"DescribeStateMachineForExecution": "executionArn", "StopExecution": "executionArn", "GetExecutionHistory": "executionArn",
		"ValidateStateMachineDefinition": "definition",
	} {
		t.Run(op, func(t *testing.T) {
			status, typ, msg := call(t, srv.URL(), op, map[string]any{})
			if status != http.StatusBadRequest || !strings.HasSuffix(typ, "ValidationException") ||
				!strings.Contains(msg, "'"+member+"'") || !strings.Contains(msg, "Member must not be null") {
				t.Fatalf("%d %s %q, want a ValidationException naming %s", status, typ, msg, member)
			}
		})
	}
}

// TestExecutionPastRetention checks that an execution past Options.HistoryRetention answers as an unknown one does
// on AWS, and leaves ListExecutions, while a newer one is still served.
func TestExecutionPastRetention(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			clock := sfnengine.NewManualClock(time.Unix(1_700_000_000, 0))
			srv := stepfunctions.RunT(t, stepfunctions.WithEngineOptions(sfnengine.Options{Store: st.store(t), Clock: clock, HistoryRetention: 24 * time.Hour}))
			c := srv.Client()
			ctx := context.Background()
			smArn := create(t, c, "retained", passChoice)
			old := startAndWait(t, c, srv.Engine(), smArn, "old")
			clock.Advance(12 * time.Hour)
			recent := startAndWait(t, c, srv.Engine(), smArn, "recent")
			clock.Advance(12*time.Hour + time.Second)

			var missing *types.ExecutionDoesNotExist
			if _, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: old}); !errors.As(err, &missing) {
				t.Errorf("DescribeExecution past retention: %v, want ExecutionDoesNotExist", err)
			}
			if _, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: old}); !errors.As(err, &missing) {
				t.Errorf("GetExecutionHistory past retention: %v, want ExecutionDoesNotExist", err)
			}
			l, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(smArn)})
			if err != nil || len(l.Executions) != 1 || aws.ToString(l.Executions[0].Name) != "recent" {
				t.Fatalf("ListExecutions = %+v, %v", l, err)
			}
			h, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: recent, ReverseOrder: true, MaxResults: 2})
			if err != nil || len(h.Events) != 2 || h.Events[0].Id != 8 || h.NextToken == nil {
				t.Fatalf("GetExecutionHistory of the recent one: %+v, %v", h, err)
			}
		})
	}
}
