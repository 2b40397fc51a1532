package loadbench

import (
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"
)

var t0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

func at(msec int) time.Time { return t0.Add(time.Duration(msec) * time.Millisecond) }

func TestAnalyzeHistory(t *testing.T) {
	tests := []struct {
		name string
		evs  []histEvent
		want execStats
	}{
		{
			name: "optimized lambda integrations and a DynamoDB task, as the local engine writes them",
			evs: []histEvent{
				{ID: 1, Type: "ExecutionStarted", At: at(0)},
				{ID: 2, Prev: 1, Type: "TaskStateEntered", At: at(0)},
				{ID: 3, Prev: 2, Type: "TaskScheduled", At: at(0), ResourceType: "lambda", Function: "DebitFunction"},
				{ID: 4, Prev: 3, Type: "TaskStarted", At: at(1), ResourceType: "lambda"},
				{ID: 5, Prev: 4, Type: "TaskSucceeded", At: at(6)},
				{ID: 6, Prev: 5, Type: "TaskStateExited", At: at(6)},
				{ID: 7, Prev: 6, Type: "TaskStateEntered", At: at(6)},
				{ID: 8, Prev: 7, Type: "TaskScheduled", At: at(6), ResourceType: "lambda", Function: "CreditFunction"},
				{ID: 9, Prev: 8, Type: "TaskStarted", At: at(6), ResourceType: "lambda"},
				{ID: 10, Prev: 9, Type: "TaskSucceeded", At: at(10)},
				{ID: 11, Prev: 10, Type: "TaskStateExited", At: at(10)},
				{ID: 12, Prev: 11, Type: "TaskStateEntered", At: at(10)},
				{ID: 13, Prev: 12, Type: "TaskScheduled", At: at(10), ResourceType: "dynamodb"},
				{ID: 14, Prev: 13, Type: "TaskStarted", At: at(10), ResourceType: "dynamodb"},
				{ID: 15, Prev: 14, Type: "TaskSucceeded", At: at(12)},
				{ID: 16, Prev: 15, Type: "TaskStateExited", At: at(12)},
				{ID: 17, Prev: 16, Type: "ExecutionSucceeded", At: at(12)},
			},
			want: execStats{Transitions: 3, LambdaInvocations: 2, Durations: map[string][]time.Duration{
				"DebitFunction": {5 * time.Millisecond}, "CreditFunction": {4 * time.Millisecond},
			}},
		},
		{
			name: "a retried legacy lambda task counts a transition per attempt",
			evs: []histEvent{
				{ID: 1, Type: "ExecutionStarted", At: at(0)},
				{ID: 2, Prev: 1, Type: "TaskStateEntered", At: at(0)},
				{ID: 3, Prev: 2, Type: "LambdaFunctionScheduled", At: at(0), ResourceType: "lambda", Function: "DebitFunction"},
				{ID: 4, Prev: 3, Type: "LambdaFunctionStarted", At: at(0)},
				{ID: 5, Prev: 4, Type: "LambdaFunctionFailed", At: at(3)},
				{ID: 6, Prev: 5, Type: "LambdaFunctionScheduled", At: at(1003), ResourceType: "lambda", Function: "DebitFunction"},
				{ID: 7, Prev: 6, Type: "LambdaFunctionStarted", At: at(1003)},
				{ID: 8, Prev: 7, Type: "LambdaFunctionSucceeded", At: at(1005)},
				{ID: 9, Prev: 8, Type: "TaskStateExited", At: at(1005)},
				{ID: 10, Prev: 9, Type: "SucceedStateEntered", At: at(1005)},
				{ID: 11, Prev: 10, Type: "ExecutionSucceeded", At: at(1005)},
			},
			want: execStats{Transitions: 3, LambdaInvocations: 2, Durations: map[string][]time.Duration{
				"DebitFunction": {3 * time.Millisecond, 2 * time.Millisecond},
			}},
		},
		{
			name: "an end without a link is the next end event",
			evs: []histEvent{
				{ID: 1, Type: "TaskStateEntered", At: at(0)},
				{ID: 2, Type: "TaskScheduled", At: at(0), ResourceType: "lambda", Function: "F"},
				{ID: 3, Type: "TaskStarted", At: at(2)},
				{ID: 4, Type: "TaskSucceeded", At: at(9)},
			},
			want: execStats{Transitions: 1, LambdaInvocations: 1, Durations: map[string][]time.Duration{"F": {7 * time.Millisecond}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := analyzeHistory(tt.evs); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("analyzeHistory = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestFromSDK(t *testing.T) {
	in := []sfntypes.HistoryEvent{
		{Id: 3, PreviousEventId: 2, Type: sfntypes.HistoryEventTypeTaskScheduled, Timestamp: aws.Time(at(5)),
			TaskScheduledEventDetails: &sfntypes.TaskScheduledEventDetails{ResourceType: aws.String("lambda"), Resource: aws.String("invoke"),
				Parameters: aws.String(`{"FunctionName":"arn:aws:lambda:us-east-1:000000000000:function:DebitFunction","Payload":{}}`)}},
		{Id: 4, PreviousEventId: 3, Type: sfntypes.HistoryEventTypeTaskStarted, Timestamp: aws.Time(at(6)),
			TaskStartedEventDetails: &sfntypes.TaskStartedEventDetails{ResourceType: aws.String("lambda")}},
		{Id: 5, Type: sfntypes.HistoryEventTypeLambdaFunctionScheduled,
			LambdaFunctionScheduledEventDetails: &sfntypes.LambdaFunctionScheduledEventDetails{Resource: aws.String("arn:aws:lambda:eu-west-1:1:function:Credit:live")}},
	}
	want := []histEvent{
		{ID: 3, Prev: 2, Type: "TaskScheduled", At: at(5), ResourceType: "lambda", Function: "DebitFunction"},
		{ID: 4, Prev: 3, Type: "TaskStarted", At: at(6), ResourceType: "lambda"},
		{ID: 5, Type: "LambdaFunctionScheduled", ResourceType: "lambda", Function: "Credit"},
	}
	if got := fromSDK(in); !reflect.DeepEqual(got, want) {
		t.Errorf("fromSDK = %+v, want %+v", got, want)
	}
}

func TestFunctionName(t *testing.T) {
	for in, want := range map[string]string{
		"arn:aws:lambda:us-east-1:000000000000:function:DebitFunction":      "DebitFunction",
		"arn:aws:lambda:us-east-1:000000000000:function:DebitFunction:live": "DebitFunction",
		"DebitFunction":   "DebitFunction",
		"DebitFunction:1": "DebitFunction",
	} {
		if got := functionName(in); got != want {
			t.Errorf("functionName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHistoriesPlus(t *testing.T) {
	a := histories{n: 1, transitions: 3, invocations: 2, durations: map[string][]time.Duration{"F": {1}}}
	b := histories{n: 2, transitions: 6, invocations: 4, durations: map[string][]time.Duration{"F": {2}, "G": {3}}}
	got := a.plus(b)
	if got.n != 3 || got.transitions != 9 || got.invocations != 6 || len(got.durations["F"]) != 2 || len(got.durations["G"]) != 1 {
		t.Errorf("plus = %+v", got)
	}
	if len(a.durations["F"]) != 1 {
		t.Error("plus changed its receiver")
	}
}

// TestAnalyzeHistoryCountsEventPublishes: each events:putEvents task scheduled (a retry included) is one event
// published, and a transition like any task attempt.
func TestAnalyzeHistoryCountsEventPublishes(t *testing.T) {
	got := analyzeHistory([]histEvent{
		{ID: 1, Type: "TaskStateEntered", At: at(0)},
		{ID: 2, Prev: 1, Type: "TaskScheduled", At: at(0), ResourceType: "events"},
		{ID: 3, Prev: 2, Type: "TaskStarted", At: at(0), ResourceType: "events"},
		{ID: 4, Prev: 3, Type: "TaskSucceeded", At: at(1), ResourceType: "events"},
	})
	if got.EventPublishes != 1 || got.Transitions != 1 || got.LambdaInvocations != 0 {
		t.Fatalf("stats %+v, want 1 publish, 1 transition, no invocation", got)
	}
}
