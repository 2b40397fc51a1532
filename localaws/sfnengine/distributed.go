package sfnengine

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"

	"github.com/transferflow/orchestrator/localaws/asl"
	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// How a Distributed Map runs: its Map Run's scheduler and its children (maprun.go keeps the records and the API).

// mapUnit is what one child workflow processes: an item, or a batch of items (ItemBatcher).
type mapUnit struct {
	first, n int // the items' indexes: first..first+n-1
	input    any // nil: built from the item when the child starts
}

// mapRunArns returns the ARN of a new Map Run of the state (label: its Label, else its name) and the function that
// names its child executions.
func (x *execution) mapRunArns(label, executionType string) (string, func() string) {
	id := x.eng.opts.NewID()
	return "arn:aws:states:" + x.eng.opts.Region + ":" + x.eng.opts.AccountID + ":mapRun:" + x.m.sm.Name + "/" + label + ":" + id,
		x.childArns(label, id, executionType)
}

// childArns returns the function that names the child executions of the Map Run with that label and id.
func (x *execution) childArns(label, id, executionType string) func() string {
	e := x.eng
	prefix := "arn:aws:states:" + e.opts.Region + ":" + e.opts.AccountID + ":"
	base := x.m.sm.Name + "/" + label
	if executionType == "EXPRESS" {
		return func() string { return prefix + "express:" + base + ":" + id + ":" + e.opts.NewID() }
	}
	return func() string { return prefix + "execution:" + base + ":" + e.opts.NewID() }
}

// redriveMapRun returns the Map Run of the state that the execution's redrive redrives, RUNNING again with counts for units
// (each pending), or nil when there is none.
func (x *execution) redriveMapRun(sr *stateRun, units []mapUnit, items int) *mapRunState {
	// Only a top-level state is redriven, and only then is x.extra the execution goroutine's alone to read: a nested
	// Distributed Map may run beside iterations that set it.
	if x.m.def.States[sr.st.Name] != sr.st || x.extra == nil {
		return nil
	}
	redo := x.extra.redo
	if redo == nil || redo.mapRunArn == "" || redo.state != sr.st.Name {
		return nil
	}
	arn := redo.mapRunArn
	redo.mapRunArn = "" // a retry of the state starts a new Map Run
	x.mu.Lock()
	var mr *mapRunState
	for _, r := range x.extra.mapRuns {
		if r.rec.Arn == arn {
			mr = r
		}
	}
	x.mu.Unlock()
	if mr == nil {
		return nil
	}
	now := x.eng.opts.Clock.Now()
	mr.mu.Lock()
	r := &mr.rec
	r.Status, r.StopDate, r.Error, r.Cause = MapRunRunning, nil, "", ""
	r.RedriveCount++
	r.RedriveDate = &now
	r.ItemCounts = MapRunCounts{Pending: int64(items), Total: int64(items)}
	r.ExecutionCounts = MapRunCounts{Pending: int64(len(units)), Total: int64(len(units))}
	mr.exceeded = false
	mr.mu.Unlock()
	x.eng.mu.Lock()
	if x.eng.mapRuns == nil {
		x.eng.mapRuns = map[string]*mapRunState{}
	}
	x.eng.mapRuns[arn] = mr
	x.eng.mu.Unlock()
	return mr
}

// attemptDistributedMap runs a Distributed Map: a Map Run whose children (one per item, or per batch) run
// in-process, each as its own execution of the item processor with its own context object and a history that is not
// kept, at most MaxConcurrency at a time, and whose failures are tolerated up to the thresholds.
func (x *execution) attemptDistributedMap(ctx context.Context, sr *stateRun, eff, input any, th *thread,
	items []any, conc int64, itemInput func(int) (any, *failure)) (any, *failure) {
	st := sr.st
	rec, fail := x.newMapRun(sr, eff, conc)
	if fail != nil {
		return nil, fail
	}
	x.emit(th, true, EventMapStateStarted, "mapStateStartedEventDetails", map[string]any{"length": len(items)})
	if f := x.thresholdPaths(sr, eff, &rec); f != nil {
		return nil, f
	}
	if f := checkItems(sr, len(items), itemInput); f != nil {
		return nil, f
	}
	units, fail := x.mapUnits(sr, eff, items, itemInput)
	if fail != nil {
		return nil, fail
	}
	var mr *mapRunState
	var childArn func() string
	if mr = x.redriveMapRun(sr, units, len(items)); mr != nil {
		r := mr.snapshot()
		childArn = x.childArns(r.Label, arnTail(r.Arn), r.ExecutionType)
		x.emit(th, true, EventMapRunRedriven, "mapRunRedrivenEventDetails",
			map[string]any{"mapRunArn": r.Arn, "redriveCount": r.RedriveCount})
	} else {
		var arn string
		arn, childArn = x.mapRunArns(rec.Label, st.ItemProcessor.ExecutionType)
		rec.Arn = arn
		rec.StateMachineArn = x.m.sm.Arn + "/" + rec.Label
		rec.ItemCounts = MapRunCounts{Pending: int64(len(items)), Total: int64(len(items))}
		rec.ExecutionCounts = MapRunCounts{Pending: int64(len(units)), Total: int64(len(units))}
		mr = newMapRunState(rec)
		x.eng.registerMapRun(x, mr)
		x.emit(th, true, EventMapRunStarted, "mapRunStartedEventDetails", map[string]any{"mapRunArn": arn})
	}

	mctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopWake := context.AfterFunc(mctx, func() {
		mr.mu.Lock()
		mr.cond.Broadcast()
		mr.mu.Unlock()
	})
	defer stopWake()
	results := make([]any, len(units))
	succeeded := make([]bool, len(units))
	done := x.redone(st)
	var wg sync.WaitGroup
	for u, unit := range units {
		if out, ok := done[u]; ok { // succeeded before a redrive: not run again
			results[u], succeeded[u] = out, true
			mr.mu.Lock()
			mr.moveLocked(unit.n, pendingUnits, succeededUnits)
			mr.mu.Unlock()
			continue
		}
		mr.mu.Lock()
		for mctx.Err() == nil && !mr.exceeded && mr.rec.ExecutionCounts.Running >= mr.limitLocked() {
			mr.cond.Wait()
		}
		if mctx.Err() != nil || mr.exceeded {
			mr.mu.Unlock()
			break
		}
		mr.moveLocked(unit.n, pendingUnits, runningUnits)
		mr.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := unit.input
			var out any
			f := (*failure)(nil)
			if in == nil {
				in, f = itemInput(unit.first)
			}
			if f == nil {
				out, f = x.runChild(mctx, st, childArn(), in, mr)
			}
			mr.mu.Lock()
			defer mr.mu.Unlock()
			switch {
			case f == nil:
				results[u], succeeded[u] = out, true
				mr.moveLocked(unit.n, runningUnits, succeededUnits)
			case f == stopped:
				mr.moveLocked(unit.n, runningUnits, abortedUnits)
			default:
				results[u] = jsonvalue.FromPairs("Error", f.Error, "Cause", f.Cause)
				mr.moveLocked(unit.n, runningUnits, failedUnits)
				if !mr.exceeded && mr.exceededLocked() {
					mr.exceeded = true
					cancel()
				}
			}
			mr.cond.Broadcast()
		}()
	}
	wg.Wait()

	mr.mu.Lock()
	exceeded := mr.exceeded
	mr.mu.Unlock()
	switch {
	case ctx.Err() != nil:
		x.closeMapRun(mr, MapRunAborted, nil)
		x.keepMapRun(st, mr, results, succeeded)
		return nil, stopped
	case exceeded:
		f := &failure{Error: ErrNameExceedToleratedFail, Cause: toleratedFailureCause}
		x.closeMapRun(mr, MapRunFailed, f)
		x.emit(th, true, EventMapRunFailed, "mapRunFailedEventDetails", map[string]any{"error": f.Error, "cause": f.Cause})
		x.keepMapRun(st, mr, results, succeeded)
		return nil, f
	}
	x.closeMapRun(mr, MapRunSucceeded, nil)
	// AWS's recordings since November 2024 link MapRunSucceeded to MapRunStarted (or MapRunRedriven),
	// MapStateSucceeded to MapRunSucceeded, and MapStateExited back to MapRunStarted (earlier ones linked it to
	// MapRunSucceeded).
	started := th.prev
	x.emit(th, true, EventMapRunSucceeded, "", nil)
	x.emit(th, false, EventMapStateSucceeded, "", nil)
	th.prev = started
	// The output is the children's results in order (a batch's child gives one result for its batch). A failure that
	// was tolerated leaves {"Error","Cause"} in its place.
	return x.finishResult(sr, input, results)
}

// moveLocked moves a unit of n items, run by one child execution, from the counter from to the counter to of both
// the item and the execution counts.
func (mr *mapRunState) moveLocked(n int, from, to mapRunCounter) {
	r := &mr.rec
	*from(&r.ItemCounts) -= int64(n)
	*to(&r.ItemCounts) += int64(n)
	*from(&r.ExecutionCounts)--
	*to(&r.ExecutionCounts)++
}

// mapRunCounter selects one counter of a MapRunCounts.
type mapRunCounter func(c *MapRunCounts) *int64

// The counters that units move between: pending, then running, then succeeded, aborted or failed (a unit that
// succeeded before a redrive goes from pending to succeeded).
var (
	pendingUnits   mapRunCounter = func(c *MapRunCounts) *int64 { return &c.Pending }
	runningUnits   mapRunCounter = func(c *MapRunCounts) *int64 { return &c.Running }
	succeededUnits mapRunCounter = func(c *MapRunCounts) *int64 { return &c.Succeeded }
	abortedUnits   mapRunCounter = func(c *MapRunCounts) *int64 { return &c.Aborted }
	failedUnits    mapRunCounter = func(c *MapRunCounts) *int64 { return &c.Failed }
)

// newMapRun returns the record of a Map Run about to start: its thresholds from the definition or their paths.
func (x *execution) newMapRun(sr *stateRun, eff any, conc int64) (MapRun, *failure) {
	st := sr.st
	label := st.Label
	if label == "" {
		label = st.Name
	}
	rec := MapRun{ExecutionArn: x.rec.Arn, StateName: st.Name, Label: label, ExecutionType: st.ItemProcessor.ExecutionType,
		Status: MapRunRunning, StartDate: x.eng.opts.Clock.Now(), MaxConcurrency: conc,
		ToleratedFailurePercentage: st.ToleratedFailurePercentage, HasToleratedFailurePercentage: st.HasToleratedFailurePercentage,
		ToleratedFailureCount: st.ToleratedFailureCount, HasToleratedFailureCount: st.HasToleratedFailureCount}
	if t := sr.sp.jTolPct; t != nil {
		f, fail := x.evalJPercentage(sr, t)
		if fail != nil {
			return MapRun{}, fail
		}
		rec.ToleratedFailurePercentage, rec.HasToleratedFailurePercentage = f, true
	}
	if t := sr.sp.jTolCount; t != nil {
		c, fail := x.evalJInt(sr, t, false)
		if fail != nil {
			return MapRun{}, fail
		}
		rec.ToleratedFailureCount, rec.HasToleratedFailureCount = c, true
	}
	return rec, nil
}

// thresholdPaths sets rec's thresholds from ToleratedFailurePercentagePath and ToleratedFailureCountPath, resolved
// on eff after MapStateStarted, as AWS records. Like MaxConcurrencyPath, each takes a number or a string holding one
// (AWS accepts the "1" of a variable), and fails with AWS's recorded causes: `The ToleratedFailureCountPath field
// refers to value "NoNumber" which is not a valid integer: $.n` ("… not a valid float" for the percentage),
// `ToleratedFailureCount cannot be negative.` and `ToleratedFailurePercentage must be between 0 and 100.`.
func (x *execution) thresholdPaths(sr *stateRun, eff any, rec *MapRun) *failure {
	st := sr.st
	if p := st.ToleratedFailurePercentagePath; p != "" {
		v, err := x.get(sr, p, eff)
		f, ok := floatValue(v)
		switch {
		case err != nil || !ok:
			return x.runtimeErr(sr, "The ToleratedFailurePercentagePath field refers to value \"%s\" which is not a valid float: %s", valueText(v), p)
		case !(f >= 0 && f <= 100):
			return x.runtimeErr(sr, "ToleratedFailurePercentage must be between 0 and 100.")
		}
		rec.ToleratedFailurePercentage, rec.HasToleratedFailurePercentage = f, true
	}
	if p := st.ToleratedFailureCountPath; p != "" {
		v, err := x.get(sr, p, eff)
		c, ok := intValue(v)
		switch {
		case err != nil || !ok:
			return x.runtimeErr(sr, "The ToleratedFailureCountPath field refers to value \"%s\" which is not a valid integer: %s", valueText(v), p)
		case c < 0:
			return x.runtimeErr(sr, "ToleratedFailureCount cannot be negative.")
		}
		rec.ToleratedFailureCount, rec.HasToleratedFailureCount = c, true
	}
	return nil
}

// numberText is the text of a number given as a JSON number or as a string holding one ("1"), as AWS reads the
// values of MaxConcurrencyPath, ToleratedFailureCountPath and ToleratedFailurePercentagePath.
func numberText(v any) (string, bool) {
	switch t := v.(type) {
	case json.Number:
		return string(t), true
	case string:
		return t, true
	}
	return "", false
}

// intValue reads an integer given as a number or as a string holding one (numberText).
func intValue(v any) (int64, bool) {
	text, ok := numberText(v)
	i, err := strconv.ParseInt(text, 10, 64)
	return i, ok && err == nil
}

// floatValue reads a number given as a number or as a string holding one (numberText).
func floatValue(v any) (float64, bool) {
	text, ok := numberText(v)
	f, err := strconv.ParseFloat(text, 64)
	return f, ok && err == nil
}

// valueText is a path's value as AWS quotes it in a cause: a string as it is, any other value as its JSON text.
func valueText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return marshal(v)
}

// mapUnits returns what the children process: one item each, or the batches of the ItemBatcher, each
// {"BatchInput":…,"Items":[…]} (BatchInput when the batcher has one). In a JSONata state the batcher's bounds may be
// expressions and its BatchInput is a JSONata template, evaluated here like the state's other JSONata fields.
func (x *execution) mapUnits(sr *stateRun, eff any, items []any, itemInput func(int) (any, *failure)) ([]mapUnit, *failure) {
	b := sr.st.ItemBatcher
	if b == nil {
		units := make([]mapUnit, len(items))
		for i := range items {
			units[i] = mapUnit{first: i, n: 1}
		}
		return units, nil
	}
	maxItems, maxBytes, fail := x.batchBounds(sr, b, eff)
	if fail != nil {
		return nil, fail
	}
	var batchInput any
	switch {
	case sr.sp.jBatchInput != nil:
		batchInput, fail = x.evalJ(sr, sr.sp.jBatchInput)
	case sr.sp.batchInput != nil:
		batchInput, fail = x.payload(sr, sr.sp.batchInput, eff)
	}
	if fail != nil {
		return nil, fail
	}
	var units []mapUnit
	var batch []any
	first, size := 0, 0
	flush := func(next int) {
		if len(batch) > 0 {
			in := jsonvalue.FromPairs("Items", batch)
			if batchInput != nil {
				in = jsonvalue.FromPairs("BatchInput", batchInput, "Items", batch)
			}
			units = append(units, mapUnit{first: first, n: len(batch), input: in})
		}
		batch, first, size = nil, next, 0
	}
	for i := range items {
		in, fail := itemInput(i)
		if fail != nil {
			return nil, fail
		}
		n := len(marshal(in)) + 1
		if len(batch) > 0 && ((maxItems > 0 && int64(len(batch)) >= maxItems) ||
			(maxBytes > 0 && int64(size+n) > maxBytes)) {
			flush(i)
		}
		batch = append(batch, in)
		size += n
	}
	flush(len(items))
	return units, nil
}

// batchBounds returns the ItemBatcher's MaxItemsPerBatch and MaxInputBytesPerBatch (0: no bound): the numbers of
// the definition, or the values of their JSONata expressions or of their reference paths.
//
// AWS documents that MaxItemsPerBatchPath and MaxInputBytesPerBatchPath (JSONPath only) are reference paths "to an
// existing key-value pair in your Distributed Map state input" that "must resolve to a positive integer", and that
// MaxInputBytesPerBatch is "up to 256 KiB" (https://docs.aws.amazon.com/step-functions/latest/dg/input-output-itembatcher.html).
// It is silent on which input (before or after InputPath) and on the failure; the engine follows MaxConcurrencyPath
// (mapItems): the path reads the effective input (after InputPath, as ItemsPath does) and fails with longParam's
// States.Runtime causes, "The JSONPath '<path>' specified for the field '<field>' could not be found in the input
// '<input>'" or "The <field> parameter cannot be parsed as a long value / references a value that is not positive:
// <path> == <value>". A path value above 256 KiB is "The MaxInputBytesPerBatchPath parameter references a value
// greater than 262144 (256 KiB): <path> == <value>", an expression's a States.QueryEvaluationError (with its
// EvaluationFailed event) like its value below 1: both in the engine's words. Unlike MaxConcurrencyPath, resolved
// before MapStateStarted, these are read as the items are batched, after it.
func (x *execution) batchBounds(sr *stateRun, b *asl.ItemBatcher, eff any) (maxItems, maxBytes int64, fail *failure) {
	maxItems, maxBytes = b.MaxItemsPerBatch, b.MaxInputBytesPerBatch
	if t := sr.sp.jMaxItems; t != nil {
		if maxItems, fail = x.evalJInt(sr, t, true); fail != nil {
			return 0, 0, fail
		}
	}
	if p := b.MaxItemsPerBatchPath; p != "" {
		if maxItems, fail = x.longParam(sr, "MaxItemsPerBatchPath", p, eff, 1); fail != nil {
			return 0, 0, fail
		}
	}
	if t := sr.sp.jMaxBytes; t != nil {
		if maxBytes, fail = x.evalJInt(sr, t, true); fail != nil {
			return 0, 0, fail
		}
		if maxBytes > asl.MaxInputBytesPerBatchLimit {
			return 0, 0, x.queryError(sr, t.field, "The JSONata expression '%s' specified for the field '%s' returned %d, but the field must be at most %d.",
				jtemplateSrc(t), t.field, maxBytes, asl.MaxInputBytesPerBatchLimit)
		}
	}
	if p := b.MaxInputBytesPerBatchPath; p != "" {
		if maxBytes, fail = x.longParam(sr, "MaxInputBytesPerBatchPath", p, eff, 1); fail != nil {
			return 0, 0, fail
		}
		if maxBytes > asl.MaxInputBytesPerBatchLimit {
			return 0, 0, x.paramProblem(sr, "MaxInputBytesPerBatchPath", "references a value greater than "+strconv.Itoa(asl.MaxInputBytesPerBatchLimit)+" (256 KiB)", p,
				json.Number(strconv.FormatInt(maxBytes, 10)))
		}
	}
	return maxItems, maxBytes, nil
}

// runChild runs one child workflow of a Distributed Map in-process: an execution of the item processor named arn,
// with its own context object ($$.Execution is the child's) and its own history. A STANDARD child of a Standard
// execution is an execution one can list, describe and read the history of (children.go); the others' histories
// are not kept.
func (x *execution) runChild(ctx context.Context, st *asl.State, arn string, input any, mr *mapRunState) (any, *failure) {
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	mapRun := mr.snapshot()
	c := &execution{eng: x.eng, m: x.m, prog: x.prog, input: input, ctx: cctx, cancel: cancel, done: make(chan struct{}),
		rec: &ExecutionRecord{Arn: arn, StateMachineArn: mapRun.StateMachineArn, Name: arnTail(arn), Status: StatusRunning,
			StartDate: x.eng.opts.Clock.Now()}} // $$.Execution.Input is the value, input
	// A child workflow is an execution of its own: it sees none of the parent's variables (pass them in the
	// ItemSelector), as AWS documents for Distributed Map.
	c.vars = &c.root
	listed := !x.express && mapRun.ExecutionType != "EXPRESS"
	th := &thread{}
	if listed {
		c.rec.Input = marshal(input)
		c.startChild(mapRun.Arn, th)
	}
	out, f := c.safeRunMachine(cctx, st.ItemProcessor, st.ItemProcessor.StartAt, input, th, c.vars)
	if f == stopped && ctx.Err() == nil {
		var sc *stopCause
		if errors.As(context.Cause(cctx), &sc) && sc.fail != nil { // its history limit
			f = sc.fail
		}
	}
	if listed {
		c.closeChild(th, out, f)
	}
	return out, f
}

func arnTail(arn string) string {
	for i := len(arn) - 1; i >= 0; i-- {
		if arn[i] == ':' {
			return arn[i+1:]
		}
	}
	return arn
}

// keepMapRun records, for a redrive, the units of a top-level Distributed Map that succeeded and its Map Run.
func (x *execution) keepMapRun(st *asl.State, mr *mapRunState, results []any, succeeded []bool) {
	x.keepSucceeded(st, results, func(i int) bool { return succeeded[i] })
	if x.m.def.States[st.Name] == st {
		x.extra.partial.mapRun = mr.snapshot().Arn // keepSucceeded set x.extra.partial
	}
}

// closeMapRun ends a Map Run with its status.
func (x *execution) closeMapRun(mr *mapRunState, status string, f *failure) {
	now := x.eng.opts.Clock.Now()
	mr.mu.Lock()
	mr.rec.Status = status
	mr.rec.StopDate = &now
	if f != nil {
		mr.rec.Error, mr.rec.Cause = f.Error, f.Cause
	}
	mr.mu.Unlock()
	x.eng.mu.Lock()
	delete(x.eng.mapRuns, mr.rec.Arn)
	x.eng.mu.Unlock()
}
