package sfnengine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// assignLang writes the pieces of a test machine in one query language: variables that states set with their
// Assign, Lambda tasks that keep their input, and a last state whose output is {"n": $n, "r": its input}.
type assignLang struct {
	name string
	top  string // the machine's QueryLanguage member, with its comma, or ""
	// set returns an Assign member that sets v to $from + d.
	set func(v, from string, d int) string
	// call returns the members of a Lambda task that calls fn with its input as payload and keeps its input as its
	// output.
	call func(fn string) string
	// keep is the member of a catcher that keeps the state's input as its output.
	keep string
	// out returns the member of a Pass whose output is {v: $v}.
	out func(v string) string
	// done is the member of a Pass whose output is {"n": $n, "r": its input}.
	done string
	// items is the member of a Map whose items are its input's items.
	items string
}

// add returns an Assign member that adds d to $n.
func (l assignLang) add(d int) string { return l.set("n", "n", d) }

var assignLangs = []assignLang{
	{name: "JSONPath",
		set: func(v, from string, d int) string {
			return fmt.Sprintf(`"Assign":{"%s.$":"States.MathAdd($%s, %d)"}`, v, from, d)
		},
		call: func(fn string) string {
			return `"Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"` + fn + `","Payload.$":"$"},"ResultPath":null`
		},
		keep:  `"ResultPath":null`,
		out:   func(v string) string { return `"Parameters":{"` + v + `.$":"$` + v + `"}` },
		done:  `"Parameters":{"n.$":"$n","r.$":"$"}`,
		items: `"ItemsPath":"$.items"`},
	{name: "JSONata", top: `"QueryLanguage":"JSONata",`,
		set: func(v, from string, d int) string {
			return fmt.Sprintf(`"Assign":{"%s":"{%% $%s + %d %%}"}`, v, from, d)
		},
		call: func(fn string) string {
			return `"Resource":"arn:aws:states:::lambda:invoke","Arguments":{"FunctionName":"` + fn +
				`","Payload":"{% $states.input %}"},"Output":"{% $states.input %}"`
		},
		keep:  `"Output":"{% $states.input %}"`,
		out:   func(v string) string { return `"Output":{"` + v + `":"{% $` + v + ` %}"}` },
		done:  `"Output":{"n":"{% $n %}","r":"{% $states.input %}"}`,
		items: `"Items":"{% $states.input.items %}"`},
}

// counter returns n from the output of a machine that ends with l.done.
func counter(t *testing.T, rec *sfnengine.ExecutionRecord) int {
	t.Helper()
	if rec.Status != sfnengine.StatusSucceeded || rec.Output == nil {
		t.Fatalf("execution %s (%v %v), want SUCCEEDED", rec.Status, rec.Error, rec.Cause)
	}
	var out struct {
		N *int `json:"n"`
	}
	if err := json.Unmarshal([]byte(*rec.Output), &out); err != nil || out.N == nil {
		t.Fatalf("output %s: no n (%v)", *rec.Output, err)
	}
	return *out.N
}

// entered counts the StateEntered events of the state name.
func entered(h []sfnengine.Event, name string) int {
	n := 0
	for _, e := range h {
		if strings.HasSuffix(e.Type, "StateEntered") && e.Details["name"] == name {
			n++
		}
	}
	return n
}

// assignedN returns the values of n the history's StateExited events assigned, in order.
func assignedN(h []sfnengine.Event) []string {
	var out []string
	for _, e := range h {
		if !strings.HasSuffix(e.Type, "StateExited") {
			continue
		}
		if av, ok := e.Details["assignedVariables"].(map[string]any); ok {
			if v, ok := av["n"]; ok {
				out = append(out, fmt.Sprint(v))
			}
		}
	}
	return out
}

// TestRedriveAppliesEachAssignOnce: an execution fails after states that assigned a variable (a counter n, which
// Init sets to 0 and Inc increments), is redriven once the failing Lambda works, and ends with n as AWS gives it:
// each Assign of a state that exited applied once, the Assign of the state that failed (on success or in a catcher)
// applied only by its successful run after the redrive. The redrive resumes at the failed state (its StateEntered
// follows ExecutionRedriven) and Inc is not entered again. In JSONPath and JSONata.
func TestRedriveAppliesEachAssignOnce(t *testing.T) {
	for _, l := range assignLangs {
		tests := []struct {
			name   string
			states string // after Init and Inc, which goes to Work
			failed string // the state the execution fails in
			n      int
			calls  map[string]int // after the redrive
			retry  bool           // the first run waits through Work's Retry
		}{
			{name: "a failure in the state after the assigning one",
				states: `"Work":{"Type":"Task",` + l.call("work") + `,"Next":"Done"}`,
				failed: "Work", n: 1, calls: map[string]int{"work": 2}},
			{name: "the failed Task has an Assign",
				states: `"Work":{"Type":"Task",` + l.call("work") + `,` + l.add(10) + `,"Next":"Done"}`,
				failed: "Work", n: 11, calls: map[string]int{"work": 2}},
			{name: "a catcher's Assign before the failure",
				states: `"Work":{"Type":"Task",` + l.call("bad") + `,"Catch":[{"ErrorEquals":["States.ALL"],` + l.add(100) + `,` + l.keep + `,"Next":"Again"}],"Next":"Done"},
				  "Again":{"Type":"Task",` + l.call("work") + `,` + l.add(10) + `,"Next":"Done"}`,
				failed: "Again", n: 111, calls: map[string]int{"bad": 1, "work": 2}},
			{name: "the failed Task's Catch assigns and its catcher fails",
				states: `"Work":{"Type":"Task",` + l.call("work") + `,"Catch":[{"ErrorEquals":["Nope"],` + l.add(100) + `,` + l.keep + `,"Next":"Done"}],` + l.add(10) + `,"Next":"Done"}`,
				failed: "Work", n: 11, calls: map[string]int{"work": 2}},
			{name: "a failure after the Task's Retry",
				states: `"Work":{"Type":"Task",` + l.call("work") + `,"Retry":[{"ErrorEquals":["States.ALL"],"MaxAttempts":2,"IntervalSeconds":1}],` + l.add(10) + `,"Next":"Done"}`,
				failed: "Work", n: 11, calls: map[string]int{"work": 4}, retry: true},
		}
		for _, tc := range tests {
			t.Run(l.name+"/"+tc.name, func(t *testing.T) {
				ctx := context.Background()
				def := `{` + l.top + `"StartAt":"Init","States":{
				  "Init":{"Type":"Pass","Assign":{"n":0},"Next":"Inc"},
				  "Inc":{"Type":"Pass",` + l.add(1) + `,"Next":"Work"},
				  ` + tc.states + `,
				  "Done":{"Type":"Pass",` + l.done + `,"End":true}}}`
				lambda := newFlakyLambda("work", "bad")
				clock := sfnengine.NewManualClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
				eng := newEngine(t, sfnengine.Options{Lambda: lambda, Clock: clock})
				rec := start(t, eng, def, `{}`)
				if tc.retry {
					advanceWhenWaiting(t, clock, time.Minute)
					advanceWhenWaiting(t, clock, time.Minute)
				}
				first := waitClosed(t, eng, rec.Arn)
				if first.Status != sfnengine.StatusFailed || first.RedrivePoint() == nil || first.RedrivePoint().State != tc.failed {
					t.Fatalf("first run: %s %v, redrive point %+v; want FAILED at %s", first.Status, first.Error, first.RedrivePoint(), tc.failed)
				}
				lambda.fix("work")
				if _, err := eng.RedriveExecution(ctx, rec.Arn, ""); err != nil {
					t.Fatal(err)
				}
				got := waitClosed(t, eng, rec.Arn)
				if n := counter(t, got); n != tc.n {
					t.Fatalf("n = %d after the redrive, want %d; assigned %v\n%s", n, tc.n, assignedN(got.History), eventTypes(got.History))
				}
				for fn, want := range tc.calls {
					if n := lambda.count(fn); n != want {
						t.Errorf("%s called %d times, want %d", fn, n, want)
					}
				}
				if entered(got.History, "Init") != 1 || entered(got.History, "Inc") != 1 {
					t.Errorf("Init entered %d times, Inc %d times; want once each: %s", entered(got.History, "Init"),
						entered(got.History, "Inc"), eventTypes(got.History))
				}
				after := got.History[len(first.History):]
				if after[0].Type != sfnengine.EventExecutionRedriven || !strings.HasSuffix(after[1].Type, "StateEntered") ||
					after[1].Details["name"] != tc.failed {
					t.Errorf("after the redrive: %s, want ExecutionRedriven then %s entered", eventTypes(after), tc.failed)
				}
			})
		}
	}
}

// stopAtStore is a Store that, when the execution is saved with a checkpoint at the state named at (before that
// state is entered; Options.CheckpointEveryState), calls hit once, on the execution's goroutine: the test stops the
// execution there, with no window for the state to be entered before the stop.
type stopAtStore struct {
	sfnengine.Store
	at  string
	hit func()

	mu   sync.Mutex
	done bool
}

func (s *stopAtStore) SaveExecution(ctx context.Context, rec *sfnengine.ExecutionRecord, events []byte) error {
	if err := s.Store.SaveExecution(ctx, rec, events); err != nil {
		return err
	}
	s.mu.Lock()
	fire := !s.done && rec.Checkpoint != nil && rec.Checkpoint.State == s.at
	s.done = s.done || fire
	s.mu.Unlock()
	if fire {
		s.hit()
	}
	return nil
}

// TestRedriveAfterAStopDuringAnAssigningState: an execution times out while a state runs that assigns n (the stop
// comes as the state starts, so that the state runs to its end but its StateExited event is not recorded: the
// execution is closing). On AWS that state did not exit: a redrive runs it again, with the variables as they were
// before it, so n ends incremented once. When the stop comes as the last state starts, a redrive resumes there, not
// at the first state: Init and Inc do not assign again and the Lambda task before it is not called again.
func TestRedriveAfterAStopDuringAnAssigningState(t *testing.T) {
	for _, l := range assignLangs {
		for _, at := range []string{"Inc", "Done"} {
			t.Run(l.name+"/"+at, func(t *testing.T) {
				ctx := context.Background()
				def := `{` + l.top + `"StartAt":"Init","TimeoutSeconds":60,"States":{
				  "Init":{"Type":"Pass","Assign":{"n":0},"Next":"Inc"},
				  "Inc":{"Type":"Pass",` + l.add(1) + `,"Next":"Work"},
				  "Work":{"Type":"Task",` + l.call("work") + `,"Next":"Done"},
				  "Done":{"Type":"Pass",` + l.add(10) + `,` + l.done + `,"End":true}}}`
				// Done's output reads $n as it was when Done was entered: 1 (its own Assign is not seen by its Output).
				clock := sfnengine.NewManualClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
				store := &stopAtStore{Store: sfnengine.NewMemoryStore(), at: at, hit: func() { clock.Advance(time.Minute) }}
				lambda := newFlakyLambda()
				eng := newEngine(t, sfnengine.Options{Lambda: lambda, Clock: clock, Store: store, CheckpointEveryState: true})
				rec := start(t, eng, def, `{}`)
				first := waitClosed(t, eng, rec.Arn)
				if first.Status != sfnengine.StatusTimedOut {
					t.Fatalf("first run: %s, want TIMED_OUT", first.Status)
				}
				vars := map[string]string{"Inc": `{"n":0}`, "Done": `{"n":1}`}[at] // before the state
				if p := first.RedrivePoint(); p == nil || p.State != at || p.Variables != vars {
					t.Fatalf("redrive point %+v, want %s with the variables %s", p, at, vars)
				}
				if _, err := eng.RedriveExecution(ctx, rec.Arn, ""); err != nil {
					t.Fatal(err)
				}
				got := waitClosed(t, eng, rec.Arn)
				if n := counter(t, got); n != 1 {
					t.Fatalf("n = %d after the redrive, want 1; assigned %v\n%s", n, assignedN(got.History), eventTypes(got.History))
				}
				if a := fmt.Sprint(assignedN(got.History)); a != "[0 1 11]" {
					t.Errorf("assignedVariables n in the history: %s, want [0 1 11]", a)
				}
				if lambda.count("work") != 1 || entered(got.History, "Init") != 1 || entered(got.History, "Inc") != 1 {
					t.Errorf("work called %d times, Init entered %d times, Inc %d times; want once each:\n%s", lambda.count("work"),
						entered(got.History, "Init"), entered(got.History, "Inc"), eventTypes(got.History))
				}
				after := got.History[len(first.History):]
				if after[0].Type != sfnengine.EventExecutionRedriven || after[1].Type != "PassStateEntered" || after[1].Details["name"] != at {
					t.Errorf("after the redrive: %s, want ExecutionRedriven then %s entered", eventTypes(after), at)
				}
			})
		}
	}
}

// TestRedriveWithAssignAcrossRestarts: the variables a redrive resumes with survive the engine: an execution that
// failed is redriven by the next engine on the same FileStore, and a redriven execution whose engine stops in a
// Wait is resumed by the next one (from its checkpoint, or without checkpoints where the redrive resumed); n ends
// incremented once by each assigning state.
func TestRedriveWithAssignAcrossRestarts(t *testing.T) {
	for _, l := range assignLangs {
		for _, checkpoints := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/checkpoints=%v", l.name, checkpoints), func(t *testing.T) {
				ctx := context.Background()
				files := fileStore(t, t.TempDir())
				def := `{` + l.top + `"StartAt":"Init","States":{
				  "Init":{"Type":"Pass","Assign":{"n":0},"Next":"Inc"},
				  "Inc":{"Type":"Pass",` + l.add(1) + `,"Next":"Work"},
				  "Work":{"Type":"Task",` + l.call("work") + `,` + l.add(10) + `,"Next":"Hold"},
				  "Hold":{"Type":"Wait","Seconds":60,` + l.add(100) + `,"Next":"Done"},
				  "Done":{"Type":"Pass",` + l.done + `,"End":true}}}`
				clock := sfnengine.NewManualClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
				lambda := newFlakyLambda("work")
				opts := sfnengine.Options{Store: files, Clock: clock, Lambda: lambda, CheckpointEveryState: checkpoints}
				first := sfnengine.New(opts)
				rec := start(t, first, def, `{}`)
				if got := waitClosed(t, first, rec.Arn); got.Status != sfnengine.StatusFailed {
					t.Fatalf("first run: %s", got.Status)
				}
				first.Close()

				lambda.fix("work")
				second := sfnengine.New(opts)
				if err := second.Restore(ctx); err != nil {
					t.Fatal(err)
				}
				if _, err := second.RedriveExecution(ctx, rec.Arn, ""); err != nil {
					t.Fatal(err)
				}
				advanceWhenWaiting(t, clock, 0) // in Hold
				second.Close()

				clock = sfnengine.NewManualClock(clock.Now())
				opts.Clock = clock
				third := restoredEngine(t, opts)
				advanceWhenWaiting(t, clock, time.Minute)
				got := waitClosed(t, third, rec.Arn)
				if n := counter(t, got); n != 111 {
					t.Fatalf("n = %d, want 111; assigned %v\n%s", n, assignedN(got.History), eventTypes(got.History))
				}
				if entered(got.History, "Init") != 1 || entered(got.History, "Inc") != 1 {
					t.Errorf("Init entered %d times, Inc %d times; want once each: %s", entered(got.History, "Init"),
						entered(got.History, "Inc"), eventTypes(got.History))
				}
			})
		}
	}
}

// TestRedriveParallelAndMapWithAssign: a top-level Parallel or Map whose branches or iterations assign a variable
// of their own (m = $n + 1, n the machine's) fails in one of them; the redrive runs again only what failed, in a
// fresh scope that sees the machine's n as it was, and the state's own Assign (n + 10) applies once, when it
// succeeds.
func TestRedriveParallelAndMapWithAssign(t *testing.T) {
	for _, l := range assignLangs {
		processor := func(fn string) string {
			return `{"StartAt":"Mine","States":{
			  "Mine":{"Type":"Pass",` + l.set("m", "n", 1) + `,"Next":"Call"},
			  "Call":{"Type":"Task",` + l.call(fn) + `,"Next":"Out"},
			  "Out":{"Type":"Pass",` + l.out("m") + `,"End":true}}}`
		}
		tests := []struct {
			name, state, failing string
			r                    string // Done's input: the Parallel's or Map's output
			calls                map[string]int
		}{
			{name: "parallel", failing: "work",
				state: `"Fan":{"Type":"Parallel","Branches":[` + processor("ok") + `,` + processor("work") + `],` + l.add(10) + `,"Next":"Done"}`,
				r:     `[{"m":2},{"m":2}]`, calls: map[string]int{"work": 2}},
			{name: "map", failing: `work {"k":2}`,
				state: `"Fan":{"Type":"Map","MaxConcurrency":1,` + l.items + `,"ItemProcessor":` + processor("work") + `,` + l.add(10) + `,"Next":"Done"}`,
				r:     `[{"m":2},{"m":2},{"m":2}]`, calls: map[string]int{`work {"k":1}`: 1, `work {"k":2}`: 2, `work {"k":3}`: 1}},
		}
		for _, tc := range tests {
			t.Run(l.name+"/"+tc.name, func(t *testing.T) {
				ctx := context.Background()
				def := `{` + l.top + `"StartAt":"Init","States":{
				  "Init":{"Type":"Pass","Assign":{"n":0},"Next":"Inc"},
				  "Inc":{"Type":"Pass",` + l.add(1) + `,"Next":"Fan"},
				  ` + tc.state + `,
				  "Done":{"Type":"Pass",` + l.done + `,"End":true}}}`
				lambda := newFlakyLambda(tc.failing)
				eng := newEngine(t, sfnengine.Options{Lambda: lambda})
				rec := start(t, eng, def, `{"items":[{"k":1},{"k":2},{"k":3}]}`)
				first := waitClosed(t, eng, rec.Arn)
				if first.Status != sfnengine.StatusFailed || first.RedrivePoint() == nil || first.RedrivePoint().State != "Fan" {
					t.Fatalf("first run: %s %v %v, redrive point %+v; want FAILED at Fan", first.Status, first.Error, first.Cause, first.RedrivePoint())
				}
				lambda.fix(tc.failing)
				if _, err := eng.RedriveExecution(ctx, rec.Arn, ""); err != nil {
					t.Fatal(err)
				}
				got := waitClosed(t, eng, rec.Arn)
				if n := counter(t, got); n != 11 {
					t.Fatalf("n = %d after the redrive, want 11; assigned %v\n%s", n, assignedN(got.History), eventTypes(got.History))
				}
				var out struct {
					R json.RawMessage `json:"r"`
				}
				if err := json.Unmarshal([]byte(*got.Output), &out); err != nil || string(out.R) != tc.r {
					t.Fatalf("Fan's output %s, want %s (%v)", out.R, tc.r, err)
				}
				for fn, want := range tc.calls {
					if n := lambda.count(fn); n != want {
						t.Errorf("%s called %d times, want %d", fn, n, want)
					}
				}
				if entered(got.History, "Inc") != 1 || entered(got.History, "Fan") != 2 {
					t.Errorf("Inc entered %d times (want 1), Fan %d times (want 2): %s", entered(got.History, "Inc"),
						entered(got.History, "Fan"), eventTypes(got.History))
				}
			})
		}
	}
}
