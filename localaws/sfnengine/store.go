package sfnengine

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Execution statuses.
const (
	StatusRunning   = "RUNNING"
	StatusSucceeded = "SUCCEEDED"
	StatusFailed    = "FAILED"
	StatusTimedOut  = "TIMED_OUT"
	StatusAborted   = "ABORTED"
)

// StateMachine is a created state machine. Definition is the text as given to CreateStateMachine. Its versions,
// aliases and tags are kept with it, so that the Store saves a state machine and all of them at once.
type StateMachine struct {
	Arn          string    `json:"arn"`
	Name         string    `json:"name"`
	Definition   string    `json:"definition"`
	RoleArn      string    `json:"roleArn"`
	Type         string    `json:"type"`
	CreationDate time.Time `json:"creationDate"`
	// UpdateDate is when UpdateStateMachine last changed it; zero until then.
	UpdateDate time.Time `json:"updateDate,omitzero"`
	// Config is its logging, tracing and encryption configuration (config.go).
	Config
	// RevisionID identifies the current revision: empty for the revision CreateStateMachine made (AWS's "INITIAL"),
	// a new UUID at each UpdateStateMachine that changes something.
	RevisionID string `json:"revisionId,omitempty"`
	// Tags are the state machine's tags (tags.go).
	Tags map[string]string `json:"tags,omitempty"`
	// Versions are its published versions, oldest first; LastVersion is the number of the last one published
	// (numbers are never used again, even once a version is deleted). Aliases are its aliases, by name
	// (versions.go).
	Versions    []StateMachineVersion `json:"versions,omitempty"`
	LastVersion int                   `json:"lastVersion,omitempty"`
	Aliases     []StateMachineAlias   `json:"aliases,omitempty"`
	// Description is a version's description, when the StateMachine describes a version (DescribeStateMachine).
	Description string `json:"description,omitempty"`
	// Created records what CreateStateMachine was asked to publish, for its idempotency check.
	Created CreateOptions `json:"created,omitzero"`
	// Revisions are the earlier revisions (oldest first) that executions of the state machine itself started with
	// and that the engine still keeps: a redrive runs, and DescribeStateMachineForExecution describes, the revision
	// the execution started with (revisions.go).
	Revisions []Revision `json:"revisions,omitempty"`
	// Label is the label of the Distributed Map state the StateMachine describes, when DescribeStateMachine was
	// given that state's qualified ARN (<state machine ARN>/<label>); empty otherwise. It is never stored.
	Label string `json:"-"`
}

// ExecutionRecord is the serializable state of an execution: what DescribeExecution reports plus its history.
type ExecutionRecord struct {
	Arn             string     `json:"executionArn"`
	StateMachineArn string     `json:"stateMachineArn"`
	Name            string     `json:"name"`
	Status          string     `json:"status"`
	Input           string     `json:"input"`
	Output          *string    `json:"output,omitempty"`
	Error           *string    `json:"error,omitempty"`
	Cause           *string    `json:"cause,omitempty"`
	StartDate       time.Time  `json:"startDate"`
	StopDate        *time.Time `json:"stopDate,omitempty"`
	// StateMachineVersionArn is the version the execution runs, when it was started with a version or an alias;
	// StateMachineAliasArn the alias, when it was started with one.
	StateMachineVersionArn string  `json:"stateMachineVersionArn,omitempty"`
	StateMachineAliasArn   string  `json:"stateMachineAliasArn,omitempty"`
	History                []Event `json:"history"`
	// Checkpoint is where a running execution resumes after a restart (Options.CheckpointEveryState).
	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
	// Ext holds what only some executions have: redrives and Distributed Map runs. It is nil for the others, so
	// that their record stays as small as it was (the MemoryStore keeps one per closed execution). Records share
	// it (Clone): it is replaced, never changed in place.
	Ext *RecordExt `json:"ext,omitempty"`
}

// RecordExt is the part of an ExecutionRecord that only some executions have.
type RecordExt struct {
	// RedriveCount is how many times the execution was redriven (RedriveExecution), RedriveDate when last.
	RedriveCount int        `json:"redriveCount,omitempty"`
	RedriveDate  *time.Time `json:"redriveDate,omitempty"`
	// Redrive is where a redrive resumes an execution that did not succeed: the top-level state that was running
	// when it failed, timed out or was aborted, with that state's input (redrive.go).
	Redrive *RedrivePoint `json:"redrive,omitempty"`
	// MapRuns are the records of the execution's Distributed Map runs (maprun.go).
	MapRuns []MapRun `json:"mapRuns,omitempty"`
	// MockTestCase is the mock test case the execution was started with (<arn>#<TestCase>, mock.go).
	MockTestCase string `json:"mockTestCase,omitempty"`
	// MapRunArn is the Map Run that started the execution, a child workflow execution of a Distributed Map
	// (children.go).
	MapRunArn string `json:"mapRunArn,omitempty"`
	// Revision is the RevisionID of the state machine's revision the execution started with, when that was not
	// the revision CreateStateMachine made (revisions.go).
	Revision string `json:"revision,omitempty"`
}

// clone returns a deep copy of x.
func (x *RecordExt) clone() *RecordExt {
	c := *x
	c.MapRuns = append([]MapRun(nil), x.MapRuns...)
	if x.Redrive != nil {
		rp := *x.Redrive
		rp.Succeeded = append([]BranchOutput(nil), x.Redrive.Succeeded...)
		c.Redrive = &rp
	}
	return &c
}

// RedriveCount returns how many times the execution was redriven.
func (r *ExecutionRecord) RedriveCount() int {
	if r.Ext == nil {
		return 0
	}
	return r.Ext.RedriveCount
}

// RedriveDate returns when the execution was last redriven, nil when never.
func (r *ExecutionRecord) RedriveDate() *time.Time {
	if r.Ext == nil {
		return nil
	}
	return r.Ext.RedriveDate
}

// RedrivePoint returns where a redrive would resume the execution, nil when it has none.
func (r *ExecutionRecord) RedrivePoint() *RedrivePoint {
	if r.Ext == nil {
		return nil
	}
	return r.Ext.Redrive
}

// Revision returns the RevisionID of the state machine's revision the execution started with: empty for the one
// CreateStateMachine made, and for an execution of a version.
func (r *ExecutionRecord) Revision() string {
	if r.Ext == nil {
		return ""
	}
	return r.Ext.Revision
}

// MapRunArn returns the Map Run that started the execution when it is a child workflow execution of a Distributed
// Map, else "".
func (r *ExecutionRecord) MapRunArn() string {
	if r.Ext == nil {
		return ""
	}
	return r.Ext.MapRunArn
}

// MapRuns returns the records of the execution's Map Runs.
func (r *ExecutionRecord) MapRuns() []MapRun {
	if r.Ext == nil {
		return nil
	}
	return r.Ext.MapRuns
}

// ext returns r.Ext to be changed: a copy of it, since records share their Ext (Clone), or a new one.
func (r *ExecutionRecord) ext() *RecordExt {
	if r.Ext == nil {
		r.Ext = &RecordExt{}
	} else {
		r.Ext = r.Ext.clone()
	}
	return r.Ext
}

// Checkpoint is the position of a running execution between two top-level states: the state about to be
// entered, its input, and the id its StateEntered event points back to. History holds exactly the events before it.
type Checkpoint struct {
	State           string `json:"state"`
	Input           string `json:"input"`
	PreviousEventID int64  `json:"previousEventId"`
	// Callback is set when the state is a Task waiting for its token (callback.go): it resumes waiting.
	Callback *CallbackCheckpoint `json:"callback,omitempty"`
	// Variables is the JSON object of the execution's workflow variables (the machine's own scope) at that point.
	Variables string `json:"variables,omitempty"`
}

// Clone returns a deep copy of the record, safe to keep or hand out.
func (r *ExecutionRecord) Clone() *ExecutionRecord {
	c := *r
	c.History = append([]Event(nil), r.History...)
	if r.Checkpoint != nil {
		cp := *r.Checkpoint
		c.Checkpoint = &cp
	}
	return &c // Ext is shared: it is never changed in place (ext)
}

// Store persists state machines and executions, and keeps the records and histories of closed executions so that
// the engine does not: once a closed execution is saved, the engine keeps only a small summary of it and reads the
// rest back with Execution. Implementations must be safe for concurrent use; the engine never saves, reads or
// deletes one execution from two goroutines at once.
//
// SaveExecution is called when an execution starts, at each checkpoint (Options.CheckpointEveryState) and when it
// closes. rec.History is not read: events holds the events that follow those already saved, one JSON line each (the
// GetExecutionHistory shape), so that a save costs what is new; the caller never changes them afterwards, so a store
// may keep them. A save is atomic: after a crash the store returns
// the execution as of a whole save. Load is called once, by Restore, and returns closed executions without their
// History and running ones with it. Execution and DeleteExecution answer ErrExecutionDoesNotExist for an execution
// the store does not have.
type Store interface {
	SaveStateMachine(ctx context.Context, sm StateMachine) error
	SaveExecution(ctx context.Context, rec *ExecutionRecord, events []byte) error
	Execution(ctx context.Context, arn string) (*ExecutionRecord, error)
	DeleteExecution(ctx context.Context, arn string) error
	Load(ctx context.Context) ([]StateMachine, []*ExecutionRecord, error)
}

// stateMachineDeleter is implemented by Stores that can forget a state machine (MemoryStore, FileStore); with
// another Store, a deleted state machine comes back with Restore.
type stateMachineDeleter interface {
	DeleteStateMachine(ctx context.Context, arn string) error
}

// MemoryStore is a Store in memory; it is the default. It keeps each execution as its description and its history's
// JSON lines (about a third of the memory the decoded events take).
type MemoryStore struct {
	mu   sync.Mutex
	sms  map[string]StateMachine
	exec map[string]*memExecution

	actMu      sync.Mutex
	activities map[string]Activity // activity.go
}

// memExecution is one execution in a MemoryStore.
type memExecution struct {
	rec    ExecutionRecord // History is nil
	events []byte
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{sms: map[string]StateMachine{}, exec: map[string]*memExecution{}}
}

// SaveStateMachine stores sm.
func (s *MemoryStore) SaveStateMachine(_ context.Context, sm StateMachine) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sms[sm.Arn] = sm
	return nil
}

// DeleteStateMachine forgets the state machine with the ARN (its versions and aliases with it).
func (s *MemoryStore) DeleteStateMachine(_ context.Context, arn string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sms, arn)
	return nil
}

// SaveExecution stores rec's description and appends events to its history. The history of a closed execution is
// kept with little spare capacity: events themselves when they are all of it, else a copy.
func (s *MemoryStore) SaveExecution(_ context.Context, rec *ExecutionRecord, events []byte) error {
	c := rec.Clone()
	c.History = nil
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.exec[rec.Arn]
	if m == nil {
		m = &memExecution{}
		s.exec[rec.Arn] = m
	}
	m.rec = *c
	switch {
	case rec.Status == StatusRunning:
		m.events = append(m.events, events...)
	case len(m.events) == 0 && cap(events)-len(events) <= len(events)/4:
		m.events = events[:len(events):len(events)] // the caller does not change them; little capacity is wasted
	default:
		m.events = append(make([]byte, 0, len(m.events)+len(events)), m.events...)
		m.events = append(m.events, events...)
	}
	return nil
}

// Execution returns a copy of the stored execution, history included.
func (s *MemoryStore) Execution(_ context.Context, arn string) (*ExecutionRecord, error) {
	s.mu.Lock()
	m, ok := s.exec[arn]
	var rec ExecutionRecord
	var events []byte
	if ok {
		rec, events = m.rec, m.events
	}
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrExecutionDoesNotExist, arn)
	}
	h, err := decodeEvents(events)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", arn, err)
	}
	rec.History = h
	return rec.Clone(), nil
}

// DeleteExecution forgets the execution.
func (s *MemoryStore) DeleteExecution(_ context.Context, arn string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.exec[arn]; !ok {
		return fmt.Errorf("%w: %s", ErrExecutionDoesNotExist, arn)
	}
	delete(s.exec, arn)
	return nil
}

// Load returns copies of everything stored, running executions with their history.
func (s *MemoryStore) Load(_ context.Context) ([]StateMachine, []*ExecutionRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sms := make([]StateMachine, 0, len(s.sms))
	for _, sm := range s.sms {
		sms = append(sms, sm)
	}
	recs := make([]*ExecutionRecord, 0, len(s.exec))
	for _, m := range s.exec {
		r := m.rec.Clone()
		if r.Status == StatusRunning {
			h, err := decodeEvents(m.events)
			if err != nil {
				return nil, nil, fmt.Errorf("load %s: %w", r.Arn, err)
			}
			r.History = h
		}
		recs = append(recs, r)
	}
	return sms, recs, nil
}
