package sfnapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
	"github.com/transferflow/orchestrator/localaws/stepfunctions"
)

// sagaLambda is the saga's functions: debit (and refund) always succeed, credit fails with creditErr when set.
type sagaLambda struct {
	mu        sync.Mutex
	calls     []map[string]any
	creditErr error
}

func (l *sagaLambda) Invoke(_ context.Context, name string, payload []byte) ([]byte, error) {
	var p map[string]any
	if err := json.Unmarshal(payload, &p); err != nil {
		return nil, err
	}
	p["function"] = name
	l.mu.Lock()
	l.calls = append(l.calls, p)
	l.mu.Unlock()
	switch {
	case name == "credit" && l.creditErr != nil:
		return nil, l.creditErr
	case p["leg"] == "DEBIT":
		return []byte(`{"ref":"deb-` + p["id"].(string) + `"}`), nil
	case p["leg"] == "CREDIT":
		return []byte(`{"ref":"cre-` + p["id"].(string) + `"}`), nil
	}
	return []byte(`{"refunded":true}`), nil
}

func (l *sagaLambda) legs() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, c := range l.calls {
		out = append(out, c["function"].(string)+":"+c["leg"].(string))
	}
	return out
}

func runSaga(t *testing.T, l *sagaLambda) (*sfn.Client, string, *sfn.DescribeExecutionOutput) {
	t.Helper()
	def, err := os.ReadFile(filepath.Join("testdata", "saga-jsonata.asl.json"))
	if err != nil {
		t.Fatal(err)
	}
	ts := stepfunctions.RunT(t, stepfunctions.WithEngineOptions(sfnengine.Options{Lambda: l}))
	c := ts.Client()
	smArn := create(t, c, "saga-jsonata", string(def))
	d := runInput(t, ts, smArn, `{"id":"tr_9","amount":25}`)
	return c, aws.ToString(d.ExecutionArn), d
}

// exitedVariables returns the assignedVariables of each state that assigned some, by state name, from the history
// as the SDK reads it.
func exitedVariables(events []types.HistoryEvent) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, e := range events {
		if d := e.StateExitedEventDetails; d != nil && len(d.AssignedVariables) > 0 {
			out[aws.ToString(d.Name)] = d.AssignedVariables
			if d.AssignedVariablesDetails == nil || d.AssignedVariablesDetails.Truncated {
				panic("assignedVariablesDetails missing or truncated")
			}
		}
	}
	return out
}

// TestJSONataSaga runs testdata/saga-jsonata.asl.json through the API: on success the output is built from the
// variables the Debit and Credit states assigned; when the credit fails, the refund carries the same id, amount
// and debit reference (read from variables), and the execution fails with a cause built from them.
func TestJSONataSaga(t *testing.T) {
	t.Run("success", func(t *testing.T) {
		l := &sagaLambda{}
		c, arn, d := runSaga(t, l)
		if d.Status != types.ExecutionStatusSucceeded {
			t.Fatalf("status %s: %s %s", d.Status, aws.ToString(d.Error), aws.ToString(d.Cause))
		}
		want := `{"status":"COMPLETED","id":"tr_9","amount":25,"debitRef":"deb-tr_9","creditRef":"cre-tr_9"}`
		if got := aws.ToString(d.Output); got != want {
			t.Fatalf("output %s, want %s", got, want)
		}
		if legs := l.legs(); !slices.Equal(legs, []string{"debit:DEBIT", "credit:CREDIT"}) {
			t.Fatalf("calls %v", legs)
		}
		if l.calls[0]["executionArn"] != arn || l.calls[1]["amount"] != float64(25) {
			t.Fatalf("payloads %v", l.calls)
		}
		names, events := historyTypes(t, c, arn)
		wantNames := []string{"ExecutionStarted", "TaskStateEntered", "TaskScheduled", "TaskStarted", "TaskSucceeded",
			"TaskStateExited", "TaskStateEntered", "TaskScheduled", "TaskStarted", "TaskSucceeded", "TaskStateExited",
			"SucceedStateEntered", "SucceedStateExited", "ExecutionSucceeded"}
		if !slices.Equal(names, wantNames) {
			t.Fatalf("history %v", names)
		}
		vars := exitedVariables(events)
		if want := map[string]string{"transferId": `"tr_9"`, "amount": "25", "debitRef": `"deb-tr_9"`}; !maps.Equal(vars["Debit"], want) {
			t.Fatalf("Debit assigned %v, want %v", vars["Debit"], want)
		}
		if want := map[string]string{"creditRef": `"cre-tr_9"`}; !maps.Equal(vars["Credit"], want) || len(vars) != 2 {
			t.Fatalf("assigned %v", vars)
		}
		if out := aws.ToString(events[5].StateExitedEventDetails.Output); out != `{"debited":true}` {
			t.Fatalf("Debit output %s", out)
		}
	})
	t.Run("compensation", func(t *testing.T) {
		l := &sagaLambda{creditErr: &sfnengine.FunctionError{Type: "AccountClosed", Message: "the account is closed"}}
		c, arn, d := runSaga(t, l)
		if d.Status != types.ExecutionStatusFailed || aws.ToString(d.Error) != "CreditFailed" {
			t.Fatalf("status %s: %s %s", d.Status, aws.ToString(d.Error), aws.ToString(d.Cause))
		}
		if want := "the credit of 25 for tr_9 failed (AccountClosed) and the debit deb-tr_9 was refunded"; aws.ToString(d.Cause) != want {
			t.Fatalf("cause %q, want %q", aws.ToString(d.Cause), want)
		}
		if legs := l.legs(); !slices.Equal(legs, []string{"debit:DEBIT", "credit:CREDIT", "debit:REFUND"}) {
			t.Fatalf("calls %v", legs)
		}
		refund := l.calls[2]
		if refund["id"] != "tr_9" || refund["amount"] != float64(25) || refund["debitRef"] != "deb-tr_9" {
			t.Fatalf("refund payload %v", refund)
		}
		names, events := historyTypes(t, c, arn)
		wantNames := []string{"ExecutionStarted", "TaskStateEntered", "TaskScheduled", "TaskStarted", "TaskSucceeded",
			"TaskStateExited", "TaskStateEntered", "TaskScheduled", "TaskStarted", "TaskFailed", "TaskStateExited",
			"TaskStateEntered", "TaskScheduled", "TaskStarted", "TaskSucceeded", "TaskStateExited",
			"FailStateEntered", "ExecutionFailed"}
		if !slices.Equal(names, wantNames) {
			t.Fatalf("history %v", names)
		}
		vars := exitedVariables(events)
		var failure struct{ Error, Cause string }
		if err := json.Unmarshal([]byte(vars["Credit"]["failure"]), &failure); err != nil || failure.Error != "AccountClosed" ||
			!strings.Contains(failure.Cause, "the account is closed") {
			t.Fatalf("the catcher assigned %v", vars["Credit"])
		}
		if _, ok := vars["Credit"]["creditRef"]; ok {
			t.Fatalf("a failed Credit assigned its own Assign: %v", vars["Credit"])
		}
	})
}

// TestVariablesAcrossRestart: the variables an execution assigned before it waited for a task token are in its
// checkpoint; a new engine on the same directory resumes with them.
func TestVariablesAcrossRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	lambda := newTokenLambda()
	clock := sfnengine.NewManualClock(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	// A JSONPath machine with JSONata states: variables are shared by both languages.
	const def = `{"StartAt":"Remember","States":{
	  "Remember":{"Type":"Pass","QueryLanguage":"JSONata","Assign":{"transferId":"{% $states.input.id %}","amount":"{% $states.input.amount %}"},
	    "Output":{},"Next":"Legacy"},
	  "Legacy":{"Type":"Pass","Assign":{"note":"kept","seen.$":"$transferId"},"Next":"Approve"},
	  "Approve":{"Type":"Task","QueryLanguage":"JSONata","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
	    "Arguments":{"FunctionName":"approver","Payload":{"token":"{% $states.context.Task.Token %}"}},
	    "Output":{"id":"{% $seen %}","amount":"{% $amount %}","note":"{% $note %}","approved":"{% $states.result.approved %}"},
	    "End":true}}}`
	arn, token := stopWhileWaiting(t, dir, lambda, sfnengine.Options{Clock: clock}, "variables-restart", def, `{"id":"tr_7","amount":12.5}`)

	saved, err := mustFileStore(t, dir).Execution(ctx, arn)
	if err != nil {
		t.Fatal(err)
	}
	if saved.Checkpoint == nil || saved.Checkpoint.Variables != `{"amount":12.5,"note":"kept","seen":"tr_7","transferId":"tr_7"}` {
		t.Fatalf("checkpoint %+v, want the variables", saved.Checkpoint)
	}

	second, c2 := restartEngine(t, dir, sfnengine.Options{Lambda: lambda, Clock: clock, CheckpointEveryState: true})
	if _, err := c2.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(token), Output: aws.String(`{"approved":true}`)}); err != nil {
		t.Fatal(err)
	}
	rec := waitDone(t, second, arn)
	if rec.Status != sfnengine.StatusSucceeded || aws.ToString(rec.Output) != `{"id":"tr_7","amount":12.5,"note":"kept","approved":true}` {
		t.Fatalf("after the restart: %s, output %s", rec.Status, aws.ToString(rec.Output))
	}
}

// TestJSONataDefinitionErrors: CreateStateMachine refuses JSONata problems with InvalidDefinition, and
// ValidateStateMachineDefinition reports each at its location.
func TestJSONataDefinitionErrors(t *testing.T) {
	c := stepfunctions.RunT(t).Client()
	ctx := context.Background()
	def := `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","QueryLanguage":"JSONPath","End":true},
	  "B":{"Type":"Pass","Output":"{% phone %}","End":true}}}`
	_, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("bad-jsonata"), Definition: aws.String(def), RoleArn: aws.String(role)})
	var invalid *types.InvalidDefinition
	if !errors.As(err, &invalid) || !strings.Contains(invalid.ErrorMessage(), "'QueryLanguage' can not be 'JSONPath' if set to 'JSONata' for whole state machine") {
		t.Fatalf("CreateStateMachine: %v, want InvalidDefinition", err)
	}
	v, err := c.ValidateStateMachineDefinition(ctx, &sfn.ValidateStateMachineDefinitionInput{Definition: aws.String(def)})
	if err != nil {
		t.Fatal(err)
	}
	var locs []string
	for _, d := range v.Diagnostics {
		locs = append(locs, aws.ToString(d.Code)+" "+aws.ToString(d.Location)+" "+aws.ToString(d.Message))
	}
	want := []string{
		"SCHEMA_VALIDATION_FAILED /States/A 'QueryLanguage' can not be 'JSONPath' if set to 'JSONata' for whole state machine",
		"UNSUPPORTED_JSONATA_EXPRESSION /States/B/Output Reference to 'phone' at the top level is not supported.",
	}
	if v.Result != types.ValidateStateMachineDefinitionResultCodeFail || !containsAll(locs, want) {
		t.Fatalf("diagnostics %v, want %v", locs, want)
	}
}

func containsAll(got, want []string) bool {
	for _, w := range want {
		if !slices.Contains(got, w) {
			return false
		}
	}
	return true
}

// TestQueryEvaluationErrorOverTheWire: an expression that returns nothing fails the execution with
// States.QueryEvaluationError, and the history read through the SDK has the EvaluationFailed event with its
// location.
func TestQueryEvaluationErrorOverTheWire(t *testing.T) {
	ts := stepfunctions.RunT(t)
	c := ts.Client()
	ctx := context.Background()
	smArn := create(t, c, "query-error", `{"QueryLanguage":"JSONata","StartAt":"A","States":{
	  "A":{"Type":"Pass","Output":{"v":"{% $states.input.absent %}"},"End":true}}}`)
	start, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn)})
	if err != nil {
		t.Fatal(err)
	}
	arn := aws.ToString(start.ExecutionArn)
	waitDone(t, ts.Engine(), arn)
	names, events := historyTypes(t, c, arn)
	if !slices.Equal(names, []string{"ExecutionStarted", "PassStateEntered", "EvaluationFailed", "ExecutionFailed"}) {
		t.Fatalf("history %v", names)
	}
	d := events[2].EvaluationFailedEventDetails
	cause := "An error occurred while executing the state 'A' (entered at the event id #2). The JSONata expression '$states.input.absent' specified for the field 'Output/v' returned nothing (undefined)."
	if d == nil || aws.ToString(d.State) != "A" || aws.ToString(d.Error) != "States.QueryEvaluationError" ||
		aws.ToString(d.Location) != "Output/v" || aws.ToString(d.Cause) != cause {
		t.Fatalf("EvaluationFailed details %+v", d)
	}
	f := events[3].ExecutionFailedEventDetails
	if aws.ToString(f.Error) != "States.QueryEvaluationError" || aws.ToString(f.Cause) != cause {
		t.Fatalf("ExecutionFailed %+v", f)
	}
}
