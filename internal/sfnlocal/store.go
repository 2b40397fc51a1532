package sfnlocal

import (
	"context"
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

// StateMachine is a created state machine. Definition is the text as given to CreateStateMachine.
type StateMachine struct {
	Arn          string    `json:"arn"`
	Name         string    `json:"name"`
	Definition   string    `json:"definition"`
	RoleArn      string    `json:"roleArn"`
	Type         string    `json:"type"`
	CreationDate time.Time `json:"creationDate"`
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
	History         []Event    `json:"history"`
	// Checkpoint is where a running execution resumes after a restart (Options.CheckpointEveryState).
	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
}

// Checkpoint is the position of a running execution between two top-level states: the state about to be
// entered, its input, and the id its StateEntered event points back to. History holds exactly the events before it.
type Checkpoint struct {
	State           string `json:"state"`
	Input           string `json:"input"`
	PreviousEventID int64  `json:"previousEventId"`
}

// Clone returns a deep copy of the record, safe to keep or hand out.
func (r *ExecutionRecord) Clone() *ExecutionRecord {
	c := *r
	c.History = append([]Event(nil), r.History...)
	if r.Checkpoint != nil {
		cp := *r.Checkpoint
		c.Checkpoint = &cp
	}
	return &c
}

// Store persists state machines and executions so that a restarted engine can serve them again. Implementations
// must be safe for concurrent use. SaveExecution is called when an execution starts and whenever it closes;
// Load is called once, by Restore.
type Store interface {
	SaveStateMachine(ctx context.Context, sm StateMachine) error
	SaveExecution(ctx context.Context, rec *ExecutionRecord) error
	Load(ctx context.Context) ([]StateMachine, []*ExecutionRecord, error)
}

// MemoryStore is a Store that keeps copies in memory; it is the default. Events are immutable once written, so a
// copy shares their details.
type MemoryStore struct {
	mu   sync.Mutex
	sms  map[string]StateMachine
	exec map[string]*ExecutionRecord
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{sms: map[string]StateMachine{}, exec: map[string]*ExecutionRecord{}}
}

// SaveStateMachine stores sm.
func (s *MemoryStore) SaveStateMachine(_ context.Context, sm StateMachine) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sms[sm.Arn] = sm
	return nil
}

// SaveExecution stores a copy of rec.
func (s *MemoryStore) SaveExecution(_ context.Context, rec *ExecutionRecord) error {
	c := rec.Clone()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.exec[rec.Arn] = c
	return nil
}

// Load returns copies of everything stored.
func (s *MemoryStore) Load(_ context.Context) ([]StateMachine, []*ExecutionRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sms := make([]StateMachine, 0, len(s.sms))
	for _, sm := range s.sms {
		sms = append(sms, sm)
	}
	recs := make([]*ExecutionRecord, 0, len(s.exec))
	for _, r := range s.exec {
		recs = append(recs, r.Clone())
	}
	return sms, recs, nil
}
