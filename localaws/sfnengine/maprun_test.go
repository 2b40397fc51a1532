package sfnengine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/localaws/asl"
	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// distributed returns a Distributed Map machine over $.items whose item processor is processor (a States object)
// and whose Map state has the extra fields.
func distributed(extra, processor string) string {
	return `{"StartAt":"Charge","States":{"Charge":{"Type":"Map","ItemsPath":"$.items","End":true,` + extra + `
	  "ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":` + processor + `}}}}`
}

// failOnBad fails the item whose "v" is "bad".
const failOnBad = `{"P":{"Type":"Choice","Choices":[{"Variable":"$.v","StringEquals":"bad","Next":"Bad"}],"Default":"Ok"},
  "Bad":{"Type":"Fail","Error":"BadItem","Cause":"bad item"},"Ok":{"Type":"Pass","End":true}}`

func createAndStart(t *testing.T, eng *sfnengine.Engine, name, def, input string) *sfnengine.ExecutionRecord {
	t.Helper()
	ctx := context.Background()
	sm, err := eng.CreateStateMachine(ctx, sfnengine.CreateInput{Name: name, Definition: def, RoleArn: testRoleArn})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := eng.StartExecution(ctx, sfnengine.StartInput{StateMachineArn: sm.Arn, Name: "run", Input: input})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestDistributedMapRecordsAMapRun: a Distributed Map runs each item as a child workflow with its own $$.Execution,
// records MapStateStarted, MapRunStarted and MapRunSucceeded (no iteration events) and a Map Run with AWS's ARN
// format and its counts.
func TestDistributedMapRecordsAMapRun(t *testing.T) {
	ctx := context.Background()
	eng := newEngine(t, sfnengine.Options{})
	def := distributed(`"Label":"charges","MaxConcurrency":2,"ItemSelector":{"index.$":"$$.Map.Item.Index","value.$":"$$.Map.Item.Value"},`,
		`{"P":{"Type":"Pass","Parameters":{"index.$":"$.index","child.$":"$$.Execution.Id","input.$":"$$.Execution.Input"},"End":true}}`)
	rec := createAndStart(t, eng, "charger", def, `{"items":["a","b","c"]}`)
	got := waitClosed(t, eng, rec.Arn)
	if got.Status != sfnengine.StatusSucceeded {
		t.Fatalf("status %s %v %v", got.Status, got.Error, got.Cause)
	}
	want := "ExecutionStarted,MapStateEntered,MapStateStarted,MapRunStarted,MapRunSucceeded,MapStateSucceeded,MapStateExited,ExecutionSucceeded"
	if eventTypes(got.History) != want {
		t.Fatalf("history %s\nwant    %s", eventTypes(got.History), want)
	}
	started := findEvent(got.History, sfnengine.EventMapRunStarted)
	mapRunArn, _ := started.Details["mapRunArn"].(string)
	if !regexp.MustCompile(`^arn:aws:states:us-east-1:123456789012:mapRun:charger/charges:[0-9a-f-]{36}$`).MatchString(mapRunArn) {
		t.Fatalf("mapRunArn %q", mapRunArn)
	}
	var out []struct {
		Index int    `json:"index"`
		Child string `json:"child"`
		Input struct {
			Value string `json:"value"`
		} `json:"input"`
	}
	if err := json.Unmarshal([]byte(*got.Output), &out); err != nil {
		t.Fatal(err)
	}
	childRE := regexp.MustCompile(`^arn:aws:states:us-east-1:123456789012:execution:charger/charges:[0-9a-f-]{36}$`)
	if len(out) != 3 {
		t.Fatalf("output %s", *got.Output)
	}
	for i, o := range out {
		if o.Index != i || o.Input.Value != string(rune('a'+i)) || !childRE.MatchString(o.Child) {
			t.Fatalf("output[%d] = %+v (output %s)", i, o, *got.Output)
		}
	}
	runs, err := eng.ListMapRuns(ctx, rec.Arn)
	if err != nil || len(runs) != 1 || runs[0].Arn != mapRunArn {
		t.Fatalf("ListMapRuns: %v %+v", err, runs)
	}
	mr, err := eng.DescribeMapRun(ctx, mapRunArn)
	if err != nil {
		t.Fatal(err)
	}
	wantCounts := sfnengine.MapRunCounts{Succeeded: 3, Total: 3}
	if mr.Status != sfnengine.MapRunSucceeded || mr.ItemCounts != wantCounts || mr.ExecutionCounts != wantCounts ||
		mr.MaxConcurrency != 2 || mr.ExecutionArn != rec.Arn || mr.ExecutionType != "STANDARD" || mr.StopDate == nil ||
		mr.StateMachineArn != rec.StateMachineArn+"/charges" {
		t.Fatalf("map run %+v", mr)
	}
	if _, err := eng.DescribeMapRun(ctx, strings.Replace(mapRunArn, "charges:", "other:", 1)); !errors.Is(err, sfnengine.ErrMapRunDoesNotExist) {
		t.Fatalf("unknown map run: %v", err)
	}
	if _, err := eng.DescribeMapRun(ctx, rec.Arn); !errors.Is(err, sfnengine.ErrInvalidArn) {
		t.Fatalf("an execution ARN: %v", err)
	}
}

// TestToleratedFailures: failures up to ToleratedFailureCount/Percentage leave the Map succeeding with
// {"Error","Cause"} in the failed items' places; beyond them the Map fails with
// States.ExceedToleratedFailureThreshold and MapRunFailed.
func TestToleratedFailures(t *testing.T) {
	tests := []struct {
		name, extra, items string
		fails              bool
		failed             int64
	}{
		{name: "none tolerated", extra: ``, items: `[{"v":"ok"},{"v":"bad"},{"v":"ok"},{"v":"ok"}]`, fails: true},
		{name: "count within", extra: `"ToleratedFailureCount":1,`, items: `[{"v":"ok"},{"v":"bad"},{"v":"ok"},{"v":"ok"}]`, failed: 1},
		{name: "count exceeded", extra: `"ToleratedFailureCount":1,"MaxConcurrency":1,`, items: `[{"v":"bad"},{"v":"bad"},{"v":"ok"},{"v":"ok"}]`, fails: true},
		{name: "percentage within", extra: `"ToleratedFailurePercentage":50,`, items: `[{"v":"bad"},{"v":"ok"},{"v":"bad"},{"v":"ok"}]`, failed: 2},
		{name: "percentage exceeded", extra: `"ToleratedFailurePercentage":50,"MaxConcurrency":1,`, items: `[{"v":"bad"},{"v":"bad"},{"v":"bad"},{"v":"ok"}]`, fails: true},
		{name: "count from a path", extra: `"ToleratedFailureCountPath":"$.tolerate",`, items: `[{"v":"bad"},{"v":"bad"},{"v":"ok"},{"v":"ok"}]`, failed: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			eng := newEngine(t, sfnengine.Options{})
			rec := createAndStart(t, eng, "tolerant", distributed(tc.extra, failOnBad), `{"tolerate":2,"items":`+tc.items+`}`)
			got := waitClosed(t, eng, rec.Arn)
			runs, err := eng.ListMapRuns(ctx, rec.Arn)
			if err != nil || len(runs) != 1 {
				t.Fatalf("map runs: %v %+v", err, runs)
			}
			mr := runs[0]
			if tc.fails {
				if got.Status != sfnengine.StatusFailed || *got.Error != "States.ExceedToleratedFailureThreshold" ||
					mr.Status != sfnengine.MapRunFailed || findEvent(got.History, sfnengine.EventMapRunFailed) == nil {
					t.Fatalf("got %s %v, map run %s, history %s", got.Status, got.Error, mr.Status, eventTypes(got.History))
				}
				return
			}
			if got.Status != sfnengine.StatusSucceeded || mr.Status != sfnengine.MapRunSucceeded || mr.ItemCounts.Failed != tc.failed ||
				mr.ItemCounts.Succeeded != 4-tc.failed {
				t.Fatalf("got %s %v, map run %+v", got.Status, got.Error, mr)
			}
			if n := strings.Count(*got.Output, `{"Error":"BadItem","Cause":"bad item"}`); int64(n) != tc.failed {
				t.Fatalf("output %s: %d failures in it, want %d", *got.Output, n, tc.failed)
			}
		})
	}
}

// TestUpdateMapRunConcurrency: a Map Run with MaxConcurrency 1 runs one child at a time; UpdateMapRun raises it
// and the pending children start; an ended Map Run cannot be updated.
func TestUpdateMapRunConcurrency(t *testing.T) {
	ctx := context.Background()
	clock := sfnengine.NewManualClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	eng := newEngine(t, sfnengine.Options{Clock: clock})
	rec := createAndStart(t, eng, "slow", distributed(`"MaxConcurrency":1,`, `{"P":{"Type":"Wait","Seconds":10,"End":true}}`),
		`{"items":[1,2,3,4,5]}`)
	advanceWhenWaiting(t, clock, 0) // one child is waiting
	runs, err := eng.ListMapRuns(ctx, rec.Arn)
	if err != nil || len(runs) != 1 {
		t.Fatalf("map runs: %v %+v", err, runs)
	}
	arn := runs[0].Arn
	mr, err := eng.DescribeMapRun(ctx, arn)
	if err != nil {
		t.Fatal(err)
	}
	if mr.Status != sfnengine.MapRunRunning || mr.ItemCounts.Running != 1 || mr.ItemCounts.Pending != 4 || mr.StopDate != nil {
		t.Fatalf("running map run %+v", mr)
	}
	five := int64(5)
	if err := eng.UpdateMapRun(ctx, arn, sfnengine.MapRunUpdate{MaxConcurrency: &five}); err != nil {
		t.Fatal(err)
	}
	clock.MustAwaitWaiters(t, 5)
	if mr, _ = eng.DescribeMapRun(ctx, arn); mr.ItemCounts.Running != 5 || mr.MaxConcurrency != 5 {
		t.Fatalf("after the update: %+v", mr)
	}
	clock.Advance(10 * time.Second)
	if got := waitClosed(t, eng, rec.Arn); got.Status != sfnengine.StatusSucceeded {
		t.Fatalf("status %s", got.Status)
	}
	if err := eng.UpdateMapRun(ctx, arn, sfnengine.MapRunUpdate{MaxConcurrency: &five}); !errors.Is(err, sfnengine.ErrMapRunNotRunning) {
		t.Fatalf("update of an ended map run: %v", err)
	}
}

// TestItemBatcher: items are grouped by MaxItemsPerBatch, each batch one child with {"BatchInput","Items"}; items
// and child executions are counted apart.
func TestItemBatcher(t *testing.T) {
	ctx := context.Background()
	eng := newEngine(t, sfnengine.Options{})
	def := distributed(`"ItemBatcher":{"MaxItemsPerBatch":2,"BatchInput":{"batch.$":"$.name"}},`, `{"P":{"Type":"Pass","End":true}}`)
	rec := createAndStart(t, eng, "batches", def, `{"name":"n","items":[1,2,3,4,5]}`)
	got := waitClosed(t, eng, rec.Arn)
	want := `[{"BatchInput":{"batch":"n"},"Items":[1,2]},{"BatchInput":{"batch":"n"},"Items":[3,4]},{"BatchInput":{"batch":"n"},"Items":[5]}]`
	if got.Status != sfnengine.StatusSucceeded || *got.Output != want {
		t.Fatalf("got %s %v\nwant %s", got.Status, got.Output, want)
	}
	runs, err := eng.ListMapRuns(ctx, rec.Arn)
	if err != nil || len(runs) != 1 || runs[0].ItemCounts.Total != 5 || runs[0].ItemCounts.Succeeded != 5 ||
		runs[0].ExecutionCounts.Total != 3 || runs[0].ExecutionCounts.Succeeded != 3 {
		t.Fatalf("map runs: %v %+v", err, runs)
	}
}

// TestItemBatcherPaths: in a JSONPath Distributed Map, MaxItemsPerBatchPath and MaxInputBytesPerBatchPath are
// reference paths that must resolve to a positive integer, as AWS documents
// (https://docs.aws.amazon.com/step-functions/latest/dg/input-output-itembatcher.html), MaxInputBytesPerBatch at most
// 256 KiB. AWS is silent on the input they read and on the failure: like MaxConcurrencyPath they read the effective
// input (after InputPath) and fail with States.Runtime and its causes. Each child's input is asserted through the
// children's outputs (a Pass returns its input); a failure runs no child and starts no Map Run.
func TestItemBatcherPaths(t *testing.T) {
	pass := `{"P":{"Type":"Pass","End":true}}`
	tests := []struct {
		name, extra, input string
		wantOutput         string // on success
		wantCause          string // the end of the States.Runtime cause on failure
	}{
		{name: "MaxItemsPerBatchPath", extra: `"ItemBatcher":{"MaxItemsPerBatchPath":"$.size"},`,
			input:      `{"size":2,"items":[1,2,3,4,5]}`,
			wantOutput: `[{"Items":[1,2]},{"Items":[3,4]},{"Items":[5]}]`},
		{name: "MaxItemsPerBatchPath reads the effective input", extra: `"InputPath":"$.in","ItemBatcher":{"MaxItemsPerBatchPath":"$.size"},`,
			input:      `{"size":1,"in":{"size":4,"items":[1,2,3,4,5]}}`,
			wantOutput: `[{"Items":[1,2,3,4]},{"Items":[5]}]`},
		{name: "MaxInputBytesPerBatchPath", // each item is 2 bytes (its JSON and a separator)
			extra:      `"ItemBatcher":{"MaxInputBytesPerBatchPath":"$.bytes","BatchInput":{"b.$":"$.bytes"}},`,
			input:      `{"bytes":6,"items":[1,2,3,4,5]}`,
			wantOutput: `[{"BatchInput":{"b":6},"Items":[1,2,3]},{"BatchInput":{"b":6},"Items":[4,5]}]`},
		{name: "a path and a number", // both bind: 6 bytes split 1 (2 bytes) from "ab" (5), 2 items a batch [3,4,5]
			extra:      `"ItemBatcher":{"MaxItemsPerBatchPath":"$.size","MaxInputBytesPerBatch":6},`,
			input:      `{"size":2,"items":[1,"ab",3,4,5]}`,
			wantOutput: `[{"Items":[1]},{"Items":["ab"]},{"Items":[3,4]},{"Items":[5]}]`},
		{name: "MaxInputBytesPerBatchPath at 256 KiB", extra: `"ItemBatcher":{"MaxInputBytesPerBatchPath":"$.bytes"},`,
			input:      `{"bytes":262144,"items":[1,2,3]}`,
			wantOutput: `[{"Items":[1,2,3]}]`},
		{name: "MaxItemsPerBatchPath missing", extra: `"ItemBatcher":{"MaxItemsPerBatchPath":"$.size"},`,
			input:     `{"items":[1,2]}`,
			wantCause: `The JSONPath '$.size' specified for the field 'MaxItemsPerBatchPath' could not be found in the input '{"items":[1,2]}'`},
		{name: "MaxItemsPerBatchPath not an integer", extra: `"ItemBatcher":{"MaxItemsPerBatchPath":"$.size"},`,
			input:     `{"size":"two","items":[1,2]}`,
			wantCause: `The MaxItemsPerBatchPath parameter cannot be parsed as a long value: $.size == two`},
		{name: "MaxItemsPerBatchPath a fraction", extra: `"ItemBatcher":{"MaxItemsPerBatchPath":"$.size"},`,
			input:     `{"size":1.5,"items":[1,2]}`,
			wantCause: `The MaxItemsPerBatchPath parameter cannot be parsed as a long value: $.size == 1.5`},
		{name: "MaxItemsPerBatchPath zero", extra: `"ItemBatcher":{"MaxItemsPerBatchPath":"$.size"},`,
			input:     `{"size":0,"items":[1,2]}`,
			wantCause: `The MaxItemsPerBatchPath parameter references a value that is not positive: $.size == 0`},
		{name: "MaxInputBytesPerBatchPath negative", extra: `"ItemBatcher":{"MaxInputBytesPerBatchPath":"$.bytes"},`,
			input:     `{"bytes":-6,"items":[1,2]}`,
			wantCause: `The MaxInputBytesPerBatchPath parameter references a negative value: $.bytes == -6`},
		{name: "MaxInputBytesPerBatchPath over 256 KiB", extra: `"ItemBatcher":{"MaxInputBytesPerBatchPath":"$.bytes"},`,
			input:     `{"bytes":262145,"items":[1,2]}`,
			wantCause: `The MaxInputBytesPerBatchPath parameter references a value greater than 262144 (256 KiB): $.bytes == 262145`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			eng := newEngine(t, sfnengine.Options{})
			rec := createAndStart(t, eng, "batches", distributed(tc.extra, pass), tc.input)
			got := waitClosed(t, eng, rec.Arn)
			runs, err := eng.ListMapRuns(ctx, rec.Arn)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantCause == "" {
				if got.Status != sfnengine.StatusSucceeded || got.Output == nil || *got.Output != tc.wantOutput {
					t.Fatalf("got %s %v %v %v\nwant %s", got.Status, got.Error, got.Cause, got.Output, tc.wantOutput)
				}
				if len(runs) != 1 || runs[0].ExecutionCounts.Succeeded != int64(strings.Count(tc.wantOutput, `"Items"`)) {
					t.Fatalf("map runs %+v", runs)
				}
				return
			}
			if got.Status != sfnengine.StatusFailed || got.Error == nil || *got.Error != sfnengine.ErrNameRuntime ||
				got.Cause == nil || !strings.HasSuffix(*got.Cause, tc.wantCause) ||
				!strings.HasPrefix(*got.Cause, "An error occurred while executing the state 'Charge' (entered at the event id #2). ") {
				t.Fatalf("got %s %v %v\nwant FAILED States.Runtime ending %q", got.Status, got.Error, got.Cause, tc.wantCause)
			}
			// States.Runtime is not caught and ends the execution: no Map Run, no MapStateFailed, no EvaluationFailed
			// (a JSONata event). Unlike MaxConcurrencyPath, which fails before MapStateStarted, the batcher's paths
			// are read as the items are batched, after it.
			want := "ExecutionStarted,MapStateEntered,MapStateStarted,ExecutionFailed"
			if eventTypes(got.History) != want || len(runs) != 0 {
				t.Fatalf("history %s\nwant    %s; map runs %+v", eventTypes(got.History), want, runs)
			}
		})
	}
}

// TestJSONataItemBatcher: in a JSONata Distributed Map the ItemBatcher's BatchInput is a JSONata template, as AWS
// documents (https://docs.aws.amazon.com/step-functions/latest/dg/input-output-itembatcher.html: "For JSONata-based
// states, you can provide JSONata expressions directly to BatchInput, or use JSONata expressions inside JSON objects
// or arrays"): "{% … %}" strings at any depth, or the whole field, read $states.input, $states.context and the
// variables, and a key ending in ".$" is a key like any other. MaxItemsPerBatch and MaxInputBytesPerBatch take a
// number or an expression that evaluates to a positive integer. Each child's input is asserted through the children's
// outputs (a Pass returns its input).
func TestJSONataItemBatcher(t *testing.T) {
	def := func(batcher string) string {
		return `{"QueryLanguage":"JSONata","StartAt":"Init","States":{
		  "Init":{"Type":"Pass","Assign":{"tag":"t1","bytes":6},"Next":"Charge"},
		  "Charge":{"Type":"Map","Items":"{% $states.input.items %}","ItemBatcher":` + batcher + `,"End":true,
		    "ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P",
		      "States":{"P":{"Type":"Pass","End":true}}}}}}`
	}
	const input = `{"name":"n","size":3,"items":[1,2,3,4,5]}`
	tests := []struct {
		name, batcher, wantOutput, wantCause string
	}{
		{name: "expressions inside an object",
			batcher: `{"MaxItemsPerBatch":2,"BatchInput":{"name":"{% $states.input.name %}","tag":"{% $tag %}",
			  "state":"{% $states.context.State.Name %}","lit.$":"$.name","list":[1,"{% 1 + 1 %}"]}}`,
			wantOutput: `[{"BatchInput":{"name":"n","tag":"t1","state":"Charge","lit.$":"$.name","list":[1,2]},"Items":[1,2]},` +
				`{"BatchInput":{"name":"n","tag":"t1","state":"Charge","lit.$":"$.name","list":[1,2]},"Items":[3,4]},` +
				`{"BatchInput":{"name":"n","tag":"t1","state":"Charge","lit.$":"$.name","list":[1,2]},"Items":[5]}]`},
		{name: "a whole expression and MaxItemsPerBatch from the input",
			batcher:    `{"MaxItemsPerBatch":"{% $states.input.size %}","BatchInput":"{% {'name': $states.input.name} %}"}`,
			wantOutput: `[{"BatchInput":{"name":"n"},"Items":[1,2,3]},{"BatchInput":{"name":"n"},"Items":[4,5]}]`},
		{name: "MaxInputBytesPerBatch from a variable", // each item is 2 bytes (its JSON and a separator)
			batcher:    `{"MaxInputBytesPerBatch":"{% $bytes %}"}`,
			wantOutput: `[{"Items":[1,2,3]},{"Items":[4,5]}]`},
		{name: "a MaxItemsPerBatch below 1",
			batcher: `{"MaxItemsPerBatch":"{% $states.input.size - 3 %}"}`,
			wantCause: "The JSONata expression '$states.input.size - 3' specified for the field 'ItemBatcher/MaxItemsPerBatch' " +
				"returned 0, but the field must be at least 1."},
		{name: "a MaxInputBytesPerBatch that is not a number",
			batcher:   `{"MaxInputBytesPerBatch":"{% $states.input.name %}"}`,
			wantCause: "specified for the field 'ItemBatcher/MaxInputBytesPerBatch' returned an unexpected result type. Expected 'integer'"},
		{name: "MaxInputBytesPerBatch at 256 KiB",
			batcher:    `{"MaxInputBytesPerBatch":"{% 256 * 1024 %}"}`,
			wantOutput: `[{"Items":[1,2,3,4,5]}]`},
		{name: "a MaxInputBytesPerBatch over 256 KiB",
			batcher: `{"MaxInputBytesPerBatch":"{% 256 * 1024 + $states.input.size %}"}`,
			wantCause: "The JSONata expression '256 * 1024 + $states.input.size' specified for the field 'ItemBatcher/MaxInputBytesPerBatch' " +
				"returned 262147, but the field must be at most 262144."},
		{name: "a BatchInput expression that returns nothing",
			batcher:   `{"MaxItemsPerBatch":2,"BatchInput":{"x":"{% $states.input.absent %}"}}`,
			wantCause: "The JSONata expression '$states.input.absent' specified for the field 'ItemBatcher/BatchInput/x' returned nothing (undefined)."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			eng := newEngine(t, sfnengine.Options{})
			rec := createAndStart(t, eng, "batches", def(tc.batcher), input)
			got := waitClosed(t, eng, rec.Arn)
			if tc.wantCause == "" {
				if got.Status != sfnengine.StatusSucceeded || got.Output == nil || *got.Output != tc.wantOutput {
					out := "<nil>"
					if got.Output != nil {
						out = *got.Output
					}
					t.Fatalf("got %s %v %v %s\nwant %s", got.Status, got.Error, got.Cause, out, tc.wantOutput)
				}
				return
			}
			if got.Status != sfnengine.StatusFailed || got.Error == nil || *got.Error != sfnengine.ErrNameQueryEvaluation ||
				got.Cause == nil || !strings.Contains(*got.Cause, tc.wantCause) {
				t.Fatalf("got %s %v %v, want States.QueryEvaluationError with %q", got.Status, got.Error, got.Cause, tc.wantCause)
			}
			if ev := findEvent(got.History, sfnengine.EventEvaluationFailed); ev == nil || !strings.HasPrefix(fmt.Sprint(ev.Details["location"]), "ItemBatcher/") {
				t.Fatalf("no EvaluationFailed event at the ItemBatcher: %s", eventTypes(got.History))
			}
		})
	}
}

// TestMapRunsSurviveARestart: the Map Runs of a closed execution are read back after a restart on its FileStore; a
// failed Distributed Map redriven redrives its Map Run (MapRunRedriven), which runs only the children that had not
// succeeded.
func TestMapRunsSurviveARestart(t *testing.T) {
	ctx := context.Background()
	files := fileStore(t, t.TempDir())
	lambda := newFlakyLambda(`work {"n":2}`)
	def := distributed(`"MaxConcurrency":1,`, `{"P":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke",
	  "Parameters":{"FunctionName":"work","Payload.$":"$"},"OutputPath":"$.Payload","End":true}}`)
	first := sfnengine.New(sfnengine.Options{Store: files, Lambda: lambda})
	rec := createAndStart(t, first, "works", def, `{"items":[{"n":1},{"n":2},{"n":3}]}`)
	if got := waitClosed(t, first, rec.Arn); got.Status != sfnengine.StatusFailed {
		t.Fatalf("first run %s", got.Status)
	}
	runs, err := first.ListMapRuns(ctx, rec.Arn)
	if err != nil || len(runs) != 1 {
		t.Fatalf("map runs %v %+v", err, runs)
	}
	failedRun := runs[0]
	first.Close()

	lambda.fix(`work {"n":2}`)
	second := restoredEngine(t, sfnengine.Options{Store: files, Lambda: lambda})
	mr, err := second.DescribeMapRun(ctx, failedRun.Arn)
	if err != nil {
		t.Fatal(err)
	}
	if mr.Status != sfnengine.MapRunFailed || mr.ItemCounts.Failed != 1 || mr.ItemCounts.Succeeded != 1 || mr.ItemCounts.Pending != 1 {
		t.Fatalf("restored map run %+v", mr)
	}
	if _, err := second.RedriveExecution(ctx, rec.Arn, ""); err != nil {
		t.Fatal(err)
	}
	got := waitClosed(t, second, rec.Arn)
	if got.Status != sfnengine.StatusSucceeded || *got.Output != `[{"ok":"work"},{"ok":"work"},{"ok":"work"}]` {
		t.Fatalf("after the redrive %s %v", got.Status, got.Output)
	}
	if lambda.count(`work {"n":1}`) != 1 || lambda.count(`work {"n":2}`) != 2 || lambda.count(`work {"n":3}`) != 1 {
		t.Fatalf("calls %v", lambda.calls)
	}
	// The same Map Run was redriven: MapRunRedriven, its counts and redrive count.
	runs, err = second.ListMapRuns(ctx, rec.Arn)
	if err != nil || len(runs) != 1 || runs[0].Arn != failedRun.Arn || runs[0].Status != sfnengine.MapRunSucceeded ||
		runs[0].RedriveCount != 1 || runs[0].RedriveDate == nil || runs[0].ItemCounts != (sfnengine.MapRunCounts{Succeeded: 3, Total: 3}) ||
		runs[0].ExecutionCounts != (sfnengine.MapRunCounts{Succeeded: 3, Total: 3}) {
		t.Fatalf("map runs after the redrive: %v %+v", err, runs)
	}
	ev := findEvent(got.History, sfnengine.EventMapRunRedriven)
	if ev == nil || ev.Details["mapRunArn"] != failedRun.Arn || jsonNumber(ev.Details["redriveCount"]) != 1 ||
		countEvents(got.History, sfnengine.EventMapRunStarted) != 1 {
		t.Fatalf("history %s", eventTypes(got.History))
	}
}

// TestDistributedMapValidation: what a Distributed Map may and may not have.
func TestDistributedMapValidation(t *testing.T) {
	tests := []struct {
		name, def, want string
	}{
		{"no execution type", `{"StartAt":"M","States":{"M":{"Type":"Map","End":true,"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}}}}`,
			"States.M.ItemProcessor.ProcessorConfig.ExecutionType: is required when Mode is DISTRIBUTED"},
		{"item reader", distributed(`"ItemReader":{"Resource":"arn:aws:states:::s3:getObject","Parameters":{"Bucket":"b","Key":"k"}},`, `{"P":{"Type":"Pass","End":true}}`),
			"States.Charge.ItemReader: is not supported by this engine"},
		{"result writer", distributed(`"ResultWriter":{"Resource":"arn:aws:states:::s3:putObject","Parameters":{"Bucket":"b","Prefix":"p"}},`, `{"P":{"Type":"Pass","End":true}}`),
			"States.Charge.ResultWriter: is not supported by this engine"},
		{"label on an inline map", `{"StartAt":"M","States":{"M":{"Type":"Map","Label":"x","End":true,"ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}}}}`,
			"States.M.Label: is only supported in a Map whose ItemProcessor.ProcessorConfig.Mode is DISTRIBUTED"},
		{"bad label", distributed(`"Label":"a b",`, `{"P":{"Type":"Pass","End":true}}`), "States.Charge.Label: must have at most 40 characters"},
		{"percentage over 100", distributed(`"ToleratedFailurePercentage":101,`, `{"P":{"Type":"Pass","End":true}}`),
			"States.Charge.ToleratedFailurePercentage: must be a number between 0 and 100"},
		{"batcher without a bound", distributed(`"ItemBatcher":{"BatchInput":{}},`, `{"P":{"Type":"Pass","End":true}}`),
			"States.Charge.ItemBatcher: must have MaxItemsPerBatch or MaxInputBytesPerBatch"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := asl.Load([]byte(tc.def))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := asl.Load([]byte(distributed(`"Label":"ok-label","ToleratedFailureCount":3,"ItemBatcher":{"MaxItemsPerBatch":10},`,
		`{"P":{"Type":"Pass","End":true}}`))); err != nil {
		t.Fatalf("a valid Distributed Map: %v", err)
	}
}
