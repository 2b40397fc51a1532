package sfnengine

import "context"

// save hands the execution's description and the events it has not yet saved to the Store. It is called before
// the execution's goroutine starts and then only from it, so two saves of one execution never overlap. An Express
// execution is never saved.
func (x *execution) save(ctx context.Context) error {
	if x.express { // AWS keeps no state of Express executions; neither does the Store
		return nil
	}
	x.mu.Lock()
	rec := x.rec.Clone()
	end := len(x.log.data)
	events := x.log.data[x.saved:end] // bytes of the log up to its length never change
	x.mu.Unlock()
	if runs := x.mapRunRecords(); runs != nil {
		rec.ext().MapRuns = runs
	}
	if err := x.eng.opts.Store.SaveExecution(ctx, rec, events); err != nil {
		return err
	}
	x.mu.Lock()
	x.saved = end
	x.mu.Unlock()
	return nil
}

// meta returns the execution's description, without its history.
func (x *execution) meta() *ExecutionRecord {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.rec.Clone()
}

// adopt makes a record loaded from the Store the execution's state: its history becomes the log, all of it saved.
func (x *execution) adopt(rec *ExecutionRecord) {
	x.log = eventLog{data: encodeEvents(rec.History), n: len(rec.History)}
	x.saved = len(x.log.data)
	rec.History = nil
	if runs := rec.MapRuns(); runs != nil {
		x.adoptMapRuns(runs, x.eng.opts.Clock.Now())
		rec.ext().MapRuns = nil
	}
	x.rec = rec
	x.adoptMock(rec)
}
