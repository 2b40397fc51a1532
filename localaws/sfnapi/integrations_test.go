package sfnapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/transferflow/orchestrator/localaws/stepfunctions"
)

// TestUnsupportedIntegrationsAreRefusedUpFront: a Task resource the engine does not run (an AWS integration it
// lacks, or an ARN that names no integration), at any depth, is refused by CreateStateMachine and UpdateStateMachine
// with InvalidDefinition and reported by ValidateStateMachineDefinition at its Resource, instead of failing at run
// time with an error no Catch expects. The supported ones pass.
func TestUnsupportedIntegrationsAreRefusedUpFront(t *testing.T) {
	ctx := context.Background()
	c := stepfunctions.RunT(t).Client()
	task := func(resource string) string {
		return `{"Type":"Task","Resource":"` + resource + `","End":true}`
	}
	machine := func(state string) string { return `{"StartAt":"T","States":{"T":` + state + `}}` }
	for _, tc := range []struct {
		name, definition, location, wantMsg string
		wantCode                            string // empty: INVALID_RESOURCE
	}{
		{"aws integration the engine lacks", machine(task("arn:aws:states:::glue:startJobRun.sync")), "/States/T/Resource",
			"The resource provided arn:aws:states:::glue:startJobRun.sync is not supported by the local engine.", ""},
		{"aws sdk integration", machine(task("arn:aws:states:::aws-sdk:s3:getObject")), "/States/T/Resource", "is not supported by the local engine", ""},
		{"not an integration", machine(task("arn:aws:states:::nothing")), "/States/T/Resource",
			"The resource provided arn:aws:states:::nothing is not recognized. The value is not a valid resource ARN, or the resource is not available in this region.", ""},
		{"callback on dynamodb", machine(task("arn:aws:states:::dynamodb:putItem.waitForTaskToken")), "/States/T/Resource", "not supported", ""},
		{"callback on a .sync job", machine(task("arn:aws:states:::states:startExecution.sync.waitForTaskToken")), "/States/T/Resource", "not supported", ""},
		{"inside a parallel branch", machine(`{"Type":"Parallel","Branches":[` + machine(task("arn:aws:states:::ecs:runTask.sync")) + `],"End":true}`),
			"/States/T/Branches[0]/States/T/Resource", "not supported", ""},
		{"inside a map", machine(`{"Type":"Map","ItemProcessor":` + machine(task("arn:aws:states:::batch:submitJob")) + `,"End":true}`),
			"/States/T/ItemProcessor/States/T/Resource", "not supported", ""},
		{"required parameter missing", machine(`{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"Payload":{}},"End":true}`),
			"/States/T/Parameters", "The field 'FunctionName' is required but was missing", "SCHEMA_VALIDATION_FAILED"},
		{"required parameter missing behind a callback", machine(`{"Type":"Task","Resource":"arn:aws:states:::sqs:sendMessage.waitForTaskToken","Parameters":{"QueueUrl.$":"$.q"},"End":true}`),
			"/States/T/Parameters", "The field 'MessageBody' is required but was missing", "SCHEMA_VALIDATION_FAILED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := c.ValidateStateMachineDefinition(ctx, &sfn.ValidateStateMachineDefinitionInput{Definition: aws.String(tc.definition)})
			if err != nil {
				t.Fatal(err)
			}
			wantCode := tc.wantCode
			if wantCode == "" {
				wantCode = "INVALID_RESOURCE"
			}
			if v.Result != types.ValidateStateMachineDefinitionResultCodeFail || len(v.Diagnostics) != 1 ||
				aws.ToString(v.Diagnostics[0].Location) != tc.location || !strings.Contains(aws.ToString(v.Diagnostics[0].Message), tc.wantMsg) ||
				aws.ToString(v.Diagnostics[0].Code) != wantCode {
				t.Fatalf("validate: %s %+v, want FAIL with one %s diagnostic at %s saying %q", v.Result, v.Diagnostics, wantCode, tc.location, tc.wantMsg)
			}
			_, err = c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("refused"), Definition: aws.String(tc.definition),
				RoleArn: aws.String("arn:aws:iam::123456789012:role/sfn")})
			var inv *types.InvalidDefinition
			if !errors.As(err, &inv) || !strings.Contains(inv.ErrorMessage(), tc.wantMsg) {
				t.Fatalf("create: %v, want InvalidDefinition saying %q", err, tc.wantMsg)
			}
		})
	}

	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("supported"), RoleArn: aws.String("arn:aws:iam::123456789012:role/sfn"),
		Definition: aws.String(`{"StartAt":"A","States":{
  "A":{"Type":"Task","Resource":"arn:aws:states:::sqs:sendMessage.waitForTaskToken","Parameters":{"QueueUrl":"q","MessageBody.$":"$$.Task.Token"},"Next":"B"},
  "B":{"Type":"Task","Resource":"arn:aws:states:::sns:publish","Parameters":{"TopicArn":"t","Message":"m"},"Next":"C"},
  "C":{"Type":"Task","Resource":"arn:aws:states:::states:startExecution.sync:2","Parameters":{"StateMachineArn":"s"},"Next":"D"},
  "D":{"Type":"Task","Resource":"arn:aws:states:::events:putEvents","Parameters":{"Entries":[]},"End":true}}}`)})
	if err != nil {
		t.Fatalf("create with the supported integrations: %v", err)
	}
	_, err = c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: sm.StateMachineArn,
		Definition: aws.String(machine(task("arn:aws:states:::glue:startJobRun")))})
	var inv *types.InvalidDefinition
	if !errors.As(err, &inv) {
		t.Fatalf("update to an unsupported integration: %v, want InvalidDefinition", err)
	}
}

// TestNestedExecutionThroughTheAPI: a parent started through the SDK runs a child with states:startExecution.sync:2
// and DescribeExecution shows the child's output inside the parent's.
func TestNestedExecutionThroughTheAPI(t *testing.T) {
	ctx := context.Background()
	ts := stepfunctions.RunT(t)
	c := ts.Client()
	role := aws.String("arn:aws:iam::123456789012:role/sfn")
	child, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("child"), RoleArn: role,
		Definition: aws.String(`{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"settled.$":"$.id"},"End":true}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	parent, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("parent"), RoleArn: role,
		Definition: aws.String(`{"StartAt":"N","States":{"N":{"Type":"Task","Resource":"arn:aws:states:::states:startExecution.sync:2",
  "Parameters":{"StateMachineArn":"` + aws.ToString(child.StateMachineArn) + `","Input":{"id.$":"$.id"}},"OutputPath":"$.Output","End":true}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	start, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: parent.StateMachineArn, Input: aws.String(`{"id":"t-9"}`)})
	if err != nil {
		t.Fatal(err)
	}
	waitDone(t, ts.Engine(), aws.ToString(start.ExecutionArn))
	d, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: start.ExecutionArn})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != types.ExecutionStatusSucceeded || aws.ToString(d.Output) != `{"settled":"t-9"}` {
		t.Fatalf("parent %s with output %s, want SUCCEEDED with the child's output", d.Status, aws.ToString(d.Output))
	}
}

// TestNestedSyncOfAnAliasThroughTheAPI: a .sync task given an alias ARN returns the child's DescribeExecution answer
// with StateMachineAliasArn and the StateMachineVersionArn the alias picked, the members DescribeExecution of the
// child answers (the task's result omitted them).
func TestNestedSyncOfAnAliasThroughTheAPI(t *testing.T) {
	ctx := context.Background()
	ts := stepfunctions.RunT(t)
	c := ts.Client()
	role := aws.String("arn:aws:iam::123456789012:role/sfn")
	child, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("child"), RoleArn: role, Publish: true,
		Definition: aws.String(`{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"settled.$":"$.id"},"End":true}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	alias, err := c.CreateStateMachineAlias(ctx, &sfn.CreateStateMachineAliasInput{Name: aws.String("live"),
		RoutingConfiguration: []types.RoutingConfigurationListItem{{StateMachineVersionArn: child.StateMachineVersionArn, Weight: 100}}})
	if err != nil {
		t.Fatal(err)
	}
	parent, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("parent"), RoleArn: role,
		Definition: aws.String(`{"StartAt":"N","States":{"N":{"Type":"Task","Resource":"arn:aws:states:::states:startExecution.sync",
  "Parameters":{"StateMachineArn":"` + aws.ToString(alias.StateMachineAliasArn) + `","Name":"kid","Input":{"id.$":"$.id"}},"End":true}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	d := runInput(t, ts, aws.ToString(parent.StateMachineArn), `{"id":"t-7"}`)
	kid, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String("arn:aws:states:us-east-1:123456789012:execution:child:kid")})
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(aws.ToString(d.Output)), &out); err != nil {
		t.Fatal(err)
	}
	if d.Status != types.ExecutionStatusSucceeded || out["Output"] != `{"settled":"t-7"}` ||
		out["StateMachineArn"] != aws.ToString(child.StateMachineArn) ||
		out["StateMachineAliasArn"] != aws.ToString(alias.StateMachineAliasArn) || out["StateMachineAliasArn"] != aws.ToString(kid.StateMachineAliasArn) ||
		out["StateMachineVersionArn"] != aws.ToString(child.StateMachineVersionArn) || out["StateMachineVersionArn"] != aws.ToString(kid.StateMachineVersionArn) {
		t.Fatalf("parent %s with output %s, want SUCCEEDED with the child's description naming alias %s and version %s",
			d.Status, aws.ToString(d.Output), aws.ToString(kid.StateMachineAliasArn), aws.ToString(kid.StateMachineVersionArn))
	}
}

// TestDeleteStateMachine: a deleted state machine is gone from Describe, List and StartExecution
// (StateMachineDoesNotExist), while its executions stay describable; a malformed ARN is InvalidArn.
func TestDeleteStateMachine(t *testing.T) {
	ctx := context.Background()
	c := stepfunctions.RunT(t).Client()
	arn := create(t, c, "doomed", passChoice)
	run, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(arn)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteStateMachine(ctx, &sfn.DeleteStateMachineInput{StateMachineArn: aws.String(arn)}); err != nil {
		t.Fatal(err)
	}
	var gone *types.StateMachineDoesNotExist
	if _, err := c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(arn)}); !errors.As(err, &gone) {
		t.Fatalf("describe after delete: %v, want StateMachineDoesNotExist", err)
	}
	if _, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(arn)}); !errors.As(err, &gone) {
		t.Fatalf("start after delete: %v, want StateMachineDoesNotExist", err)
	}
	l, err := c.ListStateMachines(ctx, &sfn.ListStateMachinesInput{})
	if err != nil || len(l.StateMachines) != 0 {
		t.Fatalf("list after delete: %+v, %v; want none", l, err)
	}
	if _, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: run.ExecutionArn}); err != nil {
		t.Fatalf("the execution of a deleted state machine: %v, want it kept", err)
	}
	var bad *types.InvalidArn
	if _, err := c.DeleteStateMachine(ctx, &sfn.DeleteStateMachineInput{StateMachineArn: aws.String("not-an-arn")}); !errors.As(err, &bad) {
		t.Fatalf("delete of a malformed ARN: %v, want InvalidArn", err)
	}
}
