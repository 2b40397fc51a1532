package diagram

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// transitions reads the transfer workflow with encoding/json, independently of Parse: every state and every
// Next, Default, Choice and Catch target.
func transitions(t *testing.T, def []byte) (states []string, edges [][3]string) {
	t.Helper()
	var sm struct {
		States map[string]struct {
			Next    string
			Default string
			Choices []struct{ Next string }
			Catch   []struct{ Next string }
		}
	}
	if err := json.Unmarshal(def, &sm); err != nil {
		t.Fatal(err)
	}
	for name, s := range sm.States {
		states = append(states, name)
		if s.Next != "" {
			edges = append(edges, [3]string{name, s.Next, "next"})
		}
		if s.Default != "" {
			edges = append(edges, [3]string{name, s.Default, "default"})
		}
		for _, c := range s.Choices {
			edges = append(edges, [3]string{name, c.Next, "choice"})
		}
		for _, c := range s.Catch {
			edges = append(edges, [3]string{name, c.Next, "catch"})
		}
	}
	return states, edges
}

func TestTransferWorkflowDrawsEveryStateAndTransition(t *testing.T) {
	def := readTransfer(t)
	states, edges := transitions(t, def)
	d := read(t, mustLayout(t, def).SVG(Marks{}))
	if len(d.states) != len(states) {
		t.Errorf("the drawing has %d states, the definition %d", len(d.states), len(states))
	}
	for _, name := range states {
		if got := len(d.states[name]); got != 1 {
			t.Errorf("state %q is drawn %d times, want once", name, got)
		}
	}
	for _, e := range edges {
		found := false
		for _, de := range d.edge(e[0], e[1]) {
			if de.class[e[2]] {
				found = true
			}
		}
		if !found {
			t.Errorf("no %s edge from %q to %q", e[2], e[0], e[1])
		}
	}
	for _, de := range d.edge("Debit", "InsufficientFunds") {
		if !de.class["catch"] {
			t.Errorf("the edge Debit → InsufficientFunds has classes %v, want catch", de.class)
		}
	}
	if got := d.edge("", "Debit"); len(got) != 1 || !got[0].class["start"] {
		t.Errorf("the start marker's edges to Debit: %v, want one of class start", got)
	}
	if got := d.edge("Credit", ""); len(got) != 1 || !got[0].class["end"] {
		t.Errorf("Credit's edges to the end marker: %v, want one of class end", got)
	}
	if got := d.edge("SettlementRejected", ""); len(got) != 0 {
		t.Errorf("the Fail state SettlementRejected has an edge to the end marker: %v", got)
	}
	if got := d.root["role"]; got != "img" {
		t.Errorf("role = %q, want img", got)
	}
	if !strings.HasPrefix(d.root["aria-label"], "State machine with 11 states") {
		t.Errorf("aria-label = %q", d.root["aria-label"])
	}
	if d.root["viewBox"] == "" || d.root["width"] == "" || d.root["height"] == "" {
		t.Errorf("the root lacks viewBox, width or height: %v", d.root)
	}
}

func TestTransferWorkflowLayoutHasNoOverlaps(t *testing.T) {
	l := mustLayout(t, readTransfer(t))
	checkLayout(t, l)
	// Eleven states in six rows fit a console panel without scaling.
	if l.width > 1200 || l.height > 900 {
		t.Errorf("the transfer workflow is drawn %gx%g, want at most 1200x900", l.width, l.height)
	}
}

func TestMarksSetClassesAndTitles(t *testing.T) {
	l := mustLayout(t, readTransfer(t))
	m := Marks{
		Visited: map[string]bool{"Debit": true, "Credit": true},
		Edges:   map[[2]string]bool{{"Debit", "Credit"}: true, {"Credit", "Refund"}: true},
		Current: "Refund",
		Retried: map[string]int{"Debit": 2},
		Caught:  map[string]string{"Credit": "Lambda.Unknown"},
		Failed:  map[string]bool{"MarkFailed": true},
	}
	d := read(t, l.SVG(m))
	tests := []struct {
		name  string
		state string
		want  []string
		not   []string
	}{
		{name: "visited", state: "Debit", want: []string{"state", "state-task", "visited", "retried"}, not: []string{"current", "failed", "caught"}},
		{name: "caught", state: "Credit", want: []string{"visited", "caught"}, not: []string{"current", "retried"}},
		{name: "current", state: "Refund", want: []string{"current", "visited"}, not: []string{"failed"}},
		{name: "failed", state: "MarkFailed", want: []string{"failed", "visited"}, not: []string{"current"}},
		{name: "untouched", state: "AlreadySettled", want: []string{"state", "state-succeed"}, not: []string{"visited", "current", "failed", "retried", "caught"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			groups := d.states[tt.state]
			if len(groups) != 1 {
				t.Fatalf("%d groups for %q", len(groups), tt.state)
			}
			for _, c := range tt.want {
				if !groups[0][c] {
					t.Errorf("%q lacks class %q: %v", tt.state, c, groups[0])
				}
			}
			for _, c := range tt.not {
				if groups[0][c] {
					t.Errorf("%q has class %q: %v", tt.state, c, groups[0])
				}
			}
		})
	}
	if got := d.titles["Debit"]; got != "Debit (Task): visited, retried 2 times" {
		t.Errorf("Debit's title = %q", got)
	}
	if got := d.titles["Credit"]; got != "Credit (Task): visited, caught Lambda.Unknown" {
		t.Errorf("Credit's title = %q", got)
	}

	one := func(from, to string) drawnEdge {
		t.Helper()
		es := d.edge(from, to)
		if len(es) != 1 {
			t.Fatalf("%d edges %q → %q, want 1", len(es), from, to)
		}
		return es[0]
	}
	if e := one("Debit", "Credit"); !e.class["visited"] || e.class["caught"] {
		t.Errorf("Debit → Credit has classes %v, want visited and not caught", e.class)
	}
	if e := one("Credit", "Refund"); !e.class["catch"] || !e.class["visited"] || !e.class["caught"] {
		t.Errorf("the States.ALL catcher Credit → Refund has classes %v, want catch, visited and caught", e.class)
	}
	if e := one("Credit", "AlreadySettled"); e.class["visited"] || e.class["caught"] {
		t.Errorf("the TransferNotInProgress catcher Credit → AlreadySettled has classes %v, want neither visited nor caught", e.class)
	}
	if e := one("", "Debit"); !e.class["visited"] {
		t.Errorf("the start edge has classes %v, want visited (Debit was entered)", e.class)
	}
	if e := one("Credit", ""); e.class["visited"] {
		t.Errorf("Credit's end edge has classes %v; its error was caught, so the execution did not end there", e.class)
	}
	if e := one("Refund", "CreditFailedRefunded"); e.class["visited"] {
		t.Errorf("Refund → CreditFailedRefunded has classes %v, not taken", e.class)
	}
	label := d.root["aria-label"]
	for _, want := range []string{"states entered: Debit, Credit, Refund, MarkFailed", "running now: Refund", "failed: MarkFailed"} {
		if !strings.Contains(label, want) {
			t.Errorf("aria-label %q lacks %q", label, want)
		}
	}
}

func TestEndEdgeIsTakenWhenTheExecutionEndedThere(t *testing.T) {
	l := mustLayout(t, readTransfer(t))
	d := read(t, l.SVG(Marks{
		Visited: map[string]bool{"Debit": true, "Credit": true},
		Edges:   map[[2]string]bool{{"Debit", "Credit"}: true},
	}))
	if es := d.edge("Credit", ""); len(es) != 1 || !es[0].class["visited"] {
		t.Errorf("Credit's end edge: %v, want one visited", es)
	}
	if es := d.edge("Debit", "Credit"); len(es) != 1 || !es[0].class["visited"] {
		t.Errorf("Debit → Credit: %v, want one visited", es)
	}
	d = read(t, l.SVG(Marks{Visited: map[string]bool{"Debit": true, "Credit": true}, Current: "Credit"}))
	if es := d.edge("Credit", ""); len(es) != 1 || es[0].class["visited"] {
		t.Errorf("Credit's end edge while Credit runs: %v, want one not visited", es)
	}
}

func TestRenderingIsDeterministicXML(t *testing.T) {
	def := readTransfer(t)
	m := Marks{Visited: map[string]bool{"Debit": true}, Current: "Debit", Retried: map[string]int{"Debit": 1}}
	a := mustLayout(t, def).SVG(m)
	b := mustLayout(t, def).SVG(m)
	if !bytes.Equal(a, b) {
		t.Fatal("two layouts of the same definition render differently")
	}
	l := mustLayout(t, def)
	if first, second := l.SVG(m), l.SVG(m); !bytes.Equal(first, second) {
		t.Fatal("two renders of one layout differ")
	}
	if plain := l.SVG(Marks{}); bytes.Equal(plain, a) {
		t.Fatal("the marks change nothing in the drawing")
	}
	read(t, a)
}

func TestNestedMachinesAreDrawnInsideTheirBox(t *testing.T) {
	def := []byte(`{"StartAt": "Fan", "States": {
		"Fan": {"Type": "Parallel", "Next": "Each", "Branches": [
			{"StartAt": "A1", "States": {"A1": {"Type": "Pass", "Next": "A2"}, "A2": {"Type": "Pass", "End": true}}},
			{"StartAt": "B1", "States": {"B1": {"Type": "Task", "Resource": "x", "End": true,
				"Retry": [{"ErrorEquals": ["States.ALL"], "MaxAttempts": 2}]}}}
		]},
		"Each": {"Type": "Map", "End": true, "ItemProcessor": {"StartAt": "Inner", "States": {
			"Inner": {"Type": "Parallel", "End": true, "Branches": [
				{"StartAt": "Deep", "States": {"Deep": {"Type": "Pass", "End": true}}}]}}}}}}`)
	l := mustLayout(t, def)
	checkLayout(t, l)
	d := read(t, l.SVG(Marks{Visited: map[string]bool{"Fan": true, "B1": true}, Retried: map[string]int{"B1": 1}}))
	for _, name := range []string{"Fan", "A1", "A2", "B1", "Each", "Inner", "Deep"} {
		if len(d.states[name]) != 1 {
			t.Errorf("state %q is drawn %d times, want once", name, len(d.states[name]))
		}
	}
	if c := d.states["B1"][0]; !c["visited"] || !c["retried"] {
		t.Errorf("B1 has classes %v, want visited and retried", c)
	}
	if c := d.states["A1"][0]; c["visited"] {
		t.Errorf("A1 has classes %v; only its Parallel was visited", c)
	}
	for _, e := range [][2]string{{"", "A1"}, {"A1", "A2"}, {"A2", ""}, {"", "Deep"}, {"Fan", "Each"}} {
		if len(d.edge(e[0], e[1])) != 1 {
			t.Errorf("no edge %q → %q", e[0], e[1])
		}
	}
	fan := l.root.nodes[0]
	if len(fan.children) != 2 || fan.children[0].bounds.overlaps(fan.children[1].bounds) {
		t.Fatalf("Fan holds %d machines", len(fan.children))
	}
	if fan.children[0].bounds.x >= fan.children[1].bounds.x {
		t.Errorf("the branches of Fan are not side by side in their order: %+v, %+v", fan.children[0].bounds, fan.children[1].bounds)
	}
}

func BenchmarkTransferWorkflow(b *testing.B) {
	def := readTransfer(b)
	m := Marks{Visited: map[string]bool{"Debit": true, "Credit": true}, Edges: map[[2]string]bool{{"Debit", "Credit"}: true}, Current: "Credit"}
	b.ReportAllocs()
	for b.Loop() {
		g, err := Parse(def)
		if err != nil {
			b.Fatal(err)
		}
		if len(g.Layout().SVG(m)) == 0 {
			b.Fatal("empty drawing")
		}
	}
}
