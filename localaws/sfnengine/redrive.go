package sfnengine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/transferflow/orchestrator/localaws/asl"
)

// ErrExecutionNotRedrivable is returned by RedriveExecution for an execution that cannot be redriven; the error's
// text after it is the reason, as DescribeExecution's redriveStatusReason gives it.
var ErrExecutionNotRedrivable = errors.New("sfnengine: execution not redrivable")

// Redrive statuses of DescribeExecution (redriveStatus).
const (
	RedriveStatusRedrivable    = "REDRIVABLE"
	RedriveStatusNotRedrivable = "NOT_REDRIVABLE"
	// RedriveStatusRedrivableByMapRun is that of a child workflow execution of a Distributed Map that did not
	// succeed: it runs again when its parent execution, and with it its Map Run, is redriven.
	RedriveStatusRedrivableByMapRun = "REDRIVABLE_BY_MAP_RUN"
)

// EventExecutionRedriven is the history event a redrive appends, with executionRedrivenEventDetails {redriveCount}.
const EventExecutionRedriven = "ExecutionRedriven"

// Why an execution cannot be redriven: AWS's redriveStatusReason texts, and the local engine's own for the cases
// AWS does not word (a definition that changed since an execution whose record was saved before the engine kept
// the revision it started with; a deleted version).
const (
	reasonRunning        = "Execution is RUNNING and cannot be redriven"
	reasonSucceeded      = "Execution is SUCCEEDED and cannot be redriven"
	reasonHistoryLimit   = "Execution history event limit exceeded"
	reasonMaxTime        = "Execution has exceeded the max execution time"
	reasonPeriod         = "Execution redrivable period exceeded"
	reasonDeleted        = "State machine is in DELETING status."
	reasonBeforeRedrive  = "Execution was started before the launch of RedriveExecution"
	reasonDefinitionEdit = "State machine definition has changed since the execution started; start a new execution"
	reasonVersionGone    = "State machine version the execution ran has been deleted"
	reasonMapRunChild    = "Execution is a child workflow execution of a Map Run; redrive its parent execution"
)

const (
	// redrivablePeriod is how long after its stop date an execution can be redriven (14 days on AWS).
	redrivablePeriod = 14 * 24 * time.Hour
	// maxExecutionTime is the longest an execution may stay open, redrives included (one year on AWS).
	maxExecutionTime = 365 * 24 * time.Hour
	// redriveTokenLife and redriveTokens: a clientToken answers idempotently for 15 minutes, the last 10 per
	// execution (the API model's words).
	redriveTokenLife = 15 * time.Minute
	redriveTokens    = 10
)

// RedrivePoint is where a redrive resumes an execution that did not succeed: the top-level state that was running
// when it failed, timed out or was aborted, and that state's input. When the state is a Parallel or Map, Succeeded
// holds the outputs of the branches or iterations that had succeeded in its last attempt: a redrive runs only the
// others, as AWS does for inline Map and Parallel states.
type RedrivePoint struct {
	State     string         `json:"state"`
	Input     string         `json:"input"`
	Succeeded []BranchOutput `json:"succeeded,omitempty"`
	// MapRunArn is the Map Run of the Distributed Map State was running: a redrive redrives it.
	MapRunArn string `json:"mapRunArn,omitempty"`
	// Variables is the JSON object of the workflow variables (the machine's own scope) when State stopped: the
	// redrive resumes with them.
	Variables string `json:"variables,omitempty"`
}

// BranchOutput is the output (JSON text) of the Parallel branch or Map iteration with that index.
type BranchOutput struct {
	Index  int    `json:"index"`
	Output string `json:"output"`
}

// redoPoint is a RedrivePoint decoded for the run that resumes there.
type redoPoint struct {
	state     string
	outputs   map[int]any
	mapRunArn string // the Map Run to redrive; emptied once it is
}

// redriveToken is a clientToken of a redrive that succeeded.
type redriveToken struct {
	token string
	date  time.Time // the redrive's date, answered again
	used  time.Time
}

// createdAfter reports whether the machine was created after rec started: rec ran a state machine of the same name
// that was deleted since.
func (m *machine) createdAfter(rec *ExecutionRecord) bool {
	return m.sm.CreationDate.After(rec.StartDate)
}

// redrivePoint returns where a redrive of the execution, which is closing without success, resumes. It is called
// from the execution's goroutine.
func (x *execution) redrivePoint() *RedrivePoint {
	ex := x.extra
	if ex == nil || ex.stopState == "" { // stopped before its first state (or by a panic of the engine)
		return &RedrivePoint{State: x.m.def.StartAt, Input: x.rec.Input}
	}
	p := &RedrivePoint{State: ex.stopState, Input: marshal(ex.stopInput), Variables: x.vars.text()}
	if pr := ex.partial; pr != nil && pr.state == ex.stopState {
		p.Succeeded, p.MapRunArn = pr.outputs(), pr.mapRun
	}
	return p
}

// stoppedAt records, from the execution's goroutine, the top-level state it stopped in without success, and its
// input: where a redrive resumes.
func (x *execution) stoppedAt(state string, input any) {
	ex := x.ext()
	ex.stopState, ex.stopInput = state, input
}

// keepSucceeded records, when st is a top-level Parallel or Map state whose attempt did not succeed, the outputs of
// its branches or iterations that did, for a redrive to reuse.
func (x *execution) keepSucceeded(st *asl.State, results []any, ok func(int) bool) {
	if x.m.def.States[st.Name] != st {
		return
	}
	var done []int
	for i := range results {
		if ok(i) {
			done = append(done, i)
		}
	}
	x.ext().partial = &partialRun{state: st.Name, outputs: func() []BranchOutput {
		// The outputs a redrive would reuse are bounded as the state's result is: past MaxPayloadBytes in all, the
		// state could not succeed with them (States.DataLimitExceeded), so none is kept and a redrive reruns the
		// whole state. This also keeps a hostile Map's thousands of large outputs out of the execution's record.
		kept := make([]BranchOutput, len(done))
		total := 0
		for k, i := range done {
			kept[k] = BranchOutput{Index: i, Output: marshal(results[i])}
			if total += len(kept[k].Output); total > MaxPayloadBytes {
				return nil
			}
		}
		return kept
	}}
}

// forgetPartial drops what an earlier attempt of st, a Parallel or Map state, left for a redrive (keepSucceeded),
// once an attempt succeeded: were its StateExited event then dropped by a stop, a redrive would otherwise reuse the
// failed attempt's branch outputs, or redrive its Map Run, rather than run the state again.
func (x *execution) forgetPartial(st *asl.State) {
	if x.m.def.States[st.Name] != st { // not top-level: keepSucceeded kept nothing for it
		return
	}
	if ex := x.extra; ex != nil && ex.partial != nil && ex.partial.state == st.Name {
		ex.partial = nil
	}
}

// redone returns the outputs of the branches or iterations of st that a redrive skips: those that had succeeded,
// when the execution was redriven at st, a top-level state.
func (x *execution) redone(st *asl.State) map[int]any {
	if x.m.def.States[st.Name] != st { // not top-level: iterations may be running, which set x.extra
		return nil
	}
	ex := x.extra // top-level: read and written by the execution's goroutine only
	if ex == nil || ex.redo == nil || ex.redo.state != st.Name {
		return nil
	}
	return ex.redo.outputs
}

// redriveStatus returns whether rec, with history events, can be redriven now, and why not.
func (e *Engine) redriveStatus(rec *ExecutionRecord, history int) (string, string) {
	if rec.MapRunArn() != "" {
		switch rec.Status {
		case StatusRunning:
			return RedriveStatusNotRedrivable, reasonRunning
		case StatusSucceeded:
			return RedriveStatusNotRedrivable, reasonSucceeded
		}
		return RedriveStatusRedrivableByMapRun, ""
	}
	e.mu.Lock()
	_, changed := e.executionMachineLocked(rec)
	e.mu.Unlock()
	now := e.opts.Clock.Now()
	reason := ""
	switch {
	case rec.Status == StatusRunning:
		reason = reasonRunning
	case rec.Status == StatusSucceeded:
		reason = reasonSucceeded
	case changed == reasonDeleted || changed == reasonVersionGone:
		reason = changed
	case rec.RedrivePoint() == nil:
		reason = reasonBeforeRedrive
	case changed != "":
		reason = changed
	case history >= e.opts.MaxHistoryEvents-1:
		reason = reasonHistoryLimit
	case now.Sub(rec.StartDate) >= maxExecutionTime:
		reason = reasonMaxTime
	case rec.StopDate != nil && now.Sub(*rec.StopDate) > redrivablePeriod:
		reason = reasonPeriod
	}
	if reason != "" {
		return RedriveStatusNotRedrivable, reason
	}
	return RedriveStatusRedrivable, ""
}

// RedriveStatus returns DescribeExecution's redriveStatus of rec, a record DescribeExecution returned (its History
// included), and, when it is NOT_REDRIVABLE, the reason (redriveStatusReason): whether RedriveExecution would redrive
// it now. It is computed when asked, not stored.
func (e *Engine) RedriveStatus(rec *ExecutionRecord) (status, reason string) {
	return e.redriveStatus(rec, len(rec.History))
}

// RedriveExecution restarts an execution that failed, timed out or was aborted from the top-level state where it
// stopped, with the input that state had; states that succeeded are not run again, nor the branches or iterations of
// a Parallel or Map state that succeeded. The history goes on after the old events with ExecutionRedriven; the
// execution's redrive count goes up and its timeout starts again. It returns the redrive's date. A clientToken used
// by one of the last 10 redrives of the execution, less than 15 minutes ago, returns that redrive's date and changes
// nothing. It returns ErrInvalidArn, ErrExecutionDoesNotExist, or ErrExecutionNotRedrivable with the reason (see
// RedriveStatus). Like StartExecution, it answers once the redrive is saved.
func (e *Engine) RedriveExecution(ctx context.Context, arn, clientToken string) (time.Time, error) {
	x, c, err := e.lookup(arn)
	if errors.Is(err, ErrExecutionDoesNotExist) && e.child(arn) != nil {
		return time.Time{}, fmt.Errorf("%w: %s", ErrExecutionNotRedrivable, reasonMapRunChild)
	}
	if err != nil {
		return time.Time{}, err
	}
	if d, ok := e.redriveTokenDate(arn, clientToken); ok {
		return d, nil
	}
	var rec *ExecutionRecord
	if x != nil {
		rec = x.snapshot()
	} else if rec, err = e.opts.Store.Execution(ctx, arn); err != nil {
		return time.Time{}, fmt.Errorf("redrive %s: %w", arn, err)
	}
	if status, reason := e.redriveStatus(rec, len(rec.History)); status != RedriveStatusRedrivable {
		// A call with the same token may have redriven it between the lookup and the read of its record (which
		// then shows the redrive running): that call's date is the answer, as for any retry with the token.
		if d, ok := e.redriveTokenDate(arn, clientToken); ok {
			return d, nil
		}
		return time.Time{}, fmt.Errorf("%w: %s", ErrExecutionNotRedrivable, reason)
	}
	at := *rec.RedrivePoint()
	e.mu.Lock()
	m, reason := e.executionMachineLocked(rec)
	e.mu.Unlock()
	if reason != "" {
		return time.Time{}, fmt.Errorf("%w: %s", ErrExecutionNotRedrivable, reason)
	}
	if m.def.States[at.State] == nil {
		return time.Time{}, fmt.Errorf("%w: %s", ErrExecutionNotRedrivable, reasonDefinitionEdit)
	}
	input, err := asl.Decode([]byte(at.Input))
	if err != nil {
		return time.Time{}, fmt.Errorf("redrive %s: decode the input of %s: %w", arn, at.State, err)
	}
	vars, err := restoreScope(at.Variables)
	if err != nil {
		return time.Time{}, fmt.Errorf("redrive %s: %w", arn, err)
	}
	redo, err := newRedoPoint(&at)
	if err != nil {
		return time.Time{}, fmt.Errorf("redrive %s: %w", arn, err)
	}
	execInput, err := asl.Decode([]byte(rec.Input))
	if err != nil {
		return time.Time{}, fmt.Errorf("redrive %s: decode its input: %w", arn, err)
	}

	e.mu.Lock()
	if now, reason := e.executionMachineLocked(rec); now != m { // updated or deleted since it was read
		if reason != "" {
			e.mu.Unlock()
			return time.Time{}, fmt.Errorf("%w: %s", ErrExecutionNotRedrivable, reason)
		}
		m = now // its role changed: the redrive runs with the current one
	}
	if cur := e.closed[arn]; c == nil || cur != c || c.forgetting || e.exec[arn] != nil {
		// Redriven by another call since it was read (or forgotten: then it no longer exists).
		if d, ok := e.redriveTokenDateLocked(arn, clientToken); ok { // that call had the same token
			e.mu.Unlock()
			return d, nil
		}
		e.mu.Unlock()
		if c != nil && c.forgetting {
			return time.Time{}, fmt.Errorf("%w: %s", ErrExecutionDoesNotExist, arn)
		}
		return time.Time{}, fmt.Errorf("%w: %s", ErrExecutionNotRedrivable, reasonRunning)
	}
	now := e.opts.Clock.Now()
	nx := newExecution(e, m, arn, rec.Name, rec.Input, execInput)
	nx.adopt(rec)
	r := nx.rec
	r.Status, r.StopDate, r.Output, r.Error, r.Cause, r.Checkpoint = StatusRunning, nil, nil, nil, nil, nil
	rx := r.ext()
	rx.RedriveCount++
	rx.RedriveDate = &now
	nx.ext().redo = redo
	th := &thread{prev: int64(nx.log.n)}
	nx.emitAt(now, th, true, EventExecutionRedriven, "executionRedrivenEventDetails",
		map[string]any{"redriveCount": rx.RedriveCount})
	c.reopened = true
	e.reopened++
	delete(e.closed, arn)
	e.rememberRedriveTokenLocked(arn, clientToken, now)
	e.exec[arn] = nx
	e.wg.Add(1)
	e.mu.Unlock()

	if err := nx.save(ctx); err != nil {
		e.mu.Lock()
		delete(e.exec, arn)
		c.reopened = false
		e.reopened--
		e.closed[arn] = c
		e.forgetRedriveTokenLocked(arn, clientToken)
		e.mu.Unlock()
		nx.cancel(nil)
		close(nx.done)
		e.wg.Done()
		return time.Time{}, fmt.Errorf("save the redrive of %s: %w", arn, err)
	}
	go func() {
		defer e.wg.Done()
		nx.runRedriven(at.State, input, th, vars)
	}()
	return now, nil
}

// runRedriven runs a redriven execution from the state it stopped at.
func (x *execution) runRedriven(state string, input any, th *thread, vars *scope) {
	defer close(x.done)
	if stop := x.startTimer(x.m.def.TimeoutSeconds); stop != nil {
		defer stop()
	}
	x.publish()
	x.vars = vars
	out, fail := x.safeRunMachine(x.ctx, x.m.def, state, input, th, vars)
	x.finish(th, out, fail)
}

// redriveTokenDate returns the date of the redrive of arn that used token, when it is still answered again.
func (e *Engine) redriveTokenDate(arn, token string) (time.Time, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.redriveTokenDateLocked(arn, token)
}

func (e *Engine) redriveTokenDateLocked(arn, token string) (time.Time, bool) {
	if token == "" {
		return time.Time{}, false
	}
	now := e.opts.Clock.Now()
	for _, t := range e.redrives[arn] {
		if t.token == token && now.Sub(t.used) <= redriveTokenLife {
			return t.date, true
		}
	}
	return time.Time{}, false
}

// rememberRedriveTokenLocked keeps the token of a redrive, the last redriveTokens of them per execution.
func (e *Engine) rememberRedriveTokenLocked(arn, token string, date time.Time) {
	if token == "" {
		return
	}
	if e.redrives == nil {
		e.redrives = map[string][]redriveToken{}
	}
	ts := append(e.redrives[arn], redriveToken{token: token, date: date, used: date})
	if len(ts) > redriveTokens {
		ts = ts[len(ts)-redriveTokens:]
	}
	e.redrives[arn] = ts
}

// restartRedriven returns, for a restored running execution without a checkpoint that was redriven, the function
// that resumes it where its redrive did; nil when it was not redriven or its redrive point does not decode.
func (e *Engine) restartRedriven(x *execution, r *ExecutionRecord) func() {
	at := r.RedrivePoint()
	if r.RedriveCount() == 0 || at == nil {
		return nil
	}
	if _, ok := x.m.def.States[at.State]; !ok {
		return nil
	}
	input, err := asl.Decode([]byte(at.Input))
	if err != nil {
		return nil
	}
	vars, err := restoreScope(at.Variables)
	if err != nil {
		return nil
	}
	x.vars = vars
	redo, err := newRedoPoint(at)
	if err != nil {
		return nil
	}
	x.ext().redo = redo
	th := &thread{prev: x.lastEventID()}
	return func() {
		defer close(x.done)
		if stop := x.startTimer(x.m.def.TimeoutSeconds); stop != nil {
			defer stop()
		}
		out, fail := x.safeRunMachine(x.ctx, x.m.def, at.State, input, th, vars)
		x.finish(th, out, fail)
	}
}

// forgetRedriveTokenLocked drops the token of a redrive that could not be saved.
func (e *Engine) forgetRedriveTokenLocked(arn, token string) {
	ts := e.redrives[arn]
	for i, t := range ts {
		if t.token == token {
			e.redrives[arn] = append(ts[:i:i], ts[i+1:]...)
			return
		}
	}
}

// newRedoPoint decodes a redrive point for the run that resumes there.
func newRedoPoint(at *RedrivePoint) (*redoPoint, error) {
	redo := &redoPoint{state: at.State, outputs: map[int]any{}, mapRunArn: at.MapRunArn}
	for _, b := range at.Succeeded {
		v, err := asl.Decode([]byte(b.Output))
		if err != nil {
			return nil, fmt.Errorf("decode the output of %s[%d]: %w", at.State, b.Index, err)
		}
		redo.outputs[b.Index] = v
	}
	return redo, nil
}

// redriveCheckpoint reports whether cp, the checkpoint of a restored execution with history h, is the one taken as
// its last redrive entered the state it resumed at: that state has not ended since, so a resumption there skips
// what the redrive skipped (the branches or iterations that had succeeded).
func redriveCheckpoint(r *ExecutionRecord, h []Event, cp *Checkpoint) bool {
	at := r.RedrivePoint()
	if r.RedriveCount() == 0 || at == nil || cp.State != at.State {
		return false
	}
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Type == EventExecutionRedriven {
			return h[i].ID == cp.PreviousEventID
		}
	}
	return false
}
