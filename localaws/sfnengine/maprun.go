package sfnengine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
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
	ErrMapRunDoesNotExist = errors.New("sfnengine: map run does not exist")
	// ErrMapRunNotRunning is returned by UpdateMapRun for a Map Run that has ended.
	ErrMapRunNotRunning = errors.New("sfnengine: map run is not running")
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

// MapRun is the record of one run of a Distributed Map state, kept with its execution (RecordExt.MapRuns).
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

// registerMapRun makes a starting Map Run of x known to DescribeMapRun and UpdateMapRun.
func (e *Engine) registerMapRun(x *execution, mr *mapRunState) {
	e.mu.Lock()
	if e.mapRuns == nil {
		e.mapRuns = map[string]*mapRunState{}
	}
	e.mapRuns[mr.rec.Arn] = mr
	if !x.express { // an Express execution cannot be described once closed, nor its Map Runs
		e.knowMapRunLocked(mr.rec.Arn, x.rec.Arn)
	}
	e.mu.Unlock()
	ex := x.ext()
	x.mu.Lock()
	ex.mapRuns = append(ex.mapRuns, mr)
	x.mu.Unlock()
}

// knowMapRunLocked records that the Map Run belongs to the execution.
func (e *Engine) knowMapRunLocked(mapRunArn, executionArn string) {
	if e.mapRunExec == nil {
		e.mapRunExec, e.mapRunsOf = map[string]string{}, map[string][]string{}
	}
	if _, ok := e.mapRunExec[mapRunArn]; ok {
		return
	}
	e.mapRunExec[mapRunArn] = executionArn
	e.mapRunsOf[executionArn] = append(e.mapRunsOf[executionArn], mapRunArn)
}

// forgetExecutionLocked drops what the engine keeps of a forgotten execution beside its summary: its Map Runs and
// its redrive clientTokens.
func (e *Engine) forgetExecutionLocked(arn string) {
	for _, mr := range e.mapRunsOf[arn] {
		delete(e.mapRunExec, mr)
		e.forgetChildrenLocked(mr)
	}
	delete(e.mapRunsOf, arn)
	delete(e.redrives, arn)
}

// mapRunRecords returns the records of x's Map Runs, oldest first.
func (x *execution) mapRunRecords() []MapRun {
	x.mu.Lock()
	var runs []*mapRunState
	if x.extra != nil {
		runs = append(runs, x.extra.mapRuns...)
	}
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
	if len(runs) == 0 {
		return
	}
	states := make([]*mapRunState, 0, len(runs))
	for _, r := range runs {
		if r.Status == MapRunRunning {
			r.Status = MapRunAborted
			stop := now
			r.StopDate = &stop
		}
		states = append(states, newMapRunState(r))
	}
	ex := x.ext()
	x.mu.Lock()
	ex.mapRuns = states
	x.mu.Unlock()
}

// ListMapRuns returns the Map Runs of an execution, newest first.
func (e *Engine) ListMapRuns(ctx context.Context, executionArn string) ([]MapRun, error) {
	rec, err := e.DescribeExecution(ctx, executionArn)
	if err != nil {
		return nil, err
	}
	runs := append([]MapRun(nil), rec.MapRuns()...)
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
	for _, r := range rec.MapRuns() {
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

// describeMapState describes the Distributed Map state that a qualified state machine ARN names,
// <state machine ARN>/<label> (the stateMachineArn of its Map Runs), as AWS's DescribeStateMachine does: the ARN as
// given, the state machine's name, role, type, dates and configuration, the state's item processor as the
// definition (the workflow its child executions run), and the label. qualifier is what follows the ARN's last
// ':' when it has one more (a version or alias of a Map state, which none has). A state machine that does not
// exist, or whose current definition has no Distributed Map state with that label, is
// ErrStateMachineDoesNotExist.
func (e *Engine) describeMapState(arn, qualifier string) (StateMachine, error) {
	i := strings.LastIndexByte(arn, '/')
	base, label := arn[:i], arn[i+1:]
	m, sm := e.lookupMachine(base)
	if m == nil || qualifier != "" || strings.IndexByte(base[strings.LastIndexByte(base, ':')+1:], '/') >= 0 {
		return StateMachine{}, fmt.Errorf("%w: %s", ErrStateMachineDoesNotExist, arn)
	}
	def, err := jsonvalue.DecodeString(sm.Definition)
	if err != nil {
		return StateMachine{}, fmt.Errorf("decode the definition of %s: %w", base, err)
	}
	processor, ok := distributedProcessor(def, label)
	if !ok {
		return StateMachine{}, fmt.Errorf("%w: %s", ErrStateMachineDoesNotExist, arn)
	}
	return StateMachine{Arn: arn, Name: sm.Name, Definition: jsonvalue.Marshal(processor), RoleArn: sm.RoleArn,
		Type: sm.Type, CreationDate: sm.CreationDate, UpdateDate: sm.UpdateDate, Config: sm.Config,
		RevisionID: sm.RevisionID, Label: label}, nil
}

// distributedProcessor returns the item processor (ItemProcessor, or the older Iterator) of the Distributed Map
// state with the label (its Label, else its name) in a definition's States, at any depth (Parallel branches, Map
// item processors), in the definition's order.
func distributedProcessor(def any, label string) (any, bool) {
	v, _ := jsonvalue.Lookup(def, "States")
	states, ok := v.(*jsonvalue.Object)
	if !ok {
		return nil, false
	}
	for i, name := range states.Keys() {
		st := states.Values()[i]
		processor, ok := jsonvalue.Lookup(st, "ItemProcessor")
		if !ok {
			processor, ok = jsonvalue.Lookup(st, "Iterator")
		}
		if ok {
			config, _ := jsonvalue.Lookup(processor, "ProcessorConfig")
			if mode, _ := jsonvalue.Lookup(config, "Mode"); mode == "DISTRIBUTED" {
				l, _ := jsonvalue.Lookup(st, "Label")
				if l == nil || l == "" {
					l = name
				}
				if l == label {
					return processor, true
				}
			}
			if p, ok := distributedProcessor(processor, label); ok {
				return p, true
			}
		}
		branches, _ := jsonvalue.Lookup(st, "Branches")
		bs, _ := branches.([]any)
		for _, b := range bs {
			if p, ok := distributedProcessor(b, label); ok {
				return p, true
			}
		}
	}
	return nil, false
}
