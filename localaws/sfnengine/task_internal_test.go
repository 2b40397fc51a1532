package sfnengine

import (
	"testing"
	"time"

	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// TestLambdaResultText checks that a lambda:invoke result writes the same text as its value marshals to.
func TestLambdaResultText(t *testing.T) {
	payloads := []string{`{"ok":true}`, `null`, `"a\"b<c>\u2028"`, `[1,{"z":1,"a":[]}]`}
	for _, p := range payloads {
		t.Run(p, func(t *testing.T) {
			v, err := jsonvalue.DecodeString(p)
			if err != nil {
				t.Fatal(err)
			}
			r := &lambdaResult{payload: v, length: "11", date: "Mon, 01 Jun 2026 00:00:00 GMT", requestID: "r\"1"}
			if got, want := r.text(), marshal(r.value()); got != want {
				t.Fatalf("text\n%s\nvalue\n%s", got, want)
			}
		})
	}
}

// TestFormatTime checks formatTime against time.Format over a spread of times and zones.
func TestFormatTime(t *testing.T) {
	zone := time.FixedZone("x", -7*3600-30*60)
	for i := range 2000 {
		tm := time.Unix(int64(i)*7919_3511-5_000_000_000, int64(i)*999_999_937%1_000_000_000).In(zone)
		if got, want := formatTime(tm), tm.UTC().Format(timeLayout); got != want {
			t.Fatalf("formatTime(%v) = %s, want %s", tm, got, want)
		}
	}
	far := time.Date(12000, 1, 2, 3, 4, 5, 6e6, time.UTC)
	if got, want := formatTime(far), far.Format(timeLayout); got != want {
		t.Fatalf("formatTime(%v) = %s, want %s", far, got, want)
	}
}
