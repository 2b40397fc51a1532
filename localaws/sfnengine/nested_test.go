package sfnengine_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// childDefinition succeeds with {"doubled": 2*n} for input {"n"}, and fails with Declined when $.decline is true.
const childDefinition = `{"StartAt":"Check","States":{
  "Check":{"Type":"Choice","Choices":[{"Variable":"$.decline","BooleanEquals":true,"Next":"Decline"}],"Default":"Double"},
  "Decline":{"Type":"Fail","Error":"Declined","Cause":"the child declined"},
  "Double":{"Type":"Pass","Parameters":{"doubled.$":"States.MathAdd($.n, $.n)"},"End":true}}}`

// parentDefinition starts child with resource (a startExecution form), catching every error into $.err.
func parentDefinition(resource, childArn string) string {
	return `{"StartAt":"Nested","States":{"Nested":{"Type":"Task","Resource":"arn:aws:states:::states:` + resource + `",
  "Parameters":{"StateMachineArn":"` + childArn + `","Input":{"n.$":"$.n","decline.$":"$.decline"},"Name.$":"$.name"},
  "Catch":[{"ErrorEquals":["States.ALL"],"ResultPath":"$.err","Next":"Caught"}],"End":true},
  "Caught":{"Type":"Pass","End":true}}}`
}

func createChild(t *testing.T, eng *sfnengine.Engine, name string) string {
	t.Helper()
	sm, err := eng.CreateStateMachine(context.Background(), sfnengine.CreateInput{Name: name, Definition: childDefinition, RoleArn: testRoleArn})
	if err != nil {
		t.Fatal(err)
	}
	return sm.Arn
}

// TestNestedStartExecution: states:startExecution starts the child and returns at once with its ARN and start
// date; .sync waits and returns the child's description with Input and Output as JSON text; .sync:2 the same with
// JSON values; a failed child fails a .sync task with States.TaskFailed and its description as the cause; a refused
// start is StepFunctions.<Exception>.
func TestNestedStartExecution(t *testing.T) {
	eng := newEngine(t, sfnengine.Options{})
	child := createChild(t, eng, "child")
	ctx := context.Background()

	t.Run("fire and forget", func(t *testing.T) {
		rec := run(t, eng, parentDefinition("startExecution", child), `{"n":2,"decline":false,"name":"c-async"}`)
		var out map[string]any
		if err := json.Unmarshal([]byte(*rec.Output), &out); err != nil {
			t.Fatal(err)
		}
		wantArn := "arn:aws:states:us-east-1:123456789012:execution:child:c-async"
		if out["ExecutionArn"] != wantArn || out["StartDate"] == nil || out["SdkHttpMetadata"] == nil || out["err"] != nil {
			t.Fatalf("output %s, want ExecutionArn %s, StartDate and the SDK metadata", *rec.Output, wantArn)
		}
		done, err := eng.Wait(ctx, wantArn)
		if err != nil || done.Status != sfnengine.StatusSucceeded || *done.Output != `{"doubled":4}` {
			t.Fatalf("child %+v, %v; want SUCCEEDED with {\"doubled\":4}", done, err)
		}
		sched := findEvent(rec.History, sfnengine.EventTaskScheduled)
		if sched.Details["resourceType"] != "states" || sched.Details["resource"] != "startExecution" {
			t.Fatalf("TaskScheduled %v, want resourceType states, resource startExecution", sched.Details)
		}
	})

	for _, tc := range []struct {
		name, resource string
		wantOutput     any
		wantInput      any
	}{
		{"sync", "startExecution.sync", `{"doubled":6}`, `{"decline":false,"n":3}`},
		{"sync2", "startExecution.sync:2", map[string]any{"doubled": 6.0}, map[string]any{"n": 3.0, "decline": false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "c-" + tc.name
			rec := run(t, eng, parentDefinition(tc.resource, child), `{"n":3,"decline":false,"name":"`+name+`"}`)
			var out map[string]any
			if err := json.Unmarshal([]byte(*rec.Output), &out); err != nil {
				t.Fatal(err)
			}
			if out["Status"] != "SUCCEEDED" || !jsonEqual(out["Output"], tc.wantOutput) || !jsonEqual(out["Input"], tc.wantInput) {
				t.Fatalf("output %s, want Status SUCCEEDED, Output %v, Input %v", *rec.Output, tc.wantOutput, tc.wantInput)
			}
			if _, err := time.Parse("2006-01-02T15:04:05.000Z", out["StopDate"].(string)); err != nil {
				t.Fatalf("StopDate %v: %v", out["StopDate"], err)
			}
		})
	}

	t.Run("failed child", func(t *testing.T) {
		rec := run(t, eng, parentDefinition("startExecution.sync:2", child), `{"n":1,"decline":true,"name":"c-declined"}`)
		var out struct {
			Err struct{ Error, Cause string } `json:"err"`
		}
		if err := json.Unmarshal([]byte(*rec.Output), &out); err != nil {
			t.Fatal(err)
		}
		var cause map[string]any
		if out.Err.Error != sfnengine.ErrNameTaskFailed || json.Unmarshal([]byte(out.Err.Cause), &cause) != nil ||
			cause["Status"] != "FAILED" || cause["Error"] != "Declined" || cause["Cause"] != "the child declined" {
			t.Fatalf("err %+v, want States.TaskFailed with the child's description (FAILED, Declined)", out.Err)
		}
	})

	t.Run("refused start", func(t *testing.T) {
		missing := strings.Replace(child, ":child", ":nobody", 1)
		rec := run(t, eng, parentDefinition("startExecution.sync", missing), `{"n":1,"decline":false,"name":"x"}`)
		var out struct {
			Err struct{ Error, Cause string } `json:"err"`
		}
		if err := json.Unmarshal([]byte(*rec.Output), &out); err != nil {
			t.Fatal(err)
		}
		if out.Err.Error != "StepFunctions.StateMachineDoesNotExistException" ||
			!strings.HasPrefix(out.Err.Cause, "State Machine Does Not Exist: '"+missing+"' (Service: AWSStepFunctions; Status Code: 400; Error Code: StateMachineDoesNotExist;") {
			t.Fatalf("err %+v, want StepFunctions.StateMachineDoesNotExistException with AWS's message", out.Err)
		}
		rec = run(t, eng, parentDefinition("startExecution", child), `{"n":1,"decline":false,"name":"c-async"}`)
		if !strings.Contains(*rec.Output, "StepFunctions.ExecutionAlreadyExistsException") {
			t.Fatalf("output %s, want StepFunctions.ExecutionAlreadyExistsException for a closed name", *rec.Output)
		}
	})
}

// TestNestedSyncExpressChild: a .sync:2 task whose child is an EXPRESS state machine waits for it as for a Standard
// one and returns its description with an express execution ARN.
func TestNestedSyncExpressChild(t *testing.T) {
	eng := newEngine(t, sfnengine.Options{})
	sm, err := eng.CreateStateMachine(context.Background(), sfnengine.CreateInput{Name: "express-child", Definition: childDefinition,
		RoleArn: testRoleArn, Type: sfnengine.TypeExpress})
	if err != nil {
		t.Fatal(err)
	}
	rec := run(t, eng, parentDefinition("startExecution.sync:2", sm.Arn), `{"n":5,"decline":false,"name":"fast"}`)
	var out map[string]any
	if err := json.Unmarshal([]byte(*rec.Output), &out); err != nil {
		t.Fatal(err)
	}
	arn, _ := out["ExecutionArn"].(string)
	if out["Status"] != "SUCCEEDED" || !jsonEqual(out["Output"], map[string]any{"doubled": 10.0}) ||
		!strings.HasPrefix(arn, "arn:aws:states:us-east-1:123456789012:express:express-child:fast:") {
		t.Fatalf("output %s, want the Express child's description with {\"doubled\":10}", *rec.Output)
	}
}

// TestNestedSyncStopStopsTheChild: stopping a parent that waits in a .sync task aborts the child too.
func TestNestedSyncStopStopsTheChild(t *testing.T) {
	eng := newEngine(t, sfnengine.Options{})
	ctx := context.Background()
	waiter, err := eng.CreateStateMachine(ctx, sfnengine.CreateInput{Name: "waiter", RoleArn: testRoleArn,
		Definition: `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":3600,"End":true}}}`})
	if err != nil {
		t.Fatal(err)
	}
	parent := start(t, eng, `{"StartAt":"Nested","States":{"Nested":{"Type":"Task","Resource":"arn:aws:states:::states:startExecution.sync:2",
  "Parameters":{"StateMachineArn":"`+waiter.Arn+`","Name":"held"},"End":true}}}`, `{}`)
	childArn := "arn:aws:states:us-east-1:123456789012:execution:waiter:held"
	eventually(t, "the child starts", func() bool {
		_, err := eng.DescribeExecution(ctx, childArn)
		return err == nil
	})
	if _, err := eng.StopExecution(ctx, parent.Arn, "Stopped", "by the test"); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	child, err := eng.Wait(wctx, childArn)
	if err != nil || child.Status != sfnengine.StatusAborted {
		t.Fatalf("child %+v, %v; want ABORTED after its parent was stopped", child, err)
	}
}

// eventually polls cond until it holds; the test fails if it does not within 30 s (a guard against a hang, not a
// timing).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting until %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestNestedSyncResultNamesTheVersionAndAlias: the result of a .sync or .sync:2 task is the child's DescribeExecution
// answer, so a child started with a version ARN carries StateMachineVersionArn, and one started with an alias ARN
// StateMachineAliasArn and the version the alias picked; a child started with the state machine's own ARN carries
// neither. Standard and Express children alike (the result omitted both).
func TestNestedSyncResultNamesTheVersionAndAlias(t *testing.T) {
	ctx := context.Background()
	eng := newEngine(t, sfnengine.Options{})
	for _, typ := range []string{sfnengine.TypeStandard, sfnengine.TypeExpress} {
		child := mustCreate(t, eng, sfnengine.CreateInput{Name: "child-" + strings.ToLower(typ), Definition: childDefinition,
			Type: typ, CreateOptions: sfnengine.CreateOptions{Publish: true}})
		version := child.Arn + ":1"
		alias, err := eng.CreateStateMachineAlias(ctx, "live", "", []sfnengine.Route{{VersionArn: version, Weight: 100}})
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name, target, wantVersion, wantAlias string
		}{
			{"state machine", child.Arn, "", ""},
			{"version", version, version, ""},
			{"alias", alias.Arn, version, alias.Arn},
		} {
			for _, resource := range []string{"startExecution.sync", "startExecution.sync:2"} {
				t.Run(typ+"/"+tc.name+"/"+resource, func(t *testing.T) {
					name := strings.NewReplacer(" ", "-", ":", "-", ".", "-").Replace(typ + "-" + tc.name + "-" + resource)
					rec := run(t, eng, parentDefinition(resource, tc.target), `{"n":2,"decline":false,"name":"`+name+`"}`)
					var out map[string]any
					if err := json.Unmarshal([]byte(*rec.Output), &out); err != nil {
						t.Fatal(err)
					}
					gotVersion, hasVersion := out["StateMachineVersionArn"]
					gotAlias, hasAlias := out["StateMachineAliasArn"]
					if out["Status"] != "SUCCEEDED" || out["StateMachineArn"] != child.Arn ||
						hasVersion != (tc.wantVersion != "") || hasAlias != (tc.wantAlias != "") ||
						(hasVersion && gotVersion != tc.wantVersion) || (hasAlias && gotAlias != tc.wantAlias) {
						t.Fatalf("output %s, want StateMachineArn %s, StateMachineVersionArn %q, StateMachineAliasArn %q (absent when empty)",
							*rec.Output, child.Arn, tc.wantVersion, tc.wantAlias)
					}
				})
			}
		}
	}
}
