package sfnapi_test

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// threeMapRuns runs a Distributed Map three times in a loop.
const threeMapRuns = `{"StartAt":"Init","States":{
  "Init":{"Type":"Pass","Parameters":{"n":0,"items.$":"$.items"},"Next":"Fan"},
  "Fan":{"Type":"Map","ItemsPath":"$.items","ResultPath":null,"Label":"fan","Next":"Inc",
    "ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"EXPRESS"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}},
  "Inc":{"Type":"Pass","Parameters":{"n.$":"States.MathAdd($.n, 1)","items.$":"$.items"},"Next":"Again"},
  "Again":{"Type":"Choice","Choices":[{"Variable":"$.n","NumericLessThan":3,"Next":"Fan"}],"Default":"Done"},
  "Done":{"Type":"Succeed"}}}`

// TestMapRunsThroughTheSDK: ListMapRuns (paged with the SDK's paginator), DescribeMapRun and UpdateMapRun, and their
// typed errors.
func TestMapRunsThroughTheSDK(t *testing.T) {
	srv, _ := runClocked(t)
	c := srv.Client()
	ctx := context.Background()
	smArn := create(t, c, "fans", threeMapRuns)
	start, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn), Input: aws.String(`{"items":[1,2,3]}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Engine().Wait(ctx, aws.ToString(start.ExecutionArn)); err != nil {
		t.Fatal(err)
	}
	var arns []string
	p := sfn.NewListMapRunsPaginator(c, &sfn.ListMapRunsInput{ExecutionArn: start.ExecutionArn, MaxResults: 1})
	eachPage(t, p, 5, func(_ int, out *sfn.ListMapRunsOutput) {
		for _, r := range out.MapRuns {
			if aws.ToString(r.ExecutionArn) != aws.ToString(start.ExecutionArn) || aws.ToString(r.StateMachineArn) != smArn+"/fan" ||
				r.StartDate == nil || r.StopDate == nil {
				t.Fatalf("map run item %+v", r)
			}
			arns = append(arns, aws.ToString(r.MapRunArn))
		}
	})
	if len(arns) != 3 || arns[0] == arns[1] || arns[1] == arns[2] {
		t.Fatalf("map runs %v, want 3 distinct", arns)
	}
	re := regexp.MustCompile(`^arn:aws:states:us-east-1:123456789012:mapRun:fans/fan:[0-9a-f-]{36}$`)
	for _, arn := range arns {
		d, err := c.DescribeMapRun(ctx, &sfn.DescribeMapRunInput{MapRunArn: aws.String(arn)})
		if err != nil {
			t.Fatal(err)
		}
		if !re.MatchString(arn) || d.Status != types.MapRunStatusSucceeded || aws.ToInt64(&d.ItemCounts.Total) != 3 ||
			d.ItemCounts.Succeeded != 3 || d.ExecutionCounts.Succeeded != 3 || d.MaxConcurrency != 0 ||
			aws.ToString(d.ExecutionArn) != aws.ToString(start.ExecutionArn) {
			t.Fatalf("DescribeMapRun %s: %+v, items %+v", arn, d, d.ItemCounts)
		}
	}

	unknown := "arn:aws:states:us-east-1:123456789012:mapRun:fans/fan:00000000-0000-4000-8000-000000000000"
	checkAPIErrors(t, []apiErrorCase{
		{"update of an ended map run", func() error {
			return errOf(c.UpdateMapRun(ctx, &sfn.UpdateMapRunInput{MapRunArn: aws.String(arns[0]), MaxConcurrency: aws.Int32(5)}))
		}, new(*types.ValidationException), ""},
		{"percentage 101", func() error {
			return errOf(c.UpdateMapRun(ctx, &sfn.UpdateMapRunInput{MapRunArn: aws.String(arns[0]), ToleratedFailurePercentage: aws.Float32(101)}))
		}, new(*types.ValidationException), ""},
		{"unknown map run", func() error {
			return errOf(c.DescribeMapRun(ctx, &sfn.DescribeMapRunInput{MapRunArn: aws.String(unknown)}))
		}, new(*types.ResourceNotFound), ""},
		{"an execution ARN", func() error {
			return errOf(c.DescribeMapRun(ctx, &sfn.DescribeMapRunInput{MapRunArn: start.ExecutionArn}))
		}, new(*types.InvalidArn), ""},
		{"unknown execution", func() error {
			return errOf(c.ListMapRuns(ctx, &sfn.ListMapRunsInput{ExecutionArn: aws.String("arn:aws:states:us-east-1:123456789012:execution:fans:nope")}))
		}, new(*types.ExecutionDoesNotExist), ""},
	})
}

// TestUpdateMapRunThroughTheSDK: a running Map Run with MaxConcurrency 1 is updated to 3 and runs 3 children at once.
func TestUpdateMapRunThroughTheSDK(t *testing.T) {
	srv, clock := runClocked(t)
	c := srv.Client()
	ctx := context.Background()
	def := `{"StartAt":"Fan","States":{"Fan":{"Type":"Map","MaxConcurrency":1,"ToleratedFailureCount":1,"End":true,
	  "ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":5,"End":true}}}}}}`
	smArn := create(t, c, "slowfan", def)
	start, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn), Input: aws.String(`[1,2,3]`)})
	if err != nil {
		t.Fatal(err)
	}
	clock.MustAwaitWaiters(t, 1)
	runs, err := c.ListMapRuns(ctx, &sfn.ListMapRunsInput{ExecutionArn: start.ExecutionArn})
	if err != nil || len(runs.MapRuns) != 1 || runs.MapRuns[0].StopDate != nil {
		t.Fatalf("running map runs: %v %+v", err, runs)
	}
	arn := runs.MapRuns[0].MapRunArn
	d, err := c.DescribeMapRun(ctx, &sfn.DescribeMapRunInput{MapRunArn: arn})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != types.MapRunStatusRunning || d.ItemCounts.Running != 1 || d.ItemCounts.Pending != 2 || d.ToleratedFailureCount != 1 {
		t.Fatalf("running: %+v %+v", d, d.ItemCounts)
	}
	if _, err := c.UpdateMapRun(ctx, &sfn.UpdateMapRunInput{MapRunArn: arn, MaxConcurrency: aws.Int32(3), ToleratedFailurePercentage: aws.Float32(10)}); err != nil {
		t.Fatal(err)
	}
	clock.MustAwaitWaiters(t, 3)
	d, err = c.DescribeMapRun(ctx, &sfn.DescribeMapRunInput{MapRunArn: arn})
	if err != nil {
		t.Fatal(err)
	}
	if d.MaxConcurrency != 3 || d.ToleratedFailurePercentage != 10 || d.ItemCounts.Running != 3 {
		t.Fatalf("after the update: %+v %+v", d, d.ItemCounts)
	}
	clock.Advance(5 * time.Second)
	if rec, err := srv.Engine().Wait(ctx, aws.ToString(start.ExecutionArn)); err != nil || rec.Status != sfnengine.StatusSucceeded {
		t.Fatalf("wait: %v %v", err, rec)
	}
}
