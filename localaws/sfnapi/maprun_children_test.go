package sfnapi_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/transferflow/orchestrator/localaws/stepfunctions"
)

// standardChildren is a Distributed Map of STANDARD children, one of which (item 3) fails, within its tolerance.
const standardChildren = `{"StartAt":"Fan","States":{
  "Fan":{"Type":"Map","ItemsPath":"$.items","Label":"kids","ToleratedFailureCount":1,"End":true,
    "ItemSelector":{"v.$":"$$.Map.Item.Value"},
    "ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"Check","States":{
      "Check":{"Type":"Choice","Choices":[{"Variable":"$.v","NumericEquals":3,"Next":"Bad"}],"Default":"Good"},
      "Bad":{"Type":"Fail","Error":"Three","Cause":"three is bad"},
      "Good":{"Type":"Pass","End":true}}}}}}`

// TestMapRunChildExecutionsThroughTheSDK: the STANDARD child workflow executions of a Distributed Map are executions,
// as on AWS: ListExecutions with the Map Run's ARN lists them (paged, statusFilter honoured, mapRunArn on each item),
// DescribeExecution, GetExecutionHistory and DescribeStateMachineForExecution answer a child's ARN. mapRunArn and
// stateMachineArn together, or neither, are a ValidationException; a Map Run of EXPRESS children is
// StateMachineTypeNotSupported, an unknown one ResourceNotFound.
func TestMapRunChildExecutionsThroughTheSDK(t *testing.T) {
	srv := stepfunctions.RunT(t)
	c := srv.Client()
	ctx := context.Background()
	smArn := create(t, c, "dmap", standardChildren)
	start, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn),
		Input: aws.String(`{"items":[1,2,3,4,5]}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Engine().Wait(ctx, aws.ToString(start.ExecutionArn)); err != nil {
		t.Fatal(err)
	}
	runs, err := c.ListMapRuns(ctx, &sfn.ListMapRunsInput{ExecutionArn: start.ExecutionArn})
	if err != nil || len(runs.MapRuns) != 1 {
		t.Fatalf("ListMapRuns: %v %+v", err, runs)
	}
	mapRun := runs.MapRuns[0].MapRunArn

	re := regexp.MustCompile(`^arn:aws:states:us-east-1:123456789012:execution:dmap/kids:[0-9a-f-]{36}$`)
	seen := map[string]types.ExecutionStatus{}
	var failed, succeeded string
	p := sfn.NewListExecutionsPaginator(c, &sfn.ListExecutionsInput{MapRunArn: mapRun, MaxResults: 2})
	eachPage(t, p, 3, func(_ int, out *sfn.ListExecutionsOutput) {
		if len(out.Executions) > 2 {
			t.Fatalf("a page of %d items, asked for 2", len(out.Executions))
		}
		for _, x := range out.Executions {
			arn := aws.ToString(x.ExecutionArn)
			if !re.MatchString(arn) || aws.ToString(x.MapRunArn) != aws.ToString(mapRun) ||
				aws.ToString(x.StateMachineArn) != smArn+"/kids" || x.StopDate == nil {
				t.Fatalf("child item %+v", x)
			}
			seen[arn] = x.Status
			switch x.Status {
			case types.ExecutionStatusFailed:
				failed = arn
			case types.ExecutionStatusSucceeded:
				succeeded = arn
			}
		}
	})
	if len(seen) != 5 || failed == "" || succeeded == "" {
		t.Fatalf("children listed: %v", seen)
	}
	only, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{MapRunArn: mapRun, StatusFilter: types.ExecutionStatusFailed})
	if err != nil || len(only.Executions) != 1 || aws.ToString(only.Executions[0].ExecutionArn) != failed {
		t.Fatalf("statusFilter FAILED: %v %+v", err, only)
	}
	parents, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(smArn)})
	if err != nil || len(parents.Executions) != 1 {
		t.Fatalf("the state machine's executions: %v %+v", err, parents)
	}

	d, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(failed)})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != types.ExecutionStatusFailed || aws.ToString(d.MapRunArn) != aws.ToString(mapRun) ||
		aws.ToString(d.Error) != "Three" || aws.ToString(d.Cause) != "three is bad" || aws.ToString(d.Input) != `{"v":3}` ||
		d.RedriveStatus != types.ExecutionRedriveStatusRedrivableByMapRun {
		t.Fatalf("DescribeExecution of the failed child: %s %s %s %s %s %s", d.Status, aws.ToString(d.MapRunArn),
			aws.ToString(d.Error), aws.ToString(d.Cause), aws.ToString(d.Input), d.RedriveStatus)
	}
	h, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(succeeded)})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range h.Events {
		kinds = append(kinds, string(e.Type))
	}
	if got := strings.Join(kinds, ","); got != "ExecutionStarted,ChoiceStateEntered,ChoiceStateExited,PassStateEntered,PassStateExited,ExecutionSucceeded" {
		t.Fatalf("a child's history: %s", got)
	}
	f, err := c.DescribeStateMachineForExecution(ctx, &sfn.DescribeStateMachineForExecutionInput{ExecutionArn: aws.String(succeeded)})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(f.MapRunArn) != aws.ToString(mapRun) || aws.ToString(f.Label) != "kids" ||
		aws.ToString(f.StateMachineArn) != smArn+"/kids" || !strings.Contains(aws.ToString(f.Definition), `"Check"`) {
		t.Fatalf("DescribeStateMachineForExecution of a child: %+v", f)
	}

	var ve *types.ValidationException
	if err := errOf(c.ListExecutions(ctx, &sfn.ListExecutionsInput{MapRunArn: mapRun, StateMachineArn: aws.String(smArn)})); !errors.As(err, &ve) {
		t.Fatalf("both ARNs: %v, want ValidationException", err)
	}
	if err := errOf(c.ListExecutions(ctx, &sfn.ListExecutionsInput{})); !errors.As(err, &ve) {
		t.Fatalf("neither ARN: %v, want ValidationException", err)
	}
	var rnf *types.ResourceNotFound
	unknown := "arn:aws:states:us-east-1:123456789012:mapRun:dmap/kids:00000000-0000-4000-8000-000000000000"
	if err := errOf(c.ListExecutions(ctx, &sfn.ListExecutionsInput{MapRunArn: aws.String(unknown)})); !errors.As(err, &rnf) {
		t.Fatalf("an unknown Map Run: %v, want ResourceNotFound", err)
	}

	fans := create(t, c, "fans", threeMapRuns)
	express, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(fans),
		Input: aws.String(`{"items":[1]}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Engine().Wait(ctx, aws.ToString(express.ExecutionArn)); err != nil {
		t.Fatal(err)
	}
	eruns, err := c.ListMapRuns(ctx, &sfn.ListMapRunsInput{ExecutionArn: express.ExecutionArn})
	if err != nil || len(eruns.MapRuns) == 0 {
		t.Fatalf("ListMapRuns: %v %+v", err, eruns)
	}
	var tns *types.StateMachineTypeNotSupported
	if err := errOf(c.ListExecutions(ctx, &sfn.ListExecutionsInput{MapRunArn: eruns.MapRuns[0].MapRunArn})); !errors.As(err, &tns) {
		t.Fatalf("a Map Run of EXPRESS children: %v, want StateMachineTypeNotSupported", err)
	}
}
