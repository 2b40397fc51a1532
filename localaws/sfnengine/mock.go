package sfnengine

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/transferflow/orchestrator/localaws/asl"
	"github.com/transferflow/orchestrator/localaws/sfnmock"
)

// Step Functions Local's mocked service integrations (package sfnmock): an execution started with the state
// machine ARN <arn>#<TestCase> runs with that test case of Options.MockConfig, and each of its Task states the test
// case names gets the mocked response's outcome for that invocation instead of calling its service.

// ErrMockTestCase is returned by StartExecution and StartSyncExecution for a <arn>#<TestCase> start that the mock
// configuration cannot run: the state machine has no test cases in it, or none of that name (AWS's API answers
// such problems with ValidationException; Step Functions Local documents no message of its own).
var ErrMockTestCase = errors.New("sfnengine: mock test case")

// mockRun is the test case an execution runs with and how many times each of its mocked states has been invoked.
type mockRun struct {
	name string
	// tc is nil when the mock configuration has no such test case any more (an execution restored or redriven
	// after a restart with another configuration): its Task states then fail with States.Runtime.
	tc *sfnmock.TestCase

	mu    sync.Mutex
	calls map[string]int // by state name: invocations so far, retries and Map iterations included
}

// next returns the index of the state's next invocation (0 for its first) and counts it.
func (m *mockRun) next(state string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.calls == nil {
		m.calls = map[string]int{}
	}
	i := m.calls[state]
	m.calls[state] = i + 1
	return i
}

// splitTestCase cuts the "#<TestCase>" suffix off a StartExecution state machine ARN when the engine has a mock
// configuration (found reports a '#'); without one the ARN is left as it is (AWS's answer to a '#' in it,
// StateMachineDoesNotExist).
func (e *Engine) splitTestCase(arn string) (base, testCase string, found bool) {
	if e.opts.MockConfig == nil {
		return arn, "", false
	}
	return strings.Cut(arn, "#")
}

// mockTestCase returns the run of the test case called name of the state machine smName, or ErrMockTestCase
// naming what is missing.
func (e *Engine) mockTestCase(smName, name string) (*mockRun, error) {
	c := e.opts.MockConfig
	if name == "" {
		return nil, fmt.Errorf("%w: the state machine ARN ends with '#' but names no test case after it", ErrMockTestCase)
	}
	if !c.HasStateMachine(smName) {
		return nil, fmt.Errorf("%w: the mock configuration %s has no test cases for the state machine %q (its StateMachines member names none of that name)",
			ErrMockTestCase, c.File(), smName)
	}
	tc := c.TestCase(smName, name)
	if tc == nil {
		return nil, fmt.Errorf("%w: the mock configuration %s has no test case %q for the state machine %q (its test cases: %s)",
			ErrMockTestCase, c.File(), name, smName, strings.Join(c.TestCases(smName), ", "))
	}
	return &mockRun{name: name, tc: tc}, nil
}

// setMock makes x run with the test case m, and records its name with the execution, so that a restored or
// redriven execution runs with it too (adoptMock).
func (x *execution) setMock(m *mockRun) {
	if m == nil {
		return
	}
	x.mock = m
	if !x.express {
		x.rec.ext().MockTestCase = m.name
	}
}

// adoptMock gives an execution read from the Store the test case it was started with.
func (x *execution) adoptMock(rec *ExecutionRecord) {
	if rec.Ext == nil || rec.Ext.MockTestCase == "" {
		return
	}
	m := &mockRun{name: rec.Ext.MockTestCase}
	if c := x.eng.opts.MockConfig; c != nil {
		m.tc = c.TestCase(x.m.sm.Name, m.name)
	}
	x.mock = m
}

// mockedResponse returns the mocked response of the Task state sr when the execution runs with a test case that
// mocks it; nil when it calls its service. Activity tasks are not service integrations and are never mocked.
func (x *execution) mockedResponse(sr *stateRun) (*sfnmock.Response, *failure) {
	m := x.mock
	if m == nil || sr.sp.integ.activity != "" {
		return nil, nil
	}
	if m.tc == nil {
		return nil, x.runtimeErr(sr, "The execution was started with the mock test case '%s', which the mock configuration no longer has.", m.name)
	}
	return m.tc.Response(sr.st.Name), nil
}

// runMocked ends a mocked Task invocation with the outcome its mocked response gives for it: TaskSucceeded with
// Return as the result, or TaskFailed with Throw's error and cause, which Retry and Catch then handle as a real
// failure. An invocation past the last one the response gives fails the execution (States.Runtime), as Step
// Functions Local's documentation says an invocation without a mocked response does.
func (x *execution) runMocked(sr *stateRun, r *sfnmock.Response, input any, th *thread) (any, *failure) {
	i := x.mock.next(sr.st.Name)
	o, ok := r.At(i)
	if !ok {
		return nil, x.runtimeErr(sr, "The mocked response '%s' of the test case '%s' has no outcome for invocation %d of the state: it gives invocations 0 to %d.",
			r.Name(), x.mock.name, i, r.Invocations()-1)
	}
	if o.Throw {
		return x.taskFailed(sr, th, &failure{Error: o.Error, Cause: o.Cause})
	}
	out, err := asl.Decode(o.Return)
	if err != nil { // sfnmock checked that it is JSON
		return nil, x.runtimeErr(sr, "The mocked response '%s' returns no JSON: %v", r.Name(), err)
	}
	return x.taskSucceeded(sr, input, out, marshal(out), th)
}
