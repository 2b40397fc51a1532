package sfnengine

import (
	"fmt"
	"slices"
	"time"

	"github.com/transferflow/orchestrator/localaws/asl"
)

// How an execution keeps the revision it started with. AWS documents that a redrive "uses the same state machine
// definition and execution ARN as the original execution", even after UpdateStateMachine: the engine therefore
// keeps, with the state machine, each earlier revision an execution of the state machine itself may still redrive
// or describe (StateMachine.Revisions), and each execution the RevisionID it started with (RecordExt.Revision,
// empty for the revision CreateStateMachine made, so that an execution of a state machine never updated pays
// nothing for it).

// Revision is an earlier revision of a state machine: its definition and role as they were, and when it was made
// (the state machine's creation or update date then).
type Revision struct {
	RevisionID string    `json:"revisionId,omitempty"`
	Definition string    `json:"definition"`
	RoleArn    string    `json:"roleArn"`
	Date       time.Time `json:"date"`
}

// revision returns sm's earlier revision with the id.
func (sm *StateMachine) revision(id string) (Revision, bool) {
	for _, r := range sm.Revisions {
		if r.RevisionID == id {
			return r, true
		}
	}
	return Revision{}, false
}

// current returns sm's current revision as an earlier one, once an update replaces it.
func (sm *StateMachine) current() Revision {
	date := sm.UpdateDate
	if date.IsZero() {
		date = sm.CreationDate
	}
	return Revision{RevisionID: sm.RevisionID, Definition: sm.Definition, RoleArn: sm.RoleArn, Date: date}
}

// keepRevisionsLocked returns the revisions an update of the state machine with the ARN keeps: its earlier ones and
// old, the one the update replaces, each only while an execution the engine knows (running, or closed and kept)
// started with it.
func (e *Engine) keepRevisionsLocked(arn string, earlier []Revision, old Revision) []Revision {
	used := map[string]bool{}
	for _, x := range e.exec {
		if x.m.sm.Arn == arn {
			used[x.m.sm.RevisionID] = true
		}
	}
	for _, c := range e.closed {
		if c.stateMachineArn == arn && !c.forgetting {
			rev := ""
			if c.started != nil {
				rev = c.started.revision
			}
			used[rev] = true
		}
	}
	var kept []Revision
	for _, r := range append(slices.Clip(earlier), old) {
		if used[r.RevisionID] {
			kept = append(kept, r)
		}
	}
	return kept
}

// executionMachineLocked returns the machine an execution runs, as the engine has it now: the version it ran, when it
// was started with a version or an alias (a version is immutable); else the revision of the state machine it
// started with. When there is none, it returns why: reasonDeleted (the state machine was deleted, or deleted and
// created again), reasonVersionGone, or reasonDefinitionEdit with the current machine (a record saved before the
// engine kept revisions, of a state machine updated since).
func (e *Engine) executionMachineLocked(rec *ExecutionRecord) (*machine, string) {
	m := e.sms[rec.StateMachineArn]
	if m == nil || m.createdAfter(rec) {
		return nil, reasonDeleted
	}
	if rec.StateMachineVersionArn != "" {
		v, ok := m.sm.version(rec.StateMachineVersionArn)
		if !ok {
			return nil, reasonVersionGone
		}
		vm, err := e.versionMachineLocked(m, v)
		if err != nil {
			return nil, reasonVersionGone
		}
		return vm, ""
	}
	id := rec.Revision()
	if id == m.sm.RevisionID {
		return m, ""
	}
	r, ok := m.sm.revision(id)
	if !ok {
		return m, reasonDefinitionEdit
	}
	rm, err := revisionMachineLocked(m, r)
	if err != nil {
		return m, reasonDefinitionEdit
	}
	return rm, ""
}

// revisionMachineLocked returns the machine that runs the earlier revision r of m, compiling it on first use.
func revisionMachineLocked(m *machine, r Revision) (*machine, error) {
	if rm, ok := m.revs[r.RevisionID]; ok {
		return rm, nil
	}
	def, err := asl.Load([]byte(r.Definition))
	if err != nil {
		return nil, fmt.Errorf("load revision %q of %s: %w", r.RevisionID, m.sm.Arn, err)
	}
	sm := m.sm
	sm.Definition, sm.RoleArn, sm.RevisionID, sm.UpdateDate = r.Definition, r.RoleArn, r.RevisionID, r.Date
	sm.Versions, sm.Aliases, sm.Revisions, sm.Tags = nil, nil, nil, nil
	rm := &machine{sm: sm, def: def}
	if m.revs == nil {
		m.revs = map[string]*machine{}
	}
	m.revs[r.RevisionID] = rm
	return rm, nil
}

// StateMachineForExecution returns the state machine as the execution rec (a record DescribeExecution returned)
// started with it, as DescribeStateMachineForExecution describes it: the version it ran, while that exists, or the
// revision of the state machine it started with (its definition, role, revisionId and the date it was made as
// UpdateDate), while the engine keeps it; else the state machine as it is now. It returns
// ErrStateMachineDoesNotExist when the state machine was deleted.
func (e *Engine) StateMachineForExecution(rec *ExecutionRecord) (StateMachine, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := e.sms[rec.StateMachineArn]
	if m == nil {
		return StateMachine{}, fmt.Errorf("%w: %s", ErrStateMachineDoesNotExist, rec.StateMachineArn)
	}
	if rec.StateMachineVersionArn != "" {
		if v, ok := m.sm.version(rec.StateMachineVersionArn); ok {
			return StateMachine{Arn: v.Arn, Name: m.sm.Name, Definition: v.Definition, RoleArn: v.RoleArn,
				Type: m.sm.Type, CreationDate: v.CreationDate, Config: v.Config, RevisionID: v.RevisionID,
				Description: v.Description}, nil
		}
		return m.sm, nil
	}
	sm := m.sm
	if r, ok := m.sm.revision(rec.Revision()); ok && rec.Revision() != m.sm.RevisionID {
		sm.Definition, sm.RoleArn, sm.RevisionID, sm.UpdateDate = r.Definition, r.RoleArn, r.RevisionID, r.Date
	}
	return sm, nil
}
