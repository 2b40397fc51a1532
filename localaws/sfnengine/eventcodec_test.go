package sfnengine

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

// referenceDecode decodes a line with encoding/json, through Event.UnmarshalJSON.
func referenceDecode(t testing.TB, line []byte) Event {
	t.Helper()
	var e Event
	if err := json.Unmarshal(line, &e); err != nil {
		t.Fatalf("encoding/json rejects %s: %v", line, err)
	}
	return e
}

// TestEventLineRoundTrip checks that a line reads back as encoding/json reads it, and that its JSON is the one
// Event.MarshalJSON writes, for the values the engine puts in details and the strings that need escaping.
func TestEventLineRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 23, 14, 56, 45, 124_900_000, time.UTC)
	tests := []struct {
		name    string
		key     string
		details map[string]any
	}{
		{name: "no details"},
		{name: "null details", key: "mapStateStartedEventDetails"},
		{name: "state entered", key: "stateEnteredEventDetails", details: map[string]any{"name": "Debit",
			"input": `{"id":"t1","amount":5,"note":"a \"quoted\" \\ back\nslash"}`, "inputDetails": map[string]any{"truncated": false}}},
		{name: "numbers", key: "taskScheduledEventDetails", details: map[string]any{"timeoutInSeconds": int64(300),
			"heartbeatInSeconds": 60, "index": 0, "length": json.Number("12.5")}},
		{name: "unicode and controls", key: "x", details: map[string]any{"s": "é ☃ 𝄞 \u2028\u2029 \x00\x01\x1f\t\r\b\f </>&"}},
		{name: "invalid utf-8", key: "x", details: map[string]any{"s": "a\xffb\xc3"}},
		{name: "nested", key: "x", details: map[string]any{"a": map[string]any{"b": map[string]any{"c": nil, "d": true}},
			"list": []any{"x", json.Number("1"), false, nil, map[string]any{}}}},
		{name: "many keys", key: "x", details: map[string]any{"k1": "1", "k2": "2", "k3": "3", "k4": "4", "k5": "5",
			"k6": "6", "k7": "7", "k8": "8", "k9": "9", "k10": "10"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := Event{ID: 7, PreviousEventID: 6, Timestamp: at, Type: EventTaskScheduled, DetailsKey: tt.key, Details: tt.details}
			line := appendEvent(nil, &e)
			if !bytes.HasSuffix(line, []byte("}\n")) || bytes.Count(line, []byte("\n")) != 1 {
				t.Fatalf("not one line: %q", line)
			}
			line = line[:len(line)-1]
			want := referenceDecode(t, line)
			got, err := decodeEvent(line)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("decoded %#v\nencoding/json %#v", got, want)
			}
			if _, ok := fastDecodeEvent(line); !ok {
				t.Errorf("the fast decoder gave up on %s", line)
			}
			viaLine, _ := json.Marshal(got)
			direct, _ := json.Marshal(e)
			var a, b any
			_ = json.Unmarshal(viaLine, &a)
			_ = json.Unmarshal(direct, &b)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("API JSON after the round trip\n%s\nbefore\n%s", viaLine, direct)
			}
			if !got.Timestamp.Equal(at.Truncate(time.Millisecond)) {
				t.Errorf("timestamp %v, want %v", got.Timestamp, at.Truncate(time.Millisecond))
			}
		})
	}
}

// TestDecodeEventFallsBack checks that lines the fast decoder does not take (white space, escapes it leaves to
// encoding/json, other member orders) still decode as encoding/json decodes them, and that bad lines are errors.
func TestDecodeEventFallsBack(t *testing.T) {
	good := []string{
		`{ "id": 1, "previousEventId": 0, "timestamp": 1.5, "type": "PassStateEntered" }`,
		`{"type":"PassStateEntered","stateEnteredEventDetails":{"name":"\ud834\udd1e \u00e9 \/"},"timestamp":1772366400.000,"previousEventId":0,"id":2}`,
		`{"id":3,"previousEventId":2,"timestamp":1772366400.001,"type":"T","x":{"lone":"\ud834"}}`,
		`{"id":4,"previousEventId":3,"timestamp":-1.5,"type":"T","x":{"n":1e3,"m":-0.25}}`,
	}
	for _, line := range good {
		want := referenceDecode(t, []byte(line))
		got, err := decodeEvent([]byte(line))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("decodeEvent(%s) = %#v, %v; want %#v", line, got, err, want)
		}
	}
	for _, line := range []string{`{"id":1,"previousEventId":0,"timestamp":1.5,"type":"T","x":"text"}`, `{"id":`, `[]`} {
		if e, err := decodeEvent([]byte(line)); err == nil {
			t.Errorf("decodeEvent(%s) = %#v, want an error", line, e)
		}
	}
}

// FuzzEventLine checks the codec against encoding/json for any string in the details.
func FuzzEventLine(f *testing.F) {
	for _, s := range []string{"", "plain", `{"a":"\"b\""}`, "\u2028", "\xff", "\x00", "é𝄞", `\u00e9`} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, key, value string) {
		e := Event{ID: 1, Timestamp: time.UnixMilli(1772366400123), Type: "T", DetailsKey: "d",
			Details: map[string]any{"v": value, key: map[string]any{"k": value}}}
		line := appendEvent(nil, &e)
		line = line[:len(line)-1]
		if !json.Valid(line) {
			t.Fatalf("invalid JSON %q", line)
		}
		want := referenceDecode(t, line)
		got, err := decodeEvent(line)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeEvent(%q) = %#v, %v; want %#v", line, got, err, want)
		}
	})
}

func TestParseEpochSeconds(t *testing.T) {
	for _, tt := range []struct {
		text string
		ms   int64
	}{{"1795445805.124", 1795445805124}, {"1795445805", 1795445805000}, {"1.5", 1500}, {"-1.5", -1500}, {"0.0019", 1}} {
		got, err := parseEpochSeconds(tt.text)
		if err != nil || got.UnixMilli() != tt.ms {
			t.Errorf("parseEpochSeconds(%s) = %v (%d), %v; want %d", tt.text, got, got.UnixMilli(), err, tt.ms)
		}
		if tt.ms != 1 && string(appendEpochSeconds(nil, time.UnixMilli(tt.ms))) != epochSeconds(time.UnixMilli(tt.ms)) {
			t.Errorf("appendEpochSeconds(%d) = %s, epochSeconds %s", tt.ms, appendEpochSeconds(nil, time.UnixMilli(tt.ms)), epochSeconds(time.UnixMilli(tt.ms)))
		}
	}
}

// BenchmarkAppendEvent encodes a state-entered event, the commonest in a history, with its details map.
func BenchmarkAppendEvent(b *testing.B) {
	e := Event{ID: 7, PreviousEventID: 6, Timestamp: time.Unix(1700000000, 123e6), Type: EventTaskScheduled,
		DetailsKey: "taskScheduledEventDetails", Details: map[string]any{"resource": "invoke", "resourceType": "lambda",
			"region": "us-east-1", "parameters": `{"FunctionName":"debit","Payload":{"transferId":"t1","amount":5}}`,
			"timeoutInSeconds": int64(300), "heartbeatInSeconds": 60, "inputDetails": map[string]any{"truncated": false}}}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = appendEvent(buf[:0], &e)
	}
}

// Details that cannot be encoded (a NaN) still make a line the history's readers decode: an object naming the error,
// instead of a history that can no longer be read.
func TestAppendEventWithUnencodableDetails(t *testing.T) {
	e := Event{ID: 2, PreviousEventID: 1, Timestamp: time.Unix(1700000000, 0), Type: EventTaskScheduled,
		DetailsKey: "taskScheduledEventDetails", Details: map[string]any{"name": "Debit", "bad": math.NaN()}}
	line := appendEvent(nil, &e)
	got, err := decodeEvent(line[:len(line)-1])
	if err != nil {
		t.Fatalf("decode %s: %v", line, err)
	}
	msg, _ := got.Details["encodingError"].(string)
	if got.ID != 2 || got.DetailsKey != "taskScheduledEventDetails" || !strings.Contains(msg, "NaN") {
		t.Errorf("decoded %+v from %s, want the event with an encodingError naming the NaN", got, line)
	}
}
