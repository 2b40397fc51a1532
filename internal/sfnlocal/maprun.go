package sfnlocal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/transferflow/orchestrator/internal/asl"
	"github.com/transferflow/orchestrator/internal/jsonvalue"
)

// Map Run statuses and history events (a Distributed Map records a Map Run per run).
const (
	MapRunRunning   = "RUNNING"
	MapRunSucceeded = "SUCCEEDED"
	MapRunFailed    = "FAILED"
	MapRunAborted   = "ABORTED"

	EventMapRunStarted   = "MapRunStarted"
	EventMapRunSucceeded = "MapRunSucceeded"
	EventMapRunFailed    = "MapRunFailed"
	EventMapRunAborted   = "MapRunAborted"
	EventMapRunRedriven  = "MapRunRedriven"
)

// Sentinel errors of the Map Run operations.
var (
	// ErrMapRunDoesNotExist is returned for a Map Run ARN the engine does not know (ResourceNotFound).
	ErrMapRunDoesNotExist = errors.New("sfnlocal: map run does not exist")
	// ErrMapRunNotRunning is returned by UpdateMapRun for a Map Run that has ended.
	ErrMapRunNotRunning = errors.New("sfnlocal: map run is not running")
)

// toleratedFailureCause is the cause of States.ExceedToleratedFailureThreshold.
const toleratedFailureCause = "The specified tolerated failure threshold was exceeded"

// DefaultDistributedConcurrency is how many child workflows a Distributed Map without MaxConcurrency runs at once
// (AWS runs up to 10,000; the local engine runs them in-process), and maxDistributedConcurrency the most any may.
const (
	DefaultDistributedConcurrency = 40
	maxDistributedConcurrency     = 1000
)

// MapRunCounts are the item or child-execution counts of a Map Run, by status.
type MapRunCounts struct {
	Pending        int64 `json:"pending"`
	Running        int64 `json:"running"`
	Succeeded      int64 `json:"succeeded"`
	Failed         int64 `json:"failed"`
	TimedOut       int64 `json:"timedOut"`
	Aborted        int64 `json:"aborted"`
	Total          int64 `json:"total"`
	ResultsWritten int64 `json:"resultsWritten"`
}

// MapRun is the record of one run of a Distributed Map state, kept with its execution (ExecutionRecord.MapRuns).
type MapRun struct {
	Arn             string     `json:"mapRunArn"`
	ExecutionArn    string     `json:"executionArn"`
	StateMachineArn string     `json:"stateMachineArn"` // the child workflows' state machine: <machine>/<label>
	StateName       string     `json:"stateName"`
	Label           string     `json:"label"`
	ExecutionType   string     `json:"executionType"` // STANDARD or EXPRESS children
	Status          string     `json:"status"`
	StartDate       time.Time  `json:"startDate"`
	StopDate        *time.Time `json:"stopDate,omitempty"`
	MaxConcurrency  int64      `json:"maxConcurrency"`
	// ToleratedFailurePercentage and ToleratedFailureCount are the thresholds; a threshold applies when it was
	// given (in the definition, through its path, or by UpdateMapRun): with neither, any failure fails the run.
	ToleratedFailurePercentage    float64      `json:"toleratedFailurePercentage"`
	ToleratedFailureCount         int64        `json:"toleratedFailureCount"`
	HasToleratedFailurePercentage bool         `json:"hasToleratedFailurePercentage,omitempty"`
	HasToleratedFailureCount      bool         `json:"hasToleratedFailureCount,omitempty"`
	ItemCounts                    MapRunCounts `json:"itemCounts"`
	ExecutionCounts               MapRunCounts `json:"executionCounts"`
	Error                         string       `json:"error,omitempty"`
	Cause                         string       `json:"cause,omitempty"`
	// RedriveCount and RedriveDate: the Map Run was redriven with its execution.
	RedriveCount int        `json:"redriveCount,omitempty"`
	RedriveDate  *time.Time `json:"redriveDate,omitempty"`
}

// mapRunState is a Map Run while its state runs: the scheduler waits on cond for a free slot (UpdateMapRun can
// change MaxConcurrency meanwhile).
type mapRunState struct {
	mu       sync.Mutex
	cond     *sync.Cond
	rec      MapRun
	exceeded bool // the tolerated failures were exceeded: no child starts any more
}

func newMapRunState(rec MapRun) *mapRunState {
	mr := &mapRunState{rec: rec}
	mr.cond = sync.NewCond(&mr.mu)
	return mr
}

func (mr *mapRunState) snapshot() MapRun {
	mr.mu.Lock()
	defer mr.mu.Unlock()
	r := mr.rec
	if r.StopDate != nil {
		d := *r.StopDate
		r.StopDate = &d
	}
	if r.RedriveDate != nil {
		d := *r.RedriveDate
		r.RedriveDate = &d
	}
	return r
}

// limitLocked is how many children may run at once.
func (mr *mapRunState) limitLocked() int64 {
	n := mr.rec.MaxConcurrency
	if n == 0 {
		n = DefaultDistributedConcurrency
	}
	return min(n, maxDistributedConcurrency)
}

// exceededLocked reports whether the failures exceed the tolerated thresholds.
func (mr *mapRunState) exceededLocked() bool {
	r := &mr.rec
	failed := r.ItemCounts.Failed + r.ItemCounts.TimedOut
	if failed == 0 {
		return false
	}
	if !r.HasToleratedFailurePercentage && !r.HasToleratedFailureCount {
		return true
	}
	if r.HasToleratedFailureCount && failed > r.ToleratedFailureCount {
		return true
	}
	return r.HasToleratedFailurePercentage && r.ItemCounts.Total > 0 &&
		float64(failed)*100/float64(r.ItemCounts.Total) > r.ToleratedFailurePercentage
}

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
	if x.redo == nil || x.redo.mapRunArn == "" || x.redo.state != sr.st.Name || x.m.def.States[sr.st.Name] != sr.st {
		return nil
	}
	arn := x.redo.mapRunArn
	x.redo.mapRunArn = "" // a retry of the state starts a new Map Run
	x.mu.Lock()
	var mr *mapRunState
	for _, r := range x.mapRuns {
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
			mr.skipLocked(unit.n)
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
		mr.startLocked(unit.n)
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
				out, f = x.runChild(mctx, st, childArn(), in)
			}
			mr.mu.Lock()
			defer mr.mu.Unlock()
			switch {
			case f == nil:
				results[u], succeeded[u] = out, true
				mr.finishLocked(unit.n, &mr.rec.ItemCounts.Succeeded, &mr.rec.ExecutionCounts.Succeeded)
			case f == stopped:
				mr.finishLocked(unit.n, &mr.rec.ItemCounts.Aborted, &mr.rec.ExecutionCounts.Aborted)
			default:
				results[u] = jsonvalue.FromPairs("Error", f.Error, "Cause", f.Cause)
				mr.finishLocked(unit.n, &mr.rec.ItemCounts.Failed, &mr.rec.ExecutionCounts.Failed)
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
	x.emit(th, true, EventMapRunSucceeded, "", nil)
	x.emit(th, false, EventMapStateSucceeded, "", nil)
	// The output is the children's results in order (a batch's child gives one result for its batch). A failure that
	// was tolerated leaves {"Error","Cause"} in its place.
	return x.finishResult(sr, input, results)
}

// startLocked moves a unit of n items from pending to running.
func (mr *mapRunState) startLocked(n int) {
	r := &mr.rec
	r.ItemCounts.Pending -= int64(n)
	r.ItemCounts.Running += int64(n)
	r.ExecutionCounts.Pending--
	r.ExecutionCounts.Running++
}

// skipLocked counts a unit of n items that succeeded before a redrive as succeeded.
func (mr *mapRunState) skipLocked(n int) {
	r := &mr.rec
	r.ItemCounts.Pending -= int64(n)
	r.ItemCounts.Succeeded += int64(n)
	r.ExecutionCounts.Pending--
	r.ExecutionCounts.Succeeded++
}

// finishLocked moves a running unit of n items to the counters item and exec.
func (mr *mapRunState) finishLocked(n int, item, exec *int64) {
	r := &mr.rec
	r.ItemCounts.Running -= int64(n)
	*item += int64(n)
	r.ExecutionCounts.Running--
	*exec++
}

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
	if p := st.ToleratedFailurePercentagePath; p != "" {
		v, err := x.get(sr, p, eff)
		n, isNum := v.(json.Number)
		f, perr := strconv.ParseFloat(string(n), 64)
		if err != nil || !isNum || perr != nil || f < 0 || f > 100 {
			return MapRun{}, x.runtimeErr(sr, "The ToleratedFailurePercentagePath field refers to value \"%s\" which is not a valid percentage: %s", marshal(v), p)
		}
		rec.ToleratedFailurePercentage, rec.HasToleratedFailurePercentage = f, true
	}
	if p := st.ToleratedFailureCountPath; p != "" {
		v, err := x.get(sr, p, eff)
		n, isNum := v.(json.Number)
		c, perr := strconv.ParseInt(string(n), 10, 64)
		if err != nil || !isNum || perr != nil || c < 0 {
			return MapRun{}, x.runtimeErr(sr, "The ToleratedFailureCountPath field refers to value \"%s\" which is not a valid integer: %s", marshal(v), p)
		}
		rec.ToleratedFailureCount, rec.HasToleratedFailureCount = c, true
	}
	return rec, nil
}

// mapUnits returns what the children process: one item each, or the batches of the ItemBatcher, each
// {"BatchInput":…,"Items":[…]} (BatchInput when the batcher has one).
func (x *execution) mapUnits(sr *stateRun, eff any, items []any, itemInput func(int) (any, *failure)) ([]mapUnit, *failure) {
	b := sr.st.ItemBatcher
	if b == nil {
		units := make([]mapUnit, len(items))
		for i := range items {
			units[i] = mapUnit{first: i, n: 1}
		}
		return units, nil
	}
	var batchInput any
	if sr.sp.batchInput != nil {
		var fail *failure
		if batchInput, fail = x.payload(sr, sr.sp.batchInput, eff); fail != nil {
			return nil, fail
		}
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
		if len(batch) > 0 && ((b.MaxItemsPerBatch > 0 && int64(len(batch)) >= b.MaxItemsPerBatch) ||
			(b.MaxInputBytesPerBatch > 0 && int64(size+n) > b.MaxInputBytesPerBatch)) {
			flush(i)
		}
		batch = append(batch, in)
		size += n
	}
	flush(len(items))
	return units, nil
}

// runChild runs one child workflow of a Distributed Map in-process: an execution of the item processor named arn,
// with its own context object ($$.Execution is the child's) and its own history, which is not kept.
func (x *execution) runChild(ctx context.Context, st *asl.State, arn string, input any) (any, *failure) {
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	c := &execution{eng: x.eng, m: x.m, prog: x.prog, input: input, ctx: cctx, cancel: cancel, done: make(chan struct{}),
		rec: &ExecutionRecord{Arn: arn, StateMachineArn: x.rec.StateMachineArn, Name: arnTail(arn), Status: StatusRunning,
			Input: marshal(input), StartDate: x.eng.opts.Clock.Now()}}
	out, f := c.safeRunMachine(cctx, st.ItemProcessor, st.ItemProcessor.StartAt, input, &thread{})
	if f == stopped && ctx.Err() == nil {
		var sc *stopCause
		if errors.As(context.Cause(cctx), &sc) && sc.fail != nil { // its history limit
			f = sc.fail
		}
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
		x.partialMapRun = mr.snapshot().Arn
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

// registerMapRun makes a starting Map Run of x known to DescribeMapRun and UpdateMapRun.
func (e *Engine) registerMapRun(x *execution, mr *mapRunState) {
	e.mu.Lock()
	if e.mapRuns == nil {
		e.mapRuns = map[string]*mapRunState{}
	}
	if e.mapRunExec == nil {
		e.mapRunExec = map[string]string{}
	}
	e.mapRuns[mr.rec.Arn] = mr
	e.mapRunExec[mr.rec.Arn] = x.rec.Arn
	e.mu.Unlock()
	x.mu.Lock()
	x.mapRuns = append(x.mapRuns, mr)
	x.mu.Unlock()
}

// mapRunRecords returns the records of x's Map Runs, oldest first.
func (x *execution) mapRunRecords() []MapRun {
	x.mu.Lock()
	runs := append([]*mapRunState(nil), x.mapRuns...)
	x.mu.Unlock()
	if len(runs) == 0 {
		return nil
	}
	out := make([]MapRun, len(runs))
	for i, mr := range runs {
		out[i] = mr.snapshot()
	}
	return out
}

// adoptMapRuns makes a restored execution's Map Runs its own; those that were running when the engine stopped are
// closed ABORTED (their Map state runs again, with a new Map Run).
func (x *execution) adoptMapRuns(runs []MapRun, now time.Time) {
	x.mapRuns = nil
	for _, r := range runs {
		if r.Status == MapRunRunning {
			r.Status = MapRunAborted
			stop := now
			r.StopDate = &stop
		}
		x.mapRuns = append(x.mapRuns, newMapRunState(r))
	}
}

// ListMapRuns returns the Map Runs of an execution, newest first.
func (e *Engine) ListMapRuns(ctx context.Context, executionArn string) ([]MapRun, error) {
	rec, err := e.DescribeExecution(ctx, executionArn)
	if err != nil {
		return nil, err
	}
	runs := rec.MapRuns
	sort.Slice(runs, func(i, j int) bool {
		if !runs[i].StartDate.Equal(runs[j].StartDate) {
			return runs[i].StartDate.After(runs[j].StartDate)
		}
		return runs[i].Arn > runs[j].Arn
	})
	return runs, nil
}

// DescribeMapRun returns a Map Run's record. It returns ErrInvalidArn for an ARN that is not a Map Run's and
// ErrMapRunDoesNotExist for one the engine does not know (or whose execution retention forgot).
func (e *Engine) DescribeMapRun(ctx context.Context, arn string) (MapRun, error) {
	if _, err := arnName(arn, "mapRun"); err != nil {
		return MapRun{}, err
	}
	e.mu.Lock()
	mr := e.mapRuns[arn]
	execArn, known := e.mapRunExec[arn]
	e.mu.Unlock()
	if mr != nil {
		return mr.snapshot(), nil
	}
	if !known {
		return MapRun{}, fmt.Errorf("%w: %s", ErrMapRunDoesNotExist, arn)
	}
	rec, err := e.DescribeExecution(ctx, execArn)
	if errors.Is(err, ErrExecutionDoesNotExist) {
		return MapRun{}, fmt.Errorf("%w: %s", ErrMapRunDoesNotExist, arn)
	}
	if err != nil {
		return MapRun{}, fmt.Errorf("describe map run %s: %w", arn, err)
	}
	for _, r := range rec.MapRuns {
		if r.Arn == arn {
			return r, nil
		}
	}
	return MapRun{}, fmt.Errorf("%w: %s", ErrMapRunDoesNotExist, arn)
}

// MapRunUpdate is what UpdateMapRun changes; nil fields are left as they are.
type MapRunUpdate struct {
	MaxConcurrency             *int64
	ToleratedFailurePercentage *float64
	ToleratedFailureCount      *int64
}

// UpdateMapRun changes a running Map Run's MaxConcurrency (taking effect as children end or start) and tolerated
// failure thresholds (checked at the next failure). It returns ErrMapRunNotRunning for a Map Run that has ended.
func (e *Engine) UpdateMapRun(ctx context.Context, arn string, u MapRunUpdate) error {
	if _, err := arnName(arn, "mapRun"); err != nil {
		return err
	}
	e.mu.Lock()
	mr := e.mapRuns[arn]
	e.mu.Unlock()
	if mr == nil {
		if _, err := e.DescribeMapRun(ctx, arn); err != nil {
			return err
		}
		return fmt.Errorf("%w: %s", ErrMapRunNotRunning, arn)
	}
	mr.mu.Lock()
	defer mr.mu.Unlock()
	if mr.rec.Status != MapRunRunning {
		return fmt.Errorf("%w: %s", ErrMapRunNotRunning, arn)
	}
	if u.MaxConcurrency != nil {
		mr.rec.MaxConcurrency = *u.MaxConcurrency
	}
	if u.ToleratedFailurePercentage != nil {
		mr.rec.ToleratedFailurePercentage, mr.rec.HasToleratedFailurePercentage = *u.ToleratedFailurePercentage, true
	}
	if u.ToleratedFailureCount != nil {
		mr.rec.ToleratedFailureCount, mr.rec.HasToleratedFailureCount = *u.ToleratedFailureCount, true
	}
	mr.cond.Broadcast()
	return nil
}
