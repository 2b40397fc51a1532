package loadbench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestTableAlignsEachSection(t *testing.T) {
	tb := &table{}
	tb.heading("FIRST")
	tb.add("name", "c", "per s")
	tb.add("closed many", "1", "1,234.5")
	tb.add("hot", "128", "9.0")
	tb.line("a note under the rows")
	tb.heading("SECOND")
	tb.add("x", "value")
	tb.add("longer name", "$1.00")
	var b strings.Builder
	tb.render(&b)
	want := `FIRST
name           c    per s
closed many    1  1,234.5
hot          128      9.0
a note under the rows

SECOND
x            value
longer name  $1.00
`
	if b.String() != want {
		t.Errorf("render:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestIsNumber(t *testing.T) {
	for s, want := range map[string]bool{"1,234.5": true, "-3": true, "$75.00": true, "+12.0": true, "4.0×": true, "12%": true,
		"c=32": false, "": false, "PutItem 1": false, "-": false} {
		if got := isNumber(s); got != want {
			t.Errorf("isNumber(%q) = %v", s, got)
		}
	}
}

// TestReportEndsWithTheVerdicts: the report of a complete result names every section and its last line is the
// verdict line.
func TestReportEndsWithTheVerdicts(t *testing.T) {
	r := passing()
	r.Scale = Scales["quick"]
	r.Cost = ComputeCost(CostInputs{Transfers: 1_000_000, TransitionsPerTransfer: 3, APIRequestsPerTransfer: 1})
	r.Workflow.Functions = []FunctionUse{{Name: "DebitFunction", InvocationsPerTransfer: 1, MeanMs: 3, BilledMs: 3, MemoryMB: 256, Architecture: "arm64"}}
	r.Notes = []string{"first note", "second note"}
	r.Verdicts = Verdicts(r)
	var b strings.Builder
	Report(&b, r)
	if out := b.String(); strings.Contains(out, "CPU PER TRANSFER") {
		t.Errorf("a result without CPU figures has a CPU section:\n%s", out)
	}
	r.Closed[1].CPU = &CPUShare{LocalMs: 2.25, StoreMs: 2.5, GeneratorMs: 0.5, Cores: 1.9, CeilingPerSec: 381}
	r.Open.PeakCPU = &CPUShare{LocalMs: 2.5, StoreMs: 3.75, GeneratorMs: 0.5, Cores: 1.8, CeilingPerSec: 296.3}
	b.Reset()
	Report(&b, r)
	out := b.String()
	for _, s := range []string{"THROUGHPUT AND LATENCY", "DYNAMODB", "STORE LIMIT", "MEMORY", "ENGINE", "COST OF 1,000,000 TRANSFERS", "LAMBDA",
		"$75.00", "note: first note\nnote: second note", "CPU PER TRANSFER", "2.25  ", "5.25  ", "381.0", "peak again (before the open loop)", "6.75  ", "296.3"} {
		if !strings.Contains(out, s) {
			t.Errorf("report lacks %q:\n%s", s, out)
		}
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if last := lines[len(lines)-1]; last != VerdictLine(r.Verdicts) {
		t.Errorf("last line = %q", last)
	}
}

// TestResultJSONRoundTrip: testdata/result.json (a quick run's shape) decodes into Result and encodes back to the
// same JSON, so the committed results stay readable by this code.
func TestResultJSONRoundTrip(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "out", "latest.json")
	if err := WriteJSON(path, r); err != nil {
		t.Fatal(err)
	}
	again, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want, got any
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(again, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip changed the JSON:\n%s", again)
	}
	if r.Schema != SchemaVersion || len(r.Verdicts) != 6 {
		t.Errorf("schema %d, %d verdicts", r.Schema, len(r.Verdicts))
	}
}
