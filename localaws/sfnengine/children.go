package sfnengine

import (
	"context"
	"fmt"
)

// The child workflow executions of a Distributed Map. On AWS each child of a Map Run whose ExecutionType is
// STANDARD is a Standard execution of its own: ListExecutions with the Map Run's ARN lists them, and
// DescribeExecution and GetExecutionHistory answer each, with the Map Run's ARN (mapRunArn). The engine runs them
// in-process (distributed.go) and keeps each in memory with its parent's Map Run, until retention forgets the
// parent. EXPRESS children are Express executions: nothing of them can be listed or described.

// startChild makes the child execution x, started by the Map Run with the ARN, known to the engine, and records its
// ExecutionStarted event.
func (x *execution) startChild(mapRunArn string, th *thread) {
	x.rec.ext().MapRunArn = mapRunArn
	e := x.eng
	e.mu.Lock()
	if e.children == nil {
		e.children, e.childrenOf = map[string]*execution{}, map[string][]string{}
	}
	e.children[x.rec.Arn] = x
	e.childrenOf[mapRunArn] = append(e.childrenOf[mapRunArn], x.rec.Arn)
	e.mu.Unlock()
	x.emit(th, false, EventExecutionStarted, "executionStartedEventDetails",
		map[string]any{"input": x.rec.Input, "inputDetails": notTruncated, "roleArn": x.m.sm.RoleArn})
}

// closeChild closes the child execution x with the outcome of its run: SUCCEEDED with out, ABORTED when it was
// stopped (its parent stopped, or its Map Run failed), else FAILED with f's error and cause.
func (x *execution) closeChild(th *thread, out any, f *failure) {
	x.mu.Lock()
	defer x.mu.Unlock()
	now := x.eng.opts.Clock.Now()
	rec := x.rec
	rec.StopDate = &now
	details := map[string]any{}
	var typ, key string
	switch {
	case f == nil:
		rec.Status = StatusSucceeded
		typ, key = EventExecutionSucceeded, "executionSucceededEventDetails"
		text := marshal(out)
		rec.Output = &text
		details["output"], details["outputDetails"] = text, notTruncated
	case f == stopped:
		rec.Status = StatusAborted
		typ, key = EventExecutionAborted, "executionAbortedEventDetails"
	default:
		rec.Status = StatusFailed
		typ, key = EventExecutionFailed, "executionFailedEventDetails"
		if f.Error != "" {
			s := f.Error
			rec.Error, details["error"] = &s, s
		}
		if f.Cause != "" {
			s := f.Cause
			rec.Cause, details["cause"] = &s, s
		}
	}
	x.log.add(&Event{ID: int64(x.log.n) + 1, PreviousEventID: th.prev, Timestamp: now, Type: typ, DetailsKey: key,
		Details: details})
	x.closed = true
	close(x.done)
}

// child returns the child execution with the ARN, nil when the engine knows none.
func (e *Engine) child(arn string) *execution {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.children[arn]
}

// forgetChildrenLocked forgets the child executions of a Map Run.
func (e *Engine) forgetChildrenLocked(mapRunArn string) {
	for _, arn := range e.childrenOf[mapRunArn] {
		delete(e.children, arn)
	}
	delete(e.childrenOf, mapRunArn)
}

// ListMapRunExecutions returns the child workflow executions a Map Run started, newest first, optionally only those
// with status, as ListExecutions with a mapRunArn lists them: without History, Input or Output. It returns
// ErrInvalidArn for an ARN that is not a Map Run's, ErrMapRunDoesNotExist for a Map Run the engine does not know,
// and ErrStateMachineTypeNotSupported for a Map Run whose children are EXPRESS (ListExecutions "is not supported by
// EXPRESS state machines").
func (e *Engine) ListMapRunExecutions(ctx context.Context, mapRunArn, status string) ([]*ExecutionRecord, error) {
	mr, err := e.DescribeMapRun(ctx, mapRunArn)
	if err != nil {
		return nil, err
	}
	if mr.ExecutionType == "EXPRESS" {
		return nil, fmt.Errorf("%w: %s", ErrStateMachineTypeNotSupported, mapRunArn)
	}
	e.mu.Lock()
	xs := make([]*execution, 0, len(e.childrenOf[mapRunArn]))
	for _, arn := range e.childrenOf[mapRunArn] {
		xs = append(xs, e.children[arn])
	}
	e.mu.Unlock()
	out := make([]*ExecutionRecord, 0, len(xs))
	for _, x := range xs {
		r := x.meta()
		if status != "" && r.Status != status {
			continue
		}
		stripForList(r)
		r.Ext = &RecordExt{MapRunArn: mapRunArn}
		out = append(out, r)
	}
	sortNewestFirst(out)
	return out, nil
}
