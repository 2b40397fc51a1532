package sfnengine_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"

	"github.com/transferflow/orchestrator/localaws/eventbus"
	"github.com/transferflow/orchestrator/localaws/eventpattern"
	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// putEventsTask publishes one event to bus "orders" and catches any error into $.err.
const putEventsTask = `{"StartAt":"Publish","States":{"Publish":{"Type":"Task","Resource":"arn:aws:states:::events:putEvents",
  "Parameters":{"Entries":[{"EventBusName":"orders","Source":"shop.orders","DetailType":"Order Placed",
    "Detail":{"orderId.$":"$.id","total":12},"Resources":["arn:aws:s3:::receipts"]}]},
  "Catch":[{"ErrorEquals":["States.ALL"],"ResultPath":"$.err","Next":"Caught"}],"End":true},
  "Caught":{"Type":"Pass","End":true}}}`

// eventBridgeEngine is an engine whose events:putEvents tasks go through the real SDK client to a local EventBridge
// (localaws/eventbus) with bus "orders", whose rule keeps every event of shop.orders in log group "orders". With
// url set, the client goes there instead.
func eventBridgeEngine(t *testing.T, url string, faults ...string) (*sfnengine.Engine, *eventbus.Server) {
	t.Helper()
	bus, busURL := ordersBus(t, faults...)
	if url == "" {
		url = busURL
	}
	return newEngine(t, sfnengine.Options{EventBridge: eventBridgeClient(url)}), bus
}

// ordersBus serves a local EventBridge, with faults, whose bus "orders" keeps every event of shop.orders in log group
// "orders"; it returns the bus and its URL.
func ordersBus(t *testing.T, faults ...string) (*eventbus.Server, string) {
	t.Helper()
	p, err := eventpattern.Compile(map[string]any{"source": []any{"shop.orders"}})
	if err != nil {
		t.Fatal(err)
	}
	bus, err := eventbus.New(eventbus.Options{Region: "us-east-1", AccountID: "123456789012", Buses: []string{"orders"},
		Rules: []eventbus.Rule{{Name: "all", EventBusName: "orders", Pattern: p, LogGroups: []string{"orders"}}}, NewID: sfnengine.NewUUID})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bus.Close() })
	for _, f := range faults {
		fault, err := eventbus.ParseFault(f)
		if err != nil {
			t.Fatal(err)
		}
		bus.AddFault(fault)
	}
	srv := httptest.NewServer(bus)
	t.Cleanup(srv.Close)
	return bus, srv.URL
}

// eventBridgeClient is an EventBridge client of the SDK for url, making one attempt per call.
func eventBridgeClient(url string) *eventbridge.Client {
	return eventbridge.New(eventbridge.Options{Region: "us-east-1", BaseEndpoint: aws.String(url),
		Credentials: aws.AnonymousCredentials{}, RetryMaxAttempts: 1})
}

// TestEventBridgePutEvents: the events:putEvents integration sends each entry (an object Detail as its JSON text,
// the execution's and the state machine's ARNs appended to Resources) through the real SDK, returns PutEvents'
// answer, and names failures as AWS does: EventBridge.FailedEntry for an answer with failed entries (the answer as
// the cause), EventBridge.<Exception> for a refused call, EventBridge.SdkClientException when no answer came.
func TestEventBridgePutEvents(t *testing.T) {
	t.Run("published", func(t *testing.T) {
		eng, bus := eventBridgeEngine(t, "")
		rec := run(t, eng, putEventsTask, `{"id":"o-1"}`)
		if rec.Status != sfnengine.StatusSucceeded {
			t.Fatalf("status %s", rec.Status)
		}
		var out struct {
			Entries          []map[string]string
			FailedEntryCount *int
			Err              any `json:"err"`
		}
		if err := json.Unmarshal([]byte(*rec.Output), &out); err != nil {
			t.Fatal(err)
		}
		if out.Err != nil || out.FailedEntryCount == nil || *out.FailedEntryCount != 0 || len(out.Entries) != 1 || out.Entries[0]["EventId"] == "" {
			t.Fatalf("output %s, want PutEvents' answer with one EventId", *rec.Output)
		}
		sched := findEvent(rec.History, sfnengine.EventTaskScheduled)
		if sched == nil || sched.Details["resourceType"] != "events" || sched.Details["resource"] != "putEvents" {
			t.Fatalf("TaskScheduled = %+v, want resourceType events, resource putEvents", sched)
		}
		if ok := findEvent(rec.History, sfnengine.EventTaskSucceeded); ok == nil || ok.Details["resource"] != "putEvents" {
			t.Fatalf("no TaskSucceeded for putEvents: %+v", ok)
		}
		kept := bus.Events("orders")
		if len(kept) != 1 {
			t.Fatalf("the bus kept %d events, want 1", len(kept))
		}
		var ev struct {
			ID         string   `json:"id"`
			DetailType string   `json:"detail-type"`
			Resources  []string `json:"resources"`
			Detail     map[string]any
		}
		if err := json.Unmarshal([]byte(kept[0].Message), &ev); err != nil {
			t.Fatal(err)
		}
		want := []string{"arn:aws:s3:::receipts", rec.Arn, rec.StateMachineArn}
		if ev.ID != out.Entries[0]["EventId"] || ev.DetailType != "Order Placed" || ev.Detail["orderId"] != "o-1" ||
			ev.Detail["total"] != 12.0 || strings.Join(ev.Resources, " ") != strings.Join(want, " ") {
			t.Fatalf("event %+v, want detail {orderId o-1, total 12} and resources %v", ev, want)
		}
	})

	tests := []struct {
		name      string
		url       string
		faults    []string
		wantError string
		wantCause string // a substring
	}{
		{name: "failed entry", faults: []string{"events:failed-entry=InternalFailure"}, wantError: "EventBridge.FailedEntry",
			wantCause: `"ErrorCode":"InternalFailure"`},
		{name: "throttled call", faults: []string{"events:error=ThrottlingException"}, wantError: "EventBridge.ThrottlingException",
			wantCause: "Error Code: ThrottlingException"},
		{name: "internal error", faults: []string{"events:error=InternalException"}, wantError: "EventBridge.InternalException",
			wantCause: "Error Code: InternalException"},
		{name: "access denied", faults: []string{"events:error=AccessDeniedException"}, wantError: "EventBridge.AccessDeniedException",
			wantCause: "Error Code: AccessDeniedException"},
		{name: "no answer", url: "http://127.0.0.1:1", wantError: "EventBridge.SdkClientException", wantCause: "Unable to execute HTTP request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng, bus := eventBridgeEngine(t, tt.url, tt.faults...)
			rec := run(t, eng, putEventsTask, `{"id":"o-2"}`)
			failed := findEvent(rec.History, sfnengine.EventTaskFailed)
			if failed == nil || failed.Details["error"] != tt.wantError {
				t.Fatalf("TaskFailed = %+v, want error %s", failed, tt.wantError)
			}
			if cause, _ := failed.Details["cause"].(string); !strings.Contains(cause, tt.wantCause) {
				t.Errorf("cause %q, want it to hold %q", cause, tt.wantCause)
			}
			if n := len(bus.Events("orders")); n != 0 {
				t.Errorf("the bus kept %d events of a failed publish", n)
			}
		})
	}
}

// TestEventBridgeErrorNames: a wire code becomes EventBridge.<Exception>; the names list holds the ones the
// workflow retries.
func TestEventBridgeErrorNames(t *testing.T) {
	for code, want := range map[string]string{
		"ThrottlingException": "EventBridge.ThrottlingException",
		"InternalException":   "EventBridge.InternalException",
		"InternalFailure":     "EventBridge.InternalFailureException",
	} {
		if got := sfnengine.EventBridgeErrorName(code); got != want {
			t.Errorf("EventBridgeErrorName(%q) = %q, want %q", code, got, want)
		}
	}
	names := strings.Join(sfnengine.EventBridgeErrorNames(), " ")
	for _, n := range []string{"EventBridge.FailedEntry", "EventBridge.ThrottlingException", "EventBridge.InternalException", "EventBridge.SdkClientException"} {
		if !strings.Contains(names, n) {
			t.Errorf("EventBridgeErrorNames() lacks %s", n)
		}
	}
}

// TestCatchOnAnEndStateTransitions: an error caught on a Task that has End goes to the catcher's Next, as on AWS
// (a publish task that ends the execution, whose catcher fails it).
func TestCatchOnAnEndStateTransitions(t *testing.T) {
	eng, _ := eventBridgeEngine(t, "", "events:failed-entry=InternalFailure")
	def := `{"StartAt":"Publish","States":{"Publish":{"Type":"Task","Resource":"arn:aws:states:::events:putEvents",
	  "Parameters":{"Entries":[{"Source":"shop.orders","DetailType":"x","Detail":{}}]},
	  "Catch":[{"ErrorEquals":["States.ALL"],"Next":"NotPublished"}],"End":true},
	  "NotPublished":{"Type":"Fail","Error":"EventNotPublished"}}}`
	rec := run(t, eng, def, `{}`)
	if rec.Status != sfnengine.StatusFailed || rec.Error == nil || *rec.Error != "EventNotPublished" {
		t.Fatalf("execution %s %v, want FAILED with EventNotPublished", rec.Status, rec.Error)
	}
}
