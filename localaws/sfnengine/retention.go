package sfnengine

import (
	"context"
	"errors"
	"strings"
	"time"
)

// closedExecution is what the engine keeps in memory of a closed execution once the Store holds it: what
// ListExecutions shows and the stop date retention goes by (about 300 bytes with its ARN and its map entry; see
// BenchmarkRetainedMemory). The rest is read back from the Store on demand.
type closedExecution struct {
	arn, stateMachineArn, name, status string
	start, stop                        time.Time
	// started is the version and alias the execution was started with; nil for an execution of the state
	// machine itself (most), so that those pay one pointer for it.
	started *startedWith
	// forgetting is set while the execution is being deleted from the Store: lookups miss it, but its name stays
	// taken until the deletion is done, so that a new execution of that name cannot lose its record to it.
	forgetting bool
	// reopened is set when the execution was redriven: it is running again, and retention skips this summary.
	reopened bool
	// redriveCount and redriveDate (Unix nanoseconds) are what ListExecutions shows of its redrives.
	redriveCount int32
	redriveDate  int64
}

// summarize returns the summary of a closed record. The name shares the ARN's bytes.
func summarize(rec *ExecutionRecord) *closedExecution {
	c := &closedExecution{arn: rec.Arn, stateMachineArn: rec.StateMachineArn, name: rec.Name, status: rec.Status,
		start: rec.StartDate}
	if strings.HasSuffix(rec.Arn, ":"+rec.Name) {
		c.name = rec.Arn[len(rec.Arn)-len(rec.Name):]
	}
	if rec.StopDate != nil {
		c.stop = *rec.StopDate
	}
	if rec.StateMachineVersionArn != "" || rec.Revision() != "" {
		c.started = &startedWith{versionArn: rec.StateMachineVersionArn, aliasArn: rec.StateMachineAliasArn,
			revision: rec.Revision()}
	}
	c.redriveCount = int32(rec.RedriveCount())
	if d := rec.RedriveDate(); d != nil {
		c.redriveDate = d.UnixNano()
	}
	return c
}

// startedWith is the version and alias an execution was started with, or the revision of the state machine when
// it was not the one CreateStateMachine made.
type startedWith struct {
	versionArn, aliasArn, revision string
}

// record returns the part of the execution's record that the summary holds.
func (c *closedExecution) record() *ExecutionRecord {
	stop := c.stop
	r := &ExecutionRecord{Arn: c.arn, StateMachineArn: c.stateMachineArn, Name: c.name, Status: c.status,
		StartDate: c.start, StopDate: &stop}
	if c.started != nil {
		r.StateMachineVersionArn, r.StateMachineAliasArn = c.started.versionArn, c.started.aliasArn
	}
	if c.redriveCount > 0 {
		d := time.Unix(0, c.redriveDate).UTC()
		r.Ext = &RecordExt{RedriveCount: int(c.redriveCount), RedriveDate: &d}
	}
	return r
}

// retire replaces a closed execution, saved to the Store, by its summary, then forgets what retention no longer
// keeps.
func (e *Engine) retire(x *execution) {
	x.mu.Lock()
	c := summarize(x.rec)
	x.m.logSize.Store(int64(len(x.log.data)))
	x.mu.Unlock()
	c.stateMachineArn = x.m.sm.Arn
	e.mu.Lock()
	if e.exec[c.arn] == x {
		delete(e.exec, c.arn)
	}
	e.addClosedLocked(c)
	gone := e.expireLocked()
	e.mu.Unlock()
	e.forget(gone)
}

// addClosedLocked adds a summary; summaries must come in the order of their stop dates.
func (e *Engine) addClosedLocked(c *closedExecution) {
	e.closed[c.arn] = c
	e.queue = append(e.queue, c)
}

// expire forgets the closed executions that retention no longer keeps.
func (e *Engine) expire() {
	if e.opts.HistoryRetention <= 0 && e.opts.MaxClosedExecutions <= 0 {
		return
	}
	e.mu.Lock()
	gone := e.expireLocked()
	e.mu.Unlock()
	e.forget(gone)
}

// expireLocked takes out of the retention queue the closed executions past Options.HistoryRetention or beyond
// Options.MaxClosedExecutions, oldest first, marks them forgetting and returns them for forget.
func (e *Engine) expireLocked() []*closedExecution {
	ret, maxClosed := e.opts.HistoryRetention, e.opts.MaxClosedExecutions
	if ret <= 0 && maxClosed <= 0 {
		return nil
	}
	cutoff := e.opts.Clock.Now().Add(-ret)
	var gone []*closedExecution
	for e.head < len(e.queue) {
		c := e.queue[e.head]
		if c.reopened { // redriven: its next close adds a new summary
			e.queue[e.head] = nil
			e.head++
			e.reopened--
			continue
		}
		tooMany := maxClosed > 0 && len(e.queue)-e.head-e.reopened > maxClosed
		tooOld := ret > 0 && c.stop.Before(cutoff)
		if !tooMany && !tooOld {
			break
		}
		c.forgetting = true
		gone = append(gone, c)
		e.queue[e.head] = nil
		e.head++
	}
	if e.head > 0 && e.head >= len(e.queue)/2 {
		n := copy(e.queue, e.queue[e.head:])
		clear(e.queue[n:])
		e.queue, e.head = e.queue[:n], 0
	}
	return gone
}

// forget deletes executions taken out by expireLocked from the Store, then from the engine.
func (e *Engine) forget(gone []*closedExecution) {
	for _, c := range gone {
		err := e.opts.Store.DeleteExecution(context.Background(), c.arn)
		if err != nil && !errors.Is(err, ErrExecutionDoesNotExist) {
			e.opts.Logger.Error("delete execution", "executionArn", c.arn, "error", err)
		}
		e.mu.Lock()
		if e.closed[c.arn] == c {
			delete(e.closed, c.arn)
			e.forgetExecutionLocked(c.arn)
		}
		e.mu.Unlock()
	}
}
