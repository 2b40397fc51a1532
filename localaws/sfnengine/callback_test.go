package sfnengine_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/eventbridge"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// sentEvents is an EventBridge client that tells the test when a PutEvents call has been answered.
type sentEvents struct {
	sfnengine.EventBridgeAPI
	sent chan struct{}
}

func (s *sentEvents) PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, opts ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	out, err := s.EventBridgeAPI.PutEvents(ctx, in, opts...)
	s.sent <- struct{}{}
	return out, err
}

func historyTypeNames(h []sfnengine.Event) []string {
	var out []string
	for _, e := range h {
		out = append(out, e.Type)
	}
	return out
}

// TestPutEventsWaitForTaskToken: events:putEvents.waitForTaskToken publishes the event carrying $$.Task.Token
// through the real SDK to the local EventBridge, records TaskSubmitted with PutEvents' answer, and waits until a
// consumer of the event sends the token back.
func TestPutEventsWaitForTaskToken(t *testing.T) {
	bus, url := ordersBus(t)
	client := &sentEvents{EventBridgeAPI: eventBridgeClient(url), sent: make(chan struct{}, 1)}
	eng := newEngine(t, sfnengine.Options{EventBridge: client})
	rec := start(t, eng, `{"StartAt":"Publish","States":{"Publish":{"Type":"Task",
	  "Resource":"arn:aws:states:::events:putEvents.waitForTaskToken",
	  "Parameters":{"Entries":[{"EventBusName":"orders","Source":"shop.orders","DetailType":"Order Placed",
	    "Detail":{"orderId.$":"$.id","taskToken.$":"$$.Task.Token"}}]},"ResultPath":"$.shipped","End":true}}}`, `{"id":"o-1"}`)
	select {
	case <-client.sent:
	case <-time.After(30 * time.Second): // a guard against a hang
		t.Fatal("no event was published")
	}
	kept := bus.Events("orders")
	if len(kept) != 1 {
		t.Fatalf("the bus kept %d events, want 1", len(kept))
	}
	var ev struct {
		Detail struct{ OrderID, TaskToken string } `json:"detail"`
	}
	if err := json.Unmarshal([]byte(kept[0].Message), &ev); err != nil || ev.Detail.TaskToken == "" {
		t.Fatalf("event %s: %v, want a detail with the task token", kept[0].Message, err)
	}
	if err := eng.SendTaskSuccess(context.Background(), ev.Detail.TaskToken, `{"carrier":"ups"}`); err != nil {
		t.Fatal(err)
	}
	out := run2(t, eng, rec.Arn)
	if out.Status != sfnengine.StatusSucceeded || *out.Output != `{"id":"o-1","shipped":{"carrier":"ups"}}` {
		t.Fatalf("%s %v, want SUCCEEDED with the callback's output", out.Status, out.Output)
	}
	want := []string{"ExecutionStarted", "TaskStateEntered", "TaskScheduled", "TaskStarted", "TaskSubmitted",
		"TaskSucceeded", "TaskStateExited", "ExecutionSucceeded"}
	if got := historyTypeNames(out.History); !slices.Equal(got, want) {
		t.Fatalf("history = %v, want %v", got, want)
	}
	sub := out.History[4].Details
	if sub["resourceType"] != "events" || sub["resource"] != "putEvents.waitForTaskToken" {
		t.Fatalf("TaskSubmitted = %v", sub)
	}
	var answer struct{ FailedEntryCount int }
	if err := json.Unmarshal([]byte(sub["output"].(string)), &answer); err != nil || answer.FailedEntryCount != 0 {
		t.Fatalf("TaskSubmitted output = %v, want PutEvents' answer", sub["output"])
	}
}

// run2 waits for an execution started with start and returns it with its history.
func run2(t *testing.T, eng *sfnengine.Engine, arn string) *sfnengine.ExecutionRecord {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := waitHistory(ctx, eng, arn)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCallbacksInsideMap: callback tasks in Map iterations each get their own token, and the Map completes once
// every token is sent back, in any order.
func TestCallbacksInsideMap(t *testing.T) {
	tokens := make(chan string, 4)
	lambda := invokerFunc(func(_ context.Context, _ string, payload []byte) ([]byte, error) {
		var p struct{ Token string }
		if err := json.Unmarshal(payload, &p); err != nil {
			return nil, err
		}
		tokens <- p.Token
		return []byte(`null`), nil
	})
	eng := newEngine(t, sfnengine.Options{Lambda: lambda})
	rec := start(t, eng, `{"StartAt":"Each","States":{"Each":{"Type":"Map","ItemsPath":"$.items","End":true,
	  "ItemProcessor":{"StartAt":"Ask","States":{"Ask":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
	    "Parameters":{"FunctionName":"ask","Payload":{"Token.$":"$$.Task.Token"}},"End":true}}}}}}`, `{"items":[1,2,3]}`)
	var got []string
	for range 3 {
		select {
		case tok := <-tokens:
			got = append(got, tok)
		case <-time.After(30 * time.Second):
			t.Fatal("an iteration handed out no token")
		}
	}
	if len(slices.Compact(slices.Sorted(slices.Values(got)))) != 3 {
		t.Fatalf("tokens %v, want three different ones", got)
	}
	for i := len(got) - 1; i >= 0; i-- {
		if err := eng.SendTaskSuccess(context.Background(), got[i], `"answer"`); err != nil {
			t.Fatal(err)
		}
	}
	out := run2(t, eng, rec.Arn)
	if out.Status != sfnengine.StatusSucceeded || *out.Output != `["answer","answer","answer"]` {
		t.Fatalf("%s %v", out.Status, out.Output)
	}
}

// TestHeartbeatSecondsPath: the heartbeat interval read from the input is recorded in TaskScheduled and enforced;
// a value that is not a positive integer fails the state with States.Runtime.
func TestHeartbeatSecondsPath(t *testing.T) {
	const def = `{"StartAt":"Work","States":{"Work":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
	  "Parameters":{"FunctionName":"w","Payload":{"Token.$":"$$.Task.Token"}},"HeartbeatSecondsPath":"$.hb","End":true}}}`
	tokens := make(chan string, 1)
	lambda := invokerFunc(func(_ context.Context, _ string, payload []byte) ([]byte, error) {
		tokens <- string(payload)
		return []byte(`{}`), nil
	})
	clock := sfnengine.NewManualClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	eng := newEngine(t, sfnengine.Options{Lambda: lambda, Clock: clock})

	rec := start(t, eng, def, `{"hb":5}`)
	select {
	case <-tokens:
	case <-time.After(30 * time.Second):
		t.Fatal("the task was not called")
	}
	clock.MustAwaitWaiters(t, 1) // the heartbeat timer is pending once the task waits
	clock.Advance(5 * time.Second)
	out := run2(t, eng, rec.Arn)
	if out.Status != sfnengine.StatusFailed || *out.Error != "States.Timeout" {
		t.Fatalf("%s %v, want FAILED States.Timeout", out.Status, out.Error)
	}
	if sched := out.History[2]; sched.Type != "TaskScheduled" || sched.Details["heartbeatInSeconds"] != 5.0 {
		t.Fatalf("TaskScheduled = %+v, want heartbeatInSeconds 5", sched)
	}

	bad := run(t, eng, def, `{"hb":"soon"}`)
	if bad.Status != sfnengine.StatusFailed || *bad.Error != "States.Runtime" ||
		!strings.Contains(*bad.Cause, "The HeartbeatSecondsPath parameter cannot be parsed as a long value: $.hb == soon") {
		t.Fatalf("%s %v %v, want States.Runtime", bad.Status, *bad.Error, *bad.Cause)
	}
}
