package sfnengine

import (
	"bytes"
	"fmt"
)

// eventLog is a history in its encoded form: one JSON line per event, in id order, as appendEvent writes them. An
// execution keeps its history this way rather than as Events (whose details are Go maps): it costs about a third of
// the memory, and the lines are what the Store appends, so a checkpoint encodes nothing twice.
type eventLog struct {
	data []byte
	n    int // events in data
}

// add appends e, which must have the id n+1.
func (l *eventLog) add(e *Event) {
	l.data = appendEvent(l.data, e)
	l.n++
}

// events decodes the whole log.
func (l *eventLog) events() []Event {
	events, err := decodeEvents(l.data)
	if err != nil {
		// The log holds only what appendEvent wrote.
		panic(fmt.Sprintf("sfnengine: decode own history: %v", err))
	}
	return events
}

// decodeEvents decodes JSON lines written by appendEvent.
func decodeEvents(data []byte) ([]Event, error) {
	events := make([]Event, 0, bytes.Count(data, []byte{'\n'}))
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return nil, errTornEvent
		}
		e, err := decodeEvent(data[:i])
		if err != nil {
			return nil, fmt.Errorf("decode event %d: %w", len(events)+1, err)
		}
		events = append(events, e)
		data = data[i+1:]
	}
	return events, nil
}

// encodeEvents returns the JSON lines of events.
func encodeEvents(events []Event) []byte {
	var b []byte
	for i := range events {
		b = appendEvent(b, &events[i])
	}
	return b
}
