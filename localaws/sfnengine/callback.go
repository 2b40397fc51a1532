package sfnengine

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/transferflow/orchestrator/localaws/asl"
	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// The callback pattern (".waitForTaskToken") and activities: a task that waits until SendTaskSuccess or
// SendTaskFailure names its token, or until its TimeoutSeconds or HeartbeatSeconds run out.

// Sentinel errors of the callback operations; sfnapi maps them to the API's error types.
var (
	ErrInvalidToken     = errors.New("sfnengine: invalid token")
	ErrTaskDoesNotExist = errors.New("sfnengine: task does not exist")
	ErrTaskTimedOut     = errors.New("sfnengine: task timed out")
	ErrInvalidOutput    = errors.New("sfnengine: invalid output")
	ErrActivityNotFound = errors.New("sfnengine: activity does not exist")
)

// History event types of callbacks and activities, as GetExecutionHistory names them.
const (
	EventTaskSubmitted          = "TaskSubmitted"
	EventActivityScheduled      = "ActivityScheduled"
	EventActivityScheduleFailed = "ActivityScheduleFailed"
	EventActivityStarted        = "ActivityStarted"
	EventActivitySucceeded      = "ActivitySucceeded"
	EventActivityFailed         = "ActivityFailed"
	EventActivityTimedOut       = "ActivityTimedOut"
)

// waitForTaskTokenSuffix makes a service integration wait for its task token.
const waitForTaskTokenSuffix = ".waitForTaskToken"

// CallbackCheckpoint records, in a Checkpoint, a top-level Task state that waits for its task token, so that a
// restarted engine waits for the same token (Restore) instead of running the task again. Times are the engine
// clock's; the task's timeout counts from ScheduledAt, its heartbeat from the later of HeartbeatFrom and the restart.
type CallbackCheckpoint struct {
	Token            string    `json:"token"`
	EnteredEventID   int64     `json:"enteredEventId"`
	EnteredTime      time.Time `json:"enteredTime"`
	Retry            int       `json:"retry,omitempty"`
	Attempts         []int64   `json:"attempts,omitempty"`
	ScheduledAt      time.Time `json:"scheduledAt"`
	HeartbeatFrom    time.Time `json:"heartbeatFrom"`
	TimeoutSeconds   int64     `json:"timeoutSeconds,omitempty"`
	HeartbeatSeconds int64     `json:"heartbeatSeconds,omitempty"`
	// Activity is the activity's ARN for an activity task; Input is its input, Started whether a worker has it.
	Activity string `json:"activity,omitempty"`
	Input    string `json:"input,omitempty"`
	Started  bool   `json:"started,omitempty"`
}

// task tokens

// tokenVersion is the first byte of every token the engine issues.
const tokenVersion = 1

// tokenSecretLen is the number of random bytes in a token: what makes it unguessable.
const tokenSecretLen = 24

// newTaskToken returns a new task token for a task of the execution: the execution's ARN and random bytes, in
// URL-safe base64. The ARN makes it self-identifying (the engine finds the execution, even one restored after a
// restart); the random bytes make it unguessable.
func newTaskToken(execArn string) string {
	b := make([]byte, 0, 1+len(execArn)+1+tokenSecretLen)
	b = append(b, tokenVersion)
	b = append(b, execArn...)
	b = append(b, 0)
	var secret [tokenSecretLen]byte
	_, _ = rand.Read(secret[:])
	b = append(b, secret[:]...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// parseTaskToken returns the execution ARN of a token the engine issued; ok is false when token is not one.
func parseTaskToken(token string) (execArn string, ok bool) {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(b) < 2+tokenSecretLen || b[0] != tokenVersion {
		return "", false
	}
	body := b[1 : len(b)-tokenSecretLen]
	if body[len(body)-1] != 0 {
		return "", false
	}
	arn := string(body[:len(body)-1])
	if _, err := arnName(arn, "execution"); err != nil {
		return "", false
	}
	return arn, true
}

// waiting tasks

// callbackKind says what a message to a waiting task is.
type callbackKind int

const (
	callbackSuccess callbackKind = iota
	callbackFailure
	callbackHeartbeat
	callbackStarted // an activity worker took the task (GetActivityTask)
)

// callbackMsg is a message to a waiting task.
type callbackMsg struct {
	kind   callbackKind
	output any
	fail   *failure
	worker string
	at     time.Time // when it was posted, on the engine's clock
}

// taskWait is a task waiting for its token. Messages are queued in the order they were posted; the task's goroutine
// takes them.
type taskWait struct {
	token  string
	mu     sync.Mutex
	msgs   []callbackMsg
	done   bool          // a success or failure was posted
	notify chan struct{} // holds a value while msgs is not empty
}

func newTaskWait(token string) *taskWait {
	return &taskWait{token: token, notify: make(chan struct{}, 1)}
}

// post queues m; it reports false when the task already has its result.
func (w *taskWait) post(m callbackMsg) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return false
	}
	if m.kind == callbackSuccess || m.kind == callbackFailure {
		w.done = true
	}
	w.msgs = append(w.msgs, m)
	select {
	case w.notify <- struct{}{}:
	default:
	}
	return true
}

// close refuses later messages: the task no longer waits (a callback sent after this is TaskTimedOut).
func (w *taskWait) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done = true
}

// take returns the queued messages.
func (w *taskWait) take() []callbackMsg {
	w.mu.Lock()
	defer w.mu.Unlock()
	msgs := w.msgs
	w.msgs = nil
	return msgs
}

// callbackRegistry holds the engine's waiting tasks by token. Its zero value is ready to use.
type callbackRegistry struct {
	mu      sync.Mutex
	waiting map[string]*taskWait
}

func (r *callbackRegistry) add(w *taskWait) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.waiting == nil {
		r.waiting = map[string]*taskWait{}
	}
	r.waiting[w.token] = w
}

func (r *callbackRegistry) get(token string) *taskWait {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.waiting[token]
}

func (r *callbackRegistry) remove(w *taskWait) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.waiting[w.token] == w {
		delete(r.waiting, w.token)
	}
}

// resolveCallback resolves the Task resources of this file: a service integration with ".waitForTaskToken" and an
// activity ARN. ok is false for any other resource.
func resolveCallback(arn string) (integ integration, ok bool, err error) {
	if base, found := strings.CutSuffix(arn, waitForTaskTokenSuffix); found && strings.HasPrefix(arn, statesPrefix) {
		inner, err := resolveResource(base)
		// AWS offers the callback pattern for its optimized integrations but DynamoDB's.
		if err != nil || inner.resourceType == "" || inner.resourceType == "dynamodb" || inner.sync {
			return integration{}, true, fmt.Errorf("the resource %q is not supported by the local engine", arn)
		}
		inner.resource += waitForTaskTokenSuffix
		inner.waitForToken = true
		return inner, true, nil
	}
	if _, err := arnName(arn, "activity"); err == nil {
		return integration{resource: arn, activity: arn}, true, nil
	}
	return integration{}, false, nil
}

// openTaskWait issues the task token of a callback or activity task attempt and registers its wait, before
// Parameters are evaluated (they may read $$.Task.Token) and before the call (a callback may come before the call
// returns). It returns nil for other tasks.
func (x *execution) openTaskWait(sr *stateRun) *taskWait {
	if !sr.sp.integ.waitForToken && sr.sp.integ.activity == "" {
		return nil
	}
	w := newTaskWait(newTaskToken(x.rec.Arn))
	x.eng.callbacks.add(w)
	sr.token, sr.wait = w.token, w
	sr.ctx, sr.ctxState = nil, nil // $$.Task.Token changed
	return w
}

// closeTaskWait ends a task's wait: later callbacks with its token are TaskTimedOut.
func (x *execution) closeTaskWait(w *taskWait) {
	x.eng.callbacks.remove(w)
	x.eng.activities.unqueue(w.token)
}

// taskContext returns $$ with its Task member, for a task that has a token.
func (x *execution) taskContext(sr *stateRun) *jsonvalue.Object {
	exec, sm := x.contextConstants()
	obj := jsonvalue.FromPairs("Execution", exec, "StateMachine", sm, "State", x.contextState(sr),
		"Task", jsonvalue.FromPairs("Token", sr.token))
	sr.ctx = obj
	return obj
}

// heartbeatSeconds returns the task's HeartbeatSeconds, or the value of its HeartbeatSecondsPath.
func (x *execution) heartbeatSeconds(sr *stateRun, eff any) (int64, *failure) {
	st := sr.st
	if sr.sp.jHeartbeat != nil {
		return x.evalJInt(sr, sr.sp.jHeartbeat, true)
	}
	if st.HeartbeatSecondsPath == "" {
		return st.HeartbeatSeconds, nil
	}
	return x.longParam(sr, "HeartbeatSecondsPath", st.HeartbeatSecondsPath, eff, 1)
}

// callAndWait runs a callback task's call, records TaskSubmitted with its result and waits for the token. A failed
// call is returned as the outcome's failure (the caller records TaskFailed), as is a SendTaskFailure; a timeout is
// recorded here (TaskTimedOut) and returned as the failure.
func (x *execution) callAndWait(ctx context.Context, sr *stateRun, integ integration, params any, timeout, heartbeat int64, th *thread) (taskOutcome, *failure) {
	scheduled := x.eng.opts.Clock.Now()
	var res taskOutcome
	if timeout > 0 {
		var fail *failure
		if res, fail = x.callWithTimeout(ctx, sr, integ, params, timeout, th); fail != nil {
			return taskOutcome{}, fail
		}
	} else {
		res.out, res.fail = safeCall(ctx, x, integ, params)
		if ctx.Err() != nil {
			return taskOutcome{}, stopped
		}
	}
	if res.fail != nil {
		return res, nil
	}
	var text string
	if lr, ok := res.out.(lazyResult); ok {
		text = lr.text()
	} else {
		text = marshal(res.out)
	}
	x.emit(th, true, EventTaskSubmitted, "taskSubmittedEventDetails", map[string]any{"resourceType": sr.sp.resourceType,
		"resource": sr.sp.resource, "output": text, "outputDetails": notTruncated})
	cb := &CallbackCheckpoint{Token: sr.token, ScheduledAt: scheduled, HeartbeatFrom: x.eng.opts.Clock.Now(),
		TimeoutSeconds: timeout, HeartbeatSeconds: heartbeat}
	x.saveWait(sr, cb, th)
	return x.awaitCallback(ctx, sr, sr.wait, cb, th)
}

// awaitCallback waits for the task's token: it returns the callback's output or failure as the outcome, or, when
// the task's timeout or heartbeat runs out first, records the timeout (TaskTimedOut or ActivityTimedOut) and
// returns States.Timeout as the failure; stopped when the execution ends first. Messages that came before a timer
// fired are taken first, and a heartbeat counts from when it was sent, so the outcome does not depend on when this
// goroutine runs.
func (x *execution) awaitCallback(ctx context.Context, sr *stateRun, w *taskWait, cb *CallbackCheckpoint, th *thread) (taskOutcome, *failure) {
	clock := x.eng.opts.Clock
	var timeoutC <-chan time.Time
	if cb.TimeoutSeconds > 0 {
		timeoutC = clock.After(cb.ScheduledAt.Add(time.Duration(cb.TimeoutSeconds) * time.Second).Sub(clock.Now()))
	}
	hb := time.Duration(cb.HeartbeatSeconds) * time.Second
	lastBeat := cb.HeartbeatFrom
	var beatC <-chan time.Time
	armBeat := func() {
		if hb > 0 && (cb.Activity == "" || cb.Started) {
			beatC = clock.After(lastBeat.Add(hb).Sub(clock.Now()))
		}
	}
	armBeat()
	// handle takes the queued messages; done reports a result.
	handle := func() (res taskOutcome, done bool) {
		for _, m := range w.take() {
			switch m.kind {
			case callbackSuccess:
				return taskOutcome{out: m.output}, true
			case callbackFailure:
				return taskOutcome{fail: m.fail}, true
			case callbackHeartbeat:
				if m.at.After(lastBeat) {
					lastBeat = m.at
				}
			case callbackStarted:
				x.emitAt(m.at, th, true, EventActivityStarted, "activityStartedEventDetails", map[string]any{"workerName": m.worker})
				started := *cb
				started.Started, started.HeartbeatFrom = true, m.at
				cb = &started
				lastBeat = m.at
				x.saveWait(sr, cb, th)
				armBeat()
			}
		}
		return taskOutcome{}, false
	}
	for {
		if res, done := handle(); done {
			return res, nil
		}
		select {
		case <-w.notify:
		case <-timeoutC:
			w.close()
			if res, done := handle(); done {
				return res, nil
			}
			return taskOutcome{}, x.taskTimedOut(sr, cb, th, false)
		case <-beatC:
			if res, done := handle(); done {
				return res, nil
			}
			if due := lastBeat.Add(hb); due.After(clock.Now()) {
				beatC = clock.After(due.Sub(clock.Now())) // a heartbeat came meanwhile
				continue
			}
			w.close()
			if res, done := handle(); done {
				return res, nil
			}
			return taskOutcome{}, x.taskTimedOut(sr, cb, th, true)
		case <-ctx.Done():
			w.close()
			return taskOutcome{}, stopped
		}
	}
}

// taskTimedOut records a waiting task's timeout and returns its failure. A heartbeat timeout is recorded as AWS
// records it, with the error States.Timeout; Retry and Catch also match it with States.HeartbeatTimeout.
func (x *execution) taskTimedOut(sr *stateRun, cb *CallbackCheckpoint, th *thread, heartbeat bool) *failure {
	f := &failure{Error: ErrNameTimeout, heartbeat: heartbeat}
	if cb.Activity != "" {
		x.emit(th, true, EventActivityTimedOut, "activityTimedOutEventDetails", map[string]any{"error": f.Error})
	} else {
		x.emit(th, true, EventTaskTimedOut, "taskTimedOutEventDetails", map[string]any{"resourceType": sr.sp.resourceType,
			"resource": sr.sp.resource, "error": f.Error})
	}
	return f
}

// matchesFailure is matches for a failure: a heartbeat timeout, named States.Timeout, is also matched by
// States.HeartbeatTimeout.
func matchesFailure(names []string, f *failure, task bool) bool {
	if f.heartbeat && slices.Contains(names, ErrNameHeartbeatTimeout) {
		return true
	}
	return matches(names, f.Error, task)
}

// isTopLevel reports whether the state belongs to the machine's own States (not to a branch or an iteration):
// only those are checkpointed.
func (x *execution) isTopLevel(st *asl.State) bool { return x.m.def.States[st.Name] == st }

// saveWait saves the execution with a checkpoint at the waiting task, when the engine checkpoints (Options.
// CheckpointEveryState) and the task is a top-level state: a restarted engine then waits for the same token.
func (x *execution) saveWait(sr *stateRun, cb *CallbackCheckpoint, th *thread) {
	if !x.eng.opts.CheckpointEveryState || !x.isTopLevel(sr.st) {
		return
	}
	saved := *cb
	saved.EnteredEventID, saved.EnteredTime, saved.Retry = sr.enteredID, sr.entered, sr.retry
	saved.Attempts = slices.Clone(sr.attempts)
	x.mu.Lock()
	prev := x.rec.Checkpoint
	if x.closed || x.ctx.Err() != nil || prev == nil || prev.State != sr.st.Name {
		x.mu.Unlock()
		return
	}
	x.rec.Checkpoint = &Checkpoint{State: prev.State, Input: prev.Input, PreviousEventID: th.prev, Callback: &saved,
		Variables: prev.Variables}
	x.mu.Unlock()
	if err := x.save(context.Background()); err != nil {
		x.eng.opts.Logger.Error("save waiting task", "executionArn", x.rec.Arn, "error", err)
	}
}

// restoreWait registers, while Restore loads the execution, the wait of a task that was waiting for its token, so
// that a callback sent as soon as Restore returns finds it; an activity task no worker had is queued again.
func (x *execution) restoreWait(cp *Checkpoint) {
	cb := cp.Callback
	if cb == nil {
		return
	}
	w := newTaskWait(cb.Token)
	x.eng.callbacks.add(w)
	if cb.Activity != "" && !cb.Started {
		x.eng.activities.enqueue(cb.Activity, &pendingTask{token: cb.Token, input: cb.Input, wait: w})
	}
}

// resumeWaiting continues a restored execution at a task that was waiting for its token: it waits for the same
// token (nothing is called again), then finishes the state with its Retry and Catch, and runs on from there.
func (x *execution) resumeWaiting(ctx context.Context, cp Checkpoint, input any, th *thread) (out any, fail *failure) {
	defer func() {
		if r := recover(); r != nil {
			x.eng.opts.Logger.Error("engine panic", "executionArn", x.rec.Arn, "panic", fmt.Sprint(r))
			out, fail = nil, runtimeFailure(fmt.Sprintf("internal error in the local engine: %v", r))
		}
	}()
	cb := cp.Callback
	st := x.m.def.States[cp.State]
	sr := &stateRun{st: st, sp: x.prog.states[st], enteredID: cb.EnteredEventID, entered: cb.EnteredTime,
		retry: cb.Retry, attempts: cb.Attempts, resume: cb, token: cb.Token, vars: x.vars, statesInput: input, th: th}
	out, caught, next, fail := x.runWithRetry(ctx, sr, input, th)
	if fail != nil {
		return nil, fail
	}
	if !caught {
		next = st.Next
	}
	next, out, _, fail = x.exit(sr, th, next, out, input, marshal(input))
	if fail != nil || next == "" {
		return out, fail
	}
	return x.runMachine(ctx, x.m.def, next, out, th, x.vars)
}

// resumeTask is attemptTask for the attempt that was waiting when the engine stopped.
func (x *execution) resumeTask(ctx context.Context, sr *stateRun, input any, th *thread) (any, *failure) {
	cb := sr.resume
	sr.resume = nil
	w := x.eng.callbacks.get(cb.Token)
	if w == nil {
		w = newTaskWait(cb.Token)
		x.eng.callbacks.add(w)
	}
	defer x.closeTaskWait(w)
	sr.wait = w
	hb := *cb
	if now := x.eng.opts.Clock.Now(); now.After(hb.HeartbeatFrom) {
		// Heartbeats sent while the engine was down were not heard: the heartbeat counts again from the restart.
		hb.HeartbeatFrom = now
	}
	res, fail := x.awaitCallback(ctx, sr, w, &hb, th)
	if fail != nil {
		return nil, fail
	}
	if cb.Activity != "" {
		return x.finishActivity(sr, input, res, th)
	}
	if res.fail != nil {
		return x.taskFailed(sr, th, res.fail)
	}
	return x.taskSucceeded(sr, input, res.out, marshal(res.out), th)
}

// the API's callback operations

// SendTaskSuccess completes the task of token with output, a JSON text. It returns ErrInvalidToken for a token the
// engine did not issue, ErrInvalidOutput when output is not JSON, ErrTaskTimedOut when the task is no longer
// waiting (it timed out, was completed, or its execution ended) and ErrTaskDoesNotExist when its execution is not
// known.
func (e *Engine) SendTaskSuccess(_ context.Context, token, output string) error {
	arn, ok := parseTaskToken(token)
	if !ok {
		return ErrInvalidToken
	}
	v, err := jsonvalue.DecodeString(output)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidOutput, err)
	}
	return e.deliver(arn, token, callbackMsg{kind: callbackSuccess, output: v})
}

// SendTaskFailure fails the task of token with the error name and cause; Retry and Catch apply. Its errors are
// those of SendTaskSuccess.
func (e *Engine) SendTaskFailure(_ context.Context, token, errName, cause string) error {
	arn, ok := parseTaskToken(token)
	if !ok {
		return ErrInvalidToken
	}
	return e.deliver(arn, token, callbackMsg{kind: callbackFailure, fail: &failure{Error: errName, Cause: cause}})
}

// SendTaskHeartbeat restarts the heartbeat clock of the task of token (HeartbeatSeconds). Its errors are those of
// SendTaskSuccess.
func (e *Engine) SendTaskHeartbeat(_ context.Context, token string) error {
	arn, ok := parseTaskToken(token)
	if !ok {
		return ErrInvalidToken
	}
	return e.deliver(arn, token, callbackMsg{kind: callbackHeartbeat})
}

// deliver posts m to the task of token, whose execution is arn.
func (e *Engine) deliver(arn, token string, m callbackMsg) error {
	m.at = e.opts.Clock.Now()
	if w := e.callbacks.get(token); w != nil && w.post(m) {
		return nil
	}
	if _, _, err := e.lookup(arn); err != nil {
		return ErrTaskDoesNotExist
	}
	return ErrTaskTimedOut
}
