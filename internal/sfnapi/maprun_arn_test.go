package sfnapi_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go"

	"github.com/transferflow/orchestrator/internal/sfnapi"
	"github.com/transferflow/orchestrator/internal/sfnlocal"
)

// TestStartingADistributedMapArnIsAValidationException: the stateMachineArn of a Map Run
// (<state machine>/<label>, which ListMapRuns and DescribeMapRun give) is a qualified ARN of a Distributed Map
// state; StartExecution and StartSyncExecution given one answer ValidationException, as AWS documents (they answered
// StateMachineDoesNotExist).
func TestStartingADistributedMapArnIsAValidationException(t *testing.T) {
	srv := sfnapi.StartT(t, sfnlocal.Options{})
	c := srv.Client()
	ctx := context.Background()
	smArn := create(t, c, "fans", threeMapRuns)
	start, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn), Input: aws.String(`{"items":[1]}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Engine.Wait(ctx, aws.ToString(start.ExecutionArn)); err != nil {
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
