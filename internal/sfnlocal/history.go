package sfnlocal

import (
	"encoding/json"
	"strconv"
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
			var f float64
			err = json.Unmarshal(v, &f)
			e.Timestamp = time.UnixMilli(int64(f * 1000)).UTC()
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
