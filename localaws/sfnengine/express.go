package sfnengine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/transferflow/orchestrator/localaws/asl"
)

// State machine types.
const (
	TypeStandard = "STANDARD"
	TypeExpress  = "EXPRESS"
)

// ExpressMaxDuration is the longest an Express execution runs, as on AWS: one still running then ends TIMED_OUT
// with the error States.Timeout, whatever its definition's TimeoutSeconds (a shorter TimeoutSeconds still applies).
const ExpressMaxDuration = 5 * time.Minute

// ErrStateMachineTypeNotSupported is returned for an operation that the state machine's type does not support:
// ListExecutions of an Express state machine, StartSyncExecution of a Standard one.
var ErrStateMachineTypeNotSupported = errors.New("sfnengine: state machine type not supported")

// expressArn returns a new Express execution ARN, express:<state machine>:<name>:<id>: Express execution names
// are not unique, so the ARN carries an id of its own.
func (e *Engine) expressArn(smName, name string) string {
	return "arn:aws:states:" + e.opts.Region + ":" + e.opts.AccountID + ":express:" + smName + ":" + name + ":" + e.opts.NewID()
}

// startExpress starts an Express execution and returns it. Express executions are not saved in the Store, not
// listed, not described and publish no status-change events, as on AWS: once closed, only the caller that
// started one (StartSyncExecution) learns its outcome. st's versionArn and aliasArn are the version it runs and the
// alias that chose it, as for a Standard execution (a .sync task's result names them).
func (e *Engine) startExpress(st start, synchronous bool) *execution {
	x := newExecution(e, st.m, e.expressArn(st.smName, st.in.Name), st.in.Name, st.in.Input, st.input)
	x.synchronous = synchronous
	x.rec.StateMachineVersionArn, x.rec.StateMachineAliasArn = st.versionArn, st.aliasArn
	x.setMock(st.mock)
	e.wg.Add(1)
	e.runExecution(x)
	return x
}

// StartSyncExecution runs an execution of an Express state machine to its end and returns its record (without
// History). The checks are StartExecution's, and a Standard state machine is ErrStateMachineTypeNotSupported.
// When ctx ends first (the caller went away), the execution is stopped and ctx's error returned.
func (e *Engine) StartSyncExecution(ctx context.Context, in StartInput) (*ExecutionRecord, error) {
	st, err := e.prepareStart(in, true)
	if err != nil {
		return nil, err
	}
	x := e.startExpress(st, true)
	select {
	case <-x.done:
	case <-ctx.Done():
		x.abort(&failure{Error: "States.Aborted", Cause: "the caller of StartSyncExecution went away"})
		<-x.done
		return nil, fmt.Errorf("start sync execution %s: %w", x.rec.Arn, ctx.Err())
	}
	return x.meta(), nil
}

// executionTimeout returns how long the execution may run: Options.ExecutionTimeout, else the definition's
// TimeoutSeconds, at most ExpressMaxDuration for an Express execution; zero means no limit.
func (x *execution) executionTimeout(timeoutSeconds int64) time.Duration {
	timeout := time.Duration(timeoutSeconds) * time.Second
	if x.eng.opts.ExecutionTimeout > 0 {
		timeout = x.eng.opts.ExecutionTimeout
	}
	if x.express && (timeout <= 0 || timeout > ExpressMaxDuration) {
		timeout = ExpressMaxDuration
	}
	return timeout
}

// expressProblems returns what an Express state machine's definition may not have, in AWS's words: a
// .waitForTaskToken or .sync integration, or an activity.
func expressProblems(def *asl.Definition) error {
	var msgs []string
	var walk func(d *asl.Definition, path string)
	walk = func(d *asl.Definition, path string) {
		for _, name := range d.Order {
			st := d.States[name]
			at := path + "/States/" + name
			if st.Type == asl.TypeTask {
				switch r := st.Resource; {
				case strings.HasSuffix(r, ".waitForTaskToken"):
					// AWS's message has two spaces before "at" (recorded).
					msgs = append(msgs, "SCHEMA_VALIDATION_FAILED: Express state machine does not support '.waitForTaskToken' service integration  at "+at+"/Resource")
				case strings.HasSuffix(r, ".sync") || strings.Contains(r, ".sync:"):
					msgs = append(msgs, "SCHEMA_VALIDATION_FAILED: Express state machine does not support '.sync' service integration at "+at+"/Resource")
				case isActivityArn(r):
					msgs = append(msgs, "SCHEMA_VALIDATION_FAILED: Express state machine does not support Activity ARN at "+at+"/Resource")
				}
			}
			for i, b := range st.Branches {
				walk(b, at+"/Branches/"+strconv.Itoa(i))
			}
			if st.ItemProcessor != nil {
				walk(st.ItemProcessor, at+"/ItemProcessor")
			}
		}
	}
	walk(def, "")
	if len(msgs) == 0 {
		return nil
	}
	return &DefinitionError{Err: errors.New(strings.Join(msgs, ", "))}
}

// isActivityArn reports whether a Task resource is an activity's ARN.
func isActivityArn(r string) bool {
	parts := strings.SplitN(r, ":", 7)
	return len(parts) == 7 && parts[0] == "arn" && parts[2] == "states" && parts[5] == "activity"
}
