package sfnengine

import (
	"encoding/json"
	"errors"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// The codec of history lines. Every event is encoded once, when it is emitted, and decoded whenever a history is
// read (DescribeExecution, GetExecutionHistory, Wait), so both directions avoid encoding/json's reflection: the line's
// members are written by hand and its details by jsonvalue (maps of strings, booleans, numbers and maps, without
// reflection); a line the fast decoder does not accept is decoded by encoding/json, so the result is always what
// encoding/json would give (numbers in details as float64).

// appendEvent appends e's JSON line to b: the GetExecutionHistory shape (what Event.MarshalJSON writes, members in
// another order) followed by a newline. The timestamp keeps milliseconds, as the API shows it.
func appendEvent(b []byte, e *Event) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, e.ID, 10)
	b = append(b, `,"previousEventId":`...)
	b = strconv.AppendInt(b, e.PreviousEventID, 10)
	b = append(b, `,"timestamp":`...)
	b = appendEpochSeconds(b, e.Timestamp)
	b = append(b, `,"type":`...)
	b = jsonvalue.AppendString(b, e.Type)
	if e.DetailsKey != "" {
		b = append(b, ',')
		b = jsonvalue.AppendString(b, e.DetailsKey)
		b = append(b, ':')
		b = appendDetails(b, e.Details)
	}
	return append(b, "}\n"...)
}

// appendDetails appends d as jsonvalue writes it (keys sorted), null when d is nil as encoding/json writes a nil
// map. Details holding a value jsonvalue cannot encode (a NaN, a channel: the engine's details hold neither) are
// written as {"encodingError": the error}, an object still, so that the history's readers decode the line.
func appendDetails(b []byte, d map[string]any) []byte {
	if d == nil {
		return append(b, "null"...)
	}
	out, err := jsonvalue.AppendMap(b, d)
	if err != nil {
		b = append(b, `{"encodingError":`...)
		return append(jsonvalue.AppendString(b, err.Error()), '}')
	}
	return out
}

// appendEpochSeconds appends what epochSeconds returns, without formatting a float (which takes strconv's slow,
// stack-hungry path for a fixed precision).
func appendEpochSeconds(b []byte, t time.Time) []byte {
	ms := t.UnixMilli()
	if ms < 0 {
		b = append(b, '-')
		ms = -ms
	}
	b = strconv.AppendInt(b, ms/1000, 10)
	frac := ms % 1000
	return append(b, '.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
}

const hexDigits = "0123456789abcdef"

// decodeEvent decodes one line written by appendEvent (without its newline).
func decodeEvent(line []byte) (Event, error) {
	if e, ok := fastDecodeEvent(line); ok {
		return e, nil
	}
	var e Event
	err := json.Unmarshal(line, &e)
	return e, err
}

// fastDecodeEvent decodes the lines appendEvent writes; ok is false for anything else.
func fastDecodeEvent(line []byte) (e Event, ok bool) {
	p := &lineParser{s: line}
	if !p.byte('{') {
		return Event{}, false
	}
	for first := true; ; first = false {
		if p.byte('}') {
			return e, p.i == len(p.s)
		}
		if !first && !p.byte(',') {
			return Event{}, false
		}
		key, ok := p.str()
		if !ok || !p.byte(':') {
			return Event{}, false
		}
		switch key {
		case "id", "previousEventId":
			n, ok := p.int()
			if !ok {
				return Event{}, false
			}
			if key == "id" {
				e.ID = n
			} else {
				e.PreviousEventID = n
			}
		case "timestamp":
			num := p.number()
			t, err := parseEpochSeconds(string(num))
			if num == nil || err != nil {
				return Event{}, false
			}
			e.Timestamp = t
		case "type":
			if e.Type, ok = p.str(); !ok {
				return Event{}, false
			}
		default:
			v, ok := p.value()
			m, isMap := v.(map[string]any)
			if !ok || (v != nil && !isMap) {
				return Event{}, false
			}
			e.DetailsKey, e.Details = key, m
		}
	}
}

// commonStrings are the keys and short values that every history repeats, returned without allocating.
var commonStrings = map[string]string{}

func init() {
	for _, s := range []string{"id", "previousEventId", "timestamp", "type", "name", "input", "output", "inputDetails",
		"outputDetails", "truncated", "resource", "resourceType", "region", "parameters", "error", "cause", "roleArn",
		"index", "length", "timeoutInSeconds", "heartbeatInSeconds", "lambda", "invoke", "dynamodb", "states",
		"executionStartedEventDetails", "executionSucceededEventDetails", "executionFailedEventDetails",
		"executionAbortedEventDetails", "executionTimedOutEventDetails", "stateEnteredEventDetails",
		"stateExitedEventDetails", "taskScheduledEventDetails", "taskStartedEventDetails", "taskSucceededEventDetails",
		"taskFailedEventDetails", "taskTimedOutEventDetails", "mapStateStartedEventDetails",
		"mapIterationStartedEventDetails", "mapIterationSucceededEventDetails", "mapIterationFailedEventDetails",
		"mapIterationAbortedEventDetails", "assignedVariables", "assignedVariablesDetails", "evaluationFailedEventDetails",
		"state", "location", EventEvaluationFailed,
		EventExecutionStarted, EventExecutionSucceeded, EventExecutionFailed, EventExecutionTimedOut,
		EventExecutionAborted, EventTaskScheduled, EventTaskStarted, EventTaskSucceeded, EventTaskFailed,
		EventTaskTimedOut, EventMapStateStarted, EventMapStateSucceeded, EventMapStateFailed, EventMapStateAborted,
		EventMapIterStarted, EventMapIterSucceeded, EventMapIterFailed, EventMapIterAborted, EventParallelStarted,
		EventParallelSucceeded, EventParallelFailed, EventParallelAborted, EventWaitStateAborted,
		"TaskStateEntered", "TaskStateExited", "PassStateEntered", "PassStateExited", "ChoiceStateEntered",
		"ChoiceStateExited", "WaitStateEntered", "WaitStateExited", "SucceedStateEntered", "SucceedStateExited",
		"FailStateEntered", "MapStateEntered", "MapStateExited", "ParallelStateEntered", "ParallelStateExited"} {
		commonStrings[s] = s
	}
}

// lineParser reads compact JSON, as appendEvent writes it: no white space.
type lineParser struct {
	s []byte
	i int
}

func (p *lineParser) byte(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *lineParser) value() (any, bool) {
	if p.i >= len(p.s) {
		return nil, false
	}
	switch c := p.s[p.i]; {
	case c == '"':
		return p.str()
	case c == '{':
		p.i++
		m := map[string]any{}
		for first := true; ; first = false {
			if p.byte('}') {
				return m, true
			}
			if !first && !p.byte(',') {
				return nil, false
			}
			k, ok := p.str()
			if !ok || !p.byte(':') {
				return nil, false
			}
			v, ok := p.value()
			if !ok {
				return nil, false
			}
			m[k] = v
		}
	case c == '[':
		p.i++
		a := []any{}
		for first := true; ; first = false {
			if p.byte(']') {
				return a, true
			}
			if !first && !p.byte(',') {
				return nil, false
			}
			v, ok := p.value()
			if !ok {
				return nil, false
			}
			a = append(a, v)
		}
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	default:
		num := p.number()
		f, err := strconv.ParseFloat(string(num), 64)
		return f, num != nil && err == nil
	}
}

func (p *lineParser) literal(word string) bool {
	if len(p.s)-p.i >= len(word) && string(p.s[p.i:p.i+len(word)]) == word {
		p.i += len(word)
		return true
	}
	return false
}

// number returns the text of a JSON number, or nil.
func (p *lineParser) number() []byte {
	start := p.i
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
			p.i++
			continue
		}
		break
	}
	if p.i == start {
		return nil
	}
	return p.s[start:p.i]
}

func (p *lineParser) int() (int64, bool) {
	n, err := strconv.ParseInt(string(p.number()), 10, 64)
	return n, err == nil
}

// str reads a JSON string.
func (p *lineParser) str() (string, bool) {
	if !p.byte('"') {
		return "", false
	}
	start := p.i
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == '"':
			raw := p.s[start:p.i]
			p.i++
			if k, ok := commonStrings[string(raw)]; ok {
				return k, true
			}
			return string(raw), utf8.Valid(raw)
		case c == '\\':
			return p.escapedStr(start)
		case c < 0x20:
			return "", false
		}
		p.i++
	}
	return "", false
}

// escapedStr finishes reading a string that started at start and has escapes from p.i on.
func (p *lineParser) escapedStr(start int) (string, bool) {
	b := append(make([]byte, 0, p.i-start+64), p.s[start:p.i]...)
	for p.i < len(p.s) {
		run := p.i
		for run < len(p.s) && p.s[run] >= 0x20 && p.s[run] != '"' && p.s[run] != '\\' {
			run++
		}
		b = append(b, p.s[p.i:run]...)
		p.i = run
		if p.i == len(p.s) {
			break
		}
		switch c := p.s[p.i]; {
		case c == '"':
			p.i++
			if !utf8.Valid(b) {
				return "", false
			}
			return string(b), true
		case c < 0x20:
			return "", false
		}
		if p.i+1 >= len(p.s) {
			return "", false
		}
		esc := p.s[p.i+1]
		p.i += 2
		switch esc {
		case '"', '\\', '/':
			b = append(b, esc)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", false
			}
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if p.literal(`\u`) {
					if r2, ok = p.hex4(); !ok {
						return "", false
					}
				}
				if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
					return "", false // a lone surrogate: encoding/json's choice of replacement is left to it
				}
			}
			b = utf8.AppendRune(b, r)
		default:
			return "", false
		}
	}
	return "", false
}

func (p *lineParser) hex4() (rune, bool) {
	if len(p.s)-p.i < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(p.s[p.i:p.i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(n), true
}

// errTornEvent reports an event line without its newline.
var errTornEvent = errors.New("sfnengine: event line without newline")
