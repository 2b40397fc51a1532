package sfnengine

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"
)

// MaxActivityPoll is the longest GetActivityTask waits for a task before it answers without one: AWS holds the
// request at most 60 s. It is also the default of Options.ActivityPoll.
const MaxActivityPoll = 60 * time.Second

// Activity is a created activity.
type Activity struct {
	Arn          string            `json:"arn"`
	Name         string            `json:"name"`
	CreationDate time.Time         `json:"creationDate"`
	Tags         map[string]string `json:"tags,omitempty"`
}

// ActivityTask is what GetActivityTask hands a worker: the task's token and input. Both are empty when no task came.
type ActivityTask struct {
	Token string
	Input string
}

// activityStore is implemented by Stores that keep activities (MemoryStore, FileStore); with another Store,
// activities live as long as the engine.
type activityStore interface {
	SaveActivity(ctx context.Context, a Activity) error
	DeleteActivity(ctx context.Context, arn string) error
	Activities(ctx context.Context) ([]Activity, error)
}

// pendingTask is an activity task no worker has taken yet.
type pendingTask struct {
	token string
	input string
	wait  *taskWait
}

// activity is an activity and its tasks waiting for a worker.
type activity struct {
	Activity
	pending []*pendingTask
	// arrived is closed, and replaced, when a task is queued: pollers wait on it.
	arrived chan struct{}
}

// activityRegistry holds the engine's activities. Its zero value is ready to use.
type activityRegistry struct {
	mu    sync.Mutex
	byArn map[string]*activity
	// queued are the tasks of activities not (or no longer) created, by activity ARN: a worker of an activity
	// created later, with that ARN, gets them.
	queued map[string][]*pendingTask
}

func (r *activityRegistry) lookupLocked(arn string) *activity {
	if r.byArn == nil {
		r.byArn = map[string]*activity{}
	}
	return r.byArn[arn]
}

// enqueue queues a task for the activity's workers.
func (r *activityRegistry) enqueue(arn string, t *pendingTask) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.lookupLocked(arn)
	if a == nil {
		if r.queued == nil {
			r.queued = map[string][]*pendingTask{}
		}
		r.queued[arn] = append(r.queued[arn], t)
		return
	}
	a.pending = append(a.pending, t)
	close(a.arrived)
	a.arrived = make(chan struct{})
}

// unqueue drops the task of token, if no worker took it.
func (r *activityRegistry) unqueue(token string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	drop := func(ts []*pendingTask) []*pendingTask {
		return slices.DeleteFunc(ts, func(t *pendingTask) bool { return t.token == token })
	}
	for _, a := range r.byArn {
		a.pending = drop(a.pending)
	}
	for arn, ts := range r.queued {
		r.queued[arn] = drop(ts)
	}
}

// ActivityPoll returns how long GetActivityTask waits for a task before it answers without one
// (Options.ActivityPoll).
func (e *Engine) ActivityPoll() time.Duration { return e.opts.ActivityPoll }

// ActivityArn returns the ARN of the activity called name.
func (e *Engine) ActivityArn(name string) string {
	return fmt.Sprintf("arn:aws:states:%s:%s:activity:%s", e.opts.Region, e.opts.AccountID, name)
}

// CreateActivity creates an activity, or returns the one of that name (CreateActivity is idempotent by name; as on
// AWS, different tags are ignored and not updated). A name that is not valid is ErrInvalidName.
func (e *Engine) CreateActivity(ctx context.Context, name string, tags map[string]string) (Activity, error) {
	if !ValidName(name) {
		return Activity{}, fmt.Errorf("%w: %q", ErrInvalidName, name)
	}
	if len(tags) > MaxTags {
		return Activity{}, fmt.Errorf("%w: %s would have %d tags, more than %d", ErrTooManyTags, e.ActivityArn(name),
			len(tags), MaxTags)
	}
	arn := e.ActivityArn(name)
	r := &e.activities
	r.mu.Lock()
	if a := r.lookupLocked(arn); a != nil {
		// Idempotent by name: other tags are ignored, and not updated (AWS's CreateActivity documentation).
		r.mu.Unlock()
		return a.Activity, nil
	}
	act := Activity{Arn: arn, Name: name, CreationDate: e.opts.Clock.Now(), Tags: maps.Clone(tags)}
	r.byArn[arn] = &activity{Activity: act, pending: r.queued[arn], arrived: make(chan struct{})}
	delete(r.queued, arn)
	r.mu.Unlock()
	if s, ok := e.opts.Store.(activityStore); ok {
		if err := s.SaveActivity(ctx, act); err != nil {
			return Activity{}, fmt.Errorf("save activity %s: %w", arn, err)
		}
	}
	return act, nil
}

// DescribeActivity returns the activity with the ARN: ErrInvalidArn when it is not an activity ARN,
// ErrActivityNotFound when there is none.
func (e *Engine) DescribeActivity(_ context.Context, arn string) (Activity, error) {
	if _, err := arnName(arn, "activity"); err != nil {
		return Activity{}, err
	}
	r := &e.activities
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.lookupLocked(arn)
	if a == nil {
		return Activity{}, fmt.Errorf("%w: %s", ErrActivityNotFound, arn)
	}
	return a.Activity, nil
}

// ListActivities returns every activity, by name.
func (e *Engine) ListActivities(_ context.Context) []Activity {
	r := &e.activities
	r.mu.Lock()
	out := make([]Activity, 0, len(r.byArn))
	for _, a := range r.byArn {
		out = append(out, a.Activity)
	}
	r.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// DeleteActivity deletes an activity. Deleting one that does not exist changes nothing, as on AWS. Tasks already
// scheduled on it keep waiting (for their timeout, a stop, or a worker of an activity created again with its name).
func (e *Engine) DeleteActivity(ctx context.Context, arn string) error {
	if _, err := arnName(arn, "activity"); err != nil {
		return err
	}
	r := &e.activities
	r.mu.Lock()
	if a := r.lookupLocked(arn); a != nil {
		if len(a.pending) > 0 {
			if r.queued == nil {
				r.queued = map[string][]*pendingTask{}
			}
			r.queued[arn] = a.pending
		}
		delete(r.byArn, arn)
	}
	r.mu.Unlock()
	if s, ok := e.opts.Store.(activityStore); ok {
		if err := s.DeleteActivity(ctx, arn); err != nil {
			return fmt.Errorf("delete activity %s: %w", arn, err)
		}
	}
	return nil
}

// GetActivityTask hands the activity's oldest waiting task to a worker, recording workerName in the task's
// ActivityStarted event. Without a task it waits, up to ActivityPoll on the engine's Clock or until ctx ends, and
// then answers an empty ActivityTask (no error), as AWS's long poll does; a task queued meanwhile is handed over at
// once.
func (e *Engine) GetActivityTask(ctx context.Context, arn, workerName string) (ActivityTask, error) {
	if _, err := arnName(arn, "activity"); err != nil {
		return ActivityTask{}, err
	}
	var deadline <-chan time.Time
	r := &e.activities
	for {
		r.mu.Lock()
		a := r.lookupLocked(arn)
		if a == nil {
			r.mu.Unlock()
			return ActivityTask{}, fmt.Errorf("%w: %s", ErrActivityNotFound, arn)
		}
		for len(a.pending) > 0 {
			t := a.pending[0]
			a.pending = a.pending[1:]
			if t.wait.post(callbackMsg{kind: callbackStarted, worker: workerName, at: e.opts.Clock.Now()}) {
				r.mu.Unlock()
				return ActivityTask{Token: t.token, Input: t.input}, nil
			}
		}
		arrived := a.arrived
		r.mu.Unlock()
		if deadline == nil {
			deadline = e.opts.Clock.After(e.opts.ActivityPoll)
		}
		select {
		case <-arrived:
		case <-deadline:
			return ActivityTask{}, nil
		case <-ctx.Done():
			return ActivityTask{}, nil
		case <-e.ctx.Done():
			return ActivityTask{}, nil
		}
	}
}

// restoreActivities loads the Store's activities (Restore), before the executions whose tasks they queue.
func (e *Engine) restoreActivities(ctx context.Context) error {
	s, ok := e.opts.Store.(activityStore)
	if !ok {
		return nil
	}
	acts, err := s.Activities(ctx)
	if err != nil {
		return fmt.Errorf("restore activities: %w", err)
	}
	r := &e.activities
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range acts {
		if r.lookupLocked(a.Arn) == nil {
			r.byArn[a.Arn] = &activity{Activity: a, pending: r.queued[a.Arn], arrived: make(chan struct{})}
			delete(r.queued, a.Arn)
		}
	}
	return nil
}

// runActivity runs an attempt of a Task state whose Resource is an activity: ActivityScheduled, then a wait for a
// worker (ActivityStarted, GetActivityTask) and its SendTaskSuccess or SendTaskFailure (ActivitySucceeded,
// ActivityFailed), its timeout counting from the scheduling and its heartbeat from the start (ActivityTimedOut).
func (x *execution) runActivity(ctx context.Context, sr *stateRun, input any, paramText string, timeout, heartbeat int64, th *thread) (any, *failure) {
	arn := sr.sp.integ.activity
	if _, err := x.eng.DescribeActivity(ctx, arn); err != nil {
		f := &failure{Error: ErrNameTaskFailed, Cause: fmt.Sprintf("Activity Does Not Exist: '%s'", arn)}
		x.emit(th, true, EventActivityScheduleFailed, "activityScheduleFailedEventDetails",
			map[string]any{"error": f.Error, "cause": f.Cause})
		return nil, f
	}
	d := map[string]any{"resource": arn, "input": paramText, "inputDetails": notTruncated}
	if timeout > 0 {
		d["timeoutInSeconds"] = timeout
	}
	if heartbeat > 0 {
		d["heartbeatInSeconds"] = heartbeat
	}
	x.emit(th, true, EventActivityScheduled, "activityScheduledEventDetails", d)
	now := x.eng.opts.Clock.Now()
	cb := &CallbackCheckpoint{Token: sr.token, ScheduledAt: now, HeartbeatFrom: now, TimeoutSeconds: timeout,
		HeartbeatSeconds: heartbeat, Activity: arn, Input: paramText}
	x.eng.activities.enqueue(arn, &pendingTask{token: sr.token, input: paramText, wait: sr.wait})
	x.saveWait(sr, cb, th)
	res, fail := x.awaitCallback(ctx, sr, sr.wait, cb, th)
	if fail != nil {
		return nil, fail
	}
	return x.finishActivity(sr, input, res, th)
}

// finishActivity records an activity task's outcome (ActivityFailed or ActivitySucceeded) and returns the state's
// result.
func (x *execution) finishActivity(sr *stateRun, input any, res taskOutcome, th *thread) (any, *failure) {
	if res.fail != nil {
		x.emitFailure(th, EventActivityFailed, "activityFailedEventDetails", map[string]any{}, res.fail)
		return nil, res.fail
	}
	return x.emitResult(sr, input, res.out, marshal(res.out), th, EventActivitySucceeded, "activitySucceededEventDetails",
		map[string]any{})
}

// SaveActivity keeps a.
func (s *MemoryStore) SaveActivity(_ context.Context, a Activity) error {
	s.actMu.Lock()
	defer s.actMu.Unlock()
	if s.activities == nil {
		s.activities = map[string]Activity{}
	}
	s.activities[a.Arn] = a
	return nil
}

// DeleteActivity forgets the activity with the ARN.
func (s *MemoryStore) DeleteActivity(_ context.Context, arn string) error {
	s.actMu.Lock()
	defer s.actMu.Unlock()
	delete(s.activities, arn)
	return nil
}

// Activities returns the activities kept.
func (s *MemoryStore) Activities(_ context.Context) ([]Activity, error) {
	s.actMu.Lock()
	defer s.actMu.Unlock()
	return slices.Collect(maps.Values(s.activities)), nil
}

// activitiesDir is the FileStore's directory of activities: one JSON file each, named like the state machines'.
const activitiesDir = "activities"

// SaveActivity writes a to activities/<hash>.json.
func (s *FileStore) SaveActivity(_ context.Context, a Activity) error {
	b, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("encode %s: %w", a.Arn, err)
	}
	if err := os.MkdirAll(filepath.Join(s.dir, activitiesDir), 0o755); err != nil {
		return fmt.Errorf("create store directory: %w", err)
	}
	return s.replace(filepath.Join(s.dir, activitiesDir, fileKey(a.Arn)+recordExt), b)
}

// DeleteActivity removes the activity's file.
func (s *FileStore) DeleteActivity(_ context.Context, arn string) error {
	err := os.Remove(filepath.Join(s.dir, activitiesDir, fileKey(arn)+recordExt))
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("delete activity %s: %w", arn, err)
	}
	return nil
}

// Activities reads every activity file.
func (s *FileStore) Activities(_ context.Context) ([]Activity, error) {
	dir := filepath.Join(s.dir, activitiesDir)
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return nil, nil
	}
	var out []Activity
	err := readAll(dir, func(b []byte) error {
		var a Activity
		if err := json.Unmarshal(b, &a); err != nil {
			return err
		}
		out = append(out, a)
		return nil
	})
	return out, err
}
