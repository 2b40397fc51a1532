package transferclient

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// The histories in testdata:
//   - history_completed.json and history_failed.json are written by hand in GetExecutionHistory's shape (a Debit
//     retried after Lambda.ServiceException; a refused debit whose cause tries to forge a terminal line).
//   - recorded_*.json were recorded from the local stack by e2e's TestHistoryCommand, which makes each transfer on
//     a stack with --fault flags and, run with -record-histories, writes {"transfer": GET /transfers/{id},
//     "history": GET /transfers/{id}/history?maxResults=1000} as the API answered them:
//     go test ./lab/e2e -run TestHistoryCommand -record-histories; then go test ./internal/transferclient -update.

func loadHistory(t *testing.T, name string) (History, []byte) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var h History
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatalf("decode %s: %v", name, err)
	}
	return h, b
}

// loadRecorded reads a recording of e2e's TestHistoryCommand: the transfer and its history as the API sent them.
func loadRecorded(t *testing.T, name string) (History, *Transfer, json.RawMessage) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Transfer json.RawMessage `json:"transfer"`
		History  json.RawMessage `json:"history"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatalf("decode %s: %v", name, err)
	}
	var h History
	if err := json.Unmarshal(rec.History, &h); err != nil {
		t.Fatalf("decode %s history: %v", name, err)
	}
	tr, err := decodeTransfer(rec.Transfer)
	if err != nil {
		t.Fatalf("decode %s transfer: %v", name, err)
	}
	return h, &tr, rec.History
}

func TestTimelineGolden(t *testing.T) {
	tests := []struct {
		name, input, golden string
		recorded            bool
		format              TimelineFormat
	}{
		{"hand-written: completed, absolute times", "history_completed.json", "timeline_completed.golden", false, TimelineFormat{}},
		{"hand-written: completed, relative times", "history_completed.json", "timeline_completed_relative.golden", false, TimelineFormat{Relative: true}},
		{"hand-written: failed, RFC 3339 timestamps and a hostile cause", "history_failed.json", "timeline_failed.golden", false, TimelineFormat{}},
		{"recorded: a credit retried twice", "recorded_credit_retried.json", "recorded_credit_retried.golden", true, TimelineFormat{}},
		{"recorded: a credit retried twice, relative", "recorded_credit_retried.json", "recorded_credit_retried_relative.golden", true, TimelineFormat{Relative: true}},
		{"recorded: insufficient funds", "recorded_insufficient_funds.json", "recorded_insufficient_funds.golden", true, TimelineFormat{}},
		{"recorded: a debit retried, a credit refused and refunded", "recorded_credit_refunded.json", "recorded_credit_refunded.golden", true, TimelineFormat{}},
		{"recorded: the execution timed out, the reconciler refunded", "recorded_timed_out.json", "recorded_timed_out.golden", true, TimelineFormat{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var h History
			var tr *Transfer
			if tc.recorded {
				h, tr, _ = loadRecorded(t, tc.input)
			} else {
				h, _ = loadHistory(t, tc.input)
			}
			var buf bytes.Buffer
			if err := WriteTimeline(&buf, h, tr, tc.format); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tc.golden)
			if *update {
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got := buf.String(); got != string(want) {
				t.Errorf("timeline differs from %s:\n--- got\n%s\n--- want\n%s", path, got, want)
			}
		})
	}
}

// eventsByID indexes a history's events for the checks below, which take their expected times from the events.
func eventsByID(h History) map[int64]Event {
	m := map[int64]Event{}
	for _, e := range h.Events {
		m[e.ID] = e
	}
	return m
}

func legAt(t *testing.T, h History, leg string) time.Time {
	t.Helper()
	for _, l := range h.Ledger {
		if l.Leg == leg {
			at, err := time.Parse(time.RFC3339Nano, l.CreatedAt)
			if err != nil {
				t.Fatal(err)
			}
			return at
		}
	}
	t.Fatalf("no %s leg", leg)
	return time.Time{}
}

// TestTimelineOfARecordedRetry checks, entry by entry, the timeline of a transfer whose credit failed twice with
// TransientError before it succeeded (recorded from the local stack).
func TestTimelineOfARecordedRetry(t *testing.T) {
	h, tr, _ := loadRecorded(t, "recorded_credit_retried.json")
	ev := eventsByID(h)
	// The recording's Credit state: entered at 7, attempts scheduled at 8, 11 and 14, failed at 10 and 13, exited
	// at 17 (see the file).
	for id, typ := range map[int64]string{7: "TaskStateEntered", 8: "TaskScheduled", 10: "TaskFailed", 11: "TaskScheduled", 13: "TaskFailed", 14: "TaskScheduled", 17: "TaskStateExited"} {
		if ev[id].Type != typ {
			t.Fatalf("event %d is %s, want %s: the recording changed; update this test", id, ev[id].Type, typ)
		}
	}
	created, _ := time.Parse(time.RFC3339Nano, tr.CreatedAt)
	completed, _ := time.Parse(time.RFC3339Nano, tr.CompletedAt)
	end := h.Events[len(h.Events)-1]
	want := []TimelineEntry{
		{Time: created, Kind: EntryTransfer, Step: "transfer", What: "accepted"},
		{Time: ev[1].Timestamp, Kind: EntryExecution, Step: "execution", What: "started"},
		{Time: ev[2].Timestamp, Kind: EntryState, Step: "Debit", What: "lambda:invoke DebitFunction", Took: ev[6].Timestamp.Sub(ev[2].Timestamp), HasTook: true},
		{Time: legAt(t, h, "DEBIT"), Kind: EntryLeg, Step: "ledger", What: "DEBIT acc-alice -1250 EUR"},
		{Time: ev[7].Timestamp, Kind: EntryState, Step: "Credit", What: "lambda:invoke CreditFunction, 3 attempts", Took: ev[17].Timestamp.Sub(ev[7].Timestamp), HasTook: true},
		{Time: ev[10].Timestamp, Kind: EntryAttempt, Step: "Credit", Took: ev[10].Timestamp.Sub(ev[8].Timestamp), HasTook: true,
			What: fmt.Sprintf("TransientError, retry 1 after %s (injected fault)", FormatDuration(ev[11].Timestamp.Sub(ev[10].Timestamp)))},
		{Time: ev[13].Timestamp, Kind: EntryAttempt, Step: "Credit", Took: ev[13].Timestamp.Sub(ev[11].Timestamp), HasTook: true,
			What: fmt.Sprintf("TransientError, retry 2 after %s (injected fault)", FormatDuration(ev[14].Timestamp.Sub(ev[13].Timestamp)))},
		{Time: legAt(t, h, "CREDIT"), Kind: EntryLeg, Step: "ledger", What: "CREDIT acc-bob +1250 EUR"},
		{Time: ev[18].Timestamp, Kind: EntryState, Step: "MarkCompleted", What: "dynamodb:updateItem", Took: ev[22].Timestamp.Sub(ev[18].Timestamp), HasTook: true},
		{Time: completed, Kind: EntryTransfer, Step: "transfer", What: "COMPLETED", Took: completed.Sub(created), HasTook: true},
		{Time: end.Timestamp, Kind: EntryExecution, Step: "execution", What: "succeeded", Took: end.Timestamp.Sub(ev[1].Timestamp), HasTook: true},
	}
	got := Timeline(h, tr)
	if len(got) != len(want) {
		t.Fatalf("entries = %d, want %d:\n%s", len(got), len(want), entriesText(got))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d = %+v\nwant        %+v", i, got[i], want[i])
		}
	}
}

func entriesText(es []TimelineEntry) string {
	var b strings.Builder
	for _, e := range es {
		fmt.Fprintf(&b, "%s %s %s %q %v\n", e.Time.Format(timeLayout), e.Kind, e.Step, e.What, e.Took)
	}
	return b.String()
}

// ev builds an event at ms milliseconds after a fixed time.
func ev(id, prev int64, ms int, typ string, detail func(*Event)) Event {
	e := Event{ID: id, PreviousEventID: prev, Timestamp: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC).Add(time.Duration(ms) * time.Millisecond), Type: typ}
	if detail != nil {
		detail(&e)
	}
	return e
}

func named(n string) func(*Event) { return func(e *Event) { e.Name = n } }

func lambdaTask(fn, leg string) func(*Event) {
	return func(e *Event) {
		e.ResourceType, e.Resource = "lambda", "invoke"
		e.Parameters = `{"FunctionName":"arn:aws:lambda:eu-west-1:123456789012:function:` + fn + `:live","Payload":{"leg":"` + leg + `"}}`
	}
}

func failed(errName, cause string) func(*Event) {
	return func(e *Event) { e.Error, e.Cause = errName, cause }
}

func leg(name, acct string, amount int64, ms int) LedgerLeg {
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC).Add(time.Duration(ms) * time.Millisecond)
	return LedgerLeg{Leg: name, AccountID: acct, Amount: amount, Currency: "EUR", CreatedAt: at.Format(timeLayout)}
}

func whats(es []TimelineEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Step + ": " + e.What
	}
	return out
}

func TestTimelineRules(t *testing.T) {
	tests := []struct {
		name   string
		events []Event
		ledger []LedgerLeg
		want   []string
	}{
		{
			// A fast engine does everything in one millisecond: the legs go after the state whose task wrote them
			// (its payload's leg), not after everything of that millisecond.
			name: "ties: a leg goes after the state that wrote it",
			events: []Event{
				ev(1, 0, 0, "ExecutionStarted", nil),
				ev(2, 0, 0, "TaskStateEntered", named("Debit")), ev(3, 2, 0, "TaskScheduled", lambdaTask("DebitFunction", "DEBIT")),
				ev(4, 3, 0, "TaskSucceeded", nil), ev(5, 4, 0, "TaskStateExited", named("Debit")),
				ev(6, 5, 0, "TaskStateEntered", named("Credit")), ev(7, 6, 0, "TaskScheduled", lambdaTask("CreditFunction", "CREDIT")),
				ev(8, 7, 0, "TaskSucceeded", nil), ev(9, 8, 0, "TaskStateExited", named("Credit")),
				ev(10, 9, 0, "ExecutionSucceeded", nil),
			},
			ledger: []LedgerLeg{leg("CREDIT", "acc-bob", 5, 0), leg("DEBIT", "acc-alice", 5, 0)},
			want: []string{"execution: started", "Debit: lambda:invoke DebitFunction", "ledger: DEBIT acc-alice -5 EUR",
				"Credit: lambda:invoke CreditFunction", "ledger: CREDIT acc-bob +5 EUR", "execution: succeeded"},
		},
		{
			name: "a running execution: the state is running, its last failure may still be retried",
			events: []Event{
				ev(1, 0, 0, "ExecutionStarted", nil),
				ev(2, 0, 1, "TaskStateEntered", named("Credit")), ev(3, 2, 2, "TaskScheduled", lambdaTask("CreditFunction", "CREDIT")),
				ev(4, 3, 5, "TaskFailed", failed("Lambda.TooManyRequestsException", "Rate exceeded")),
			},
			want: []string{"execution: started", "Credit: lambda:invoke CreditFunction, running", "Credit: Lambda.TooManyRequestsException (Rate exceeded)"},
		},
		{
			name: "a timed-out attempt and a failed execution",
			events: []Event{
				ev(1, 0, 0, "ExecutionStarted", nil),
				ev(2, 0, 1, "TaskStateEntered", named("Credit")), ev(3, 2, 2, "TaskScheduled", lambdaTask("CreditFunction", "CREDIT")),
				ev(4, 3, 900, "TaskTimedOut", nil),
				ev(5, 4, 901, "ExecutionFailed", failed("States.Timeout", `{"errorMessage":"Task timed out after 0.90 seconds"}`)),
			},
			want: []string{"execution: started", "Credit: lambda:invoke CreditFunction", "Credit: States.Timeout, not retried",
				"execution: failed: States.Timeout (Task timed out after 0.90 seconds)"},
		},
		{
			name: "a state visited twice counts its attempts per visit; Lambda's own events are attempts too",
			events: []Event{
				ev(1, 0, 0, "ExecutionStarted", nil),
				ev(2, 0, 1, "TaskStateEntered", named("Poll")), ev(3, 2, 2, "LambdaFunctionScheduled", nil),
				ev(4, 3, 3, "LambdaFunctionFailed", failed("Busy", "")), ev(5, 4, 1003, "LambdaFunctionScheduled", nil),
				ev(6, 5, 1004, "LambdaFunctionSucceeded", nil), ev(7, 6, 1005, "TaskStateExited", named("Poll")),
				ev(8, 7, 1006, "WaitStateEntered", named("Pause")), ev(9, 8, 2006, "WaitStateExited", named("Pause")),
				ev(10, 9, 2007, "TaskStateEntered", named("Poll")), ev(11, 10, 2008, "LambdaFunctionScheduled", nil),
				ev(12, 11, 2009, "LambdaFunctionSucceeded", nil), ev(13, 12, 2010, "TaskStateExited", named("Poll")),
				ev(14, 13, 2011, "ExecutionAborted", nil),
			},
			want: []string{"execution: started", "Poll: task, 2 attempts", "Poll: Busy, retry 1 after 1s", "Pause: wait", "Poll: task",
				"execution: aborted"},
		},
		{
			name: "a leg without a readable time is left out of the text; a leg no state names goes by its time",
			events: []Event{
				ev(1, 0, 0, "ExecutionStarted", nil), ev(2, 0, 10, "PassStateEntered", named("P")), ev(3, 2, 20, "PassStateExited", named("P")),
				ev(4, 3, 30, "ExecutionSucceeded", nil),
			},
			ledger: []LedgerLeg{{Leg: "DEBIT", AccountID: "a", Amount: 1, CreatedAt: "yesterday"}, leg("REFUND", "a", 1, 15)},
			want:   []string{"execution: started", "P: pass", "ledger: REFUND a +1 EUR", "execution: succeeded"},
		},
		{
			// The chain is broken (a page missing) or loops: the builder does not hang and attributes what it can.
			name: "broken and looping chains",
			events: []Event{
				ev(5, 4, 0, "TaskSucceeded", nil),
				ev(6, 7, 1, "TaskStateExited", named("Debit")),
				ev(7, 6, 2, "TaskFailed", failed("X", "")),
			},
			want: nil,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := whats(Timeline(History{Events: tc.events, Ledger: tc.ledger}, nil))
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("timeline:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestTimelineWithTheTransfer: the record adds its acceptance first and its settlement before the execution's end
// at the same millisecond (the workflow's last state settles it).
func TestTimelineWithTheTransfer(t *testing.T) {
	events := []Event{
		ev(1, 0, 0, "ExecutionStarted", nil),
		ev(2, 0, 0, "TaskStateEntered", named("MarkFailed")), ev(3, 2, 0, "TaskScheduled", func(e *Event) { e.ResourceType, e.Resource = "dynamodb", "updateItem" }),
		ev(4, 3, 0, "TaskSucceeded", nil), ev(5, 4, 0, "TaskStateExited", named("MarkFailed")),
		ev(6, 5, 0, "ExecutionSucceeded", nil),
	}
	at := events[0].Timestamp.Format(timeLayout)
	tr := &Transfer{Status: StatusFailed, CreatedAt: at, CompletedAt: at, Failure: &Failure{Code: "ACCOUNT_NOT_FOUND", Message: "no such account"}}
	got := whats(Timeline(History{Events: events}, tr))
	want := []string{"transfer: accepted", "execution: started", "MarkFailed: dynamodb:updateItem", "transfer: FAILED ACCOUNT_NOT_FOUND", "execution: succeeded"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("timeline:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A transfer in progress has no settlement entry.
	tr = &Transfer{Status: StatusInProgress, CreatedAt: at}
	if got := whats(Timeline(History{}, tr)); len(got) != 1 || got[0] != "transfer: accepted" {
		t.Errorf("in progress: %q", got)
	}
}

// TestHistoryJSONRoundTrip shows that --output json prints the events and legs exactly as the API sent them.
func TestHistoryJSONRoundTrip(t *testing.T) {
	inputs := map[string][]byte{}
	for _, name := range []string{"history_completed.json", "history_failed.json"} {
		_, raw := loadHistory(t, name)
		inputs[name] = raw
	}
	for _, name := range []string{"recorded_credit_retried.json", "recorded_insufficient_funds.json", "recorded_credit_refunded.json", "recorded_timed_out.json"} {
		_, _, raw := loadRecorded(t, name)
		inputs[name] = raw
	}
	for name, raw := range inputs {
		t.Run(name, func(t *testing.T) {
			var h History
			if err := json.Unmarshal(raw, &h); err != nil {
				t.Fatal(err)
			}
			out, err := json.Marshal(h)
			if err != nil {
				t.Fatal(err)
			}
			var a, b any
			if err := json.Unmarshal(raw, &a); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(out, &b); err != nil {
				t.Fatal(err)
			}
			aj, _ := json.Marshal(a)
			bj, _ := json.Marshal(b)
			if !bytes.Equal(aj, bj) {
				t.Errorf("round trip differs:\n%s\n%s", aj, bj)
			}
		})
	}
}

func TestEventTimestamps(t *testing.T) {
	want := time.Date(2026, 11, 21, 10, 0, 0, 123_000_000, time.UTC)
	for _, in := range []string{`1795255200.123`, `1.795255200123E9`, `"2026-11-21T10:00:00.123Z"`, `"2026-11-21T11:00:00.123+01:00"`} {
		var e Event
		if err := json.Unmarshal([]byte(`{"id":1,"type":"ExecutionStarted","timestamp":`+in+`}`), &e); err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if !e.Timestamp.Equal(want) {
			t.Errorf("%s: %v, want %v", in, e.Timestamp, want)
		}
	}
	var e Event
	if err := json.Unmarshal([]byte(`{"id":1,"timestamp":"yesterday"}`), &e); err == nil {
		t.Error("a bad timestamp was accepted")
	}
}

func TestClean(t *testing.T) {
	if got := Clean("a\x1b[2Kb\nc\u202ed"); got != "a [2Kb c d" {
		t.Errorf("Clean = %q", got)
	}
}

func TestFormatDuration(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want string
	}{
		{0, "0ms"}, {412 * time.Millisecond, "412ms"}, {1200 * time.Millisecond, "1.2s"}, {1642 * time.Millisecond, "1.642s"},
		{1816 * time.Millisecond, "1.816s"}, {2 * time.Second, "2s"}, {1050*time.Millisecond + 999*time.Microsecond, "1.05s"},
		{123456 * time.Millisecond, "2m3.5s"}, {-2 * time.Second, "-2s"},
	}
	for _, tc := range tests {
		if got := FormatDuration(tc.in); got != tc.want {
			t.Errorf("FormatDuration(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTimelineWithoutEvents(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTimeline(&buf, History{TransferID: "tr_1"}, nil, TimelineFormat{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"no execution events", "no ledger legs"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, buf.String())
		}
	}
}
