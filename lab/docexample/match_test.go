package docexample

import (
	"errors"
	"strings"
	"testing"
)

func TestMatchText(t *testing.T) {
	output := "HTTP/1.1 202 Accepted\r\nContent-Type: application/json\r\nLocation: /transfers/tr_abc\r\n\r\n{\"status\":\"IN_PROGRESS\"}\n"
	tests := []struct {
		name, expected string
		wantErr        string // "" = match
	}{
		{"the status line alone (curl -i ends it in \\r)", "HTTP/1.1 202 Accepted\n", ""},
		{"lines in order, others between", "HTTP/1.1 202 Accepted\nLocation: /transfers/tr_…\n", ""},
		{"blank expected lines are ignored", "\nHTTP/1.1 202 Accepted\n\n\n{…}\n", ""},
		{"… matches nothing too", "HTTP/1.1 202 Accepted…\n", ""},
		{"… in the middle", "Location: …/tr_…\n", ""},
		{"whole lines, not substrings", "202 Accepted\n", `expected line 1 "202 Accepted" not found in the output`},
		{"out of order", "Location: /transfers/tr_abc\nHTTP/1.1 202 Accepted\n",
			`expected line 2 "HTTP/1.1 202 Accepted" not found after output line 3 ("Location: /transfers/tr_abc")`},
		{"a wrong status", "HTTP/1.1 201 Created\n", `expected line 1 "HTTP/1.1 201 Created" not found`},
		{"one output line matches one expected line only", "Content-Type: …\nContent-Type: …\n", `expected line 2 "Content-Type: …" not found after output line 2`},
		{"regexp characters are literal", "HTTP/1.1 202 Accepted\n{.*}\n", `expected line 2 "{.*}" not found`},
		{"three dots are not the wildcard", "Location: ...\n", `expected line 1 "Location: ..." not found`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := MatchText(tc.expected, output)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("err = %v, want a match", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestMatchTextOnEmptyOutput(t *testing.T) {
	err := MatchText("anything\n", "")
	var m *TextMismatch
	if !errors.As(err, &m) || m.ExpectLine != 1 || !strings.Contains(err.Error(), "the output is empty") {
		t.Errorf("err = %v", err)
	}
	if err := MatchText("\n\n", ""); err != nil {
		t.Errorf("an expectation of blank lines: %v", err)
	}
}

func TestMatchJSON(t *testing.T) {
	output := `{"transferId": "tr_abc", "status": "FAILED", "amount": 1250, "reference": null, "replayed": true,
		"failure": {"code": "INSUFFICIENT_FUNDS", "message": "no money"},
		"events": [{"id": 1, "type": "ExecutionStarted"}, {"id": 2, "type": "TaskStateEntered"}],
		"links": {"self": "/transfers/tr_abc"}, "odd key": 1}`
	tests := []struct {
		name, expected string
		wantErr        []string // "" = match
	}{
		{"a subset of the keys", `{"status": "FAILED", "failure": {"code": "INSUFFICIENT_FUNDS"}}`, nil},
		{"… for any value, any type", `{"transferId": "…", "failure": "…", "events": "…", "reference": "…"}`, nil},
		{"… inside a string", `{"transferId": "tr_…", "links": {"self": "/transfers/…"}}`, nil},
		{"numbers compare as numbers", `{"amount": 1.25e3}`, nil},
		{"arrays element by element", `{"events": [{"id": 1}, {"type": "TaskStateEntered"}]}`, nil},
		{"null and booleans", `{"reference": null, "replayed": true}`, nil},
		{"a whole value", `{"transferId":"tr_abc","status":"FAILED","amount":1250,"reference":null,"replayed":true,"failure":{"code":"INSUFFICIENT_FUNDS","message":"no money"},"events":[{"id":1,"type":"ExecutionStarted"},{"id":2,"type":"TaskStateEntered"}],"links":{"self":"/transfers/tr_abc"},"odd key":1}`, nil},
		{"another value", `{"status": "COMPLETED"}`, []string{`$.status: got "FAILED", want "COMPLETED"`}},
		{"a missing key", `{"completedAt": "…"}`, []string{`$.completedAt: missing, want "…"`}},
		{"a nested difference", `{"failure": {"code": "CURRENCY_MISMATCH"}}`, []string{`$.failure.code: got "INSUFFICIENT_FUNDS", want "CURRENCY_MISMATCH"`}},
		{"an array of another length", `{"events": [{"id": 1}]}`, []string{`$.events: got 2 elements, want 1`}},
		{"an element that differs", `{"events": [{"id": 1}, {"id": 3}]}`, []string{`$.events[1].id: got 2, want 3`}},
		{"another type", `{"amount": "1250"}`, []string{`$.amount: got 1250, want "1250"`}},
		{"an object for an array", `{"events": {}}`, []string{`$.events: got [`, `want an object`}},
		{"an array for an object", `{"failure": []}`, []string{`$.failure: got {`, `want an array`}},
		{"a wildcard string does not match a number", `{"amount": "1…"}`, []string{`$.amount: got 1250, want "1…"`}},
		{"null is not false", `{"reference": false}`, []string{`$.reference: got null, want false`}},
		{"odd keys are quoted in the path", `{"odd key": 2}`, []string{`$["odd key"]: got 1, want 2`}},
		{"every difference is listed", `{"status": "X", "amount": 1, "nope": 1}`, []string{`$.amount: got 1250, want 1`, `$.nope: missing`, `$.status: got "FAILED"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := MatchJSON(tc.expected, []byte(output))
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Errorf("err = %v, want a match", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("matched, want %q", tc.wantErr)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v, want it to contain %q", err, w)
				}
			}
		})
	}
}

func TestMatchJSONOutputMustBeOneValue(t *testing.T) {
	tests := []struct{ name, output, wantErr string }{
		{"empty", "", "the output is not one JSON value: empty"},
		{"text", "HTTP/1.1 200 OK\n", "the output is not one JSON value"},
		{"two values", `{"a":1}` + "\n" + `{"a":1}`, "more after the first value"},
		{"truncated", `{"a":`, "the output is not one JSON value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := MatchJSON(`{"a": 1}`, []byte(tc.output)); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
	if err := MatchJSON(`{"a": 1}`, []byte("  {\"a\": 1}\n\n")); err != nil {
		t.Errorf("surrounding blanks: %v", err)
	}
	if err := MatchJSON(`[1, "…"]`, []byte(`[1, {"x": 2}]`)); err != nil {
		t.Errorf("a top-level array: %v", err)
	}
}

func TestMatchJSONListsAtMost20Differences(t *testing.T) {
	var want, got []string
	for i := range 25 {
		want = append(want, `"k`+string(rune('a'+i))+`": 1`)
		got = append(got, `"k`+string(rune('a'+i))+`": 2`)
	}
	err := MatchJSON("{"+strings.Join(want, ",")+"}", []byte("{"+strings.Join(got, ",")+"}"))
	var m *JSONMismatch
	if !errors.As(err, &m) || len(m.Diffs) != 21 || m.Diffs[20] != "… and 5 more" {
		t.Errorf("err = %v", err)
	}
}

func TestCheck(t *testing.T) {
	if err := Check(Expectation{Kind: KindText, Body: "hi\n"}, []byte("hi\n")); err != nil {
		t.Error(err)
	}
	if err := Check(Expectation{Kind: KindJSON, Body: `{"a": "…"}`}, []byte(`{"a": 1}`)); err != nil {
		t.Error(err)
	}
	if err := Check(Expectation{Kind: KindJSON, Body: `{"a": 2}`}, []byte(`{"a": 1}`)); err == nil {
		t.Error("a JSON difference was not reported")
	}
	if err := Check(Expectation{Kind: "yaml", Body: "a: 1"}, []byte("a: 1")); err == nil {
		t.Error("an unknown kind was accepted")
	}
}
