package sfnengine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/big"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/transferflow/orchestrator/localaws/asl"
	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
	"github.com/transferflow/orchestrator/localaws/sfnmock"
)

// DefaultMaxHistoryEvents is the history size at which AWS fails an execution.
const DefaultMaxHistoryEvents = 25000

// DefaultMaxHistoryBytes is the default Options.MaxHistoryBytes: the size of an execution's history past which its
// events are recorded without their payloads. A transfer's history is about 8 KB.
const DefaultMaxHistoryBytes = 4 << 20

// maxLogPrealloc bounds the capacity a new execution's history starts with (machine.logSize).
const maxLogPrealloc = 1 << 20

// MaxPayloadBytes is the Step Functions payload quota, 256 KiB of UTF-8, for an execution's input and output and for
// each state's input, output and result: a larger one fails the state with States.DataLimitExceeded.
const MaxPayloadBytes = 256 * 1024

// LambdaInvoker runs a Lambda function. FunctionName is passed through as written in the definition: a name, a
// full or partial ARN, possibly with a qualifier. A function error is returned as *FunctionError, a Lambda service
// error as *ServiceError; any other error surfaces as Lambda.ServiceException. Invoke must return soon after ctx is
// done: a task without TimeoutSeconds calls it on the execution's goroutine, so a stop or the execution's timeout
// takes effect when it returns.
type LambdaInvoker interface {
	Invoke(ctx context.Context, functionName string, payload []byte) ([]byte, error)
}

// Subscriber receives every execution status change as the JSON text of an EventBridge event with detail-type
// "Step Functions Execution Status Change". It is called from the execution's goroutine, in order; it must not
// block for long.
type Subscriber func(ctx context.Context, event []byte)

// Options configures an Engine. Zero values select the defaults noted on each field.
type Options struct {
	// Clock is the time source (default SystemClock).
	Clock Clock
	// NewID returns a new unique id, used for execution names, event ids and States.UUID (default random UUIDv4).
	NewID func() string
	// Lambda runs lambda:invoke tasks; without it those tasks fail with Lambda.ServiceException.
	Lambda LambdaInvoker
	// DynamoDB runs the dynamodb:* tasks; without it those tasks fail with DynamoDB.AmazonDynamoDBException.
	DynamoDB DynamoDBAPI
	// EventBridge runs the events:putEvents tasks; without it those tasks fail with EventBridge.SdkClientException.
	EventBridge EventBridgeAPI
	// SQS runs the sqs:sendMessage tasks and SNS the sns:publish tasks; without them those tasks fail with
	// SQS.SdkClientException and SNS.SdkClientException.
	SQS SQSAPI
	SNS SNSAPI
	// Subscribers receive status-change events.
	Subscribers []Subscriber
	// Publishes, when set, is asked before each status-change event is built: false means no subscriber would use
	// an event of this state machine with this status, and none is built or sent (an event carries the execution's
	// input and output, so building the ones nobody reads costs the local stack several per cent of its CPU per
	// transfer). Nil publishes every event.
	Publishes func(stateMachineArn, status string) bool
	// Store persists state machines and executions (default a MemoryStore).
	Store Store
	// Region and AccountID appear in ARNs and events (default us-east-1 and 123456789012).
	Region    string
	AccountID string
	// Logger receives operational messages (default discards them).
	Logger *slog.Logger
	// MaxHistoryEvents bounds each execution's history (default 25,000, as on AWS).
	MaxHistoryEvents int
	// MaxHistoryBytes bounds the memory of each execution's history, which the engine keeps while the execution
	// runs (and a MemoryStore after it closes): once its JSON lines reach this size, later events are recorded
	// without their payloads (input, output, parameters and cause are empty, and inputDetails/outputDetails say
	// truncated). AWS keeps every payload; this is the local engine's own bound, so that a hostile definition
	// (25,000 events of up to 256 KiB each) cannot take gigabytes. The execution itself runs as on AWS. Default
	// DefaultMaxHistoryBytes; negative: no bound.
	MaxHistoryBytes int
	// ExecutionTimeout, when positive, overrides every state machine's TimeoutSeconds.
	ExecutionTimeout time.Duration
	// CheckpointEveryState saves each running execution to the Store before every top-level state, so that Restore
	// can resume it (use it with a persistent Store; a save writes the events since the previous one).
	CheckpointEveryState bool
	// HistoryRetention, when positive, is how long a closed execution is kept after its stop date. Past it, the
	// execution is deleted from the Store and answers ErrExecutionDoesNotExist, as on AWS once its retention is
	// over. Zero keeps closed executions for the engine's life.
	HistoryRetention time.Duration
	// MaxClosedExecutions, when positive, bounds how many closed executions are kept: beyond it the oldest (by stop
	// date) are deleted first, as with HistoryRetention. Zero sets no bound.
	MaxClosedExecutions int
	// MockConfig, when set, holds Step Functions Local's mocked service integrations (sfnmock.Load): an execution
	// started with the state machine ARN <arn>#<TestCase> runs with that test case, whose Task states get their
	// mocked responses instead of calling their services (mock.go). Nil: a '#' in the ARN is not special.
	MockConfig *sfnmock.Config
	// ActivityPoll is how long GetActivityTask waits for a task before it answers without one (default
	// MaxActivityPoll, AWS's 60 s; more than that is MaxActivityPoll). Tests shorten it.
	ActivityPoll time.Duration
}

// Engine keeps state machines and executions and runs them. It is safe for concurrent use.
type Engine struct {
	opts Options

	// smMu serializes the changes to state machines and their saves (changeMachine), so that the Store gets them in
	// order. It is taken before mu.
	smMu sync.Mutex
	mu   sync.Mutex
	sms  map[string]*machine // by ARN
	// vms holds the machines of the versions that have run, by version ARN (versionMachineLocked).
	vms map[string]*machine
	// exec holds the running executions, and closed ones until the Store has them; closed the summaries of the
	// others. queue[head:] is closed in the order of the stop dates, for retention.
	exec   map[string]*execution
	closed map[string]*closedExecution
	queue  []*closedExecution
	head   int
	// reopened counts the summaries in queue[head:] of executions redriven since (redrive.go).
	reopened int
	wg       sync.WaitGroup  // one count per execution started and not yet finished
	idle     chan *execution // idle runners receive the next execution here (runExecution)
	// runners counts the runner goroutines, which Close waits for too.
	runners sync.WaitGroup

	ctx    context.Context
	cancel context.CancelFunc

	callbacks  callbackRegistry // tasks waiting for their token (callback.go)
	activities activityRegistry // activity.go
	// redrives holds the clientTokens of the last redrives of each execution (redrive.go); guarded by mu.
	redrives map[string][]redriveToken
	// mapRuns are the running Map Runs, mapRunExec the execution of every Map Run of a Standard execution known,
	// mapRunsOf the Map Runs of each such execution, for retention to forget them (maprun.go); guarded by mu.
	mapRuns    map[string]*mapRunState
	mapRunExec map[string]string
	mapRunsOf  map[string][]string
	// children are the STANDARD child workflow executions of the Distributed Maps of Standard executions, by ARN,
	// and childrenOf their ARNs by Map Run, in the order they started (children.go); guarded by mu.
	children   map[string]*execution
	childrenOf map[string][]string
}

type machine struct {
	sm  StateMachine
	def *asl.Definition

	progOnce sync.Once
	prog     *program // def compiled, on first use (program)
	// logSize is the history size, in bytes, of its last closed execution: the next one's log starts that big.
	logSize atomic.Int64
	// revs holds the machines of the earlier revisions that executions run again, by RevisionID
	// (revisionMachineLocked); guarded by the engine's mu.
	revs map[string]*machine
}

// New returns an Engine with the given options.
func New(opts Options) *Engine {
	if opts.Clock == nil {
		opts.Clock = SystemClock{}
	}
	if opts.NewID == nil {
		opts.NewID = NewUUID
	}
	if opts.Store == nil {
		opts.Store = NewMemoryStore()
	}
	if opts.Region == "" {
		opts.Region = "us-east-1"
	}
	if opts.AccountID == "" {
		opts.AccountID = "123456789012"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MaxHistoryEvents <= 0 {
		opts.MaxHistoryEvents = DefaultMaxHistoryEvents
	}
	if opts.MaxHistoryBytes == 0 {
		opts.MaxHistoryBytes = DefaultMaxHistoryBytes
	}
	if opts.ActivityPoll <= 0 || opts.ActivityPoll > MaxActivityPoll {
		opts.ActivityPoll = MaxActivityPoll
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Engine{opts: opts, sms: map[string]*machine{}, exec: map[string]*execution{}, idle: make(chan *execution),
		closed: map[string]*closedExecution{}, ctx: ctx, cancel: cancel}
}

// Close stops the engine: it interrupts running executions and waits for their goroutines. Interrupted executions
// are not closed: they stay RUNNING in the store, where a restarted engine's Restore finds them.
func (e *Engine) Close() {
	e.cancel()
	e.wg.Wait()
	e.runners.Wait()
}

// Now returns the engine clock's time.
func (e *Engine) Now() time.Time { return e.opts.Clock.Now() }

// Subscribe adds a status-change subscriber.
func (e *Engine) Subscribe(s Subscriber) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.opts.Subscribers = append(e.opts.Subscribers, s)
}

// Restore loads the store's state machines and executions into the engine. A started execution runs, whatever
// happened to the engine, as a Standard execution does on AWS: a running execution that has a checkpoint
// (Options.CheckpointEveryState) resumes there, the top-level state that was interrupted running again (Task side
// effects may therefore happen twice); one without a checkpoint (the engine stopped before its first state, or
// checkpoints are off) starts again from its first state with the input saved with its start. Only a running
// execution that cannot run again (its state machine is gone, its input or checkpoint does not decode) is closed as
// ABORTED with error States.Runtime. Closed executions stay in the Store, the engine keeps their summaries; those
// that retention no longer keeps are deleted.
func (e *Engine) Restore(ctx context.Context) error {
	sms, recs, err := e.opts.Store.Load(ctx)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if err := e.restoreActivities(ctx); err != nil {
		return err
	}
	e.mu.Lock()
	for _, sm := range sms {
		def, err := asl.Load([]byte(sm.Definition))
		if err != nil {
			e.mu.Unlock()
			return fmt.Errorf("restore state machine %s: %w", sm.Arn, err)
		}
		e.sms[sm.Arn] = &machine{sm: sm, def: def}
	}
	var closed []*closedExecution
	for _, r := range recs {
		for _, mr := range r.MapRuns() {
			e.knowMapRunLocked(mr.Arn, r.Arn)
		}
		// The version or the revision the execution started with; none when its state machine was deleted (or
		// deleted and created again) or its version deleted. A record saved before revisions were kept runs the
		// current revision.
		m, _ := e.executionMachineLocked(r)
		if r.Status == StatusRunning && m != nil {
			if run := e.restartLocked(m, r); run != nil {
				e.wg.Add(1)
				go func() {
					defer e.wg.Done()
					run()
				}()
				continue
			}
		}
		if r.Status == StatusRunning {
			if err := e.abortRestored(ctx, r); err != nil {
				e.mu.Unlock()
				return fmt.Errorf("restore: %w", err)
			}
		}
		c := summarize(r)
		if m != nil {
			c.stateMachineArn = m.sm.Arn
		}
		closed = append(closed, c)
	}
	sort.Slice(closed, func(i, j int) bool { return closed[i].stop.Before(closed[j].stop) })
	for _, c := range closed {
		e.addClosedLocked(c)
	}
	gone := e.expireLocked()
	e.mu.Unlock()
	e.forget(gone)
	return nil
}

// restartLocked makes a restored running execution one of the engine's and returns the function that runs it on:
// from its checkpoint when it has one, else from its first state. It returns nil, changing nothing, when the
// execution cannot run again: its input or checkpoint does not decode, or its checkpoint names a state the
// definition does not have.
func (e *Engine) restartLocked(m *machine, r *ExecutionRecord) func() {
	input, err := asl.Decode([]byte(r.Input))
	if err != nil {
		return nil
	}
	cp := r.Checkpoint
	var cpInput any
	vars := newScope(nil)
	if cp != nil {
		if _, ok := m.def.States[cp.State]; !ok {
			return nil
		}
		if cpInput, err = asl.Decode([]byte(cp.Input)); err != nil {
			return nil
		}
		if vars, err = restoreScope(cp.Variables); err != nil {
			return nil
		}
	}
	var redo *redoPoint
	if cp != nil && redriveCheckpoint(r, r.History, cp) {
		if redo, err = newRedoPoint(r.RedrivePoint()); err != nil {
			return nil
		}
	}
	x := newExecution(e, m, r.Arn, r.Name, r.Input, input)
	x.vars = vars
	fresh := len(r.History) == 0
	x.adopt(r)
	e.exec[r.Arn] = x
	switch {
	case cp != nil:
		if redo != nil { // checkpointed as its redrive entered the state it resumed at
			x.ext().redo = redo
		}
		x.restoreWait(cp)
		at := *cp
		return func() { x.resume(at, cpInput) }
	case fresh:
		// Saved by StartExecution and nothing since: the execution starts as it would have, its
		// ExecutionStarted event included.
		return x.run
	case r.RedriveCount() > 0 && r.RedrivePoint() != nil:
		// Redriven and no checkpoint since: the state the redrive resumed at is entered again.
		return e.restartRedriven(x, r)
	default:
		// Events but no checkpoint (checkpoints off, or a store of an older version): the first state is entered
		// again after the events already there.
		at := Checkpoint{State: m.def.StartAt, Input: r.Input, PreviousEventID: x.lastEventID()}
		return func() { x.resume(at, input) }
	}
}

// abortRestored closes a running execution that cannot resume as ABORTED and saves it.
func (e *Engine) abortRestored(ctx context.Context, r *ExecutionRecord) error {
	r.Status = StatusAborted
	now := e.opts.Clock.Now()
	r.StopDate = &now
	msg, cause := ErrNameRuntime, "the local engine restarted while the execution was running"
	r.Error, r.Cause, r.Checkpoint = &msg, &cause, nil
	n := int64(len(r.History))
	line := appendEvent(nil, &Event{ID: n + 1, PreviousEventID: n, Timestamp: now, Type: EventExecutionAborted,
		DetailsKey: "executionAbortedEventDetails", Details: map[string]any{"error": msg, "cause": cause}})
	r.History = nil
	if err := e.opts.Store.SaveExecution(ctx, r, line); err != nil {
		return fmt.Errorf("save aborted execution %s: %w", r.Arn, err)
	}
	return nil
}

// NewUUID returns a random version 4 UUID.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:36], b[10:16])
	return string(s[:])
}

func randomInt(lo, hi int64) int64 {
	n, err := rand.Int(rand.Reader, big.NewInt(hi-lo))
	if err != nil {
		return lo
	}
	return lo + n.Int64()
}

var nameRE = regexp.MustCompile("^[^\\s<>{}\\[\\]?*\"#%\\\\^|~`$&,;:/\\x00-\\x1f\\x7f-\\x9f]{1,80}$")

// ValidName reports whether s is a valid state machine or execution name.
func ValidName(s string) bool { return utf8.RuneCountInString(s) <= 80 && nameRE.MatchString(s) }

// StateMachineArn returns the ARN of the state machine called name.
func (e *Engine) StateMachineArn(name string) string {
	return fmt.Sprintf("arn:aws:states:%s:%s:stateMachine:%s", e.opts.Region, e.opts.AccountID, name)
}

func (e *Engine) executionArn(smName, name string) string {
	return "arn:aws:states:" + e.opts.Region + ":" + e.opts.AccountID + ":execution:" + smName + ":" + name
}

// CreateInput is the input of CreateStateMachine.
type CreateInput struct {
	Name       string
	Definition string
	RoleArn    string
	Type       string // STANDARD (default) or EXPRESS
	// Config is the logging, tracing and encryption configuration; what it leaves out gets AWS's defaults.
	Config Config
	// Tags are the state machine's tags (at most MaxTags).
	Tags map[string]string
	// Publish publishes the state machine's first revision as version 1, described by VersionDescription.
	CreateOptions
}

// CreateStateMachine validates and stores a state machine. It returns ErrInvalidName, a *DefinitionError
// (matching ErrInvalidDefinition; for an EXPRESS one also when it has what Express workflows cannot run),
// ErrTooManyTags, or ErrStateMachineExists when one with that name exists with another definition, type,
// configuration or publish request. As on AWS, a different role or other tags are ignored: the existing state
// machine is returned unchanged.
func (e *Engine) CreateStateMachine(ctx context.Context, in CreateInput) (StateMachine, error) {
	if !ValidName(in.Name) {
		return StateMachine{}, fmt.Errorf("%w: %q", ErrInvalidName, in.Name)
	}
	def, err := LoadDefinition([]byte(in.Definition))
	if err != nil {
		return StateMachine{}, &DefinitionError{Err: err}
	}
	if len(in.Tags) > MaxTags {
		return StateMachine{}, fmt.Errorf("%w: %s would have %d tags, more than %d", ErrTooManyTags,
			e.StateMachineArn(in.Name), len(in.Tags), MaxTags)
	}
	if in.Type == "" {
		in.Type = TypeStandard
	}
	if in.Type == TypeExpress {
		if err := expressProblems(def); err != nil {
			return StateMachine{}, err
		}
	}
	arn := e.StateMachineArn(in.Name)
	e.smMu.Lock()
	defer e.smMu.Unlock()
	e.mu.Lock()
	old, ok := e.sms[arn]
	e.mu.Unlock()
	if ok {
		if old.sm.Definition == in.Definition && old.sm.Type == in.Type && old.sm.Config.equal(in.Config) &&
			old.sm.Created == in.CreateOptions {
			return old.sm, nil
		}
		return StateMachine{}, fmt.Errorf("%w: %s", ErrStateMachineExists, arn)
	}
	sm := StateMachine{Arn: arn, Name: in.Name, Definition: in.Definition, RoleArn: in.RoleArn, Type: in.Type,
		CreationDate: e.opts.Clock.Now(), Config: in.Config.WithDefaults(), Tags: maps.Clone(in.Tags),
		Created: in.CreateOptions}
	if len(sm.Tags) == 0 {
		sm.Tags = nil
	}
	if in.Publish {
		if _, err := e.publish(&sm, in.VersionDescription, ""); err != nil {
			return StateMachine{}, err
		}
	}
	if err := e.opts.Store.SaveStateMachine(ctx, sm); err != nil {
		return StateMachine{}, fmt.Errorf("save state machine %s: %w", arn, err)
	}
	e.mu.Lock()
	e.sms[arn] = &machine{sm: sm, def: def}
	e.mu.Unlock()
	return sm, nil
}

// arnName checks that arn is arn:aws:states:region:account:kind:rest (ErrInvalidArn when it is not) and returns its
// seventh field (the state machine's name).
func arnName(arn, kind string) (string, error) {
	var field [7]string
	rest := arn
	for i := range 6 {
		f, r, ok := strings.Cut(rest, ":")
		if !ok {
			return "", fmt.Errorf("%w: %q", ErrInvalidArn, arn)
		}
		field[i], rest = f, r
	}
	field[6], _, _ = strings.Cut(rest, ":")
	if field[0] != "arn" || field[2] != "states" {
		return "", fmt.Errorf("%w: %q", ErrInvalidArn, arn)
	}
	if field[5] != kind {
		// AWS's words, e.g. for an Express execution's ARN given to DescribeExecution (recorded).
		return "", fmt.Errorf("%w: %s", ErrInvalidArn, "Resource type not valid in this context: "+field[5])
	}
	return field[6], nil
}

// DescribeStateMachine returns the state machine with the ARN or, given a version ARN, that version (as a
// StateMachine whose Arn is the version's, with its Description) or, given the qualified ARN of a Distributed Map
// state (<state machine ARN>/<label>, a Map Run's stateMachineArn), that state (describeMapState).
func (e *Engine) DescribeStateMachine(_ context.Context, arn string) (StateMachine, error) {
	base, q, err := splitMachineArn(arn)
	if err != nil {
		return StateMachine{}, err
	}
	if smName, _ := arnName(arn, "stateMachine"); strings.IndexByte(smName, '/') >= 0 {
		return e.describeMapState(arn, q)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	m, ok := e.sms[base]
	if !ok {
		return StateMachine{}, fmt.Errorf("%w: %s", ErrStateMachineDoesNotExist, arn)
	}
	if q == "" {
		return m.sm, nil
	}
	v, ok := m.sm.version(arn)
	if !ok {
		return StateMachine{}, fmt.Errorf("%w: %s", ErrStateMachineDoesNotExist, arn)
	}
	return StateMachine{Arn: v.Arn, Name: m.sm.Name, Definition: v.Definition, RoleArn: v.RoleArn, Type: m.sm.Type,
		CreationDate: v.CreationDate, Config: v.Config, RevisionID: v.RevisionID, Description: v.Description}, nil
}

// ListStateMachines returns every state machine, by name.
func (e *Engine) ListStateMachines(_ context.Context) []StateMachine {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]StateMachine, 0, len(e.sms))
	for _, m := range e.sms {
		out = append(out, m.sm)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// UpdateStateMachine replaces the definition and/or role of a state machine (empty values keep the current ones)
// and returns the updated state machine. Running executions keep the definition they started with.
func (e *Engine) UpdateStateMachine(ctx context.Context, arn, definition, roleArn string) (StateMachine, error) {
	sm, _, err := e.Update(ctx, UpdateInput{StateMachineArn: arn, Definition: definition, RoleArn: roleArn})
	return sm, err
}

// UpdateInput is the input of Update: what is empty (nil) is kept.
type UpdateInput struct {
	StateMachineArn string
	Definition      string
	RoleArn         string
	Config          Config
	// Publish publishes the revision the update makes (or the current one, when nothing changes) as a version,
	// described by VersionDescription.
	Publish            bool
	VersionDescription string
}

// Update changes a state machine's definition, role and configuration (what in leaves empty is kept) and returns
// it, with the version published when in.Publish is set. A change makes a new revision (a new RevisionID); an
// update that changes nothing keeps the revision. Running executions keep the definition they started with. A
// version or alias ARN is ErrInvalidArn.
func (e *Engine) Update(ctx context.Context, in UpdateInput) (StateMachine, *StateMachineVersion, error) {
	base, q, err := splitMachineArn(in.StateMachineArn)
	if err != nil {
		return StateMachine{}, nil, err
	}
	if q != "" {
		return StateMachine{}, nil, fmt.Errorf("%w: %q", ErrInvalidArn, in.StateMachineArn)
	}
	var def *asl.Definition
	if in.Definition != "" {
		d, err := LoadDefinition([]byte(in.Definition))
		if err != nil {
			return StateMachine{}, nil, &DefinitionError{Err: err}
		}
		def = d
	}
	e.smMu.Lock()
	defer e.smMu.Unlock()
	e.mu.Lock()
	old, ok := e.sms[base]
	e.mu.Unlock()
	if !ok {
		return StateMachine{}, nil, fmt.Errorf("%w: %s", ErrStateMachineDoesNotExist, base)
	}
	sm := old.sm
	if def == nil {
		def = old.def
	} else if sm.Definition != in.Definition {
		if sm.Type == TypeExpress {
			if err := expressProblems(def); err != nil {
				return StateMachine{}, nil, err
			}
		}
		sm.Definition = in.Definition
	}
	if in.RoleArn != "" {
		sm.RoleArn = in.RoleArn
	}
	sm.Config = sm.Config.over(in.Config)
	if sm.Definition != old.sm.Definition || sm.RoleArn != old.sm.RoleArn || !sm.Config.equal(old.sm.Config) {
		// The revision replaced is kept while executions that started with it are: a redrive runs it again.
		e.mu.Lock()
		sm.Revisions = e.keepRevisionsLocked(base, old.sm.Revisions, old.sm.current())
		e.mu.Unlock()
		sm.RevisionID = e.opts.NewID()
		sm.UpdateDate = e.opts.Clock.Now()
	}
	var published *StateMachineVersion
	if in.Publish {
		v, err := e.publish(&sm, in.VersionDescription, "")
		if err != nil {
			return StateMachine{}, nil, err
		}
		published = &v
	}
	if err := e.opts.Store.SaveStateMachine(ctx, sm); err != nil {
		return StateMachine{}, nil, fmt.Errorf("save state machine %s: %w", base, err)
	}
	e.mu.Lock()
	e.sms[base] = &machine{sm: sm, def: def}
	e.mu.Unlock()
	return sm, published, nil
}

// DeleteStateMachine removes a state machine, its versions and its aliases; its executions are kept, and those
// running go on. A version or alias ARN is ErrInvalidArn.
func (e *Engine) DeleteStateMachine(ctx context.Context, arn string) error {
	base, q, err := splitMachineArn(arn)
	if err != nil {
		return err
	}
	if q != "" {
		return fmt.Errorf("%w: %q", ErrInvalidArn, arn)
	}
	e.smMu.Lock()
	defer e.smMu.Unlock()
	if d, ok := e.opts.Store.(stateMachineDeleter); ok {
		if err := d.DeleteStateMachine(ctx, base); err != nil {
			return fmt.Errorf("delete state machine %s: %w", base, err)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if m, ok := e.sms[base]; ok {
		for _, v := range m.sm.Versions {
			delete(e.vms, v.Arn)
		}
	}
	delete(e.sms, base)
	return nil
}

// StartInput is the input of StartExecution.
type StartInput struct {
	StateMachineArn string
	Name            string // empty: a new UUID
	Input           string // empty: "{}"
}

// StartExecution starts an execution and returns its record as of the start. Following the rules of standard
// workflows, starting a name that is running with the same input returns that execution; a name that is closed,
// or running with another input, is ErrExecutionAlreadyExists. The checks come in AWS's order: the ARN
// (ErrInvalidArn), the state machine (ErrStateMachineDoesNotExist), the name (ErrInvalidName), the input
// (ErrInvalidExecutionInput: over MaxPayloadBytes, or not JSON), then the name's use. The execution is saved in the
// Store before StartExecution returns (a failed save is an error, and nothing runs), so an engine restarted after a
// crash runs it. An execution of an Express state machine is started as Express executions are (express.go): a new
// execution for every call, never saved.
func (e *Engine) StartExecution(ctx context.Context, in StartInput) (*ExecutionRecord, error) {
	st, err := e.prepareStart(in, false)
	if err != nil {
		return nil, err
	}
	m, smName, in, input, versionArn, aliasArn := st.m, st.smName, st.in, st.input, st.versionArn, st.aliasArn
	if m.sm.Type == TypeExpress {
		// Express: at-least-once, so a name is not checked for use, and nothing is saved.
		x := e.startExpress(st, false)
		return x.meta(), nil
	}
	e.mu.Lock()
	if cur, ok := e.sms[in.StateMachineArn]; ok && versionArn == "" {
		m = cur // updated meanwhile: the execution runs the current definition
	}
	arn := e.executionArn(smName, in.Name)
	if old, ok := e.exec[arn]; ok {
		rec := old.meta()
		e.mu.Unlock()
		if rec.Status == StatusRunning && rec.Input == in.Input {
			return rec, nil
		}
		return nil, fmt.Errorf("%w: %s", ErrExecutionAlreadyExists, arn)
	}
	if _, ok := e.closed[arn]; ok {
		e.mu.Unlock()
		return nil, fmt.Errorf("%w: %s", ErrExecutionAlreadyExists, arn)
	}
	x := newExecution(e, m, arn, in.Name, in.Input, input)
	x.rec.StateMachineVersionArn, x.rec.StateMachineAliasArn = versionArn, aliasArn
	x.setMock(st.mock)
	if n := min(m.logSize.Load(), maxLogPrealloc); n > 0 {
		x.log.data = make([]byte, 0, n+n/16)
	}
	e.exec[arn] = x
	e.wg.Add(1)
	e.mu.Unlock()
	rec := x.meta()
	// The start is saved before StartExecution answers: once a caller has been told the execution started, a
	// restarted engine finds it and runs it (Restore), so a crash never decides its outcome.
	if err := x.save(ctx); err != nil {
		e.mu.Lock()
		delete(e.exec, arn)
		e.mu.Unlock()
		x.cancel(nil)
		close(x.done)
		e.wg.Done()
		return nil, fmt.Errorf("save the start of %s: %w", arn, err)
	}
	e.runExecution(x)
	return rec, nil
}

// start is a checked StartExecution or StartSyncExecution request.
type start struct {
	m      *machine
	smName string
	in     StartInput // Name and Input filled in
	input  any
	// versionArn and aliasArn name the version the execution runs and the alias that chose it (versions.go).
	versionArn, aliasArn string
	// mock is the mock test case the ARN's "#<TestCase>" named (mock.go), nil without one.
	mock *mockRun
}

// prepareStart checks a start request in AWS's order: the ARN (ErrInvalidArn, or ErrDistributedMapArn for a
// Distributed Map state's), the state machine
// (ErrStateMachineDoesNotExist), for a synchronous start its type (ErrStateMachineTypeNotSupported), the name
// (ErrInvalidName), then the input (ErrInvalidExecutionInput: over MaxPayloadBytes, or not JSON). With a mock
// configuration, an ARN ending with "#<TestCase>" starts the state machine without the suffix with that test case,
// once the checks above have passed (ErrMockTestCase when the configuration has no such test case).
func (e *Engine) prepareStart(in StartInput, sync bool) (start, error) {
	var testCase string
	var mocked bool
	in.StateMachineArn, testCase, mocked = e.splitTestCase(in.StateMachineArn)
	smName, err := arnName(in.StateMachineArn, "stateMachine")
	if err != nil {
		return start{}, err
	}
	if strings.IndexByte(smName, '/') >= 0 { // no state machine name has one: <state machine>/<Map label>
		return start{}, fmt.Errorf("%w: %s", ErrDistributedMapArn, in.StateMachineArn)
	}
	e.expire()
	e.mu.Lock()
	m, versionArn, aliasArn, err := e.targetLocked(in.StateMachineArn)
	e.mu.Unlock()
	if err != nil {
		return start{}, err
	}
	if sync && m.sm.Type != TypeExpress {
		return start{}, fmt.Errorf("%w: %s", ErrStateMachineTypeNotSupported, in.StateMachineArn)
	}
	if in.Name == "" {
		in.Name = e.opts.NewID()
	} else if !ValidName(in.Name) {
		return start{}, fmt.Errorf("%w: %q", ErrInvalidName, in.Name)
	}
	if in.Input == "" {
		in.Input = "{}"
	}
	if len(in.Input) > MaxPayloadBytes {
		return start{}, fmt.Errorf("%w: input exceeds %d bytes", ErrInvalidExecutionInput, MaxPayloadBytes)
	}
	input, err := jsonvalue.DecodeString(in.Input)
	if err != nil {
		return start{}, fmt.Errorf("%w: %v", ErrInvalidExecutionInput, err)
	}
	var mock *mockRun
	if mocked {
		if mock, err = e.mockTestCase(smName, testCase); err != nil {
			return start{}, err
		}
	}
	return start{m: m, smName: smName, in: in, input: input, versionArn: versionArn, aliasArn: aliasArn, mock: mock}, nil
}

// runnerIdle is how long a runner goroutine waits for another execution before it exits.
const runnerIdle = 5 * time.Second

// runExecution runs x on an idle runner goroutine, or on a new one when none is idle. A runner keeps the stack it
// grew from one execution to the next, which saves growing a new goroutine's stack for every execution.
func (e *Engine) runExecution(x *execution) {
	select {
	case e.idle <- x:
	default:
		e.runners.Add(1)
		go func() {
			defer e.runners.Done()
			e.runner(x)
		}()
	}
}

// runner runs x, then the executions handed to it, until it has been idle for runnerIdle or the engine closes.
func (e *Engine) runner(x *execution) {
	var idle *time.Timer
	for {
		x.run()
		e.wg.Done()
		if idle == nil {
			idle = time.NewTimer(runnerIdle)
		} else {
			idle.Reset(runnerIdle)
		}
		select {
		case x = <-e.idle:
		case <-idle.C:
			return
		case <-e.ctx.Done():
			idle.Stop()
			return
		}
	}
}

// lookup finds an execution: running (x), or closed with its record in the Store (c).
func (e *Engine) lookup(arn string) (*execution, *closedExecution, error) {
	if _, err := arnName(arn, "execution"); err != nil {
		return nil, nil, err
	}
	e.expire()
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.exec[arn]; ok {
		return x, nil, nil
	}
	if c, ok := e.closed[arn]; ok && !c.forgetting {
		return nil, c, nil
	}
	return nil, nil, fmt.Errorf("%w: %s", ErrExecutionDoesNotExist, arn)
}

// DescribeExecution returns the execution's current record (its History is included). The record of a closed
// execution is read from the Store.
func (e *Engine) DescribeExecution(ctx context.Context, arn string) (*ExecutionRecord, error) {
	x, _, err := e.lookup(arn)
	if errors.Is(err, ErrExecutionDoesNotExist) {
		if c := e.child(arn); c != nil {
			return c.snapshot(), nil
		}
	}
	if err != nil {
		return nil, err
	}
	if x != nil {
		return x.snapshot(), nil
	}
	rec, err := e.opts.Store.Execution(ctx, arn)
	if errors.Is(err, ErrExecutionDoesNotExist) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("describe %s: %w", arn, err)
	}
	return rec, nil
}

// History returns the execution's events so far.
func (e *Engine) History(ctx context.Context, arn string) ([]Event, error) {
	rec, err := e.DescribeExecution(ctx, arn)
	if err != nil {
		return nil, err
	}
	return rec.History, nil
}

// ListExecutions returns the state machine's executions, newest first, optionally only those with status. The
// records carry what ListExecutions shows: ARNs, name, status and dates, without History, Input or Output. Given
// a version ARN, it returns only the executions that ran that version (started with it or with an alias that
// picked it); given an alias ARN, those started with that alias; and ErrStateMachineDoesNotExist when the version
// or alias does not exist.
func (e *Engine) ListExecutions(_ context.Context, smArn, status string) ([]*ExecutionRecord, error) {
	base, q, err := splitMachineArn(smArn)
	if err != nil {
		return nil, err
	}
	// matches reports whether an execution of the state machine is listed.
	matches := func(r *ExecutionRecord) bool {
		switch {
		case q == "":
			return true
		case versionNumber(q) != 0:
			return r.StateMachineVersionArn == smArn
		}
		return r.StateMachineAliasArn == smArn
	}
	e.expire()
	e.mu.Lock()
	m, ok := e.sms[base]
	if ok && q != "" {
		_, isVersion := m.sm.version(smArn)
		ok = isVersion || m.sm.alias(smArn) >= 0
	}
	var xs []*execution
	var out []*ExecutionRecord
	for _, x := range e.exec {
		xs = append(xs, x)
	}
	for _, c := range e.closed {
		if !c.forgetting && c.stateMachineArn == base && (status == "" || c.status == status) {
			if r := c.record(); matches(r) {
				out = append(out, r)
			}
		}
	}
	e.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrStateMachineDoesNotExist, smArn)
	}
	if m.sm.Type == TypeExpress {
		return nil, fmt.Errorf("%w: %s", ErrStateMachineTypeNotSupported, smArn)
	}
	for _, x := range xs {
		r := x.meta()
		if r.StateMachineArn != base || (status != "" && r.Status != status) || !matches(r) {
			continue
		}
		stripForList(r)
		if r.Ext != nil {
			r.Ext = &RecordExt{RedriveCount: r.Ext.RedriveCount, RedriveDate: r.Ext.RedriveDate}
		}
		out = append(out, r)
	}
	sortNewestFirst(out)
	return out, nil
}

// stripForList drops from r, a copy of a running execution's record, what a list of executions does not show: its
// input, output, error, cause and checkpoint.
func stripForList(r *ExecutionRecord) {
	r.Input, r.Output, r.Error, r.Cause, r.Checkpoint = "", nil, nil, nil, nil
}

// sortNewestFirst orders listed executions as the list APIs answer them: the latest started first, and among those
// started at the same time, the greater ARN first.
func sortNewestFirst(out []*ExecutionRecord) {
	sort.Slice(out, func(i, j int) bool {
		if !out[i].StartDate.Equal(out[j].StartDate) {
			return out[i].StartDate.After(out[j].StartDate)
		}
		return out[i].Arn > out[j].Arn
	})
}

// StopExecution aborts a running execution with the given error and cause and returns the stop date. Stopping a
// closed execution changes nothing.
func (e *Engine) StopExecution(_ context.Context, arn, errName, cause string) (time.Time, error) {
	x, c, err := e.lookup(arn)
	if err != nil {
		return time.Time{}, err
	}
	if c != nil {
		return c.stop, nil
	}
	x.abort(&failure{Error: errName, Cause: cause})
	<-x.done
	r := x.meta()
	if r.StopDate == nil {
		return e.opts.Clock.Now(), nil
	}
	return *r.StopDate, nil
}

// Wait blocks until the execution is closed (or ctx ends) and returns its record without its History, as
// DescribeExecution on AWS does: decoding a history costs more than running a short execution, so a caller that
// wants it asks History.
func (e *Engine) Wait(ctx context.Context, arn string) (*ExecutionRecord, error) {
	x, _, err := e.lookup(arn)
	if err != nil {
		return nil, err
	}
	if x == nil {
		rec, err := e.DescribeExecution(ctx, arn)
		if err != nil {
			return nil, err
		}
		rec.History = nil
		return rec, nil
	}
	select {
	case <-x.done:
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for %s: %w", arn, ctx.Err())
	}
	return x.meta(), nil
}

// SubstituteDefinition replaces every ${Name} in a definition with the JSON-escaped value of subs[Name], as SAM's
// DefinitionSubstitutions does. Placeholders without a value are left as they are.
func SubstituteDefinition(def string, subs map[string]string) string {
	return placeholderRE.ReplaceAllStringFunc(def, func(m string) string {
		v, ok := subs[m[2:len(m)-1]]
		if !ok {
			return m
		}
		b, _ := json.Marshal(v)
		return string(b[1 : len(b)-1])
	})
}

var placeholderRE = regexp.MustCompile(`\$\{[A-Za-z0-9_.:-]+\}`)

var errNoLambda = errors.New("no Lambda invoker is configured")
