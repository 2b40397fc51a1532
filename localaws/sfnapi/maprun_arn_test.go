package sfnapi_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go"

	"github.com/transferflow/orchestrator/localaws/stepfunctions"
)

// TestStartingADistributedMapArnIsAValidationException: the stateMachineArn of a Map Run
// (<state machine>/<label>, which ListMapRuns and DescribeMapRun give) is a qualified ARN of a Distributed Map
// state; StartExecution and StartSyncExecution given one answer ValidationException, as AWS documents (they answered
// StateMachineDoesNotExist).
func TestStartingADistributedMapArnIsAValidationException(t *testing.T) {
	srv := stepfunctions.RunT(t)
	c := srv.Client()
	ctx := context.Background()
	smArn := create(t, c, "fans", threeMapRuns)
	start, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn), Input: aws.String(`{"items":[1]}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Engine().Wait(ctx, aws.ToString(start.ExecutionArn)); err != nil {
		t.Fatal(err)
	}
	runs, err := c.ListMapRuns(ctx, &sfn.ListMapRunsInput{ExecutionArn: start.ExecutionArn})
	if err != nil || len(runs.MapRuns) == 0 {
		t.Fatalf("ListMapRuns: %v %+v", err, runs)
	}
	mapArn := runs.MapRuns[0].StateMachineArn
	if aws.ToString(mapArn) != smArn+"/fan" {
		t.Fatalf("the Map Run's stateMachineArn is %s, want %s/fan", aws.ToString(mapArn), smArn)
	}
	var ve *types.ValidationException
	_, err = c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: mapArn})
	if !errors.As(err, &ve) {
		t.Fatalf("StartExecution of %s: %v, want ValidationException", aws.ToString(mapArn), err)
	}
	// The SDK's model of StartSyncExecution has no ValidationException: it is a generic API error with that code.
	var ae smithy.APIError
	_, err = c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: mapArn})
	if !errors.As(err, &ae) || ae.ErrorCode() != "ValidationException" {
		t.Fatalf("StartSyncExecution of %s: %v, want ValidationException", aws.ToString(mapArn), err)
	}
}

// nestedMaps has a labelled Distributed Map at the top level and, in a Parallel branch, a Distributed Map without
// a Label (its label is its name) beside an inline Map.
const nestedMaps = `{"StartAt":"Fan","States":{
  "Fan":{"Type":"Map","Label":"fan","ItemsPath":"$.items","ResultPath":null,"Next":"Both",
    "ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","Result":"fanned","End":true}}}},
  "Both":{"Type":"Parallel","End":true,"Branches":[{"StartAt":"Inner","States":{
    "Inner":{"Type":"Map","ItemsPath":"$.items","ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"EXPRESS"},
      "StartAt":"Q","States":{"Q":{"Type":"Pass","End":true}}},"Next":"Inline"},
    "Inline":{"Type":"Map","ItemsPath":"$","ItemProcessor":{"StartAt":"R","States":{"R":{"Type":"Pass","End":true}}},"End":true}}}]}}}`

// TestDescribeStateMachineOfADistributedMapState: DescribeStateMachine given a Map Run's stateMachineArn
// (<state machine>/<label>, a qualified state machine ARN) describes that Distributed Map state, as AWS documents:
// the ARN as given, the state machine's name, role, type and configuration, the Map state's item processor as the
// definition, and its label (present only for a qualified ARN). A label that names no Distributed Map state of the
// state machine, or a state machine that does not exist, is StateMachineDoesNotExist (they answered
// StateMachineDoesNotExist for every such ARN).
func TestDescribeStateMachineOfADistributedMapState(t *testing.T) {
	srv := stepfunctions.RunT(t)
	c := srv.Client()
	ctx := context.Background()
	smArn := create(t, c, "fans", nestedMaps)
	start, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn), Input: aws.String(`{"items":[1,2]}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Engine().Wait(ctx, aws.ToString(start.ExecutionArn)); err != nil {
		t.Fatal(err)
	}
	runs, err := c.ListMapRuns(ctx, &sfn.ListMapRunsInput{ExecutionArn: start.ExecutionArn})
	if err != nil || len(runs.MapRuns) != 2 {
		t.Fatalf("ListMapRuns: %v %+v, want two Map Runs", err, runs)
	}
	whole, err := c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(smArn)})
	if err != nil {
		t.Fatal(err)
	}
	if whole.Label != nil {
		t.Fatalf("DescribeStateMachine of %s has label %q, want none for an unqualified ARN", smArn, aws.ToString(whole.Label))
	}
	for _, tc := range []struct {
		label, definition string
	}{
		{"fan", `{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","Result":"fanned","End":true}}}`},
		{"Inner", `{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"EXPRESS"},"StartAt":"Q","States":{"Q":{"Type":"Pass","End":true}}}`},
	} {
		t.Run(tc.label, func(t *testing.T) {
			arn := smArn + "/" + tc.label
			found := false
			for _, r := range runs.MapRuns {
				found = found || aws.ToString(r.StateMachineArn) == arn
			}
			if !found {
				t.Fatalf("no Map Run has the stateMachineArn %s: %+v", arn, runs.MapRuns)
			}
			d, err := c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(arn)})
			if err != nil {
				t.Fatalf("DescribeStateMachine of %s: %v", arn, err)
			}
			if aws.ToString(d.StateMachineArn) != arn || aws.ToString(d.Label) != tc.label || aws.ToString(d.Name) != "fans" ||
				aws.ToString(d.RoleArn) != aws.ToString(whole.RoleArn) || d.Type != whole.Type || d.Status != types.StateMachineStatusActive ||
				!aws.ToTime(d.CreationDate).Equal(aws.ToTime(whole.CreationDate)) || d.LoggingConfiguration == nil {
				t.Fatalf("DescribeStateMachine of %s: arn %s, label %q, name %q, role %s, type %s, status %s, created %v, logging %v",
					arn, aws.ToString(d.StateMachineArn), aws.ToString(d.Label), aws.ToString(d.Name), aws.ToString(d.RoleArn),
					d.Type, d.Status, d.CreationDate, d.LoggingConfiguration)
			}
			if aws.ToString(d.Definition) != tc.definition {
				t.Fatalf("definition %s, want the Map state's item processor %s", aws.ToString(d.Definition), tc.definition)
			}
		})
	}
	var missing *types.StateMachineDoesNotExist
	for _, arn := range []string{
		smArn + "/nope",      // no Map state has that label
		smArn + "/Fan",       // the labelled Map's name is not its label
		smArn + "/Inline",    // an inline Map has no Map Runs
		smArn + "/fan:1",     // no version of a Map state
		smArn + "x/fan",      // no such state machine
		smArn + "/fan/extra", // not a label
	} {
		_, err := c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(arn)})
		if !errors.As(err, &missing) {
			t.Errorf("DescribeStateMachine of %s: %v, want StateMachineDoesNotExist", arn, err)
		}
	}
}
