package sfnlocal

import (
	"context"
	"encoding/json"
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
}

// Clone returns a deep copy of the record, safe to keep or hand out.
func (r *ExecutionRecord) Clone() *ExecutionRecord {
	c := *r
	c.History = append([]Event(nil), r.History...)
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

// MemoryStore is a Store that keeps JSON copies in memory; it is the default.
type MemoryStore struct {
	mu   sync.Mutex
	sms  map[string][]byte
	exec map[string][]byte
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{sms: map[string][]byte{}, exec: map[string][]byte{}}
}

// SaveStateMachine stores a copy of sm.
func (s *MemoryStore) SaveStateMachine(_ context.Context, sm StateMachine) error {
	b, err := json.Marshal(sm)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sms[sm.Arn] = b
	return nil
}

// SaveExecution stores a copy of rec.
func (s *MemoryStore) SaveExecution(_ context.Context, rec *ExecutionRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.exec[rec.Arn] = b
	return nil
}

// Load returns copies of everything stored.
func (s *MemoryStore) Load(_ context.Context) ([]StateMachine, []*ExecutionRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var sms []StateMachine
	for _, b := range s.sms {
		var sm StateMachine
		if err := json.Unmarshal(b, &sm); err != nil {
			return nil, nil, err
		}
		sms = append(sms, sm)
	}
	var recs []*ExecutionRecord
	for _, b := range s.exec {
		var r ExecutionRecord
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, nil, err
		}
		recs = append(recs, &r)
	}
	return sms, recs, nil
}
