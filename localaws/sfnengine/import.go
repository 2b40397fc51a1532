package sfnengine

import (
	"context"
	"fmt"
	"time"
)

// ClosedExecution is an execution that ran elsewhere, or before the engine started, and ended without succeeding:
// what ImportClosedExecution adds.
type ClosedExecution struct {
	// StateMachineArn is a standard state machine of the engine.
	StateMachineArn string
	Name            string
	// Input is its input; empty: "{}".
	Input string
	// Status is StatusFailed, StatusTimedOut or StatusAborted; Error and Cause are what it ended with.
	Status       string
	Error, Cause string
	// Ran is how long it ran, up to the moment of the import, when it ended.
	Ran time.Duration
}

// ImportClosedExecution adds an execution that has already ended, as a fixture describes one (the local stack's
// --seed-transfers): its record, with the history of its start and its end, is saved and kept as every closed
// execution is, so DescribeExecution, GetExecutionHistory and ListExecutions report it and retention forgets it in
// its turn. Nothing runs and no status change is published: it ended before anyone was listening. It ends at the
// engine clock's now. It cannot be redriven: the engine has no record of where it stopped. A name that is not valid is ErrInvalidName, a state machine that does not exist (or is Express)
// ErrStateMachineDoesNotExist, a name already used ErrExecutionAlreadyExists.
func (e *Engine) ImportClosedExecution(ctx context.Context, in ClosedExecution) (*ExecutionRecord, error) {
	var typ, key string
	switch in.Status {
	case StatusFailed:
		typ, key = EventExecutionFailed, "executionFailedEventDetails"
	case StatusTimedOut:
		typ, key = EventExecutionTimedOut, "executionTimedOutEventDetails"
	case StatusAborted:
		typ, key = EventExecutionAborted, "executionAbortedEventDetails"
	default:
		return nil, fmt.Errorf("import execution %s: status %q: want %s, %s or %s", in.Name, in.Status, StatusFailed, StatusTimedOut, StatusAborted)
	}
	if !ValidName(in.Name) {
		return nil, fmt.Errorf("%w: %q", ErrInvalidName, in.Name)
	}
	if in.Input == "" {
		in.Input = "{}"
	}
	rec := &ExecutionRecord{StateMachineArn: in.StateMachineArn, Name: in.Name, Status: in.Status, Input: in.Input}
	ended := map[string]any{}
	if in.Error != "" {
		rec.Error, ended["error"] = &in.Error, in.Error
	}
	if in.Cause != "" {
		rec.Cause, ended["cause"] = &in.Cause, in.Cause
	}

	// Under the engine's lock from the name's check to the summary, so that no StartExecution of the name comes in
	// between, and summaries stay in the order of their stop dates; an import is a start-up's seed, not a hot path.
	e.mu.Lock()
	m, ok := e.sms[in.StateMachineArn]
	if !ok || m.sm.Type == TypeExpress {
		e.mu.Unlock()
		return nil, fmt.Errorf("%w: %s (a standard state machine of the engine)", ErrStateMachineDoesNotExist, in.StateMachineArn)
	}
	rec.Arn = e.executionArn(m.sm.Name, in.Name)
	_, running := e.exec[rec.Arn]
	_, closed := e.closed[rec.Arn]
	if running || closed {
		e.mu.Unlock()
		return nil, fmt.Errorf("%w: %s", ErrExecutionAlreadyExists, rec.Arn)
	}
	stop := e.opts.Clock.Now()
	rec.StartDate, rec.StopDate = stop.Add(-max(in.Ran, 0)), &stop
	events := appendEvent(nil, &Event{ID: 1, Timestamp: rec.StartDate, Type: EventExecutionStarted, DetailsKey: "executionStartedEventDetails",
		Details: map[string]any{"input": in.Input, "inputDetails": notTruncated, "roleArn": m.sm.RoleArn}})
	events = appendEvent(events, &Event{ID: 2, PreviousEventID: 1, Timestamp: stop, Type: typ, DetailsKey: key, Details: ended})
	if err := e.opts.Store.SaveExecution(ctx, rec, events); err != nil {
		e.mu.Unlock()
		return nil, fmt.Errorf("import execution %s: %w", rec.Arn, err)
	}
	c := summarize(rec)
	c.stateMachineArn = m.sm.Arn
	e.addClosedLocked(c)
	gone := e.expireLocked()
	e.mu.Unlock()
	e.forget(gone)
	return rec.Clone(), nil
}
