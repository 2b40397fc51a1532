package sfnengine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// An execution log is how FileStore keeps one execution: a file of JSON lines that only grows.
//
//	{"execution":{"executionArn":…,"stateMachineArn":…,"name":…,"input":…,"startDate":…}}   header, written once
//	{"id":1,"previousEventId":0,"timestamp":…,"type":"ExecutionStarted","executionStartedEventDetails":{…}}
//	…                                                                                          one line per event
//	{"commit":{"status":"RUNNING","checkpoint":{"state":…,"input":…,"previousEventId":…}}}
//	…
//	{"commit":{"status":"SUCCEEDED","stopDate":…,"output":…}}
//
// Each save appends, in one write, the events not yet saved and a commit line with the execution's state after
// them. A reader keeps what the last complete commit line describes, with exactly the events before it: anything
// after it (the events of a state that was running when the process died, a torn last line) is ignored, and
// FileStore cuts it off before it appends again. The header alone is a commit of a running execution without
// events.

// logLine is a header or commit line.
type logLine struct {
	Execution *logHeader `json:"execution,omitempty"`
	Commit    *logCommit `json:"commit,omitempty"`
}

// logHeader is what never changes in an execution.
type logHeader struct {
	Arn             string    `json:"executionArn"`
	StateMachineArn string    `json:"stateMachineArn"`
	Name            string    `json:"name"`
	Input           string    `json:"input"`
	StartDate       time.Time `json:"startDate"`
	VersionArn      string    `json:"stateMachineVersionArn,omitempty"`
	AliasArn        string    `json:"stateMachineAliasArn,omitempty"`
}

// logCommit is the state of an execution after the events before it.
type logCommit struct {
	Status     string      `json:"status"`
	StopDate   *time.Time  `json:"stopDate,omitempty"`
	Output     *string     `json:"output,omitempty"`
	Error      *string     `json:"error,omitempty"`
	Cause      *string     `json:"cause,omitempty"`
	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
	// Ext: see ExecutionRecord.
	Ext *RecordExt `json:"ext,omitempty"`
}

var (
	headerPrefix = []byte(`{"execution":`)
	commitPrefix = []byte(`{"commit":`)
	eventPrefix  = []byte(`{"id":`)
)

// appendHeader appends rec's header line to b.
func appendHeader(b []byte, rec *ExecutionRecord) ([]byte, error) {
	return appendLine(b, logLine{Execution: &logHeader{Arn: rec.Arn, StateMachineArn: rec.StateMachineArn, Name: rec.Name,
		Input: rec.Input, StartDate: rec.StartDate, VersionArn: rec.StateMachineVersionArn, AliasArn: rec.StateMachineAliasArn}})
}

// appendCommit appends the commit line of rec's current state to b.
func appendCommit(b []byte, rec *ExecutionRecord) ([]byte, error) {
	return appendLine(b, logLine{Commit: &logCommit{Status: rec.Status, StopDate: rec.StopDate, Output: rec.Output,
		Error: rec.Error, Cause: rec.Cause, Checkpoint: rec.Checkpoint, Ext: rec.Ext}})
}

func appendLine(b []byte, l logLine) ([]byte, error) {
	text, err := json.Marshal(l)
	if err != nil {
		return nil, err
	}
	b = append(b, text...)
	return append(b, '\n'), nil
}

// errNoHeader reports an execution log whose first line is not a complete header.
var errNoHeader = errors.New("sfnengine: execution log without header")

// readLog reconstructs an execution from its log: the record the last complete commit line describes and the
// length of the log up to that line. With history set the record's History holds the events before that line;
// without it the event lines are only checked for their ids.
func readLog(data []byte, history bool) (*ExecutionRecord, int, error) {
	var rec *ExecutionRecord
	var events []Event // every event read so far
	var n int          // ids read so far
	var kept int       // events before the last commit
	committed := 0     // bytes up to the last commit
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			break // a torn last line
		}
		line := data[off : off+end]
		next := off + end + 1
		if rec == nil {
			var l logLine
			if !bytes.HasPrefix(line, headerPrefix) || json.Unmarshal(line, &l) != nil || l.Execution == nil {
				return nil, 0, errNoHeader
			}
			h := l.Execution
			rec = &ExecutionRecord{Arn: h.Arn, StateMachineArn: h.StateMachineArn, Name: h.Name, Status: StatusRunning,
				Input: h.Input, StartDate: h.StartDate, StateMachineVersionArn: h.VersionArn, StateMachineAliasArn: h.AliasArn}
			committed, off = next, next
			continue
		}
		switch {
		case bytes.HasPrefix(line, eventPrefix):
			id, ok := eventID(line)
			if !ok || id != int64(n)+1 {
				return finishLog(rec, events, kept, committed)
			}
			if history {
				e, err := decodeEvent(line)
				if err != nil {
					return finishLog(rec, events, kept, committed)
				}
				events = append(events, e)
			}
			n++
		case bytes.HasPrefix(line, commitPrefix):
			var l logLine
			if json.Unmarshal(line, &l) != nil || l.Commit == nil {
				return finishLog(rec, events, kept, committed)
			}
			c := l.Commit
			rec.Status, rec.StopDate, rec.Output, rec.Error, rec.Cause = c.Status, c.StopDate, c.Output, c.Error, c.Cause
			rec.Checkpoint = c.Checkpoint
			rec.Ext = c.Ext
			kept, committed = n, next
		default:
			return finishLog(rec, events, kept, committed)
		}
		off = next
	}
	if rec == nil {
		return nil, 0, errNoHeader
	}
	return finishLog(rec, events, kept, committed)
}

func finishLog(rec *ExecutionRecord, events []Event, kept, committed int) (*ExecutionRecord, int, error) {
	if events != nil {
		rec.History = events[:kept:kept]
	}
	return rec, committed, nil
}

// eventID reads the id at the start of an event line.
func eventID(line []byte) (int64, bool) {
	rest := line[len(eventPrefix):]
	i := bytes.IndexByte(rest, ',')
	if i < 0 {
		return 0, false
	}
	id, err := strconv.ParseInt(string(rest[:i]), 10, 64)
	return id, err == nil
}

// encodeLog returns the whole log of rec, History included: how FileStore converts a record of the old
// one-file-per-execution format.
func encodeLog(rec *ExecutionRecord) ([]byte, error) {
	b, err := appendHeader(nil, rec)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", rec.Arn, err)
	}
	b = append(b, encodeEvents(rec.History)...)
	if b, err = appendCommit(b, rec); err != nil {
		return nil, fmt.Errorf("encode %s: %w", rec.Arn, err)
	}
	return b, nil
}
