package sfnengine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/transferflow/orchestrator/localaws/asl"
	"github.com/transferflow/orchestrator/localaws/asl/intrinsic"
	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// execution is the run-time state of one execution. The definition it runs is shared and read-only.
type execution struct {
	eng   *Engine
	m     *machine
	prog  *program
	input any
	// express: an Express execution (express.go), run like any other but never saved, listed or published.
	express bool
	// synchronous: run by StartSyncExecution or TestState, whose context objects have no Execution.RedriveCount
	// (and, in TestState without a role, a null RoleArn), as AWS's recorded ones show.
	synchronous bool
	// vars is the root scope of the workflow variables (the machine's own states): root, or the scope restored
	// from a checkpoint.
	vars *scope
	root scope

	// ctxOnce builds the parts of the context object ($$) that do not change during the execution.
	ctxOnce         sync.Once
	ctxExecution    *jsonvalue.Object
	ctxStateMachine *jsonvalue.Object

	mu     sync.Mutex
	rec    *ExecutionRecord // History is nil: the events are in log
	log    eventLog
	saved  int // bytes of log already handed to the Store
	closed bool

	ctx    context.Context
	cancel context.CancelCauseFunc
	done   chan struct{}

	// mock is the mock test case the execution runs with (mock.go); nil for the others.
	mock *mockRun

	// extra holds what only redrives and Distributed Maps use (redrive.go, maprun.go), allocated on first use so
	// that an execution without them stays small; set under mu.
	extra *execExtra
}

// execExtra is the part of an execution that redrives and Distributed Maps use.
type execExtra struct {
	// Kept by the execution's goroutine: where it stopped without success (the top-level state and its input), the
	// outputs of the branches or iterations of a top-level Parallel or Map that succeeded in its last attempt (and
	// the Map Run of a Distributed one), and what a redriven execution skips, until the state it resumes at is done.
	stopState string
	stopInput any
	partial   *partialRun
	redo      *redoPoint

	// mapRuns are the execution's Map Runs, guarded by the execution's mu.
	mapRuns []*mapRunState
}

// partialRun is what a top-level Parallel or Map state that did not succeed leaves for a redrive.
type partialRun struct {
	state   string
	outputs func() []BranchOutput // rendered only if the execution closes without success
	mapRun  string                // a Distributed Map's Map Run
}

// ext returns x.extra, allocating it on first use.
func (x *execution) ext() *execExtra {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.extra == nil {
		x.extra = &execExtra{}
	}
	return x.extra
}

// stopCause is the cancellation cause of an execution that ends other than by running to completion.
type stopCause struct {
	status string
	fail   *failure
}

// Error names the status the execution stops with.
func (s *stopCause) Error() string { return "execution " + s.status }

// thread is a history cursor: the id that the next event of this branch of control points back to.
type thread struct {
	prev int64
}

func newExecution(e *Engine, m *machine, arn, name, rawInput string, input any) *execution {
	ctx, cancel := context.WithCancelCause(e.ctx)
	rec := &ExecutionRecord{Arn: arn, StateMachineArn: m.sm.Arn, Name: name, Status: StatusRunning, Input: rawInput,
		StartDate: e.opts.Clock.Now()}
	x := &execution{eng: e, m: m, prog: m.program(), input: input, express: m.sm.Type == TypeExpress, rec: rec,
		ctx: ctx, cancel: cancel, done: make(chan struct{})}
	x.vars = &x.root
	if id := m.sm.RevisionID; id != "" { // not the revision CreateStateMachine made (revisions.go)
		rec.ext().Revision = id
	}
	return x
}

func (x *execution) snapshot() *ExecutionRecord {
	x.mu.Lock()
	rec, log := x.rec.Clone(), x.log
	x.mu.Unlock()
	rec.History = log.events() // the bytes of log up to its length never change
	if runs := x.mapRunRecords(); runs != nil {
		rec.ext().MapRuns = runs
	}
	return rec
}

func (x *execution) abort(f *failure) {
	x.cancel(&stopCause{status: StatusAborted, fail: f})
}

// emit appends an event whose previousEventId is th.prev; when advance is set, th.prev becomes the new id.
// It returns the new id, or 0 when the execution is closing and the event was dropped.
func (x *execution) emit(th *thread, advance bool, typ, key string, details map[string]any) int64 {
	return x.emitAt(time.Time{}, th, advance, typ, key, details)
}

// emitAt is emit with the event's timestamp given; a zero at stands for the clock's time when the event is added.
func (x *execution) emitAt(at time.Time, th *thread, advance bool, typ, key string, details map[string]any) int64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed || x.ctx.Err() != nil {
		return 0
	}
	if x.express {
		// No one can read an Express execution's history (AWS has none either, and no 25,000-event quota): only
		// the ids are kept, for previousEventId.
		x.log.n++
		id := int64(x.log.n)
		if advance {
			th.prev = id
		}
		return id
	}
	if x.log.n >= x.eng.opts.MaxHistoryEvents-1 {
		x.cancel(&stopCause{status: StatusFailed, fail: &failure{Error: ErrNameRuntime,
			Cause: fmt.Sprintf("The execution reached the maximum number of history events (%d).", x.eng.opts.MaxHistoryEvents)}})
		return 0
	}
	id := int64(x.log.n) + 1
	if at.IsZero() {
		at = x.eng.opts.Clock.Now()
	}
	if limit := x.eng.opts.MaxHistoryBytes; limit > 0 && len(x.log.data) >= limit {
		details = withoutPayloads(details)
	}
	x.log.add(&Event{ID: id, PreviousEventID: th.prev, Timestamp: at,
		Type: typ, DetailsKey: key, Details: details})
	if advance {
		th.prev = id
	}
	return id
}

// payloadKeys are the members of event details that carry data (JSON text or an error's cause) rather than names;
// assignedVariables, a map of such texts, is emptied too.
var payloadKeys = []string{"input", "output", "parameters", "cause"}

// truncated is the inputDetails/outputDetails of an event recorded without its payload.
var truncated = map[string]any{"truncated": true}

// withoutPayloads returns details with its payloads emptied (Options.MaxHistoryBytes), or details itself when it
// has none.
func withoutPayloads(details map[string]any) map[string]any {
	var out map[string]any
	for _, k := range payloadKeys {
		if s, ok := details[k].(string); ok && s != "" {
			if out == nil {
				out = make(map[string]any, len(details))
				for k, v := range details {
					out[k] = v
				}
			}
			out[k] = ""
		}
	}
	if av, ok := details["assignedVariables"].(map[string]any); ok && len(av) > 0 {
		if out == nil {
			out = make(map[string]any, len(details))
			for k, v := range details {
				out[k] = v
			}
		}
		out["assignedVariables"] = map[string]any{}
		out["assignedVariablesDetails"] = truncated
	}
	if out == nil {
		return details
	}
	if _, ok := out["inputDetails"]; ok {
		out["inputDetails"] = truncated
	}
	if _, ok := out["outputDetails"]; ok {
		out["outputDetails"] = truncated
	}
	return out
}

// lastEventID returns the id of the newest event.
func (x *execution) lastEventID() int64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	return int64(x.log.n)
}

func (x *execution) run() {
	defer close(x.done)
	if stop := x.startTimer(x.m.def.TimeoutSeconds); stop != nil {
		defer stop()
	}
	th := &thread{}
	details := map[string]any{"input": x.rec.Input, "inputDetails": notTruncated, "roleArn": x.m.sm.RoleArn}
	if x.rec.StateMachineVersionArn != "" {
		details["stateMachineVersionArn"] = x.rec.StateMachineVersionArn
	}
	if x.rec.StateMachineAliasArn != "" {
		details["stateMachineAliasArn"] = x.rec.StateMachineAliasArn
	}
	x.emit(th, false, EventExecutionStarted, "executionStartedEventDetails", details)
	x.publish()
	out, fail := x.safeRunMachine(x.ctx, x.m.def, x.m.def.StartAt, x.input, th, x.vars)
	x.finish(th, out, fail)
}

// resume continues a restored execution at its checkpoint: the state that was running is entered again.
func (x *execution) resume(cp Checkpoint, input any) {
	defer close(x.done)
	if stop := x.startTimer(x.m.def.TimeoutSeconds); stop != nil {
		defer stop()
	}
	th := &thread{prev: cp.PreviousEventID}
	var out any
	var fail *failure
	if cp.Callback != nil {
		out, fail = x.resumeWaiting(x.ctx, cp, input, th)
	} else {
		out, fail = x.safeRunMachine(x.ctx, x.m.def, cp.State, input, th, x.vars)
	}
	if fail != nil && (x.extra == nil || x.extra.stopState == "") { // the waiting task itself
		x.stoppedAt(cp.State, input)
	}
	x.finish(th, out, fail)
}

// startTimer ends the execution TIMED_OUT once its timeout, counted from its start date, has passed. When the
// Clock can call a function (SystemClock, ManualClock), it returns that timer's stop, for the caller to call when the
// execution ends; otherwise a goroutine waits on the Clock until the timeout or the end of the execution, and it
// returns nil.
func (x *execution) startTimer(timeoutSeconds int64) (stop func() bool) {
	e := x.eng
	timeout := x.executionTimeout(timeoutSeconds)
	if timeout <= 0 {
		return nil
	}
	since := x.rec.StartDate
	if d := x.rec.RedriveDate(); d != nil { // a redrive starts the machine's timeout again, as on AWS
		since = *d
	}
	d := timeout - e.opts.Clock.Now().Sub(since)
	expire := func() { x.cancel(&stopCause{status: StatusTimedOut, fail: &failure{Error: ErrNameTimeout}}) }
	if c, ok := e.opts.Clock.(afterFuncClock); ok { // no goroutine per running execution
		return c.AfterFunc(d, expire)
	}
	timer := e.opts.Clock.After(d)
	go func() {
		select {
		case <-timer:
			expire()
		case <-x.done:
		}
	}()
	return nil
}

// checkpoint records, before a top-level state is entered, where a restarted engine would resume, and saves the
// execution when Options.CheckpointEveryState is set.
func (x *execution) checkpoint(state string, input any, th *thread) {
	if !x.eng.opts.CheckpointEveryState || x.express {
		return
	}
	x.mu.Lock()
	if x.closed || x.ctx.Err() != nil {
		x.mu.Unlock()
		return
	}
	x.rec.Checkpoint = &Checkpoint{State: state, Input: marshal(input), PreviousEventID: th.prev, Variables: x.vars.text()}
	x.mu.Unlock()
	if err := x.save(context.Background()); err != nil {
		x.eng.opts.Logger.Error("save execution checkpoint", "executionArn", x.rec.Arn, "error", err)
	}
}

func (x *execution) finish(th *thread, out any, fail *failure) {
	e := x.eng
	cause := context.Cause(x.ctx)
	if cause != nil && !isStop(cause) && e.ctx.Err() != nil {
		return // the engine was closed: the execution stays RUNNING in the store
	}
	x.mu.Lock()
	now := e.opts.Clock.Now()
	rec := x.rec
	rec.StopDate = &now
	rec.Checkpoint = nil
	if rec.RedrivePoint() != nil {
		rec.ext().Redrive = nil
	}
	var typ, key string
	details := map[string]any{}
	var sc *stopCause
	// A machine that ran to its end (fail nil) succeeded even when a stop or its timeout came after the StateExited
	// event of its last state was recorded (exitState fails a state whose event is not): closed ABORTED or TIMED_OUT,
	// a redrive would have no state left to resume at and would run it all again.
	switch {
	case fail != nil && errors.As(cause, &sc):
		rec.Status = sc.status
		switch sc.status {
		case StatusTimedOut:
			typ, key = EventExecutionTimedOut, "executionTimedOutEventDetails"
		case StatusAborted:
			typ, key = EventExecutionAborted, "executionAbortedEventDetails"
		default:
			typ, key = EventExecutionFailed, "executionFailedEventDetails"
		}
		if sc.fail != nil {
			fail = sc.fail
		} else {
			fail = nil
		}
	case fail != nil:
		rec.Status = StatusFailed
		typ, key = EventExecutionFailed, "executionFailedEventDetails"
	default:
		rec.Status = StatusSucceeded
		typ, key = EventExecutionSucceeded, "executionSucceededEventDetails"
		text := marshal(out)
		rec.Output = &text
		details["output"] = text
		details["outputDetails"] = notTruncated
	}
	if rec.Status != StatusSucceeded {
		rec.ext().Redrive = x.redrivePoint()
	}
	if fail != nil && rec.Status != StatusSucceeded {
		if fail.Error != "" {
			s := fail.Error
			rec.Error = &s
			details["error"] = s
		}
		if fail.Cause != "" {
			s := fail.Cause
			rec.Cause = &s
			details["cause"] = s
		}
	}
	x.log.add(&Event{ID: int64(x.log.n) + 1, PreviousEventID: th.prev, Timestamp: now,
		Type: typ, DetailsKey: key, Details: details})
	x.closed = true
	x.mu.Unlock()
	x.cancel(nil)
	err := x.save(context.Background())
	if err != nil {
		e.opts.Logger.Error("save execution", "executionArn", rec.Arn, "error", err)
	}
	x.publish()
	if err == nil && !x.express {
		e.retire(x)
	}
}

func isStop(err error) bool {
	var sc *stopCause
	return errors.As(err, &sc)
}

// stateRun carries what one state's run needs besides the definition.
type stateRun struct {
	st        *asl.State
	sp        *stateProgram
	enteredID int64
	// beforeEntered is the event the state's entered event links to, and hasBeforeEntered whether it is known (it
	// is not for a state resumed after a restart): an EvaluationFailed event links to it (queryError).
	beforeEntered    int64
	hasBeforeEntered bool
	entered          time.Time
	mapItem          *jsonvalue.Object // $$.Map.Item while evaluating an ItemSelector
	retry            int
	// ctx and ctxState are the context object and its State member built for this run, until retry or mapItem
	// change (then they are reset to nil).
	ctx      *jsonvalue.Object
	ctxState *jsonvalue.Object
	// Callback and activity tasks (callback.go): the attempt's task token and wait, the Retry counters, and the
	// wait a restored execution resumes.
	token    string
	wait     *taskWait
	attempts []int64
	resume   *CallbackCheckpoint
	// Variables: the scope the state runs in, the assignments its Assign evaluated (set when it exits), and those
	// set, for its StateExited event.
	vars        *scope
	pending     []assignment
	assigned    map[string]any
	assignTotal int // the size of the variables once pending is set
	// th is the state's history cursor (for EvaluationFailed events).
	th *thread
	// $states: the state's input, its result once there is one, the error output in a Catch.
	statesInput any
	result      any
	hasResult   bool
	errOut      any
	hasErrOut   bool
}

// notTruncated is the inputDetails/outputDetails of every event; events are immutable, so they share it.
var notTruncated = map[string]any{"truncated": false}

// Keys of the context object and its parts, shared by every object built from them.
var (
	ctxKeys          = []string{"Execution", "StateMachine", "State"}
	ctxMapKeys       = []string{"Execution", "StateMachine", "State", "Map"}
	ctxStateKeys     = []string{"Name", "EnteredTime"}
	ctxTaskStateKeys = []string{"Name", "EnteredTime", "RetryCount"}
)

// contextConstants returns the Execution and StateMachine members of the context object, which do not change
// during the execution, building them on first use.
func (x *execution) contextConstants() (*jsonvalue.Object, *jsonvalue.Object) {
	x.ctxOnce.Do(func() {
		if x.synchronous {
			var role any = x.m.sm.RoleArn
			if x.m.sm.RoleArn == "" {
				role = nil
			}
			x.ctxExecution = jsonvalue.FromPairs("Id", x.rec.Arn, "Input", x.input, "StartTime", formatTime(x.rec.StartDate),
				"Name", x.rec.Name, "RoleArn", role)
		} else {
			x.ctxExecution = jsonvalue.FromPairs("Id", x.rec.Arn, "Input", x.input, "StartTime", formatTime(x.rec.StartDate),
				"Name", x.rec.Name, "RoleArn", x.m.sm.RoleArn, "RedriveCount", jsonInt(int64(x.rec.RedriveCount())))
		}
		x.ctxStateMachine = jsonvalue.FromPairs("Id", x.m.sm.Arn, "Name", x.m.sm.Name)
	})
	return x.ctxExecution, x.ctxStateMachine
}

// contextState returns the State member of the context object, building it on first use.
func (x *execution) contextState(sr *stateRun) *jsonvalue.Object {
	if sr.ctxState != nil {
		return sr.ctxState
	}
	var state *jsonvalue.Object
	if sr.st.Type == asl.TypeTask {
		state = jsonvalue.NewObjectKeys(ctxTaskStateKeys)
		state.SetAt(2, jsonInt(int64(sr.retry)))
	} else {
		state = jsonvalue.NewObjectKeys(ctxStateKeys)
	}
	state.SetAt(0, sr.sp.name)
	state.SetAt(1, formatTime(sr.entered))
	sr.ctxState = state
	return state
}

// contextObject returns $$ for the state, building it on first use.
func (x *execution) contextObject(sr *stateRun) *jsonvalue.Object {
	if sr.ctx != nil {
		return sr.ctx
	}
	if sr.token != "" {
		return x.taskContext(sr)
	}
	exec, sm := x.contextConstants()
	var obj *jsonvalue.Object
	if sr.mapItem != nil {
		obj = jsonvalue.NewObjectKeys(ctxMapKeys)
		obj.SetAt(3, jsonvalue.FromPairs("Item", sr.mapItem))
	} else {
		obj = jsonvalue.NewObjectKeys(ctxKeys)
	}
	obj.SetAt(0, exec)
	obj.SetAt(1, sm)
	obj.SetAt(2, x.contextState(sr))
	sr.ctx = obj
	return obj
}

// timeLayout is the format of the context object's times.
const timeLayout = "2006-01-02T15:04:05.000Z"

// formatTime writes t in UTC as timeLayout does, without parsing the layout each time.
func formatTime(t time.Time) string {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.Format(timeLayout)
	}
	hour, minute, sec := t.Clock()
	var b [24]byte
	digits(b[0:4], year)
	b[4] = '-'
	digits(b[5:7], int(month))
	b[7] = '-'
	digits(b[8:10], day)
	b[10] = 'T'
	digits(b[11:13], hour)
	b[13] = ':'
	digits(b[14:16], minute)
	b[16] = ':'
	digits(b[17:19], sec)
	b[19] = '.'
	digits(b[20:23], t.Nanosecond()/1e6)
	b[23] = 'Z'
	return string(b[:])
}

// digits writes n in decimal into b, zero-padded to len(b).
func digits(b []byte, n int) {
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = byte('0' + n%10)
		n /= 10
	}
}

// runMachine runs a definition (the machine, a branch or an iteration) from the state start to a terminal state.
func (x *execution) runMachine(ctx context.Context, def *asl.Definition, start string, input any, th *thread, vars *scope) (any, *failure) {
	name := start
	top := def == x.m.def
	text := "" // the JSON text of input, when the previous state rendered it
	sr := &stateRun{vars: vars}
	for {
		if ctx.Err() != nil {
			// The states before name exited, their StateExited events recorded (exitState fails a state whose
			// event is not) and their Assign applied: a redrive resumes at name, with those variables.
			if top {
				x.stoppedAt(name, input)
			}
			return nil, stopped
		}
		if top {
			x.checkpoint(name, input, th)
		}
		st := def.States[name]
		next, out, outText, fail := x.runState(ctx, sr, st, input, text, th)
		if top && x.extra != nil {
			x.extra.redo = nil // only the state a redrive resumes at skips what had succeeded
		}
		if fail != nil {
			if top {
				x.stoppedAt(name, input)
			}
			return nil, fail
		}
		if next == "" {
			return out, nil
		}
		input, text, name = out, outText, next
	}
}

func (x *execution) runtimeErr(sr *stateRun, format string, args ...any) *failure {
	return runtimeFailure(fmt.Sprintf("An error occurred while executing the state '%s' (entered at the event id #%d). ",
		sr.st.Name, sr.enteredID) + fmt.Sprintf(format, args...))
}

// runState runs one state: it returns the next state's name ("" at the end of the machine), the output and its
// JSON text. text is the JSON text of input when the caller has it, else "". sr is the caller's, reset here for
// this state.
func (x *execution) runState(ctx context.Context, sr *stateRun, st *asl.State, input any, text string, th *thread) (string, any, string, *failure) {
	*sr = stateRun{st: st, sp: x.prog.states[st], entered: x.eng.opts.Clock.Now(), vars: sr.vars, statesInput: input, th: th}
	if text == "" {
		text = marshal(input)
	}
	if len(text) > MaxPayloadBytes { // a Map iteration's or Parallel branch's input built by ItemSelector/Parameters
		return "", nil, "", dataLimitExceeded(st.Name, "was given an input")
	}
	sr.beforeEntered, sr.hasBeforeEntered = th.prev, true
	sr.enteredID = x.emitAt(sr.entered, th, true, sr.sp.enteredType, "stateEnteredEventDetails", map[string]any{
		"name": sr.sp.name, "input": text, "inputDetails": notTruncated})
	switch st.Type {
	case asl.TypeFail:
		next, out, fail := x.runFail(sr, input)
		return next, out, "", fail
	case asl.TypeChoice:
		return x.runChoice(sr, input, text, th)
	}
	var out any
	var fail *failure
	var next string
	switch st.Type {
	case asl.TypePass:
		if st.JSONata {
			out, fail = x.runPassJSONata(sr, input)
		} else {
			out, fail = x.runPass(sr, input)
		}
	case asl.TypeWait:
		out, fail = x.runWait(ctx, sr, input)
	case asl.TypeSucceed:
		if st.JSONata {
			out, fail = x.outputJSONata(sr, input)
		} else {
			out, fail = x.filterInput(sr, input)
			if fail == nil {
				out, fail = x.outputPath(sr, out)
			}
		}
	case asl.TypeTask, asl.TypeParallel, asl.TypeMap:
		var caught bool
		out, caught, next, fail = x.runWithRetry(ctx, sr, input, th)
		if fail != nil {
			return "", nil, "", fail
		}
		if caught {
			return x.exit(sr, th, next, out, input, text)
		}
	}
	if fail != nil {
		return "", nil, "", fail
	}
	return x.exit(sr, th, st.Next, out, input, text)
}

// exit checks the output size and emits the StateExited event. inText is the JSON text of the state's input, reused
// when the output is the input itself.
func (x *execution) exit(sr *stateRun, th *thread, next string, out, input any, inText string) (string, any, string, *failure) {
	text := inText
	if !sameValue(out, input) {
		text = marshal(out)
	}
	if len(text) > MaxPayloadBytes {
		return "", nil, "", dataLimitExceeded(sr.st.Name, "returned a result")
	}
	if fail := x.checkAssign(sr); fail != nil {
		return "", nil, "", fail
	}
	if fail := x.exitState(sr, th, text); fail != nil {
		return "", nil, "", fail
	}
	// next is the state's Next ("" for an End state) or, for a caught error, the catcher's Next: a catcher's
	// transition applies even on a state with End (as on AWS).
	return next, out, text, nil
}

// exitedDetails returns the details of a state's StateExited event: its output and the variables it assigned.
func exitedDetails(sr *stateRun, text string) map[string]any {
	d := map[string]any{"name": sr.sp.name, "output": text, "outputDetails": notTruncated}
	if len(sr.assigned) > 0 {
		d["assignedVariables"] = sr.assigned
		d["assignedVariablesDetails"] = notTruncated
	}
	return d
}

// sameValue reports whether a and b are the same JSON value in memory (so that they have the same text): the same
// object or array, or equal scalars.
func sameValue(a, b any) bool {
	switch t := a.(type) {
	case *jsonvalue.Object:
		u, ok := b.(*jsonvalue.Object)
		return ok && t == u
	case []any:
		u, ok := b.([]any)
		return ok && len(t) == len(u) && (len(t) == 0 || &t[0] == &u[0])
	case string:
		u, ok := b.(string)
		return ok && t == u
	case json.Number:
		u, ok := b.(json.Number)
		return ok && t == u
	case bool:
		u, ok := b.(bool)
		return ok && t == u
	case nil:
		return b == nil
	}
	return false
}

func (x *execution) runPass(sr *stateRun, input any) (any, *failure) {
	st := sr.st
	eff, fail := x.filterInput(sr, input)
	if fail != nil {
		return nil, fail
	}
	if sr.sp.parameters != nil {
		eff, fail = x.payload(sr, sr.sp.parameters, eff)
		if fail != nil {
			return nil, fail
		}
	}
	result := eff
	if st.HasResult {
		result = st.Result
	}
	return x.placeResult(sr, input, result)
}

func (x *execution) runFail(sr *stateRun, input any) (string, any, *failure) {
	st := sr.st
	f := &failure{Error: st.Error, Cause: st.Cause}
	if st.JSONata {
		for _, p := range []struct {
			t   *jtemplate
			dst *string
		}{{sr.sp.jError, &f.Error}, {sr.sp.jCause, &f.Cause}} {
			if p.t == nil {
				continue
			}
			v, fail := x.evalJString(sr, p.t)
			if fail != nil {
				return "", nil, fail
			}
			*p.dst = v
		}
		return "", nil, f
	}
	for _, p := range []struct {
		field, path string
		dst         *string
	}{{"ErrorPath", st.ErrorPath, &f.Error}, {"CausePath", st.CausePath, &f.Cause}} {
		if p.path == "" {
			continue
		}
		var v any
		var err error
		if intrinsic.Is(p.path) {
			v, err = x.evalIntrinsic(sr, p.path, input)
			if err != nil {
				return "", nil, x.runtimeErr(sr, "%v", err)
			}
		} else {
			var fail *failure
			if v, fail = x.paramPath(sr, p.field, p.path, input); fail != nil {
				return "", nil, fail
			}
		}
		s, ok := v.(string)
		if !ok {
			return "", nil, x.runtimeErr(sr, "The JSONPath '%s' specified for the field '%s' does not resolve to a string: %s",
				p.path, p.field, marshal(v))
		}
		*p.dst = s
	}
	return "", nil, f
}

func (x *execution) runChoice(sr *stateRun, input any, inText string, th *thread) (string, any, string, *failure) {
	st := sr.st
	eff := input
	if !st.JSONata {
		var fail *failure
		if eff, fail = x.filterInput(sr, input); fail != nil {
			return "", nil, "", fail
		}
	}
	next, matched := "", -1
	for i, r := range sr.sp.choices {
		var ok bool
		var fail *failure
		if st.JSONata {
			ok, fail = x.evalJBool(sr, sr.sp.ruleCond[i])
		} else {
			ok, fail = x.evalRule(sr, r, eff)
		}
		if fail != nil {
			return "", nil, "", fail
		}
		if ok {
			next, matched = r.r.Next, i
			break
		}
	}
	if next == "" {
		next = st.Default
	}
	if next == "" {
		return "", nil, "", &failure{Error: ErrNameNoChoiceMatched, Cause: fmt.Sprintf(
			"An error occurred while executing the state '%s' (entered at the event id #%d). Failed to transition out of the state. The state does not point to a next state.",
			st.Name, sr.enteredID)}
	}
	// The state's Assign applies whichever rule matches, and the matching rule's Assign with it (the rule's value
	// wins for a name both set); the matching rule's Output, else the state's.
	output := sr.sp.jOutput
	if fail := x.evalAssign(sr, sr.sp.assign, eff); fail != nil {
		return "", nil, "", fail
	}
	if matched >= 0 {
		if o := sr.sp.ruleOutput[matched]; o != nil {
			output = o
		}
		if a := sr.sp.ruleAssign[matched]; a != nil {
			state := sr.pending
			if fail := x.evalAssign(sr, a, eff); fail != nil {
				return "", nil, "", fail
			}
			sr.pending = mergeAssignments(state, sr.pending)
		}
	}
	var out any
	var fail *failure
	if st.JSONata {
		out = input
		if output != nil {
			out, fail = x.evalJ(sr, output)
		}
	} else {
		out, fail = x.outputPath(sr, eff)
	}
	if fail != nil {
		return "", nil, "", fail
	}
	text := inText
	if !sameValue(out, input) {
		text = marshal(out)
	}
	if fail := x.checkAssign(sr); fail != nil {
		return "", nil, "", fail
	}
	if fail := x.exitState(sr, th, text); fail != nil {
		return "", nil, "", fail
	}
	return next, out, text, nil
}

// runPassJSONata runs a JSONata Pass state: its Assign and its Output (by default its input).
func (x *execution) runPassJSONata(sr *stateRun, input any) (any, *failure) {
	if fail := x.evalAssign(sr, sr.sp.assign, input); fail != nil {
		return nil, fail
	}
	return x.outputJSONata(sr, input)
}

// outputJSONata evaluates a JSONata state's Output, or returns def when it has none.
func (x *execution) outputJSONata(sr *stateRun, def any) (any, *failure) {
	if sr.sp.jOutput == nil {
		return def, nil
	}
	return x.evalJ(sr, sr.sp.jOutput)
}

// jsonInt returns n as a JSON number value.
func jsonInt(n int64) json.Number { return json.Number(strconv.FormatInt(n, 10)) }

// safeRunMachine is runMachine for the root of a goroutine: a panic inside the engine fails the branch of control
// with States.Runtime instead of taking the process down.
func (x *execution) safeRunMachine(ctx context.Context, def *asl.Definition, start string, input any, th *thread, vars *scope) (out any, fail *failure) {
	defer func() {
		if r := recover(); r != nil {
			x.eng.opts.Logger.Error("engine panic", "executionArn", x.rec.Arn, "panic", fmt.Sprint(r))
			out, fail = nil, runtimeFailure(fmt.Sprintf("internal error in the local engine: %v", r))
		}
	}()
	return x.runMachine(ctx, def, start, input, th, vars)
}
