package sfnengine

import (
	"strings"
	"testing"
	"time"
)

// TestReadLog checks what a reader keeps of an execution log: everything up to the last complete commit line.
func TestReadLog(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rec := &ExecutionRecord{Arn: "arn:aws:states:us-east-1:123456789012:execution:m:x", StateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:m",
		Name: "x", Status: StatusRunning, Input: `{"a":1}`, StartDate: start}
	header, _ := appendHeader(nil, rec)
	ev := func(id int64) string {
		return string(appendEvent(nil, &Event{ID: id, PreviousEventID: id - 1, Timestamp: start, Type: "PassStateEntered",
			DetailsKey: "stateEnteredEventDetails", Details: map[string]any{"name": "P"}}))
	}
	rec.Checkpoint = &Checkpoint{State: "P", Input: `{}`, PreviousEventID: 2}
	checkpoint, _ := appendCommit(nil, rec)
	stop := start.Add(time.Second)
	out := `{"b":2}`
	closedRec := *rec
	closedRec.Status, closedRec.StopDate, closedRec.Output, closedRec.Checkpoint = StatusSucceeded, &stop, &out, nil
	closed, _ := appendCommit(nil, &closedRec)
	tests := []struct {
		name        string
		log         string
		wantStatus  string
		wantEvents  int
		wantCP      bool
		uncommitted int // bytes after the last commit
	}{
		{name: "header only", log: string(header), wantStatus: StatusRunning},
		{name: "checkpoint", log: string(header) + ev(1) + ev(2) + string(checkpoint), wantStatus: StatusRunning, wantEvents: 2, wantCP: true},
		{name: "events after the checkpoint", log: string(header) + ev(1) + ev(2) + string(checkpoint) + ev(3) + ev(4),
			wantStatus: StatusRunning, wantEvents: 2, wantCP: true, uncommitted: len(ev(3) + ev(4))},
		{name: "torn last line", log: string(header) + ev(1) + ev(2) + string(checkpoint) + ev(3) + ev(4)[:20],
			wantStatus: StatusRunning, wantEvents: 2, wantCP: true, uncommitted: len(ev(3)) + 20},
		{name: "torn commit", log: string(header) + ev(1) + ev(2) + string(checkpoint) + ev(3) + string(closed[:len(closed)-3]),
			wantStatus: StatusRunning, wantEvents: 2, wantCP: true, uncommitted: len(ev(3)) + len(closed) - 3},
		{name: "closed", log: string(header) + ev(1) + ev(2) + string(checkpoint) + ev(3) + string(closed),
			wantStatus: StatusSucceeded, wantEvents: 3},
		{name: "an id out of sequence ends the log", log: string(header) + ev(1) + ev(2) + string(checkpoint) + ev(4) + string(closed),
			wantStatus: StatusRunning, wantEvents: 2, wantCP: true, uncommitted: len(ev(4)) + len(closed)},
		{name: "garbage ends the log", log: string(header) + ev(1) + ev(2) + string(checkpoint) + "{oops}\n" + ev(3) + string(closed),
			wantStatus: StatusRunning, wantEvents: 2, wantCP: true, uncommitted: len("{oops}\n"+ev(3)) + len(closed)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, history := range []bool{false, true} {
				got, committed, err := readLog([]byte(tt.log), history)
				if err != nil {
					t.Fatal(err)
				}
				if got.Status != tt.wantStatus || (got.Checkpoint != nil) != tt.wantCP || committed != len(tt.log)-tt.uncommitted {
					t.Errorf("history=%v: status %s, checkpoint %v, committed %d of %d; want %s, %v, %d",
						history, got.Status, got.Checkpoint, committed, len(tt.log), tt.wantStatus, tt.wantCP, len(tt.log)-tt.uncommitted)
				}
				if history && len(got.History) != tt.wantEvents {
					t.Errorf("%d events, want %d", len(got.History), tt.wantEvents)
				}
				if !history && got.History != nil {
					t.Errorf("history read without being asked")
				}
				if got.Arn != rec.Arn || got.Input != rec.Input || !got.StartDate.Equal(start) {
					t.Errorf("header read as %+v", got)
				}
			}
		})
	}
	for _, bad := range []string{"", ev(1), string(header[:10]), strings.Replace(string(header), "execution", "nope", 1)} {
		if _, _, err := readLog([]byte(bad), true); err != errNoHeader {
			t.Errorf("readLog(%q) = %v, want errNoHeader", bad, err)
		}
	}
}
