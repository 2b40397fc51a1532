package statediagram

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the README's workflow picture from statemachine/transfer.asl.json")

// The README's picture of the workflow sits between these two lines.
const (
	beginMarker = "<!-- workflow: generated from statemachine/transfer.asl.json by lab/statediagram; go test ./lab/statediagram -update -->\n```mermaid\n"
	endMarker   = "```\n"
)

// TestREADMEDrawsTheWorkflow: the README's state diagram is Mermaid of statemachine/transfer.asl.json as it is now,
// so a change of the workflow that is not drawn fails here (-update redraws it).
func TestREADMEDrawsTheWorkflow(t *testing.T) {
	root := filepath.Join("..", "..")
	def, err := os.ReadFile(filepath.Join(root, "statemachine", "transfer.asl.json"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := Mermaid(def)
	if err != nil {
		t.Fatal(err)
	}
	readme := filepath.Join(root, "README.md")
	b, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, beginMarker)
	if i < 0 {
		t.Fatalf("README.md has no workflow picture (a line %q)", strings.SplitN(beginMarker, "\n", 2)[0])
	}
	start := i + len(beginMarker)
	n := strings.Index(s[start:], endMarker)
	if n < 0 {
		t.Fatal("README.md's workflow picture is not closed")
	}
	if got := s[start : start+n]; got != want {
		if *update {
			if err := os.WriteFile(readme, []byte(s[:start]+want+s[start+n:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("README.md's workflow picture is not statemachine/transfer.asl.json's; run go test ./lab/statediagram -update\ngot:\n%s\nwant:\n%s", got, want)
	}
}

// TestMermaid: every kind of transition and end is drawn, a Choice once per target.
func TestMermaid(t *testing.T) {
	def := `{"StartAt":"A","States":{
	  "A":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f"},"Next":"C",
	       "Catch":[{"ErrorEquals":["E1","E2"],"Next":"F"}]},
	  "C":{"Type":"Choice","Choices":[{"Variable":"$.x","IsPresent":true,"Next":"S"},{"Variable":"$.y","IsPresent":true,"Next":"S"}],"Default":"P"},
	  "P":{"Type":"Pass","End":true},
	  "S":{"Type":"Succeed"},
	  "F":{"Type":"Fail"}}}`
	got, err := Mermaid([]byte(def))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"state C <<choice>>", "[*] --> A", "A --> C", "A --> F: E1, E2", "C --> S", "C --> P: default",
		"P --> [*]", "S --> [*]", "F --> [*]"} {
		if !strings.Contains(got, "    "+want+"\n") {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Count(got, "C --> S\n") != 1 {
		t.Errorf("a Choice's shared target drawn more than once:\n%s", got)
	}
	if _, err := Mermaid([]byte(`{"StartAt":`)); err == nil {
		t.Error("a malformed definition gave no error")
	}
}
