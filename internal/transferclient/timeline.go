package transferclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
)

// TimelineRow is one history event as a person reads it.
type TimelineRow struct {
	// Time is when the event happened; Since is how long after the first event.
	Time  time.Time
	Since time.Duration
	// State is the state the event belongs to (empty for execution-level events).
	State string
	// Event is the event type, with the task's integration for a scheduled task ("TaskScheduled lambda:invoke").
	Event string
	// Duration, when HasDuration, is how long the step that this event closes took: StateEntered to StateExited,
	// TaskScheduled to TaskSucceeded/Failed/TimedOut (likewise for LambdaFunction* and Activity*), ExecutionStarted
	// to the execution's end.
	Duration    time.Duration
	HasDuration bool
	// Error is "error: cause" of a failure event, on one line.
	Error string
}

// Timeline turns history events into rows, in the order given. An event's state is found by following
// previousEventId back to the nearest StateEntered or StateExited event; a step's duration by following it back to
// the event that opened the step.
func Timeline(events []Event) []TimelineRow {
	byID := make(map[int64]*Event, len(events))
	for i := range events {
		byID[events[i].ID] = &events[i]
	}
	var first time.Time
	if len(events) > 0 {
		first = events[0].Timestamp
	}
	// The execution's end is measured from ExecutionStarted directly: Step Functions gives the first state's
	// StateEntered previousEventId 0, so the chain does not lead back to it.
	var started *Event
	for i := range events {
		if events[i].Type == "ExecutionStarted" {
			started = &events[i]
			break
		}
	}
	rows := make([]TimelineRow, 0, len(events))
	for i := range events {
		e := &events[i]
		r := TimelineRow{Time: e.Timestamp, Since: e.Timestamp.Sub(first), State: stateOf(e, byID, len(events)), Event: e.Type}
		if e.Resource != "" && strings.HasSuffix(e.Type, "Scheduled") {
			r.Event += " " + e.ResourceType + ":" + e.Resource
		}
		if isExecutionEnd(e.Type) {
			if started != nil {
				r.Duration, r.HasDuration = e.Timestamp.Sub(started.Timestamp), true
			}
		} else if open := opener(e, byID, len(events)); open != nil {
			r.Duration, r.HasDuration = e.Timestamp.Sub(open.Timestamp), true
		}
		if e.Error != "" || e.Cause != "" {
			r.Error = errorText(e.Error, e.Cause)
		}
		rows = append(rows, r)
	}
	return rows
}

// stateOf names the state e belongs to. limit bounds the walk so that a malformed history cannot loop.
func stateOf(e *Event, byID map[int64]*Event, limit int) string {
	for range limit {
		switch {
		case strings.HasSuffix(e.Type, "StateEntered"), strings.HasSuffix(e.Type, "StateExited"):
			return e.Name
		case strings.HasPrefix(e.Type, "Execution"):
			return ""
		}
		prev, ok := byID[e.PreviousEventID]
		if !ok || e.PreviousEventID == 0 {
			return ""
		}
		e = prev
	}
	return ""
}

// opener returns the event that opened the state or task step e closes, or nil when e closes none or the opener is
// not in the history.
func opener(e *Event, byID map[int64]*Event, limit int) *Event {
	var match func(*Event) bool
	switch {
	case strings.HasSuffix(e.Type, "StateExited"):
		match = func(o *Event) bool { return strings.HasSuffix(o.Type, "StateEntered") && o.Name == e.Name }
	default:
		for _, family := range []string{"Task", "LambdaFunction", "Activity"} {
			rest, ok := strings.CutPrefix(e.Type, family)
			if ok && (rest == "Succeeded" || rest == "Failed" || rest == "TimedOut") {
				want := family + "Scheduled"
				match = func(o *Event) bool { return o.Type == want }
			}
		}
	}
	if match == nil {
		return nil
	}
	cur := e
	for range limit {
		prev, ok := byID[cur.PreviousEventID]
		if !ok || cur.PreviousEventID == 0 {
			return nil
		}
		if match(prev) {
			return prev
		}
		cur = prev
	}
	return nil
}

// isExecutionEnd reports whether typ ends the execution.
func isExecutionEnd(typ string) bool {
	switch typ {
	case "ExecutionSucceeded", "ExecutionFailed", "ExecutionTimedOut", "ExecutionAborted":
		return true
	}
	return false
}

// errorText renders an error and its cause on one line. A Lambda cause is JSON ({"errorMessage": ...}); its message
// is shown instead of the JSON.
func errorText(errName, cause string) string {
	var lambdaCause struct {
		ErrorMessage string `json:"errorMessage"`
	}
	if json.Unmarshal([]byte(cause), &lambdaCause) == nil && lambdaCause.ErrorMessage != "" {
		cause = lambdaCause.ErrorMessage
	}
	s := errName
	if cause != "" {
		if s != "" {
			s += ": "
		}
		s += cause
	}
	return truncate(Clean(s), 100)
}

// TimelineFormat chooses how WriteTimeline shows times.
type TimelineFormat struct {
	// Relative shows each time as the offset from the first event instead of an absolute time.
	Relative bool
	// Location is the zone of absolute times; nil means UTC.
	Location *time.Location
}

// WriteTimeline writes h as text: a header, one line per event (time, state, event, duration, error), then the
// ledger legs. Text from the API is cleaned of control characters.
func WriteTimeline(w io.Writer, h History, f TimelineFormat) error {
	loc := f.Location
	if loc == nil {
		loc = time.UTC
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "transfer   %s\nexecution  %s\n", Clean(h.TransferID), Clean(h.ExecutionArn))
	if f.Relative && len(h.Events) > 0 {
		fmt.Fprintf(&buf, "started    %s\n", h.Events[0].Timestamp.In(loc).Format(timeLayout))
	}
	buf.WriteString("\n")
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tSTATE\tEVENT\tDURATION\tERROR")
	for _, r := range Timeline(h.Events) {
		t := r.Time.In(loc).Format(timeLayout)
		if f.Relative {
			t = "+" + FormatDuration(r.Since)
		}
		d := ""
		if r.HasDuration {
			d = FormatDuration(r.Duration)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t, Clean(r.State), Clean(r.Event), d, r.Error)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(h.Events) == 0 {
		buf.WriteString("(no execution events: the workflow has not started)\n")
	}
	buf.WriteString("\n")
	if len(h.Ledger) == 0 {
		buf.WriteString("ledger: no legs\n")
	} else {
		tw = tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "LEG\tACCOUNT\tAMOUNT (minor units)\tCURRENCY\tBALANCE AFTER\tAT")
		for _, l := range h.Ledger {
			after := ""
			if l.BalanceAfter != nil {
				after = strconv.FormatInt(*l.BalanceAfter, 10)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", Clean(l.Leg), Clean(l.AccountID), l.Amount, Clean(l.Currency), after, Clean(l.CreatedAt))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	_, err := w.Write(trimLines(buf.Bytes()))
	return err
}

const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// FormatDuration renders d for people: 850ms, 1.204s, 2m3.5s.
func FormatDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "-" + FormatDuration(-d)
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) + "s"
	default:
		return d.Round(100 * time.Millisecond).String()
	}
}

// Clean makes text from the API safe to print on a terminal: control characters (which could move the cursor or
// forge lines) become spaces.
func Clean(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Bidi_Control, r) {
			return ' '
		}
		return r
	}, s)
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// trimLines removes the trailing blanks tabwriter leaves after empty last cells.
func trimLines(b []byte) []byte {
	lines := bytes.Split(b, []byte("\n"))
	for i, l := range lines {
		lines[i] = bytes.TrimRight(l, " ")
	}
	return bytes.Join(lines, []byte("\n"))
}
