package sfnengine

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// History event types, as GetExecutionHistory names them.
const (
	EventExecutionStarted   = "ExecutionStarted"
	EventExecutionSucceeded = "ExecutionSucceeded"
	EventExecutionFailed    = "ExecutionFailed"
	EventExecutionTimedOut  = "ExecutionTimedOut"
	EventExecutionAborted   = "ExecutionAborted"
	EventTaskScheduled      = "TaskScheduled"
	EventTaskStarted        = "TaskStarted"
	EventTaskSucceeded      = "TaskSucceeded"
	EventTaskFailed         = "TaskFailed"
	EventTaskTimedOut       = "TaskTimedOut"
	EventMapStateStarted    = "MapStateStarted"
	EventMapStateSucceeded  = "MapStateSucceeded"
	EventMapStateFailed     = "MapStateFailed"
	EventMapStateAborted    = "MapStateAborted"
	EventMapIterStarted     = "MapIterationStarted"
	EventMapIterSucceeded   = "MapIterationSucceeded"
	EventMapIterFailed      = "MapIterationFailed"
	EventMapIterAborted     = "MapIterationAborted"
	EventParallelStarted    = "ParallelStateStarted"
	EventParallelSucceeded  = "ParallelStateSucceeded"
	EventParallelFailed     = "ParallelStateFailed"
	EventParallelAborted    = "ParallelStateAborted"
	EventWaitStateAborted   = "WaitStateAborted"
	EventEvaluationFailed   = "EvaluationFailed"
)

// Event is one history event. DetailsKey is the name of its details member in the API (for example
// "stateEnteredEventDetails") and Details its content; events without details (MapStateSucceeded) leave both empty.
// Details is read-only: events share the maps that are the same for many of them (inputDetails, TaskStarted's).
type Event struct {
	ID              int64          `json:"id"`
	PreviousEventID int64          `json:"previousEventId"`
	Timestamp       time.Time      `json:"-"`
	Type            string         `json:"type"`
	DetailsKey      string         `json:"-"`
	Details         map[string]any `json:"-"`
}

// MarshalJSON renders the event as GetExecutionHistory does: timestamp in epoch seconds and the details member
// under its own name.
func (e Event) MarshalJSON() ([]byte, error) {
	m := map[string]any{
		"id":              e.ID,
		"previousEventId": e.PreviousEventID,
		"timestamp":       json.Number(epochSeconds(e.Timestamp)),
		"type":            e.Type,
	}
	if e.DetailsKey != "" {
		m[e.DetailsKey] = e.Details
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (e *Event) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	for k, v := range m {
		var err error
		switch k {
		case "id":
			err = json.Unmarshal(v, &e.ID)
		case "previousEventId":
			err = json.Unmarshal(v, &e.PreviousEventID)
		case "type":
			err = json.Unmarshal(v, &e.Type)
		case "timestamp":
			e.Timestamp, err = parseEpochSeconds(string(v))
		default:
			e.DetailsKey = k
			err = json.Unmarshal(v, &e.Details)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func epochSeconds(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64)
}

// parseEpochSeconds reads what epochSeconds writes (seconds with up to three decimals) without going through a
// float, which would turn .124 into .123.
func parseEpochSeconds(s string) (time.Time, error) {
	sec, frac, _ := strings.Cut(s, ".")
	if len(frac) > 3 {
		frac = frac[:3]
	}
	ms, err := strconv.ParseInt(sec+(frac + "000")[:3], 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("timestamp %s: %w", s, err)
	}
	return time.UnixMilli(ms).UTC(), nil
}
