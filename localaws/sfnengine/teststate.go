package sfnengine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/transferflow/orchestrator/localaws/asl"
	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// TestState statuses.
const (
	TestSucceeded   = "SUCCEEDED"
	TestFailed      = "FAILED"
	TestRetriable   = "RETRIABLE"
	TestCaughtError = "CAUGHT_ERROR"
)

// TestStateName is the name a state tested on its own (TestStateInput.StateName empty) runs under, as
// $$.State.Name and error causes show it: AWS's, as its recorded TestState context objects show.
const TestStateName = "StateName"

// ErrTestStateInput is returned by TestState for a request the local engine refuses (a mock on a state that cannot
// have one, a callback or activity task without a mock, a Task without a mock or a role, a StateName the
// definition does not have, a context without a mock, JSON that does not decode); the message says which. sfnapi
// answers it as a ValidationException.
var ErrTestStateInput = errors.New("sfnengine: invalid TestState request")

// TestStateInput is the input of TestState, as the API's TestStateInput.
type TestStateInput struct {
	// Definition is one state's definition, or a whole state machine's when StateName is set.
	Definition string
	StateName  string
	RoleArn    string
	Input      string // empty: "{}"
	// Inspection is INFO (default), DEBUG or TRACE: DEBUG and TRACE return the data-flow steps (TRACE adds the HTTP
	// request and response of HTTP tasks, which the engine does not run, so it equals DEBUG).
	Inspection string
	// Mock, when set, replaces the Task's call (or the Map's or Parallel's run) by its result or error.
	Mock *TestStateMock
	// Context is the context object ($$) as JSON; only with a mock, as on AWS.
	Context string
	// Variables is the JSON object of the workflow variables the state sees; inspectionData's variables are these
	// and those the state's Assign sets.
	Variables string
	// RetrierRetryCount is how many retries the retrier that matches an error has already made.
	RetrierRetryCount int
}

// TestStateMock is a mocked result or error.
type TestStateMock struct {
	Result string // JSON text, when Error is empty
	Error  string
	Cause  string
}

// TestStateOutput is the answer of TestState.
type TestStateOutput struct {
	Status    string
	NextState string
	Output    *string
	Error     string
	Cause     string
	// Inspection is set for the DEBUG and TRACE levels.
	Inspection *Inspection
}

// Inspection is the inspectionData of TestState: each step of the state's data flow as JSON text, empty for the
// steps the state did not reach or does not have.
type Inspection struct {
	Input, AfterInputPath, AfterParameters, Result, AfterResultSelector, AfterResultPath, Variables string
	// RetryIndex and RetryBackoffSeconds are set when Status is RETRIABLE, CatchIndex when it is CAUGHT_ERROR
	// (-1 otherwise).
	RetryIndex, CatchIndex int
	RetryBackoffSeconds    int64
	// MaxConcurrency is a Map state's (0 when it has none, as AWS reports it).
	MaxConcurrency *int32
}

// TestState runs one state on an input, as the Step Functions TestState API does, with the engine's compiled state
// code: InputPath, Parameters, the Task's call (or its mock), ResultSelector, ResultPath and OutputPath for Pass and
// Task states; the iterations or branches (or the mock) of Map and Parallel states; InputPath, the rules and
// OutputPath for Choice; Succeed and Fail; Wait states do not wait. A failure that a retrier of the state would
// retry is RETRIABLE (nothing is retried), one a catcher handles is CAUGHT_ERROR with the catcher's Next, anything
// else FAILED. It runs for at most ExpressMaxDuration.
func (e *Engine) TestState(ctx context.Context, in TestStateInput) (*TestStateOutput, error) {
	def, name, err := testDefinition(in.Definition, in.StateName)
	if err != nil {
		return nil, err
	}
	st := def.States[name]
	if err := checkTestRequest(st, in); err != nil {
		return nil, err
	}
	if in.Input == "" {
		in.Input = "{}"
	}
	input, err := jsonvalue.DecodeString(in.Input)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidExecutionInput, err)
	}
	// The context object is an Express execution's of a state machine with a generated name, as AWS's recorded
	// ones are (express:<state machine>:<execution>, without RedriveCount).
	smName, id := e.opts.NewID(), e.opts.NewID()
	m := &machine{sm: StateMachine{Arn: e.StateMachineArn(smName), Name: smName, RoleArn: in.RoleArn,
		Type: TypeExpress, Definition: in.Definition, CreationDate: e.opts.Clock.Now()}, def: def}
	arn := "arn:aws:states:" + e.opts.Region + ":" + e.opts.AccountID + ":express:" + smName + ":" + id
	x := newExecution(e, m, arn, id, in.Input, input)
	x.synchronous = true
	defer x.cancel(nil)
	if in.Variables != "" {
		vars, err := restoreScope(in.Variables)
		if err != nil {
			return nil, fmt.Errorf("%w: the variables must be a JSON object", ErrTestStateInput)
		}
		x.vars = vars
	}
	run := &testRun{x: x, in: in, st: st, insp: &Inspection{Input: in.Input, RetryIndex: -1, CatchIndex: -1, Variables: in.Variables}}
	if in.Context != "" {
		c, err := jsonvalue.DecodeString(in.Context)
		obj, ok := c.(*jsonvalue.Object)
		if err != nil || !ok {
			return nil, fmt.Errorf("%w: the context must be a JSON object", ErrTestStateInput)
		}
		run.context = obj
		// The compiled paths of $$.Execution and $$.StateMachine read these parts directly.
		x.ctxOnce.Do(func() {
			x.ctxExecution, x.ctxStateMachine = givenContextPart(obj, "Execution"), givenContextPart(obj, "StateMachine")
		})
	}
	tctx, cancel := context.WithTimeout(ctx, ExpressMaxDuration)
	defer cancel()
	out := run.run(tctx, input)
	if in.Inspection == "DEBUG" || in.Inspection == "TRACE" {
		out.Inspection = run.insp
	}
	return out, nil
}

// testDefinition returns the definition to test and the name of the state in it. A state given alone is made the
// only state of a machine whose other states are the targets of its transitions (Succeed states), so that the
// definition validates as AWS validates a state: every problem of the state itself is reported.
func testDefinition(text, stateName string) (*asl.Definition, string, error) {
	if stateName != "" {
		def, err := asl.Load([]byte(text))
		if err != nil {
			return nil, "", &DefinitionError{Err: err}
		}
		if _, ok := def.States[stateName]; !ok {
			return nil, "", fmt.Errorf("%w: the definition has no state %q", ErrTestStateInput, stateName)
		}
		return def, stateName, nil
	}
	var state map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &state); err != nil {
		return nil, "", &DefinitionError{Err: fmt.Errorf("the state is not a JSON object: %v", err)}
	}
	targets := map[string]bool{}
	var next struct {
		Next    string
		Default string
		Choices []struct{ Next string }
		Catch   []struct{ Next string }
	}
	_ = json.Unmarshal([]byte(text), &next) // fields of the wrong type are reported by validation
	for _, t := range []string{next.Next, next.Default} {
		targets[t] = true
	}
	for _, c := range next.Choices {
		targets[c.Next] = true
	}
	for _, c := range next.Catch {
		targets[c.Next] = true
	}
	states := map[string]json.RawMessage{TestStateName: json.RawMessage(text)}
	names := make([]string, 0, len(targets))
	for t := range targets {
		if t != "" && t != TestStateName {
			names = append(names, t)
		}
	}
	sort.Strings(names)
	for _, t := range names {
		states[t] = json.RawMessage(`{"Type":"Succeed"}`)
	}
	machine, err := json.Marshal(map[string]any{"StartAt": TestStateName, "States": states})
	if err != nil {
		return nil, "", &DefinitionError{Err: err}
	}
	def, err := asl.Load(machine)
	if err != nil {
		return nil, "", &DefinitionError{Err: err}
	}
	return def, TestStateName, nil
}

// checkTestRequest refuses what TestState does not run: AWS's documented limits (a mock only for Task, Map and
// Parallel states; a context only with a mock; activity and callback tasks only with a mock; a role for a Task
// that is not mocked).
func checkTestRequest(st *asl.State, in TestStateInput) error {
	mockable := st.Type == asl.TypeTask || st.Type == asl.TypeMap || st.Type == asl.TypeParallel
	switch {
	case in.Mock != nil && !mockable:
		return fmt.Errorf("%w: a mock can only be specified for Task, Map, or Parallel states", ErrTestStateInput)
	case in.Context != "" && in.Mock == nil:
		return fmt.Errorf("%w: a context may only be specified with a mock", ErrTestStateInput)
	case st.Type == asl.TypeTask && in.Mock == nil && in.RoleArn == "":
		return fmt.Errorf("%w: RoleArn must be specified when testing a Task state", ErrTestStateInput) // recorded
	}
	if st.Type == asl.TypeTask && in.Mock == nil {
		integ, err := resolveResource(st.Resource)
		if err == nil && (integ.waitForToken || integ.activity != "") {
			return fmt.Errorf("%w: activity and .waitForTaskToken tasks can only be tested with a mock", ErrTestStateInput)
		}
	}
	if in.Mock != nil && in.Mock.Error == "" {
		if _, err := jsonvalue.DecodeString(in.Mock.Result); err != nil {
			return fmt.Errorf("%w: the mocked result is not JSON: %v", ErrTestStateInput, err)
		}
	}
	return nil
}

// testRun is one TestState call.
type testRun struct {
	x       *execution
	in      TestStateInput
	st      *asl.State
	insp    *Inspection
	context *jsonvalue.Object // the request's context object, when given
}

func (r *testRun) stateRun() *stateRun {
	sr := &stateRun{st: r.st, sp: r.x.prog.states[r.st], entered: r.x.eng.opts.Clock.Now(), retry: r.in.RetrierRetryCount,
		vars: r.x.vars, statesInput: r.x.input}
	if r.context != nil {
		sr.ctx, sr.ctxState = r.context, givenContextPart(r.context, "State")
	}
	return sr
}

// givenContextPart returns the member of a context object given to TestState, or an empty object (in which paths
// match nothing) when it has none.
func givenContextPart(ctx *jsonvalue.Object, name string) *jsonvalue.Object {
	if v, ok := jsonvalue.Lookup(ctx, name); ok {
		if o, ok := v.(*jsonvalue.Object); ok {
			return o
		}
	}
	return jsonvalue.NewObject(0)
}

func (r *testRun) run(ctx context.Context, input any) *TestStateOutput {
	x, st := r.x, r.st
	sr := r.stateRun()
	if st.JSONata {
		return r.runJSONata(ctx, sr, input)
	}
	eff, fail := x.filterInput(sr, input)
	if fail != nil {
		return r.failed(fail)
	}
	r.insp.AfterInputPath = marshal(eff)
	switch st.Type {
	case asl.TypeFail:
		_, _, fail := x.runFail(sr, eff)
		return r.failed(fail)
	case asl.TypeChoice:
		return r.choice(sr, eff)
	case asl.TypeSucceed:
		return r.output(sr, eff, "")
	case asl.TypeWait:
		if fail := x.evalAssign(sr, sr.sp.assign, eff); fail != nil {
			return r.failed(fail)
		}
		return r.output(sr, eff, st.Next)
	}
	params := eff
	if sr.sp.parameters != nil && (st.Type == asl.TypePass || st.Type == asl.TypeTask) {
		if params, fail = x.payload(sr, sr.sp.parameters, eff); fail != nil {
			return r.failed(fail)
		}
	}
	if st.Type == asl.TypeMap {
		n := int32(st.MaxConcurrency)
		r.insp.MaxConcurrency = &n
	}
	var result any
	switch {
	case st.Type == asl.TypePass && st.HasResult:
		// AWS reports a Pass state with Result without InputPath and Parameters steps (recorded).
		r.insp.AfterInputPath = ""
		result = st.Result
		r.insp.Result = marshal(result)
	case st.Type == asl.TypePass:
		r.insp.AfterParameters = marshal(params)
		result = params
	case r.in.Mock != nil:
		result, fail = r.mocked()
	case st.Type == asl.TypeMap || st.Type == asl.TypeParallel:
		result, fail = r.branches(ctx, sr, eff, input)
	default:
		r.insp.AfterParameters = marshal(params)
		result, fail = r.call(ctx, sr, params)
	}
	if st.Type == asl.TypeTask && r.in.Mock != nil {
		r.insp.AfterParameters = marshal(params)
	}
	if fail != nil {
		return r.handle(sr, input, fail)
	}
	if st.Type != asl.TypePass {
		r.insp.Result = marshal(result)
	}
	if st.Type != asl.TypePass && sr.sp.resultSel != nil {
		if result, fail = x.payload(sr, sr.sp.resultSel, result); fail != nil {
			return r.failed(fail)
		}
	}
	r.insp.AfterResultSelector = marshal(result) // the result itself when the state has no ResultSelector (recorded)
	if fail := x.evalAssign(sr, sr.sp.assign, result); fail != nil {
		return r.failed(fail)
	}
	out, fail := x.resultPath(sr, sr.sp.resultPath, input, result)
	if fail != nil {
		return r.failed(fail)
	}
	r.insp.AfterResultPath = marshal(out)
	return r.output(sr, out, st.Next)
}

// mocked returns what the request's mock (not nil) makes the state's call return: its error, else its result.
func (r *testRun) mocked() (any, *failure) {
	if r.in.Mock.Error != "" {
		return nil, &failure{Error: r.in.Mock.Error, Cause: r.in.Mock.Cause}
	}
	result, _ := jsonvalue.DecodeString(r.in.Mock.Result) // checked by checkTestRequest
	return result, nil
}

// branches runs a Map's iterations or a Parallel's branches with the engine's code (items, ItemSelector or
// Parameters, MaxConcurrency, the first failure) and returns their results, before ResultSelector, ResultPath and
// OutputPath, which run applies as for any state.
func (r *testRun) branches(ctx context.Context, sr *stateRun, eff, input any) (any, *failure) {
	raw := *sr.sp
	raw.resultSel, raw.resultPath, raw.outputPath = nil, compileResultPath(asl.OptPath{}), compileSelector(asl.OptPath{})
	raw.assign, raw.jOutput = nil, nil // applied by run (runJSONata) to the result
	rsr := *sr
	rsr.sp = &raw
	if r.st.Type == asl.TypeMap {
		return r.x.attemptMap(ctx, &rsr, eff, input, &thread{})
	}
	return r.x.attemptParallel(ctx, &rsr, eff, input, &thread{})
}

// call runs the Task's integration, with the task's TimeoutSeconds.
func (r *testRun) call(ctx context.Context, sr *stateRun, params any) (any, *failure) {
	x := r.x
	if err := sr.sp.integErr; err != nil {
		return nil, x.runtimeErr(sr, "%v", err)
	}
	if len(marshal(params)) > MaxPayloadBytes {
		return nil, dataLimitExceeded(sr.st.Name, "was given parameters")
	}
	var res taskOutcome
	if sr.st.TimeoutSeconds > 0 {
		var fail *failure
		if res, fail = x.callWithTimeout(ctx, sr, sr.sp.integ, params, sr.st.TimeoutSeconds, &thread{}); fail != nil {
			return nil, fail
		}
	} else {
		res.out, res.fail = safeCall(ctx, x, sr.sp.integ, params)
	}
	if ctx.Err() != nil {
		return nil, &failure{Error: ErrNameTimeout, Cause: "TestState ran for more than five minutes"}
	}
	if res.fail != nil {
		return nil, res.fail
	}
	if lr, ok := res.out.(lazyResult); ok {
		return lr.value(), nil
	}
	return res.out, nil
}

// handle decides what a failure of the state's work is: RETRIABLE when a retrier would retry it, CAUGHT_ERROR when
// a catcher handles it, FAILED otherwise.
func (r *testRun) handle(sr *stateRun, input any, fail *failure) *TestStateOutput {
	st := r.st
	if uncatchable(fail) {
		return r.failed(fail)
	}
	task := st.Type == asl.TypeTask
	for i, rt := range st.Retry {
		if !matchesFailure(rt.ErrorEquals, fail, task) {
			continue
		}
		if int64(r.in.RetrierRetryCount) < rt.MaxAttempts {
			r.insp.RetryIndex = i
			r.insp.RetryBackoffSeconds = backoffSeconds(rt, int64(r.in.RetrierRetryCount))
			return &TestStateOutput{Status: TestRetriable, Error: fail.Error, Cause: fail.Cause}
		}
		break
	}
	for i, c := range st.Catch {
		if !matchesFailure(c.ErrorEquals, fail, task) {
			continue
		}
		errOut := jsonvalue.FromPairs("Error", fail.Error, "Cause", fail.Cause)
		sr.errOut, sr.hasErrOut, sr.result, sr.hasResult = errOut, true, nil, false
		if f := r.x.evalAssign(sr, sr.sp.catchAssign[i], errOut); f != nil {
			return r.failed(f)
		}
		var out any = errOut
		var f *failure
		switch {
		case st.JSONata && sr.sp.catchOutput[i] != nil:
			out, f = r.x.evalJ(sr, sr.sp.catchOutput[i])
		case !st.JSONata:
			out, f = r.x.resultPath(sr, sr.sp.catch[i], input, errOut)
		}
		if f == nil {
			f = r.commit(sr)
		}
		if f != nil {
			return r.failed(f)
		}
		r.insp.CatchIndex = i
		if !st.JSONata {
			r.insp.AfterResultPath = marshal(out)
		}
		text := marshal(out)
		return &TestStateOutput{Status: TestCaughtError, NextState: c.Next, Output: &text, Error: fail.Error, Cause: fail.Cause}
	}
	return r.failed(fail)
}

// backoffSeconds is the retrier's interval before retry number attempt (0-based), without jitter, in whole seconds.
func backoffSeconds(rt asl.Retrier, attempt int64) int64 {
	secs := float64(rt.IntervalSeconds) * math.Pow(rt.BackoffRate, float64(attempt))
	if rt.MaxDelaySeconds > 0 && secs > float64(rt.MaxDelaySeconds) {
		secs = float64(rt.MaxDelaySeconds)
	}
	return int64(secs)
}

func (r *testRun) choice(sr *stateRun, eff any) *TestStateOutput {
	next := ""
	matched := -1
	for i, rule := range sr.sp.choices {
		ok, fail := r.x.evalRule(sr, rule, eff)
		if fail != nil {
			return r.failed(fail)
		}
		if ok {
			next, matched = rule.r.Next, i
			break
		}
	}
	if next == "" {
		next = r.st.Default
	}
	if next == "" {
		return r.failed(&failure{Error: ErrNameNoChoiceMatched, Cause: fmt.Sprintf(
			"An error occurred while executing the state '%s'. Failed to transition out of the state. The state does not point to a next state.", r.st.Name)})
	}
	// The state's Assign, and the matching rule's over it, as runChoice applies them.
	if fail := r.x.evalAssign(sr, sr.sp.assign, eff); fail != nil {
		return r.failed(fail)
	}
	if matched >= 0 && sr.sp.ruleAssign[matched] != nil {
		state := sr.pending
		if fail := r.x.evalAssign(sr, sr.sp.ruleAssign[matched], eff); fail != nil {
			return r.failed(fail)
		}
		sr.pending = mergeAssignments(state, sr.pending)
	}
	return r.output(sr, eff, next)
}

// output applies OutputPath and answers SUCCEEDED with next as the next state.
func (r *testRun) output(sr *stateRun, v any, next string) *TestStateOutput {
	out, fail := r.x.outputPath(sr, v)
	if fail != nil {
		return r.failed(fail)
	}
	return r.answer(sr, out, next)
}

// answer checks the output's size, sets the variables the state assigned, and answers SUCCEEDED with next as the
// next state.
func (r *testRun) answer(sr *stateRun, out any, next string) *TestStateOutput {
	text := marshal(out)
	if len(text) > MaxPayloadBytes {
		return r.failed(dataLimitExceeded(r.st.Name, "returned a result"))
	}
	if fail := r.commit(sr); fail != nil {
		return r.failed(fail)
	}
	return &TestStateOutput{Status: TestSucceeded, NextState: next, Output: &text}
}

// commit sets the variables the state's Assign evaluated; inspectionData's variables are then all of them.
func (r *testRun) commit(sr *stateRun) *failure {
	if sr.pending == nil {
		return nil
	}
	if fail := r.x.commitAssign(sr); fail != nil {
		return fail
	}
	r.insp.Variables = r.x.vars.text()
	return nil
}

// runJSONata runs a JSONata state: its Arguments, its call (or mock, or iterations or branches), Assign and Output,
// with $states and the variables as the engine's run evaluates them; a Choice's Conditions, a Fail's Error and
// Cause. A Wait does not wait.
func (r *testRun) runJSONata(ctx context.Context, sr *stateRun, input any) *TestStateOutput {
	x, st := r.x, r.st
	var out any
	var fail *failure
	switch st.Type {
	case asl.TypeFail:
		_, _, fail := x.runFail(sr, input)
		return r.failed(fail)
	case asl.TypeChoice:
		next, out, _, fail := x.runChoice(sr, input, "", &thread{})
		if fail != nil {
			return r.failed(fail)
		}
		if sr.assigned != nil { // runChoice set them
			r.insp.Variables = x.vars.text()
		}
		return r.answer(sr, out, next)
	case asl.TypeSucceed:
		out, fail = x.outputJSONata(sr, input)
	case asl.TypeWait, asl.TypePass:
		out, fail = x.runPassJSONata(sr, input) // a Wait's Assign and Output, without the wait
	default: // Task, Map, Parallel
		var result any
		switch {
		case r.in.Mock != nil:
			result, fail = r.mocked()
		case st.Type == asl.TypeMap || st.Type == asl.TypeParallel:
			result, fail = r.branches(ctx, sr, input, input)
		default:
			params := input
			if sr.sp.jArguments != nil {
				params, fail = x.evalJ(sr, sr.sp.jArguments)
			}
			if fail == nil {
				r.insp.AfterParameters = marshal(params)
				result, fail = r.call(ctx, sr, params)
			}
		}
		if fail != nil {
			return r.handle(sr, input, fail)
		}
		r.insp.Result = marshal(result)
		out, fail = x.finishResult(sr, input, result)
	}
	if fail != nil {
		return r.failed(fail)
	}
	return r.answer(sr, out, st.Next)
}

func (r *testRun) failed(f *failure) *TestStateOutput {
	return &TestStateOutput{Status: TestFailed, Error: f.Error, Cause: f.Cause}
}
