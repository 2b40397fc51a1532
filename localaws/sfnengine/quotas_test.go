package sfnengine_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// TestHistoryLimitFailsAsAWSDoes: a loop that never ends is failed by the history quota exactly where AWS fails it
// (measured on AWS: event 25,000 is ExecutionFailed, pointing back to event 24,999, the last state event).
func TestHistoryLimitFailsAsAWSDoes(t *testing.T) {
	loop := `{"StartAt":"Loop","States":{"Loop":{"Type":"Choice","Choices":[{"Variable":"$.spin","BooleanEquals":true,"Next":"Loop"}],"Default":"Out"},"Out":{"Type":"Succeed"}}}`
	eng := newEngine(t, sfnengine.Options{})
	rec := run(t, eng, loop, `{"spin":true}`)
	if rec.Status != sfnengine.StatusFailed || *rec.Error != "States.Runtime" ||
		*rec.Cause != "The execution reached the maximum number of history events (25000)." {
		t.Fatalf("status %s error %v cause %v", rec.Status, rec.Error, rec.Cause)
	}
	if len(rec.History) != 25000 {
		t.Fatalf("%d events, want 25000", len(rec.History))
	}
	last, prev := rec.History[24999], rec.History[24998]
	if last.ID != 25000 || last.PreviousEventID != 24999 || last.Type != sfnengine.EventExecutionFailed ||
		last.Details["cause"] != *rec.Cause || last.Details["error"] != "States.Runtime" {
		t.Fatalf("last event %+v", last)
	}
	if prev.ID != 24999 || prev.Type != "ChoiceStateExited" || prev.PreviousEventID != 24998 {
		t.Fatalf("event 24999 %+v", prev)
	}
}

// TestDataLimitExceeded: data over 256 KiB fails the state with States.DataLimitExceeded, which Catch does not
// handle, wherever it appears: a state's result (the case AWS recorded, test_start_large_input), a Map iteration's
// input built by its ItemSelector, a Task's parameters.
func TestDataLimitExceeded(t *testing.T) {
	big := strings.Repeat("a", 150*1024)
	tests := []struct {
		name      string
		def       string
		wantCause string
		wantLast  string // type of the event before ExecutionFailed
	}{
		{
			name:      "a Pass result",
			def:       `{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"a.$":"$.big","b.$":"$.big"},"End":true}}}`,
			wantCause: "The state/task 'P' returned a result with a size exceeding the maximum number of bytes service limit.",
			wantLast:  "PassStateEntered",
		},
		{
			name: "a Map iteration's input",
			def: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.items","ItemSelector":{"a.$":"$.big","b.$":"$.big"},
				"ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass","End":true}}},
				"Catch":[{"ErrorEquals":["States.ALL"],"Next":"Caught"}],"End":true},"Caught":{"Type":"Succeed"}}}`,
			wantCause: "The state/task 'I' was given an input with a size exceeding the maximum number of bytes service limit.",
			wantLast:  "MapIterationFailed",
		},
		{
			name: "a Task's parameters",
			def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke",
				"Parameters":{"FunctionName":"f","Payload":{"a.$":"$.big","b.$":"$.big"}},
				"Catch":[{"ErrorEquals":["States.ALL"],"Next":"Caught"}],"End":true},"Caught":{"Type":"Succeed"}}}`,
			wantCause: "The state/task 'T' was given parameters with a size exceeding the maximum number of bytes service limit.",
			wantLast:  "TaskStateEntered",
		},
	}
	calls := 0
	invoke := invokerFunc(func(context.Context, string, []byte) ([]byte, error) { calls++; return []byte(`{}`), nil })
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := newEngine(t, sfnengine.Options{Lambda: invoke})
			rec := run(t, eng, tt.def, fmt.Sprintf(`{"big":%q,"items":[1]}`, big))
			if rec.Status != sfnengine.StatusFailed || *rec.Error != "States.DataLimitExceeded" || *rec.Cause != tt.wantCause {
				t.Fatalf("status %s error %v cause %v", rec.Status, rec.Error, deref(rec.Cause))
			}
			if got := rec.History[len(rec.History)-2].Type; got != tt.wantLast {
				t.Fatalf("event before ExecutionFailed is %s, want %s", got, tt.wantLast)
			}
		})
	}
	if calls != 0 {
		t.Fatalf("the Lambda function was called %d times with parameters over the limit", calls)
	}
}

// hostileMap loops forever over a Map of 1,000 iterations whose items each carry the whole padding of the input:
// every iteration's events hold two copies of it, so its 25,000 events would hold gigabytes of history.
const hostileMap = `{"StartAt":"Init","States":{
  "Init":{"Type":"Pass","Parameters":{"items.$":"States.ArrayRange(1, 1000, 1)","pad.$":"$.pad"},"Next":"Fan"},
  "Fan":{"Type":"Map","ItemsPath":"$.items","MaxConcurrency":40,"ItemSelector":{"pad.$":"$.pad","i.$":"$$.Map.Item.Value"},
    "ItemProcessor":{"StartAt":"Echo","States":{"Echo":{"Type":"Pass","End":true}}},"ResultPath":null,"Next":"Init"}}}`

// TestHostileHistoryIsBounded runs hostileMap with 20 KB of padding: 25,000 events of which half carry 20 KB, a
// quarter of a gigabyte of history if every payload were kept. The execution fails on the history quota as on AWS, the events past
// Options.MaxHistoryBytes are recorded without their payloads, and what the engine and its MemoryStore keep of the
// closed execution stays within the bound.
func TestHostileHistoryIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("marshals a quarter of a gigabyte of padding")
	}
	eng := newEngine(t, sfnengine.Options{})
	before := heapInuse()
	started := start(t, eng, hostileMap, fmt.Sprintf(`{"pad":%q}`, strings.Repeat("p", 20_000)))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a guard against a hang, not a timing
	defer cancel()
	rec, err := waitHistory(ctx, eng, started.Arn)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != sfnengine.StatusFailed || *rec.Error != "States.Runtime" || len(rec.History) != 25000 {
		t.Fatalf("status %s error %v, %d events", rec.Status, deref(rec.Error), len(rec.History))
	}
	size, elided := 0, 0
	for _, e := range rec.History {
		in, _ := e.Details["input"].(string)
		size += len(in)
		if d, ok := e.Details["inputDetails"].(map[string]any); ok && d["truncated"] == true {
			elided++
			if in != "" {
				t.Fatalf("event %d is marked truncated but has %d bytes of input", e.ID, len(in))
			}
		}
	}
	if size > sfnengine.DefaultMaxHistoryBytes+sfnengine.MaxPayloadBytes || elided < 5000 {
		t.Fatalf("%d bytes of inputs in the history, %d events without theirs", size, elided)
	}
	rec = nil
	retained := float64(heapInuse()) - float64(before)
	t.Logf("closed hostile execution: %.1f MiB of heap kept, %d events without payload", retained/(1<<20), elided)
	if limit := float64(sfnengine.DefaultMaxHistoryBytes + 25000*512); retained > limit {
		t.Fatalf("the closed execution keeps %.0f bytes of heap, want at most %.0f", retained, limit)
	}
	runtime.KeepAlive(eng)
}
