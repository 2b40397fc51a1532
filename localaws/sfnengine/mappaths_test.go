package sfnengine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// TestMapPathsTakeNumericStrings: MaxConcurrencyPath, ToleratedFailureCountPath and ToleratedFailurePercentagePath
// take a string holding a number ("1", as a variable assigned from a JSON string holds it), as AWS does in its
// recorded executions of such machines.
func TestMapPathsTakeNumericStrings(t *testing.T) {
	eng := newEngine(t, sfnengine.Options{})
	inline := `{"StartAt":"Start","States":{
	  "Start":{"Type":"Pass","Assign":{"maxConcurrency":"1"},"Result":{"Values":[1,2,3]},"Next":"M"},
	  "M":{"Type":"Map","ItemsPath":"$.Values","MaxConcurrencyPath":"$maxConcurrency",
	    "ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`
	if rec := run(t, eng, inline, `{}`); rec.Status != sfnengine.StatusSucceeded || deref(rec.Output) != `[1,2,3]` {
		t.Fatalf("MaxConcurrencyPath \"1\": %s %s %s", rec.Status, deref(rec.Error), deref(rec.Cause))
	}
	def := `{"StartAt":"Start","States":{
	  "Start":{"Type":"Pass","Assign":{"pct":"1.5","count":"2"},"Result":{"Values":[1,2,3]},"Next":"M"},
	  "M":{"Type":"Map","ItemsPath":"$.Values","ToleratedFailurePercentagePath":"$pct","ToleratedFailureCountPath":"$count",
	    "ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},
	      "StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`
	rec := waitClosed(t, eng, createAndStart(t, eng, "numeric-thresholds", def, `{}`).Arn)
	if rec.Status != sfnengine.StatusSucceeded {
		t.Fatalf("thresholds \"1.5\" and \"2\": %s %s %s", rec.Status, deref(rec.Error), deref(rec.Cause))
	}
	runs, err := eng.ListMapRuns(context.Background(), rec.Arn)
	if err != nil || len(runs) != 1 {
		t.Fatalf("map runs: %v %+v", err, runs)
	}
	if r := runs[0]; r.ToleratedFailurePercentage != 1.5 || r.ToleratedFailureCount != 2 {
		t.Fatalf("map run thresholds %v%% and %d, want 1.5%% and 2", r.ToleratedFailurePercentage, r.ToleratedFailureCount)
	}
}

// TestMapPathCauses: values of MaxConcurrencyPath, ToleratedFailureCountPath and ToleratedFailurePercentagePath that
// do not do fail with States.Runtime, in the words and at the place AWS records (its executions of these inputs):
// MaxConcurrencyPath before MapStateStarted, the thresholds after it, and no Map Run started.
func TestMapPathCauses(t *testing.T) {
	eng := newEngine(t, sfnengine.Options{})
	distributed := func(field string) string {
		return `{"StartAt":"MapState","States":{"MapState":{"Type":"Map","ItemsPath":"$.Items","` + field + `":"$.v",
		  "ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},
		    "StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`
	}
	inline := `{"StartAt":"MapState","States":{"MapState":{"Type":"Map","ItemsPath":"$.Items","MaxConcurrencyPath":"$.v",
	  "ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`
	const beforeStart, afterStart = "ExecutionStarted,MapStateEntered,ExecutionFailed",
		"ExecutionStarted,MapStateEntered,MapStateStarted,ExecutionFailed"
	tests := []struct {
		name, def, v, cause, events string
	}{
		{"MaxConcurrencyPath an object", inline, `{}`, `The MaxConcurrencyPath field refers to value "{}" which is not a valid integer: $.v`, beforeStart},
		{"MaxConcurrencyPath a word", inline, `"NoNumber"`, `The MaxConcurrencyPath field refers to value "NoNumber" which is not a valid integer: $.v`, beforeStart},
		{"count an object", distributed("ToleratedFailureCountPath"), `{}`,
			`The ToleratedFailureCountPath field refers to value "{}" which is not a valid integer: $.v`, afterStart},
		{"count a word", distributed("ToleratedFailureCountPath"), `"NoNumber"`,
			`The ToleratedFailureCountPath field refers to value "NoNumber" which is not a valid integer: $.v`, afterStart},
		{"count negative", distributed("ToleratedFailureCountPath"), `-1`, `ToleratedFailureCount cannot be negative.`, afterStart},
		{"percentage an object", distributed("ToleratedFailurePercentagePath"), `{}`,
			`The ToleratedFailurePercentagePath field refers to value "{}" which is not a valid float: $.v`, afterStart},
		{"percentage a word", distributed("ToleratedFailurePercentagePath"), `"NoNumber"`,
			`The ToleratedFailurePercentagePath field refers to value "NoNumber" which is not a valid float: $.v`, afterStart},
		{"percentage negative", distributed("ToleratedFailurePercentagePath"), `-1.1`, `ToleratedFailurePercentage must be between 0 and 100.`, afterStart},
		{"percentage above 100", distributed("ToleratedFailurePercentagePath"), `100.1`, `ToleratedFailurePercentage must be between 0 and 100.`, afterStart},
		{"percentage as text above 100", distributed("ToleratedFailurePercentagePath"), `"101"`, `ToleratedFailurePercentage must be between 0 and 100.`, afterStart},
		{"percentage NaN", distributed("ToleratedFailurePercentagePath"), `"NaN"`, `ToleratedFailurePercentage must be between 0 and 100.`, afterStart},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := run(t, eng, tc.def, `{"Items":[0],"v":`+tc.v+`}`)
			want := "An error occurred while executing the state 'MapState' (entered at the event id #2). " + tc.cause
			if rec.Status != sfnengine.StatusFailed || deref(rec.Error) != sfnengine.ErrNameRuntime || deref(rec.Cause) != want {
				t.Errorf("%s %s %q\nwant FAILED States.Runtime %q", rec.Status, deref(rec.Error), deref(rec.Cause), want)
			}
			if got := eventTypes(rec.History); got != tc.events {
				t.Errorf("history %s, want %s", got, tc.events)
			}
			if strings.Contains(eventTypes(rec.History), "MapRun") {
				t.Errorf("a Map Run started: %s", eventTypes(rec.History))
			}
		})
	}
}

// TestDistributedMapEventLinks: a Distributed Map that succeeds links its events as AWS's recordings since November
// 2024 show: MapRunSucceeded to MapRunStarted, MapStateSucceeded to MapRunSucceeded, and MapStateExited back to
// MapRunStarted.
func TestDistributedMapEventLinks(t *testing.T) {
	eng := newEngine(t, sfnengine.Options{})
	def := `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.Values",
	  "ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},
	    "StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"Next":"After"},"After":{"Type":"Pass","End":true}}}`
	rec := waitClosed(t, eng, createAndStart(t, eng, "links", def, `{"Values":[1,2,3]}`).Arn)
	if rec.Status != sfnengine.StatusSucceeded {
		t.Fatalf("%s %s %s", rec.Status, deref(rec.Error), deref(rec.Cause))
	}
	started, succeeded := findEvent(rec.History, sfnengine.EventMapRunStarted), findEvent(rec.History, sfnengine.EventMapRunSucceeded)
	stateSucceeded, exited := findEvent(rec.History, sfnengine.EventMapStateSucceeded), findEvent(rec.History, "MapStateExited")
	if started == nil || succeeded == nil || stateSucceeded == nil || exited == nil {
		t.Fatalf("history %s", eventTypes(rec.History))
	}
	if succeeded.PreviousEventID != started.ID || stateSucceeded.PreviousEventID != succeeded.ID || exited.PreviousEventID != started.ID {
		t.Fatalf("MapRunStarted #%d; MapRunSucceeded links to %d, MapStateSucceeded to %d, MapStateExited to %d; want %d, %d, %d",
			started.ID, succeeded.PreviousEventID, stateSucceeded.PreviousEventID, exited.PreviousEventID, started.ID, succeeded.ID, started.ID)
	}
	if next := findEvent(rec.History, "PassStateEntered"); next == nil || next.PreviousEventID != exited.ID {
		t.Fatalf("the next state's entry does not follow MapStateExited: %+v", next)
	}
}
