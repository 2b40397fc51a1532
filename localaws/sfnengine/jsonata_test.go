package sfnengine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// sameJSON reports whether two JSON texts are the same value.
func sameJSON(t *testing.T, got, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("not JSON: %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("not JSON: %s: %v", want, err)
	}
	return reflect.DeepEqual(g, w)
}

func output(t *testing.T, rec *sfnengine.ExecutionRecord) string {
	t.Helper()
	if rec.Status != sfnengine.StatusSucceeded || rec.Output == nil {
		t.Fatalf("status %s, error %v, cause %v; want SUCCEEDED", rec.Status, deref(rec.Error), deref(rec.Cause))
	}
	return *rec.Output
}

// recordingLambda records each call's function name and payload and answers with reply(name, payload).
type recordingLambda struct {
	mu    sync.Mutex
	calls []string
	reply func(name string, payload []byte) ([]byte, error)
}

func (l *recordingLambda) Invoke(_ context.Context, name string, payload []byte) ([]byte, error) {
	l.mu.Lock()
	l.calls = append(l.calls, name+" "+string(payload))
	l.mu.Unlock()
	if l.reply == nil {
		return []byte(`{}`), nil
	}
	return l.reply(name, payload)
}

// TestDocConvertingJSONPathToJSONata is the conversion example of "Transforming data with JSONata in Step
// Functions" (https://docs.aws.amazon.com/step-functions/latest/dg/transforming-data.html): the JSONPath
// Parameters {"static", "title.$": "$.title", "name.$": "$customerName", "not-evaluated"} and the JSONata
// Arguments that replace them give the task the same input, $customerName being a variable.
func TestDocConvertingJSONPathToJSONata(t *testing.T) {
	const jsonPath = `{"StartAt":"Declare","States":{
	  "Declare":{"Type":"Pass","Assign":{"customerName.$":"$.customer"},"Next":"Task"},
	  "Task":{"QueryLanguage":"JSONPath","Type":"Task","Resource":"arn:aws:states:::lambda:invoke",
	    "Parameters":{"FunctionName":"f","Payload":{"static":"Hello","title.$":"$.title","name.$":"$customerName","not-evaluated":"$customerName"}},
	    "End":true}}}`
	const jsonata = `{"StartAt":"Declare","States":{
	  "Declare":{"Type":"Pass","Assign":{"customerName.$":"$.customer"},"Next":"Task"},
	  "Task":{"QueryLanguage":"JSONata","Type":"Task","Resource":"arn:aws:states:::lambda:invoke",
	    "Arguments":{"FunctionName":"f","Payload":{"static":"Hello","title":"{% $states.input.title %}","name":"{% $customerName %}","not-evaluated":"$customerName"}},
	    "End":true}}}`
	want := `{"static":"Hello","title":"Dr","name":"Ann","not-evaluated":"$customerName"}`
	for name, def := range map[string]string{"JSONPath": jsonPath, "JSONata": jsonata} {
		t.Run(name, func(t *testing.T) {
			l := &recordingLambda{}
			eng := newEngine(t, sfnengine.Options{Lambda: l})
			rec := run(t, eng, def, `{"title":"Dr","customer":"Ann"}`)
			output(t, rec)
			if len(l.calls) != 1 || !sameJSON(t, strings.TrimPrefix(l.calls[0], "f "), want) {
				t.Fatalf("payload = %v, want %s", l.calls, want)
			}
		})
	}
}

// TestDocChoiceRulesJSONata runs the JSONata Choice rules of "Choice workflow state"
// (https://docs.aws.amazon.com/step-functions/latest/dg/state-choice.html), with the variables they read set by
// an earlier state, and checks which rule each input takes.
func TestDocChoiceRulesJSONata(t *testing.T) {
	const def = `{"QueryLanguage":"JSONata","StartAt":"Set","States":{
	  "Set":{"Type":"Pass","Assign":{"foo":"{% $states.input.foo %}","type":"{% $states.input.type %}",
	    "possiblyNullValue":"{% $states.input.possiblyNullValue %}"},"Next":"Choose"},
	  "Choose":{"Type":"Choice","Choices":[
	    {"Condition":"{% $foo = 1 %}","Next":"NumericMatchState"},
	    {"Condition":"{% $type = 'local' %}","Next":"StringMatchState"},
	    {"Condition":"{% $foo > 'MyStringABC' %}","Next":"StringGreaterMatchState"},
	    {"Condition":"{% $possiblyNullValue != null and $possiblyNullValue = 42 %}","Next":"NotNullAnd42"}],
	    "Default":"NoMatch"},
	  "NumericMatchState":{"Type":"Pass","Output":"numeric","End":true},
	  "StringMatchState":{"Type":"Pass","Output":"string","End":true},
	  "StringGreaterMatchState":{"Type":"Pass","Output":"greater","End":true},
	  "NotNullAnd42":{"Type":"Pass","Output":"42","End":true},
	  "NoMatch":{"Type":"Pass","Output":"none","End":true}}}`
	tests := []struct{ input, want string }{
		{`{"foo":1,"type":"x","possiblyNullValue":null}`, `"numeric"`},
		{`{"foo":0,"type":"local","possiblyNullValue":null}`, `"string"`},
		{`{"foo":"MyStringABD","type":"x","possiblyNullValue":null}`, `"greater"`},
		{`{"foo":"A","type":"x","possiblyNullValue":42}`, `"42"`},
		{`{"foo":"A","type":"x","possiblyNullValue":null}`, `"none"`},
	}
	eng := newEngine(t, sfnengine.Options{})
	for _, tc := range tests {
		t.Run(strings.Trim(tc.want, `"`), func(t *testing.T) {
			if got := output(t, run(t, eng, def, tc.input)); got != tc.want {
				t.Fatalf("output %s, want %s", got, tc.want)
			}
		})
	}
}

// TestDocJSONataFunctions runs the examples of the functions Step Functions adds to JSONata ("JSONata functions
// provided by Step Functions", https://docs.aws.amazon.com/step-functions/latest/dg/transforming-data.html) in an
// Assign, as the page shows them, and reads the variables back in the Output.
func TestDocJSONataFunctions(t *testing.T) {
	const def = `{"QueryLanguage":"JSONata","StartAt":"Assign","States":{
	  "Assign":{"Type":"Pass","Assign":{
	    "arrayPartition":"{% $partition([1, 2, 3, 4, 5, 6, 7, 8, 9], 3) %}",
	    "evenNumbers":"{% $range(0, 10, 2) %}",
	    "contentHash":"{% $hash($states.input.content, 'SHA-256') %}",
	    "randSeeded":"{% $random($states.input.seed) = $random($states.input.seed) %}",
	    "requestId":"{% $uuid() %}",
	    "parsed":"{% $parse($states.input.json) %}"},"Next":"Read"},
	  "Read":{"Type":"Pass","Output":{"arrayPartition":"{% $arrayPartition %}","evenNumbers":"{% $evenNumbers %}",
	    "contentHash":"{% $contentHash %}","randSeeded":"{% $randSeeded %}","requestId":"{% $requestId %}","parsed":"{% $parsed %}"},"End":true}}}`
	eng := newEngine(t, sfnengine.Options{NewID: func() string { return "6a0b8c1e-0000-4000-8000-000000000001" }})
	got := output(t, run(t, eng, def, `{"content":"input data","seed":42,"json":"{\"a\":[1,true,null]}"}`))
	want := `{"arrayPartition":[[1,2,3],[4,5,6],[7,8,9]],"evenNumbers":[0,2,4,6,8,10],
	  "contentHash":"b4a697a057313163aee33cd8d40c66e9f0f177e00cac2de32475ffff6169c3e3","randSeeded":true,
	  "requestId":"6a0b8c1e-0000-4000-8000-000000000001","parsed":{"a":[1,true,null]}}`
	if !sameJSON(t, got, want) {
		t.Fatalf("output %s, want %s", got, want)
	}
}

// TestJSONata2Functions: a JSONata machine uses the JSONata 2.x functions the library lacks ($assert,
// $formatInteger, $parseInteger; https://docs.jsonata.org/numeric-functions and
// https://docs.jsonata.org/object-functions#assert): an amount is validated with $assert in a Parallel whose
// catcher turns a failed assertion into a rejection, then written in words, grouped digits and an ordinal and read
// back. An assertion outside a catcher fails the execution with States.QueryEvaluationError and its message.
func TestJSONata2Functions(t *testing.T) {
	const def = `{"QueryLanguage":"JSONata","StartAt":"Validate","States":{
	  "Validate":{"Type":"Parallel","Branches":[{"StartAt":"Check","States":{"Check":{"Type":"Pass",
	    "Output":"{% ($assert($states.input.amount > 0, 'the amount must be positive'); $states.input) %}","End":true}}}],
	    "Output":"{% $states.result[0] %}",
	    "Catch":[{"ErrorEquals":["States.QueryEvaluationError"],"Output":{"rejected":"{% $states.errorOutput.Cause %}"},"Next":"Rejected"}],
	    "Next":"Format"},
	  "Format":{"Type":"Pass","Assign":{"grouped":"{% $formatInteger($states.input.amount, '#,##0') %}"},
	    "Output":{"words":"{% $formatInteger($states.input.amount, 'w') %}","rank":"{% $formatInteger($states.input.rank, '0;o') %}",
	      "year":"{% $formatInteger($states.input.year, 'I') %}","column":"{% $formatInteger($states.input.rank, 'A') %}"},"Next":"Read"},
	  "Read":{"Type":"Pass","Output":{"grouped":"{% $grouped %}","amount":"{% $parseInteger($grouped, '#,##0') %}",
	    "rank":"{% $parseInteger($states.input.rank, '0;o') %}","fromWords":"{% $parseInteger($states.input.words, 'w') %}",
	    "words":"{% $states.input.words %}","year":"{% $states.input.year %}","column":"{% $states.input.column %}"},"End":true},
	  "Rejected":{"Type":"Pass","End":true}}}`
	eng := newEngine(t, sfnengine.Options{})

	got := output(t, run(t, eng, def, `{"amount":1234567,"rank":28,"year":2026}`))
	if want := `{"grouped":"1,234,567","amount":1234567,"rank":28,"fromWords":1234567,
	  "words":"one million, two hundred and thirty-four thousand, five hundred and sixty-seven","year":"MMXXVI","column":"AB"}`; !sameJSON(t, got, want) {
		t.Fatalf("output %s, want %s", got, want)
	}

	got = output(t, run(t, eng, def, `{"amount":-5,"rank":1,"year":1}`))
	var rejected struct{ Rejected string }
	if err := json.Unmarshal([]byte(got), &rejected); err != nil {
		t.Fatal(err)
	}
	if want := "threw an error during evaluation. D3141: the amount must be positive"; !strings.HasSuffix(rejected.Rejected, want) {
		t.Fatalf("rejected %q, want a cause ending with %q", rejected.Rejected, want)
	}

	t.Run("uncaught", func(t *testing.T) {
		const def = `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass",
		  "Output":"{% $assert($states.input.ok, 'not ok') %}","End":true}}}`
		rec := run(t, eng, def, `{"ok":false}`)
		want := "An error occurred while executing the state 'A' (entered at the event id #2). The JSONata expression " +
			"'$assert($states.input.ok, 'not ok')' specified for the field 'Output' threw an error during evaluation. D3141: not ok"
		if rec.Status != sfnengine.StatusFailed || deref(rec.Error) != "States.QueryEvaluationError" || deref(rec.Cause) != want {
			t.Fatalf("status %s error %s cause %q, want FAILED States.QueryEvaluationError %q", rec.Status, deref(rec.Error), deref(rec.Cause), want)
		}
	})
}

// TestAssignEvaluationOrder: every expression of an Assign sees the variables as they were when the state was
// entered (so two variables swap), and Output, evaluated alongside Assign, sees them too; the next state sees the
// new values ("Passing data between states with variables",
// https://docs.aws.amazon.com/step-functions/latest/dg/workflow-variables.html).
func TestAssignEvaluationOrder(t *testing.T) {
	const def = `{"QueryLanguage":"JSONata","StartAt":"Init","States":{
	  "Init":{"Type":"Pass","Assign":{"x":1,"y":2},"Next":"Swap"},
	  "Swap":{"Type":"Pass","Assign":{"x":"{% $y %}","y":"{% $x %}"},"Output":{"x":"{% $x %}","y":"{% $y %}"},"Next":"After"},
	  "After":{"Type":"Pass","Output":{"before":"{% $states.input %}","x":"{% $x %}","y":"{% $y %}"},"End":true}}}`
	eng := newEngine(t, sfnengine.Options{})
	rec := run(t, eng, def, `{}`)
	if got := output(t, rec); !sameJSON(t, got, `{"before":{"x":1,"y":2},"x":2,"y":1}`) {
		t.Fatalf("output %s", got)
	}
	// The history records what each state assigned, as JSON text.
	var exits []map[string]any
	for _, e := range rec.History {
		if e.Type == "PassStateExited" {
			exits = append(exits, e.Details)
		}
	}
	if len(exits) != 3 {
		t.Fatalf("%d PassStateExited events", len(exits))
	}
	av, _ := exits[1]["assignedVariables"].(map[string]any)
	if av["x"] != "2" || av["y"] != "1" || len(av) != 2 {
		t.Fatalf("assignedVariables of Swap = %v, want x=2, y=1", exits[1]["assignedVariables"])
	}
	if d, _ := exits[1]["assignedVariablesDetails"].(map[string]any); d["truncated"] != false {
		t.Fatalf("assignedVariablesDetails = %v", exits[1]["assignedVariablesDetails"])
	}
	if _, ok := exits[2]["assignedVariables"]; ok {
		t.Fatalf("a state without Assign has assignedVariables: %v", exits[2])
	}
}

// TestVariableScopes: Parallel branches and Map iterations read the outer variables; what they assign stays in
// the branch or iteration (an outer state reads the outer value afterwards), and each iteration has its own.
func TestVariableScopes(t *testing.T) {
	const def = `{"QueryLanguage":"JSONata","StartAt":"Init","States":{
	  "Init":{"Type":"Pass","Assign":{"base":10,"label":"outer"},"Next":"Par"},
	  "Par":{"Type":"Parallel","Branches":[
	    {"StartAt":"B1","States":{"B1":{"Type":"Pass","Assign":{"label":"branch1"},"Next":"B2"},
	      "B2":{"Type":"Pass","Output":{"label":"{% $label %}","base":"{% $base %}"},"End":true}}},
	    {"StartAt":"C1","States":{"C1":{"Type":"Pass","Output":"{% $label %}","End":true}}}],
	    "Next":"Map"},
	  "Map":{"Type":"Map","Items":"{% [1, 2, 3] %}","MaxConcurrency":"{% 1 %}",
	    "ItemSelector":{"n":"{% $states.context.Map.Item.Value %}","i":"{% $states.context.Map.Item.Index %}"},
	    "ItemProcessor":{"StartAt":"I1","States":{
	      "I1":{"Type":"Pass","Assign":{"label":"{% 'item' & $states.input.n %}","acc":"{% $base + $states.input.n %}"},"Next":"I2"},
	      "I2":{"Type":"Pass","Output":{"label":"{% $label %}","acc":"{% $acc %}","i":"{% $states.input.i %}"},"End":true}}},
	    "Assign":{"results":"{% $states.result %}"},"Next":"End"},
	  "End":{"Type":"Pass","Output":{"label":"{% $label %}","results":"{% $results %}"},"End":true}}}`
	eng := newEngine(t, sfnengine.Options{})
	got := output(t, run(t, eng, def, `{}`))
	want := `{"label":"outer","results":[{"label":"item1","acc":11,"i":0},{"label":"item2","acc":12,"i":1},{"label":"item3","acc":13,"i":2}]}`
	if !sameJSON(t, got, want) {
		t.Fatalf("output %s, want %s", got, want)
	}
}

// TestJSONPathAssign: in a JSONPath state, Assign's ".$" values read the state's result (after ResultSelector),
// $states.input the state's input; variables are read as "$name" in Parameters, intrinsic functions and Choice
// rules, and a catcher's Assign reads the error output.
func TestJSONPathAssign(t *testing.T) {
	l := &recordingLambda{reply: func(name string, payload []byte) ([]byte, error) {
		if name == "fail" {
			return nil, &sfnengine.FunctionError{Type: "Boom", Message: "it broke"}
		}
		return []byte(`{"balance":90,"ref":"r-1"}`), nil
	}}
	const def = `{"StartAt":"Debit","States":{
	  "Debit":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"debit","Payload.$":"$"},
	    "ResultSelector":{"bal.$":"$.Payload.balance","ref.$":"$.Payload.ref"},
	    "Assign":{"balance.$":"$.bal","ref.$":"$.ref","id.$":"$states.input.id","static":"s","raw.$":"$states.result.Payload.ref"},
	    "ResultPath":null,"Next":"Check"},
	  "Check":{"Type":"Choice","Choices":[{"Variable":"$balance","NumericGreaterThan":50,"Next":"Use",
	    "Assign":{"branch":"rich"}}],"Default":"Use"},
	  "Use":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke",
	    "Parameters":{"FunctionName":"fail","Payload":{"msg.$":"States.Format('{} {} {}', $id, $ref, $balance)","branch.$":"$branch"}},
	    "Catch":[{"ErrorEquals":["States.ALL"],"Assign":{"err.$":"$.Error"},"ResultPath":"$.failure","Next":"Report"}],"End":true},
	  "Report":{"Type":"Pass","Parameters":{"err.$":"$err","static.$":"$static","raw.$":"$raw","input.$":"$"},"End":true}}}`
	eng := newEngine(t, sfnengine.Options{Lambda: l})
	got := output(t, run(t, eng, def, `{"id":"tr_1"}`))
	want := `{"err":"Boom","static":"s","raw":"r-1","input":{"id":"tr_1","failure":{"Error":"Boom","Cause":"{\"errorMessage\":\"it broke\",\"errorType\":\"Boom\"}"}}}`
	if !sameJSON(t, got, want) {
		t.Fatalf("output %s, want %s", got, want)
	}
	if len(l.calls) != 2 || !sameJSON(t, strings.TrimPrefix(l.calls[1], "fail "), `{"msg":"tr_1 r-1 90","branch":"rich"}`) {
		t.Fatalf("calls = %v", l.calls)
	}
}

// TestJSONataTask: Arguments, Output and Assign of a JSONata Task, $states.result, expressions in TimeoutSeconds
// (recorded in TaskScheduled), a catcher's Output and Assign reading $states.errorOutput, and a Parallel's
// Arguments.
func TestJSONataTask(t *testing.T) {
	l := &recordingLambda{reply: func(name string, payload []byte) ([]byte, error) {
		if name == "credit" {
			return nil, &sfnengine.FunctionError{Type: "CreditRejected", Message: "closed account"}
		}
		return []byte(`{"ok":true,"n":` + string(payload) + `}`), nil
	}}
	const def = `{"QueryLanguage":"JSONata","StartAt":"Debit","States":{
	  "Debit":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","TimeoutSeconds":"{% $states.input.timeout * 2 %}",
	    "Arguments":{"FunctionName":"debit","Payload":"{% $states.input.amount %}"},
	    "Assign":{"debited":"{% $states.result.Payload.n %}"},"Output":{"debit":"{% $states.result.Payload %}"},"Next":"Both"},
	  "Both":{"Type":"Parallel","Arguments":{"amount":"{% $debited %}"},"Branches":[
	    {"StartAt":"Credit","States":{"Credit":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke",
	      "Arguments":{"FunctionName":"credit","Payload":"{% $states.input.amount %}"},"End":true}}}],
	    "Catch":[{"ErrorEquals":["CreditRejected"],"Assign":{"why":"{% $states.errorOutput.Error %}"},
	      "Output":{"failed":"{% $states.errorOutput.Error %}","in":"{% $states.input %}"},"Next":"Done"}],"End":true},
	  "Done":{"Type":"Pass","Output":{"why":"{% $why %}","prev":"{% $states.input %}"},"End":true}}}`
	eng := newEngine(t, sfnengine.Options{Lambda: l})
	rec := run(t, eng, def, `{"amount":7,"timeout":5}`)
	got := output(t, rec)
	want := `{"why":"CreditRejected","prev":{"failed":"CreditRejected","in":{"debit":{"ok":true,"n":7}}}}`
	if !sameJSON(t, got, want) {
		t.Fatalf("output %s, want %s", got, want)
	}
	if len(l.calls) != 2 || l.calls[1] != "credit 7" {
		t.Fatalf("calls = %v", l.calls)
	}
	for _, e := range rec.History {
		if e.Type == "TaskScheduled" {
			if n, _ := e.Details["timeoutInSeconds"].(float64); n != 10 {
				t.Fatalf("TaskScheduled timeoutInSeconds = %v, want 10", e.Details["timeoutInSeconds"])
			}
			return
		}
	}
	t.Fatal("no TaskScheduled event")
}

// TestQueryEvaluationError: an expression that returns nothing, fails, or has the wrong type fails the state with
// States.QueryEvaluationError and AWS's cause naming the expression and the field; a catcher handles it. Its
// EvaluationFailed event links to the event before the state's entered event (prev), as AWS records for Pass, Task
// and Map states, except in a Wait state, where AWS records the link to WaitStateEntered.
func TestQueryEvaluationError(t *testing.T) {
	tests := []struct {
		name, state, input, cause, location string
		prev                                int64
	}{
		{"undefined in Output", `{"Type":"Pass","Output":{"v":{"w":["{% $states.input.absent %}"]}},"End":true}`, `{}`,
			"The JSONata expression '$states.input.absent' specified for the field 'Output/v/w[0]' returned nothing (undefined).", "Output/v/w[0]", 0},
		{"undefined variable in Assign", `{"Type":"Pass","Assign":{"x":"{% $nothing %}"},"End":true}`, `{}`,
			"The JSONata expression '$nothing' specified for the field 'Assign/x' returned nothing (undefined).", "Assign/x", 0},
		{"a type error", `{"Type":"Pass","Output":"{% $states.input.a + 'x' %}","End":true}`, `{"a":1}`,
			"The JSONata expression '$states.input.a + 'x'' specified for the field 'Output' threw an error during evaluation. T2002: The right side of the \"+\" operator must evaluate to a number", "Output", 0},
		{"a condition that is not a boolean", `{"Type":"Choice","Choices":[{"Condition":"{% $states.input.a %}","Next":"S"}]},"S":{"Type":"Succeed"}`, `{"a":1}`,
			"The JSONata expression '$states.input.a' specified for the field 'Choices[0]/Condition' returned an unexpected result type. Expected 'boolean', but was 'number' for value: 1", "Choices[0]/Condition", 0},
		{"a negative wait", `{"Type":"Wait","Seconds":"{% -1 %}","End":true}`, `{}`,
			"The JSONata expression '-1' specified for the field 'Seconds' returned -1, but the field must be at least 0.", "Seconds", 2},
		{"a non-string error", `{"Type":"Fail","Error":"{% 5 %}"}`, `{}`,
			"The JSONata expression '5' specified for the field 'Error' returned an unexpected result type. Expected 'string', but was 'number' for value: 5", "Error", 0},
	}
	eng := newEngine(t, sfnengine.Options{})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			def := `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":` + tc.state + `}}`
			rec := run(t, eng, def, tc.input)
			if rec.Status != sfnengine.StatusFailed || deref(rec.Error) != "States.QueryEvaluationError" {
				t.Fatalf("status %s error %s cause %s", rec.Status, deref(rec.Error), deref(rec.Cause))
			}
			prefix := "An error occurred while executing the state 'A' (entered at the event id #2). "
			if !strings.HasPrefix(deref(rec.Cause), prefix+tc.cause) {
				t.Fatalf("cause %q, want %q", deref(rec.Cause), prefix+tc.cause)
			}
			// An EvaluationFailed event, after the state's entry, names the state, the error, the cause and the
			// field; the failure links to it.
			ev := rec.History[2]
			if ev.PreviousEventID != tc.prev || rec.History[3].PreviousEventID != 3 {
				t.Errorf("EvaluationFailed links to %d, the failure to %d; want %d and 3", ev.PreviousEventID, rec.History[3].PreviousEventID, tc.prev)
			}
			if ev.Type != "EvaluationFailed" || ev.Details["state"] != "A" ||
				ev.Details["error"] != "States.QueryEvaluationError" || ev.Details["cause"] != deref(rec.Cause) ||
				ev.Details["location"] != tc.location {
				t.Fatalf("event 3 = %s %v, want EvaluationFailed at %s", ev.Type, ev.Details, tc.location)
			}
		})
	}
	t.Run("caught", func(t *testing.T) {
		def := `{"QueryLanguage":"JSONata","StartAt":"P","States":{"P":{"Type":"Parallel","Branches":[{"StartAt":"A","States":{
		  "A":{"Type":"Pass","Output":"{% $states.input.absent %}","End":true}}}],
		  "Catch":[{"ErrorEquals":["States.QueryEvaluationError"],"Next":"C"}],"End":true},"C":{"Type":"Pass","Output":"{% $states.input.Error %}","End":true}}}`
		if got := output(t, run(t, eng, def, `{}`)); got != `"States.QueryEvaluationError"` {
			t.Fatalf("output %s", got)
		}
	})
}

// TestVariableLimits: a variable over 256 KiB fails the state with States.DataLimitExceeded; one at the limit is
// accepted.
func TestVariableLimits(t *testing.T) {
	def := `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","Assign":{"big":"{% $pad('', $states.input.n, 'x') %}"},
	  "Output":"done","End":true}}}`
	eng := newEngine(t, sfnengine.Options{})
	// The string's JSON text is its characters and two quotes.
	rec := run(t, eng, def, fmt.Sprintf(`{"n":%d}`, sfnengine.MaxVariableBytes-1))
	if rec.Status != sfnengine.StatusFailed || deref(rec.Error) != "States.DataLimitExceeded" ||
		!strings.Contains(deref(rec.Cause), "'big'") {
		t.Fatalf("status %s error %s cause %.200s", rec.Status, deref(rec.Error), deref(rec.Cause))
	}
	if got := output(t, run(t, eng, def, fmt.Sprintf(`{"n":%d}`, sfnengine.MaxVariableBytes-2))); got != `"done"` {
		t.Fatalf("output %s", got)
	}
}

// TestJSONataDefinitionRefused: a definition with a JSONata problem is refused when created.
func TestJSONataDefinitionRefused(t *testing.T) {
	eng := newEngine(t, sfnengine.Options{})
	_, err := eng.CreateStateMachine(context.Background(), sfnengine.CreateInput{Name: "bad", RoleArn: testRoleArn,
		Definition: `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","InputPath":"$.x","End":true}}}`})
	var de *sfnengine.DefinitionError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "field 'InputPath' is only supported for the 'JSONPath' QueryLanguage") {
		t.Fatalf("err = %v", err)
	}
}

// TestChoiceAssign: a Choice state's own Assign applies whichever rule matches, the matching rule's Assign with it
// (its value winning for a name both set), and the matching rule's Output replaces the state's ("Choice workflow
// state", https://docs.aws.amazon.com/step-functions/latest/dg/state-choice.html).
func TestChoiceAssign(t *testing.T) {
	const def = `{"QueryLanguage":"JSONata","StartAt":"C","States":{
	  "C":{"Type":"Choice","Assign":{"path":"state","checked":true},"Output":{"from":"state"},"Choices":[
	    {"Condition":"{% $states.input.n > 10 %}","Assign":{"path":"big"},"Output":{"from":"rule"},"Next":"Done"}],"Default":"Done"},
	  "Done":{"Type":"Pass","Output":{"in":"{% $states.input %}","path":"{% $path %}","checked":"{% $checked %}"},"End":true}}}`
	eng := newEngine(t, sfnengine.Options{})
	if got := output(t, run(t, eng, def, `{"n":11}`)); !sameJSON(t, got, `{"in":{"from":"rule"},"path":"big","checked":true}`) {
		t.Fatalf("rule: %s", got)
	}
	if got := output(t, run(t, eng, def, `{"n":1}`)); !sameJSON(t, got, `{"in":{"from":"state"},"path":"state","checked":true}`) {
		t.Fatalf("default: %s", got)
	}
}

// TestAssignedVariablesPastTheHistoryBound: past Options.MaxHistoryBytes, a StateExited event keeps its
// assignedVariables' names out as it keeps payloads out ({"truncated": true}); the variables are set all the same.
func TestAssignedVariablesPastTheHistoryBound(t *testing.T) {
	const def = `{"QueryLanguage":"JSONata","StartAt":"A","States":{
	  "A":{"Type":"Pass","Assign":{"x":"{% $states.input.v %}"},"Next":"B"},
	  "B":{"Type":"Pass","Output":"{% $x %}","End":true}}}`
	eng := newEngine(t, sfnengine.Options{MaxHistoryBytes: 1})
	rec := run(t, eng, def, `{"v":"secret"}`)
	if got := output(t, rec); got != `"secret"` {
		t.Fatalf("output %s", got)
	}
	for _, e := range rec.History {
		if e.Type != "PassStateExited" || e.Details["name"] != "A" {
			continue
		}
		av, _ := e.Details["assignedVariables"].(map[string]any)
		d, _ := e.Details["assignedVariablesDetails"].(map[string]any)
		if len(av) != 0 || d["truncated"] != true {
			t.Fatalf("A exited with %v", e.Details)
		}
		return
	}
	t.Fatal("no PassStateExited for A")
}

// TestDocItemSelector is the example of "ItemSelector (Map)"
// (https://docs.aws.amazon.com/step-functions/latest/dg/input-output-itemselector.html): the items of imageData,
// each given to its iteration as {"size": 10, "value": <item>}; the page shows the first iteration's input (one
// iteration at a time, so that the history lists them in order). The
// JSONata form (Items, ItemSelector with $states.context.Map.Item.Value) gives the same iterations.
func TestDocItemSelector(t *testing.T) {
	const input = `{"imageData":[{"resize":"true","format":"jpg"},{"resize":"false","format":"png"},{"resize":"true","format":"jpg"}]}`
	defs := map[string]string{
		"JSONPath": `{"StartAt":"Map","States":{"Map":{"Type":"Map","ItemsPath":"$.imageData","MaxConcurrency":1,
		  "ItemSelector":{"size":10,"value.$":"$$.Map.Item.Value"},
		  "ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
		"JSONata": `{"QueryLanguage":"JSONata","StartAt":"Map","States":{"Map":{"Type":"Map","Items":"{% $states.input.imageData %}","MaxConcurrency":1,
		  "ItemSelector":{"size":10,"value":"{% $states.context.Map.Item.Value %}"},
		  "ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
	}
	for name, def := range defs {
		t.Run(name, func(t *testing.T) {
			rec := run(t, newEngine(t, sfnengine.Options{}), def, input)
			var iterations []string
			for _, e := range rec.History {
				if e.Type == "PassStateEntered" {
					iterations = append(iterations, e.Details["input"].(string))
				}
			}
			if len(iterations) != 3 || iterations[0] != `{"size":10,"value":{"resize":"true","format":"jpg"}}` {
				t.Fatalf("iteration inputs %v", iterations)
			}
			want := `[{"size":10,"value":{"resize":"true","format":"jpg"}},{"size":10,"value":{"resize":"false","format":"png"}},{"size":10,"value":{"resize":"true","format":"jpg"}}]`
			if got := output(t, rec); got != want {
				t.Fatalf("output %s, want %s", got, want)
			}
		})
	}
}

// TestJSONataWait: a JSONata Wait waits the seconds its expression gives (on the engine's clock), then evaluates
// its Output; a Timestamp expression in the past does not wait; $now reads the engine's clock.
func TestJSONataWait(t *testing.T) {
	clock := sfnengine.NewManualClock(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	eng := newEngine(t, sfnengine.Options{Clock: clock})
	const def = `{"QueryLanguage":"JSONata","StartAt":"W","States":{
	  "W":{"Type":"Wait","Seconds":"{% $states.input.s * 2 %}","Assign":{"waited":"{% $now() %}"},"Next":"T"},
	  "T":{"Type":"Wait","Timestamp":"{% $states.input.past %}","Output":{"waited":"{% $waited %}","now":"{% $now() %}"},"End":true}}}`
	rec := start(t, eng, def, `{"s":5,"past":"2026-01-01T00:00:00Z"}`)
	clock.MustAwaitWaiters(t, 1) // the Wait's timer is pending once the state waits
	clock.Advance(9 * time.Second)
	if n, _ := clock.Waiters(); n != 1 {
		t.Fatalf("%d timers pending after 9 s, want the Wait's still pending", n)
	}
	clock.Advance(time.Second)
	out := run2(t, eng, rec.Arn)
	if got := output(t, out); !sameJSON(t, got, `{"waited":"2026-11-26T12:00:10.000Z","now":"2026-11-26T12:00:10.000Z"}`) {
		t.Fatalf("output %s", got)
	}
}

// TestJSONataConcurrentIterations: Map iterations running at once evaluate their JSONata (and read and assign
// their variables) independently: every iteration's output is its own.
func TestJSONataConcurrentIterations(t *testing.T) {
	const def = `{"QueryLanguage":"JSONata","StartAt":"Init","States":{
	  "Init":{"Type":"Pass","Assign":{"prefix":"item-"},"Next":"Map"},
	  "Map":{"Type":"Map","Items":"{% $map([1..30], function($i){ {'v': 'n' & $i} }) %}",
	    "ItemSelector":{"v":"{% $states.context.Map.Item.Value.v %}","i":"{% $states.context.Map.Item.Index %}"},
	    "ItemProcessor":{"StartAt":"A","States":{
	      "A":{"Type":"Pass","Assign":{"mine":"{% $prefix & $uppercase($states.input.v) %}"},"Next":"B"},
	      "B":{"Type":"Pass","Output":"{% $mine & '/' & $string($states.input.i) %}","End":true}}},
	    "End":true}}}`
	eng := newEngine(t, sfnengine.Options{})
	var got []string
	if err := json.Unmarshal([]byte(output(t, run(t, eng, def, `{}`))), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 30 {
		t.Fatalf("%d results", len(got))
	}
	for i, g := range got {
		if want := fmt.Sprintf("item-N%d/%d", i+1, i); g != want {
			t.Fatalf("result %d = %s, want %s", i, g, want)
		}
	}
}

// TestDocAssignExample is the Assign example of "Passing data between states with variables"
// (https://docs.aws.amazon.com/step-functions/latest/dg/workflow-variables.html): {"productName": "product1",
// "count": 42, "available": true}, read back as $productName, $count and $available, in a JSONPath state (the
// literal values need no ".$") and in a JSONata one; the history shows each value as JSON text.
func TestDocAssignExample(t *testing.T) {
	for _, lang := range []string{"JSONPath", "JSONata"} {
		t.Run(lang, func(t *testing.T) {
			def := `{"QueryLanguage":"` + lang + `","StartAt":"Set","States":{
			  "Set":{"Type":"Pass","Assign":{"productName":"product1","count":42,"available":true},"Next":"Read"},
			  "Read":{"Type":"Pass","QueryLanguage":"JSONata","Output":{"name":"{% $productName %}","count":"{% $count %}","available":"{% $available %}"},"End":true}}}`
			rec := run(t, newEngine(t, sfnengine.Options{}), def, `{}`)
			if got := output(t, rec); got != `{"name":"product1","count":42,"available":true}` {
				t.Fatalf("output %s", got)
			}
			av, _ := rec.History[2].Details["assignedVariables"].(map[string]any)
			if rec.History[2].Type != "PassStateExited" || av["productName"] != `"product1"` || av["count"] != "42" || av["available"] != "true" {
				t.Fatalf("event 3 = %s %v", rec.History[2].Type, rec.History[2].Details)
			}
		})
	}
}

// TestUnassignedVariableFailsAtRunTime pins what AWS answered, as recorded on 21 November 2024, for JSONata states
// that read a variable no state assigns ($doesNotExist, in a machine of one state and in the third of three): the
// definition is accepted, and the state fails with States.QueryEvaluationError, the expression having returned
// nothing.
func TestUnassignedVariableFailsAtRunTime(t *testing.T) {
	tests := []struct{ name, def, cause string }{
		{"Output", `{"QueryLanguage":"JSONata","StartAt":"State0","States":{"State0":{"Type":"Pass","Output":"{% $doesNotExist %}","End":true}}}`,
			"An error occurred while executing the state 'State0' (entered at the event id #2). The JSONata expression '$doesNotExist' specified for the field 'Output' returned nothing (undefined)."},
		{"Output field in the third state", `{"QueryLanguage":"JSONata","StartAt":"State0","States":{"State0":{"Type":"Pass","Next":"State1"},"State1":{"Type":"Pass","Next":"State2"},"State2":{"Type":"Pass","Output":{"result":"{% $doesNotExist %}"},"End":true}}}`,
			"An error occurred while executing the state 'State2' (entered at the event id #6). The JSONata expression '$doesNotExist' specified for the field 'Output/result' returned nothing (undefined)."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := run(t, newEngine(t, sfnengine.Options{}), tt.def, `{}`)
			if rec.Status != sfnengine.StatusFailed || deref(rec.Error) != "States.QueryEvaluationError" || deref(rec.Cause) != tt.cause {
				t.Fatalf("status %s, error %s, cause %s", rec.Status, deref(rec.Error), deref(rec.Cause))
			}
		})
	}
}

// TestJSONata2Paths: what JSONata 2.0 added to paths and what it keeps, in a state's Output: the parent operator %,
// the @ focus and # index bindings, an empty array inside a larger expression, and an object literal's key order.
// The expected output is jsonata-js 2.0's for the same expression and $states.input.
func TestJSONata2Paths(t *testing.T) {
	const def = `{"QueryLanguage":"JSONata","StartAt":"S","States":{"S":{"Type":"Pass","End":true,"Output":
	  "{% {\"lines\": $states.input.orders.items.{\"order\": %.id, \"sku\": sku}, \"indexed\": $states.input.orders#$i.{\"n\": $i, \"id\": id}, \"focus\": $states.input.orders@$o.$o.items@$it.{\"o\": $o.id, \"sku\": $it.sku}, \"empty\": {\"x\": $states.input.none}, \"built\": {\"b\": 1, \"a\": 2}} %}"}}}`
	eng := newEngine(t, sfnengine.Options{})
	got := output(t, run(t, eng, def, `{"orders":[{"id":"o1","items":[{"sku":"a"},{"sku":"b"}]},{"id":"o2","items":[{"sku":"c"}]}],"none":[]}`))
	const want = `{"lines":[{"order":"o1","sku":"a"},{"order":"o1","sku":"b"},{"order":"o2","sku":"c"}],"indexed":[{"n":0,"id":"o1"},{"n":1,"id":"o2"}],"focus":[{"o":"o1","sku":"a"},{"o":"o1","sku":"b"},{"o":"o2","sku":"c"}],"empty":{"x":[]},"built":{"b":1,"a":2}}`
	if got != want {
		t.Fatalf("output\n%s\nwant (key order included)\n%s", got, want)
	}
}
