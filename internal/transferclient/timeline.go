package transferclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
)

// EntryKind says what a timeline entry shows.
type EntryKind string

// The kinds of timeline entries.
const (
	// EntryTransfer is the transfer record: accepted (its createdAt) or settled (its completedAt).
	EntryTransfer EntryKind = "transfer"
	// EntryExecution is the execution starting or ending.
	EntryExecution EntryKind = "execution"
	// EntryState is a state entered; Took is how long until it exited, retries included.
	EntryState EntryKind = "state"
	// EntryAttempt is a task attempt that failed: retried, or not.
	EntryAttempt EntryKind = "attempt"
	// EntryLeg is a ledger leg applied.
	EntryLeg EntryKind = "leg"
)

// TimelineEntry is one line of a transfer's timeline.
type TimelineEntry struct {
	// Time is when it happened.
	Time time.Time
	Kind EntryKind
	// Step is the state's name for state and attempt entries, and "transfer", "execution" or "ledger" otherwise.
	Step string
	// What says what happened, for people: "lambda:invoke CreditFunction, 3 attempts",
	// "TransientError, retry 1 after 1.2s (injected fault)", "DEBIT acc-alice -1250 EUR", "COMPLETED".
	What string
	// Took, when HasTook, is how long the entry's step took: a state from entered to exited, a failed attempt from
	// scheduled to failed, the execution from started to its end, the transfer from accepted to settled.
	Took    time.Duration
	HasTook bool
}

// Step names of the entries that are not states.
const (
	stepTransfer  = "transfer"
	stepExecution = "execution"
	stepLedger    = "ledger"
)

// maxCause bounds the error cause shown on an attempt or execution entry, in characters.
const maxCause = 100

// Timeline merges a transfer's execution events, its ledger legs and, when t is not nil, its record (accepted and
// settled) into one list in time order. Each state visit is one entry (its name, kind or integration, attempts and
// duration), each failed task attempt one more (its error, and the retry that followed with the wait before it), and
// each leg one entry at its createdAt. Events keep their order; a leg whose time equals other entries' is placed
// after the state whose task wrote it.
func Timeline(h History, t *Transfer) []TimelineEntry {
	b := newTimelineBuilder(len(h.Events))
	for i := range h.Events {
		b.add(&h.Events[i])
	}
	rows := b.finish()

	// Sort keys: events keep their order (their times clamped to never go back); other entries go by their time,
	// ties broken by group.
	type keyed struct {
		TimelineEntry
		at    time.Time
		group float64
	}
	all := make([]keyed, 0, len(rows)+len(h.Ledger)+2)
	var latest time.Time
	for i, r := range rows {
		if r.Time.After(latest) {
			latest = r.Time
		}
		all = append(all, keyed{r, latest, float64(i)})
	}
	for _, l := range h.Ledger {
		at, err := time.Parse(time.RFC3339Nano, l.CreatedAt)
		if err != nil {
			continue // a leg without a readable time cannot be placed; --output json still shows it
		}
		group := math.Inf(1)
		if last, ok := b.legWriter(l.Leg, at); ok {
			group = float64(last) + 0.5
		}
		all = append(all, keyed{TimelineEntry{Time: at, Kind: EntryLeg, Step: stepLedger, What: legText(l)}, at, group})
	}
	if t != nil {
		created, errCreated := time.Parse(time.RFC3339Nano, t.CreatedAt)
		if errCreated == nil {
			all = append(all, keyed{TimelineEntry{Time: created, Kind: EntryTransfer, Step: stepTransfer, What: "accepted"}, created, math.Inf(-1)})
		}
		if done, err := time.Parse(time.RFC3339Nano, t.CompletedAt); err == nil && t.Terminal() {
			e := TimelineEntry{Time: done, Kind: EntryTransfer, Step: stepTransfer, What: Clean(t.Status)}
			if t.Failure != nil {
				e.What += " " + Clean(t.Failure.Code)
			}
			if errCreated == nil {
				e.Took, e.HasTook = done.Sub(created), true
			}
			// The workflow settles the record before the execution ends: at the same millisecond, before its end.
			group := math.Inf(1)
			if b.end >= 0 {
				group = float64(b.end) - 0.5
			}
			all = append(all, keyed{e, done, group})
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		if !all[i].at.Equal(all[j].at) {
			return all[i].at.Before(all[j].at)
		}
		return all[i].group < all[j].group
	})
	out := make([]TimelineEntry, len(all))
	for i, k := range all {
		out[i] = k.TimelineEntry
	}
	return out
}

// visit is one entry into a state, while the timeline is built.
type visit struct {
	row       int    // the state's entry
	last      int    // the visit's last entry (the state's, or its last failed attempt's)
	kind      string // the state's type in lower case: task, pass, choice, wait, …
	entered   time.Time
	exited    bool
	attempts  int
	scheduled *Event // the current attempt's scheduling
	// integration is the task's resource ("lambda:invoke DebitFunction"); leg the ledger leg its payload names.
	integration, leg string
	// failed is the entry of a failed attempt whose retry has not been seen yet, or -1.
	failed int
}

// timelineBuilder turns events into entries, one event at a time.
type timelineBuilder struct {
	rows    []TimelineEntry
	byID    map[int64]*Event
	visits  map[int64]*visit // by the id of the StateEntered event
	order   []*visit
	started *Event
	end     int // the execution's end entry, or -1 while it runs
	// failures are the failed attempts' errors, by entry index, until their text is final.
	failures map[int]attemptFailure
	limit    int
}

// attemptFailure is a failed attempt, until the events after it say whether it was retried.
type attemptFailure struct {
	v          *visit
	err, cause string
	retry      int
	wait       time.Duration
	retried    bool
}

func newTimelineBuilder(n int) *timelineBuilder {
	return &timelineBuilder{byID: make(map[int64]*Event, n), visits: map[int64]*visit{}, failures: map[int]attemptFailure{}, end: -1, limit: n}
}

func (b *timelineBuilder) add(e *Event) {
	b.byID[e.ID] = e
	switch {
	case e.Type == "ExecutionStarted":
		b.started = e
		b.rows = append(b.rows, TimelineEntry{Time: e.Timestamp, Kind: EntryExecution, Step: stepExecution, What: "started"})
	case isExecutionEnd(e.Type):
		b.end = len(b.rows)
		r := TimelineEntry{Time: e.Timestamp, Kind: EntryExecution, Step: stepExecution, What: executionEnd(e)}
		if b.started != nil {
			r.Took, r.HasTook = e.Timestamp.Sub(b.started.Timestamp), true
		}
		b.rows = append(b.rows, r)
	case strings.HasSuffix(e.Type, "StateEntered"):
		v := &visit{row: len(b.rows), last: len(b.rows), kind: strings.ToLower(strings.TrimSuffix(e.Type, "StateEntered")), entered: e.Timestamp, failed: -1}
		b.visits[e.ID] = v
		b.order = append(b.order, v)
		b.rows = append(b.rows, TimelineEntry{Time: e.Timestamp, Kind: EntryState, Step: Clean(e.Name)})
	case strings.HasSuffix(e.Type, "StateExited"):
		if v := b.visitOf(e); v != nil {
			v.exited = true
			r := &b.rows[v.row]
			r.Took, r.HasTook = e.Timestamp.Sub(v.entered), true
		}
	case isAttemptEvent(e.Type, "Scheduled"):
		v := b.visitOf(e)
		if v == nil {
			return
		}
		v.attempts++
		v.scheduled = e
		if v.integration == "" {
			v.integration, v.leg = integration(e)
		}
		if v.failed >= 0 {
			f := b.failures[v.failed]
			f.retried, f.retry, f.wait = true, v.attempts-1, e.Timestamp.Sub(b.rows[v.failed].Time)
			b.failures[v.failed] = f
			v.failed = -1
		}
	case isAttemptEvent(e.Type, "Failed"), isAttemptEvent(e.Type, "TimedOut"), isAttemptEvent(e.Type, "StartFailed"),
		isAttemptEvent(e.Type, "SubmitFailed"), isAttemptEvent(e.Type, "ScheduleFailed"):
		v := b.visitOf(e)
		if v == nil {
			return
		}
		r := TimelineEntry{Time: e.Timestamp, Kind: EntryAttempt, Step: b.rows[v.row].Step}
		if v.scheduled != nil {
			r.Took, r.HasTook = e.Timestamp.Sub(v.scheduled.Timestamp), true
		}
		name := e.Error
		if name == "" && strings.HasSuffix(e.Type, "TimedOut") {
			name = "States.Timeout"
		}
		v.failed, v.last = len(b.rows), len(b.rows)
		b.failures[len(b.rows)] = attemptFailure{v: v, err: name, cause: e.Cause}
		b.rows = append(b.rows, r)
	}
}

// finish writes the texts that depend on later events and returns the entries.
func (b *timelineBuilder) finish() []TimelineEntry {
	for _, v := range b.order {
		r := &b.rows[v.row]
		r.What = v.kind
		if v.integration != "" {
			r.What = v.integration
		}
		if v.attempts > 1 {
			r.What += fmt.Sprintf(", %d attempts", v.attempts)
		}
		if !v.exited && b.end < 0 {
			r.What += ", running"
		}
	}
	for i, f := range b.failures {
		what := Clean(f.err)
		if what == "" {
			what = "failed"
		}
		switch {
		case f.retried:
			what += fmt.Sprintf(", retry %d after %s", f.retry, FormatDuration(f.wait))
		case f.v.exited || b.end >= 0: // the state was left, or the execution ended: no retry can follow
			what += ", not retried"
		}
		if c := causeText(f.cause); c != "" {
			what += " (" + c + ")"
		}
		b.rows[i].What = what
	}
	return b.rows
}

// legWriter returns the last entry of the state visit whose task wrote the leg: the last visit naming that leg in its
// payload that was entered at or before at (else the first naming it).
func (b *timelineBuilder) legWriter(leg string, at time.Time) (int, bool) {
	var found *visit
	for _, v := range b.order {
		if v.leg != leg {
			continue
		}
		if found == nil || !v.entered.After(at) {
			found = v
		}
	}
	if found == nil {
		return 0, false
	}
	return found.last, true
}

// visitOf finds the state visit e belongs to by following previousEventId back to a StateEntered event. Without a
// chain (a history from a tool that does not link events) it is the last visit entered.
func (b *timelineBuilder) visitOf(e *Event) *visit {
	cur := e
	for range b.limit + 1 {
		if v, ok := b.visits[cur.ID]; ok {
			return v
		}
		if cur != e && (strings.HasSuffix(cur.Type, "StateExited") || strings.HasPrefix(cur.Type, "Execution")) {
			break
		}
		prev, ok := b.byID[cur.PreviousEventID]
		if !ok || cur.PreviousEventID == 0 || prev == cur {
			break
		}
		cur = prev
	}
	if n := len(b.order); n > 0 {
		return b.order[n-1]
	}
	return nil
}

// isAttemptEvent reports whether typ is suffix of a task family: Task, LambdaFunction or Activity.
func isAttemptEvent(typ, suffix string) bool {
	for _, family := range []string{"Task", "LambdaFunction", "Activity"} {
		if typ == family+suffix {
			return true
		}
	}
	return false
}

// integration describes a scheduled task: "lambda:invoke DebitFunction", "dynamodb:updateItem", and the ledger leg
// a Lambda payload names.
func integration(e *Event) (desc, leg string) {
	desc = e.ResourceType
	if e.Resource != "" {
		if desc != "" {
			desc += ":"
		}
		desc += e.Resource
	}
	var p struct {
		FunctionName string `json:"FunctionName"`
		Payload      struct {
			Leg string `json:"leg"`
		} `json:"Payload"`
	}
	if e.Parameters != "" && json.Unmarshal([]byte(e.Parameters), &p) == nil {
		if fn := p.FunctionName; fn != "" {
			if i := strings.LastIndex(fn, ":function:"); i >= 0 {
				fn = fn[i+len(":function:"):]
				if j := strings.IndexByte(fn, ':'); j >= 0 {
					fn = fn[:j]
				}
			}
			desc += " " + fn
		}
		leg = p.Payload.Leg
	}
	if desc == "" {
		desc = "task"
	}
	return Clean(desc), leg
}

// executionEnd describes the execution's end event.
func executionEnd(e *Event) string {
	what := map[string]string{"ExecutionSucceeded": "succeeded", "ExecutionFailed": "failed",
		"ExecutionTimedOut": "timed out", "ExecutionAborted": "aborted"}[e.Type]
	if e.Error != "" || e.Cause != "" {
		what += ": " + Clean(e.Error)
		if c := causeText(e.Cause); c != "" {
			what += " (" + c + ")"
		}
	}
	return what
}

// legText describes a leg: its name, account and signed amount.
func legText(l LedgerLeg) string {
	sign := "+"
	if l.Leg == "DEBIT" {
		sign = "-"
	}
	s := fmt.Sprintf("%s %s %s%d %s", Clean(l.Leg), Clean(l.AccountID), sign, l.Amount, Clean(l.Currency))
	if l.BalanceAfter != nil {
		s += fmt.Sprintf(" (balance after %d)", *l.BalanceAfter)
	}
	return s
}

// isExecutionEnd reports whether typ ends the execution.
func isExecutionEnd(typ string) bool {
	switch typ {
	case "ExecutionSucceeded", "ExecutionFailed", "ExecutionTimedOut", "ExecutionAborted":
		return true
	}
	return false
}

// causeText renders an error's cause on one line. A Lambda cause is JSON ({"errorMessage": ...}); its message is
// shown instead of the JSON.
func causeText(cause string) string {
	var lambdaCause struct {
		ErrorMessage string `json:"errorMessage"`
	}
	if json.Unmarshal([]byte(cause), &lambdaCause) == nil && lambdaCause.ErrorMessage != "" {
		cause = lambdaCause.ErrorMessage
	}
	return truncate(strings.TrimSpace(Clean(cause)), maxCause)
}

// TimelineFormat chooses how WriteTimeline shows times.
type TimelineFormat struct {
	// Relative shows each time as the offset from the first entry instead of an absolute time.
	Relative bool
	// Location is the zone of absolute times; nil means UTC.
	Location *time.Location
}

// WriteTimeline writes a transfer's history as text: a header (the transfer, its execution and, when t is not nil,
// its status), then one line per timeline entry (time, step, how long it took, what happened). Text from the API is
// cleaned of control characters.
func WriteTimeline(w io.Writer, h History, t *Transfer, f TimelineFormat) error {
	loc := f.Location
	if loc == nil {
		loc = time.UTC
	}
	entries := Timeline(h, t)
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "transfer   %s\nexecution  %s\n", Clean(h.TransferID), Clean(h.ExecutionArn))
	if t != nil {
		status := Clean(t.Status)
		if t.Failure != nil {
			status += " " + Clean(t.Failure.Code) + ": " + Clean(t.Failure.Message)
		}
		fmt.Fprintf(&buf, "status     %s\n", status)
	}
	if f.Relative && len(entries) > 0 {
		fmt.Fprintf(&buf, "started    %s\n", entries[0].Time.In(loc).Format(timeLayout))
	}
	buf.WriteString("\n")
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tSTEP\tTOOK\tWHAT")
	for _, e := range entries {
		at := e.Time.In(loc).Format(timeLayout)
		if f.Relative {
			at = "+" + FormatDuration(e.Time.Sub(entries[0].Time))
		}
		took := ""
		if e.HasTook {
			took = FormatDuration(e.Took)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", at, e.Step, took, e.What)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(h.Events) == 0 {
		buf.WriteString("(no execution events: the workflow has not started, or its history is no longer kept)\n")
	}
	if len(h.Ledger) == 0 {
		buf.WriteString("(no ledger legs: no money moved)\n")
	}
	_, err := w.Write(trimLines(buf.Bytes()))
	return err
}

const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// FormatDuration renders d for people, to the millisecond: 850ms, 1.2s, 1.204s, 2m3.5s.
func FormatDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "-" + FormatDuration(-d)
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < time.Minute:
		ms := d.Milliseconds()
		frac := strings.TrimRight(fmt.Sprintf("%03d", ms%1000), "0")
		if frac == "" {
			return strconv.FormatInt(ms/1000, 10) + "s"
		}
		return strconv.FormatInt(ms/1000, 10) + "." + frac + "s"
	default:
		return d.Round(100 * time.Millisecond).String()
	}
}

// Clean makes text from the API safe to print on a terminal: the characters ForgesLines reports become spaces.
func Clean(s string) string {
	return strings.Map(func(r rune) rune {
		if ForgesLines(r) {
			return ' '
		}
		return r
	}, s)
}

// ForgesLines reports whether r could move the cursor, forge a line or reorder the text around it on display: a
// control character (C0, DEL or C1), a line or paragraph separator (U+2028, U+2029), or a character of Unicode's
// Bidi_Control property (embeddings, overrides, isolates and the marks U+061C, U+200E, U+200F). The API refuses them
// in a transfer's reference.
func ForgesLines(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Zl, unicode.Zp, unicode.Bidi_Control)
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
