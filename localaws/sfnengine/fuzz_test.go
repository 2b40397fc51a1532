package sfnengine_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/internal/syncio"
	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// closingEvent is the history event each final status ends with.
var closingEvent = map[string]string{
	sfnengine.StatusSucceeded: sfnengine.EventExecutionSucceeded,
	sfnengine.StatusFailed:    sfnengine.EventExecutionFailed,
	sfnengine.StatusTimedOut:  sfnengine.EventExecutionTimedOut,
	sfnengine.StatusAborted:   sfnengine.EventExecutionAborted,
}

// FuzzRunValidDefinition creates a state machine from any definition and runs it on any input. The engine accepts
// exactly the definitions sfnengine.LoadDefinition accepts (asl.Load's, whose Task resources it runs); a validated definition compiles and runs without the engine panicking
// (the engine turns a panic into States.Runtime and logs "engine panic", which fails the target) to a final status
// whose history starts with ExecutionStarted, numbers its events 1, 2, … and ends with that status's event. Tasks
// have no Lambda or DynamoDB behind them (they fail), executions time out after 100 ms and histories are capped at
// 1,000 events, so every run ends quickly. The seed corpus in testdata/fuzz has one definition and input of each
// category of the ASL conformance corpus (from LocalStack's snapshot tests of AWS Step Functions, Apache-2.0).
func FuzzRunValidDefinition(f *testing.F) {
	saga, err := os.ReadFile(filepath.Join("testdata", "saga.asl.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(saga, []byte(`{"transferId":"tr_1","amount":1250}`))
	sagaJSONata, err := os.ReadFile(filepath.Join("..", "sfnapi", "testdata", "saga-jsonata.asl.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sagaJSONata, []byte(`{"id":"tr_1","amount":1250}`))
	for _, s := range [][2]string{
		{`{"StartAt":"A","States":{"A":{"Type":"Pass","Result":{"x.$":"$.y"},"ResultPath":"$.r","Next":"B"},"B":{"Type":"Succeed"}}}`, `{"y":1}`},
		{`{"StartAt":"L","States":{"L":{"Type":"Pass","Next":"L"}}}`, `{}`},
		{`{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.items","ItemSelector":{"v.$":"$$.Map.Item.Value"},
			"ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass","End":true}}},"End":true}}}`, `{"items":[1,"a",{"b":null}]}`},
		{`{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"f.$":"States.Format('{} {}', $.a, States.ArrayLength($.b))",
			"h.$":"States.Hash($.a, 'SHA-1')","r.$":"States.ArrayRange(1, 9, 2)"},"OutputPath":"$.f","End":true}}}`, `{"a":"x","b":[1,2]}`},
		{`{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f"},
			"Retry":[{"ErrorEquals":["States.ALL"],"MaxAttempts":2,"IntervalSeconds":1}],"Catch":[{"ErrorEquals":["States.ALL"],"Next":"F"}],"End":true},
			"F":{"Type":"Fail","ErrorPath":"$.Error","CausePath":"$.Cause"}}}`, `{}`},
		{`{"StartAt":"W","States":{"W":{"Type":"Wait","SecondsPath":"$.s","End":true}}}`, `{"s":0}`},
		{`{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","Assign":{"x":"{% $states.input.a %}"},"Next":"M"},
			"M":{"Type":"Map","Items":"{% $states.input.items %}","ItemSelector":{"v":"{% $states.context.Map.Item.Value %}","x":"{% $x %}"},
			"ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass","Output":"{% $states.input.v & $x %}","End":true}}},
			"Output":{"r":"{% $states.result %}"},"Next":"C"},
			"C":{"Type":"Choice","Choices":[{"Condition":"{% $count($states.input.r) > 1 %}","Next":"S"}],"Default":"F"},
			"S":{"Type":"Succeed"},"F":{"Type":"Fail","Error":"{% 'E' & $x %}"}}}`, `{"a":"z","items":["p","q"]}`},
		{`{"StartAt":"A","States":{"A":{"Type":"Pass","Result":{"n":1},"Assign":{"n.$":"$.n","s.$":"States.Format('{}', $states.input.k)"},
			"Next":"B"},"B":{"Type":"Pass","Parameters":{"n.$":"$n","s.$":"$s"},"End":true}}}`, `{"k":"v"}`},
		{`{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.t","TimestampLessThan":"2026-01-01T00:00:00Z","Next":"S"}],
			"Default":"S"},"S":{"Type":"Succeed"}}}`, `{"t":"2025-12-31T23:59:59Z"}`},
	} {
		f.Add([]byte(s[0]), []byte(s[1]))
	}

	logs := &syncio.Buffer{}
	eng := sfnengine.New(sfnengine.Options{
		ExecutionTimeout:    100 * time.Millisecond,
		MaxHistoryEvents:    1000,
		MaxClosedExecutions: 20,
		Logger:              slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelError})),
	})
	f.Cleanup(eng.Close)
	ctx := context.Background()
	n := 0
	f.Fuzz(func(t *testing.T, definition, input []byte) {
		if len(definition) > 16<<10 || len(input) > 4<<10 {
			return
		}
		n++
		name := "m" + strconv.Itoa(n)
		_, loadErr := sfnengine.LoadDefinition(definition)
		sm, err := eng.CreateStateMachine(ctx, sfnengine.CreateInput{Name: name, Definition: string(definition)})
		if (loadErr == nil) != (err == nil) || err != nil && !errors.Is(err, sfnengine.ErrInvalidDefinition) {
			t.Fatalf("LoadDefinition: %v; CreateStateMachine: %v", loadErr, err)
		}
		if err != nil {
			return
		}
		defer func() { _ = eng.DeleteStateMachine(ctx, sm.Arn) }()
		rec, err := eng.StartExecution(ctx, sfnengine.StartInput{StateMachineArn: sm.Arn, Input: string(input)})
		if err != nil {
			return
		}
		// The execution timeout ends every run long before this; reaching it means the engine did not stop one.
		waitCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		final, err := eng.Wait(waitCtx, rec.Arn)
		if err != nil {
			t.Fatalf("the execution of %s on %s did not end: %v", definition, input, err)
		}
		if logged := logs.Take(); strings.Contains(logged, "engine panic") {
			t.Fatalf("the engine panicked running %s on %s:\n%s", definition, input, logged)
		}
		closing, ok := closingEvent[final.Status]
		if !ok {
			t.Fatalf("execution ended %s", final.Status)
		}
		history, err := eng.History(ctx, rec.Arn)
		if err != nil {
			t.Fatalf("history of %s: %v", rec.Arn, err)
		}
		if len(history) < 2 || history[0].Type != sfnengine.EventExecutionStarted || history[len(history)-1].Type != closing {
			t.Fatalf("%s execution with %d events, from %v to %v", final.Status, len(history), first(history), last(history))
		}
		for i, ev := range history {
			if ev.ID != int64(i+1) {
				t.Fatalf("event %d of %d has the id %d", i+1, len(history), ev.ID)
			}
		}
	})
}

func first(h []sfnengine.Event) string {
	if len(h) == 0 {
		return "nothing"
	}
	return h[0].Type
}

func last(h []sfnengine.Event) string {
	if len(h) == 0 {
		return "nothing"
	}
	return h[len(h)-1].Type
}
