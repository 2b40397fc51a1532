package sfnlocal

import (
	"testing"

	"github.com/transferflow/orchestrator/internal/jsonvalue"
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
