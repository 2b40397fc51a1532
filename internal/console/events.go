package console

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/transferflow/orchestrator/internal/transferclient"
)

// event is one history event as the pages show it, from either source: the transfer API's history (Step Functions'
// wire JSON) or the Step Functions API itself.
type event struct {
	ID, Prev int64
	Time     time.Time
	Type     string
	// State is the state's name on *StateEntered and *StateExited events.
	State string
	// Error and Cause are set on failure events.
	Error, Cause string
	// Input and Output are the state's (or the execution's) input and output, JSON text, when the event carries it.
	Input, Output string
}

// fromAPI converts the transfer API's history events. Their input and output are read from the raw JSON, which
// transferclient keeps.
func fromAPI(evs []transferclient.Event) []event {
	out := make([]event, 0, len(evs))
	for _, e := range evs {
		ev := event{ID: e.ID, Prev: e.PreviousEventID, Time: e.Timestamp, Type: e.Type, State: e.Name, Error: e.Error, Cause: e.Cause}
		if raw, err := json.Marshal(e); err == nil {
			readDetails(raw, &ev)
		}
		out = append(out, ev)
	}
	return out
}

// fromSFN converts GetExecutionHistory's events as the SDK decodes them.
func fromSFN(evs []types.HistoryEvent) []event {
	out := make([]event, 0, len(evs))
	for _, e := range evs {
		ev := event{ID: e.Id, Prev: e.PreviousEventId, Type: string(e.Type)}
		if e.Timestamp != nil {
			ev.Time = *e.Timestamp
		}
		if raw, err := json.Marshal(e); err == nil {
			readDetails(raw, &ev)
		}
		out = append(out, ev)
	}
	return out
}

// readDetails fills what ev lacks from the event's <type>EventDetails object: the state's name, the input and
// output, the error and cause. raw is the event as JSON, with the service's key names (the API's events) or the SDK's
// (Go field names): encoding/json matches them either way.
func readDetails(raw []byte, ev *event) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return
	}
	for k, v := range fields {
		if !strings.HasSuffix(k, "EventDetails") || string(v) == "null" {
			continue
		}
		var d struct{ Name, State, Input, Output, Error, Cause *string }
		if json.Unmarshal(v, &d) != nil {
			continue
		}
		for _, f := range []struct{ dst, src *string }{{&ev.State, d.Name}, {&ev.State, d.State}, {&ev.Input, d.Input},
			{&ev.Output, d.Output}, {&ev.Error, d.Error}, {&ev.Cause, d.Cause}} {
			if *f.dst == "" && f.src != nil {
				*f.dst = *f.src
			}
		}
	}
}

// path is what an execution's history says about its way through the state machine: the marks of its drawing.
type path struct {
	// Visited are the states entered, Edges the transitions taken (from, to) in order of first use.
	Visited map[string]bool
	Edges   map[[2]string]bool
	// Current is the state entered and not yet exited, while the execution runs.
	Current string
	// Retried counts the failed attempts of each state that were followed by another attempt.
	Retried map[string]int
	// Caught is the error each state's Catch caught (the state exited on a failure to a Catch's target).
	Caught map[string]string
	// Failed is the state the execution failed in, if it failed in one.
	Failed string
	// Order is the states entered, in order (repeats kept).
	Order []string
}

// isFailure reports whether an event type is a failed attempt of a state's work.
func isFailure(typ string) bool {
	return strings.HasSuffix(typ, "Failed") && !strings.HasPrefix(typ, "Execution") && typ != "MapRunFailed" ||
		strings.HasSuffix(typ, "TimedOut") && !strings.HasPrefix(typ, "Execution")
}

// isScheduled reports whether an event type starts an attempt of a state's work.
func isScheduled(typ string) bool {
	return strings.HasSuffix(typ, "Scheduled") || typ == "TaskScheduled"
}

// walk reads the path from the events, in id order. A transition is the state exited last, then the state entered
// next; inside Parallel and Map states the same rule marks their inner transitions (a transition the drawing does not
// have, such as one branch's end to the next branch's start, marks nothing).
func walk(evs []event) path {
	p := path{Visited: map[string]bool{}, Edges: map[[2]string]bool{}, Retried: map[string]int{}, Caught: map[string]string{}}
	var open []string              // states entered and not exited, innermost last
	var last, lastErr string       // the state exited last, and the error it exited on (its Catch caught it)
	failing := map[string]string{} // states whose last attempt failed, with the error, until another attempt starts
	ended := false
	for _, e := range evs {
		inner := ""
		if n := len(open); n > 0 {
			inner = open[n-1]
		}
		switch {
		case strings.HasSuffix(e.Type, "StateEntered"):
			if last != "" {
				p.Edges[[2]string{last, e.State}] = true
				if lastErr != "" {
					p.Caught[last] = lastErr
				}
			}
			open = append(open, e.State)
			p.Visited[e.State] = true
			p.Order = append(p.Order, e.State)
			last, lastErr = "", ""
		case strings.HasSuffix(e.Type, "StateExited"):
			if len(open) > 0 {
				open = open[:len(open)-1]
			}
			last, lastErr = e.State, failing[e.State]
			delete(failing, e.State)
		case isFailure(e.Type):
			if inner != "" {
				failing[inner] = e.Error
			}
		case isScheduled(e.Type):
			if _, ok := failing[inner]; ok && inner != "" {
				p.Retried[inner]++
				delete(failing, inner)
			}
		case strings.HasPrefix(e.Type, "Execution") && e.Type != "ExecutionStarted" && e.Type != "ExecutionRedriven":
			ended = true
			if e.Type == "ExecutionFailed" {
				p.Failed = inner
			}
		}
	}
	if !ended && len(open) > 0 {
		p.Current = open[len(open)-1]
	}
	return p
}
