package transferclient

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

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

func TestTimelineGolden(t *testing.T) {
	tests := []struct {
		name, history, golden string
		format                TimelineFormat
	}{
		{"completed, absolute times", "history_completed.json", "timeline_completed.golden", TimelineFormat{}},
		{"completed, relative times", "history_completed.json", "timeline_completed_relative.golden", TimelineFormat{Relative: true}},
		{"failed, RFC 3339 timestamps and a hostile cause", "history_failed.json", "timeline_failed.golden", TimelineFormat{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := loadHistory(t, tc.history)
			var buf bytes.Buffer
			if err := WriteTimeline(&buf, h, tc.format); err != nil {
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

// TestTimelineRows checks the attribution and durations the golden files show, one by one.
func TestTimelineRows(t *testing.T) {
	h, _ := loadHistory(t, "history_completed.json")
	rows := Timeline(h.Events)
	if len(rows) != 20 {
		t.Fatalf("rows = %d, want 20", len(rows))
	}
	tests := []struct {
		name        string
		row         int // 0-based
		state       string
		event       string
		duration    time.Duration
		hasDuration bool
		errPrefix   string
	}{
		{"execution start has no state", 0, "", "ExecutionStarted", 0, false, ""},
		{"the scheduled task shows its integration", 2, "Debit", "TaskScheduled lambda:invoke", 0, false, ""},
		{"a failed attempt: from its own TaskScheduled", 4, "Debit", "TaskFailed", 200 * time.Millisecond, true, "Lambda.ServiceException: "},
		{"the retry succeeds: measured from the retry's TaskScheduled", 7, "Debit", "TaskSucceeded", 412 * time.Millisecond, true, ""},
		{"the state's duration includes the retry", 8, "Debit", "TaskStateExited", 1626 * time.Millisecond, true, ""},
		{"a DynamoDB integration", 15, "MarkCompleted", "TaskScheduled dynamodb:updateItem", 0, false, ""},
		{"execution end: from ExecutionStarted", 19, "", "ExecutionSucceeded", 2537 * time.Millisecond, true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := rows[tc.row]
			if r.State != tc.state || r.Event != tc.event || r.HasDuration != tc.hasDuration || r.Duration != tc.duration {
				t.Errorf("row %d = %+v, want state %q event %q duration %v (%v)", tc.row, r, tc.state, tc.event, tc.duration, tc.hasDuration)
			}
			if !strings.HasPrefix(r.Error, tc.errPrefix) || (tc.errPrefix == "") != (r.Error == "") {
				t.Errorf("row %d error = %q, want prefix %q", tc.row, r.Error, tc.errPrefix)
			}
		})
	}
}

func TestTimelineSurvivesBrokenChains(t *testing.T) {
	events := []Event{
		{ID: 5, PreviousEventID: 4, Type: "TaskSucceeded"}, // its opener is on an earlier page that is missing
		{ID: 6, PreviousEventID: 7, Type: "TaskStateExited", Name: "Debit"},
		{ID: 7, PreviousEventID: 6, Type: "TaskFailed"}, // a cycle
	}
	rows := Timeline(events)
	if rows[0].HasDuration || rows[0].State != "" || rows[2].HasDuration || rows[2].State != "Debit" {
		t.Errorf("rows = %+v", rows)
	}
}

// TestHistoryJSONRoundTrip shows that --output json prints the events and legs exactly as the API sent them.
func TestHistoryJSONRoundTrip(t *testing.T) {
	for _, name := range []string{"history_completed.json", "history_failed.json"} {
		t.Run(name, func(t *testing.T) {
			h, raw := loadHistory(t, name)
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
		{0, "0ms"}, {412 * time.Millisecond, "412ms"}, {1642 * time.Millisecond, "1.642s"}, {123456 * time.Millisecond, "2m3.5s"}, {-2 * time.Second, "-2.000s"},
	}
	for _, tc := range tests {
		if got := FormatDuration(tc.in); got != tc.want {
			t.Errorf("FormatDuration(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTimelineWithoutEvents(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTimeline(&buf, History{TransferID: "tr_1"}, TimelineFormat{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"no execution events", "ledger: no legs"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, buf.String())
		}
	}
}
