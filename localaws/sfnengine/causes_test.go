package sfnengine_test

import (
	"testing"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// TestJSONataCausesAsAWS: States.QueryEvaluationError causes in AWS's recorded words, with the EvaluationFailed
// event AWS records (location included or not, and its link): a Wait Timestamp that is not an ISO-8601 date-time,
// a Map input that is not an array (no location), an expression that returns a function, and a coded JSONata error.
func TestJSONataCausesAsAWS(t *testing.T) {
	eng := newEngine(t, sfnengine.Options{})
	processor := `"ItemProcessor":{"ProcessorConfig":{"Mode":"INLINE"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`
	tests := []struct {
		name, states, input, cause, location string
		failedAt, prev                       int // the EvaluationFailed event's index in the history, and its link
	}{
		{"a Wait Timestamp that is not a date-time", `"S":{"Type":"Wait","Timestamp":"{% $states.input.TimestampValue %}","End":true}`,
			`{"TimestampValue":"2016-12-05 21:29:29Z"}`,
			"An error occurred while executing the state 'S' (entered at the event id #2). The Timestamp field cannot be parsed as an ISO-8601 extended offset date-time format string: 2016-12-05 21:29:29Z",
			"Timestamp", 2, 2},
		{"a Map input that is not an array", `"Start":{"Type":"Pass","Output":"{% $states.input.items %}","Next":"S"},
		  "S":{"Type":"Map","MaxConcurrency":1,` + processor + `,"End":true}`, `{"items":{"foo":"bar"}}`,
			`An error occurred while executing the state 'S' (entered at the event id #4). Map state input must be an array but was: {"foo":"bar"}`,
			"", 4, 3},
		{"Items that return a function", `"S":{"Type":"Map","Items":"{% $fn := function($x){$x} %}",` + processor + `,"End":true}`, `{}`,
			"An error occurred while executing the state 'S' (entered at the event id #2). The JSONata expression '$fn := function($x){$x}' specified for the field 'Items' returned an unsupported result type.",
			"Items", 2, 0},
		{"a non-function invoked", `"S":{"Type":"Pass","Output":{"r":"{% $partial(1) %}"},"End":true}`, `{}`,
			"An error occurred while executing the state 'S' (entered at the event id #2). The JSONata expression '$partial(1)' specified for the field 'Output/r' threw an error during evaluation. T1006: Attempted to invoke a non-function",
			"Output/r", 2, 0},
		{"a string that is not a number", `"S":{"Type":"Pass","Output":"{% $number($states.input.n) %}","End":true}`, `{"n":"abc"}`,
			"An error occurred while executing the state 'S' (entered at the event id #2). The JSONata expression '$number($states.input.n)' specified for the field 'Output' threw an error during evaluation. D3030: Unable to cast value to a number: \"abc\"",
			"Output", 2, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := "S"
			if tc.failedAt == 4 {
				start = "Start"
			}
			rec := run(t, eng, `{"QueryLanguage":"JSONata","StartAt":"`+start+`","States":{`+tc.states+`}}`, tc.input)
			if rec.Status != sfnengine.StatusFailed || deref(rec.Error) != "States.QueryEvaluationError" || deref(rec.Cause) != tc.cause {
				t.Fatalf("%s %s %q\nwant FAILED States.QueryEvaluationError %q", rec.Status, deref(rec.Error), deref(rec.Cause), tc.cause)
			}
			if len(rec.History) <= tc.failedAt {
				t.Fatalf("history %s", eventTypes(rec.History))
			}
			ev := rec.History[tc.failedAt]
			loc, hasLoc := ev.Details["location"]
			if ev.Type != "EvaluationFailed" || ev.Details["cause"] != tc.cause || int(ev.PreviousEventID) != tc.prev ||
				hasLoc != (tc.location != "") || (hasLoc && loc != tc.location) {
				t.Fatalf("event %d: %s links to %d %v; want EvaluationFailed linked to %d, location %q", tc.failedAt+1, ev.Type,
					ev.PreviousEventID, ev.Details, tc.prev, tc.location)
			}
		})
	}
}
