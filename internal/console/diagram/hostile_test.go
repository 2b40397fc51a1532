package diagram

import (
	"strings"
	"testing"
)

func TestParseRefusesBrokenDefinitions(t *testing.T) {
	tests := []struct {
		name string
		def  string
		want []string // parts of the error
	}{
		{name: "not JSON", def: `StartAt: A`, want: []string{"not JSON"}},
		{name: "empty", def: ``, want: []string{"not JSON"}},
		{name: "truncated", def: `{"StartAt": "A", "States": {`, want: []string{"not JSON"}},
		{name: "text after the value", def: `{"StartAt": "A", "States": {"A": {"Type": "Succeed"}}} x`, want: []string{"not JSON"}},
		{name: "an array", def: `[1, 2]`, want: []string{"an array, want an object"}},
		{name: "empty States", def: `{"StartAt": "A", "States": {}}`, want: []string{"States is empty"}},
		{name: "no StartAt", def: `{"States": {"A": {"Type": "Succeed"}}}`, want: []string{"StartAt is missing"}},
		{name: "StartAt names no state", def: `{"StartAt": "B", "States": {"A": {"Type": "Succeed"}}}`, want: []string{`StartAt "B"`}},
		{name: "Next to a missing state", def: `{"StartAt": "A", "States": {"A": {"Type": "Pass", "Next": "Nowhere"}}}`,
			want: []string{`state "A"`, `Next "Nowhere" is not a state`}},
		{name: "Catch to a missing state", def: `{"StartAt": "A", "States": {"A": {"Type": "Task", "End": true,
			"Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Gone"}]}}}`, want: []string{`state "A"`, `Catch[0].Next "Gone"`}},
		{name: "Choice to a missing state", def: `{"StartAt": "A", "States": {"A": {"Type": "Choice", "Default": "A",
			"Choices": [{"Variable": "$.x", "IsPresent": true, "Next": "Gone"}]}}}`, want: []string{`Choices[0].Next "Gone"`}},
		{name: "a branch's Next leaves the branch", def: `{"StartAt": "P", "States": {"P": {"Type": "Parallel", "Next": "B",
			"Branches": [{"StartAt": "X", "States": {"X": {"Type": "Pass", "Next": "B"}}}]}, "B": {"Type": "Succeed"}}}`,
			want: []string{`state "P"`, "Branches[0]", `state "X"`, `Next "B"`}},
		{name: "unknown Type", def: `{"StartAt": "A", "States": {"A": {"Type": "Lambda"}}}`, want: []string{`Type "Lambda"`}},
		{name: "Next not a string", def: `{"StartAt": "A", "States": {"A": {"Type": "Pass", "Next": 3}}}`, want: []string{"Next is a number"}},
		{name: "duplicate state", def: `{"StartAt": "A", "States": {"A": {"Type": "Succeed"}, "A": {"Type": "Fail"}}}`, want: []string{`"A" appears twice`}},
		{name: "empty state name", def: `{"StartAt": "A", "States": {"A": {"Type": "Succeed"}, "": {"Type": "Fail"}}}`, want: []string{"name is empty"}},
		{name: "Map without processor", def: `{"StartAt": "M", "States": {"M": {"Type": "Map", "End": true}}}`, want: []string{"neither ItemProcessor nor Iterator"}},
		{name: "Parallel without branches", def: `{"StartAt": "P", "States": {"P": {"Type": "Parallel", "End": true}}}`, want: []string{"Branches"}},
		{name: "JSON nested too deep", def: strings.Repeat("[", 10000) + strings.Repeat("]", 10000), want: []string{"nested more than"}},
		{name: "states nested too deep", def: nestedMaps(40), want: []string{"nest more than"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := Parse([]byte(tt.def))
			if err == nil {
				t.Fatalf("Parse accepted it: %+v", g)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// nestedMaps returns a definition of depth Map states each holding the next.
func nestedMaps(depth int) string {
	inner := `{"StartAt": "Leaf", "States": {"Leaf": {"Type": "Succeed"}}}`
	for range depth {
		inner = `{"StartAt": "M", "States": {"M": {"Type": "Map", "End": true, "ItemProcessor": ` + inner + `}}}`
	}
	return inner
}

func TestHostileNamesAreEscaped(t *testing.T) {
	const name = `<script>alert("x & 'y'")</script>`
	def := `{"StartAt": "<script>alert(\"x & 'y'\")</script>", "States": {
		"<script>alert(\"x & 'y'\")</script>": {"Type": "Choice", "Default": "]]>&amp;",
			"Choices": [{"Variable": "$.<b>", "StringEquals": "</text><svg onload=x>", "Next": "]]>&amp;"}]},
		"]]>&amp;": {"Type": "Task", "End": true, "Retry": [{"ErrorEquals": ["<Err>"]}],
			"Catch": [{"ErrorEquals": ["\"quoted\" & <angled>"], "Next": "<script>alert(\"x & 'y'\")</script>"}]}}}`
	l := mustLayout(t, []byte(def))
	checkLayout(t, l)
	svg := l.SVG(Marks{Visited: map[string]bool{name: true}, Current: "]]>&amp;", Caught: map[string]string{"]]>&amp;": "<E>"},
		Retried: map[string]int{"]]>&amp;": 1}})
	for _, raw := range []string{"<script", "<b>", "</text><svg", "<Err>", "<angled>", "<E>"} {
		if strings.Contains(string(svg), raw) {
			t.Errorf("the SVG holds %q unescaped", raw)
		}
	}
	d := read(t, svg)
	if len(d.states[name]) != 1 || !d.states[name][0]["visited"] {
		t.Errorf("the state named %q: %v, want one visited group", name, d.states[name])
	}
	if len(d.states["]]>&amp;"]) != 1 || !d.states["]]>&amp;"][0]["current"] {
		t.Errorf("the state named %q: %v, want one current group", "]]>&amp;", d.states["]]>&amp;"])
	}
	if len(d.edge("]]>&amp;", name)) != 1 {
		t.Errorf("no catch edge back to %q", name)
	}
}

func TestCyclesAreDrawnAsBackEdges(t *testing.T) {
	tests := []struct {
		name  string
		def   string
		back  [2]string
		edges [][2]string
	}{
		{
			name: "a Choice looping back",
			def: `{"StartAt": "Poll", "States": {
				"Poll": {"Type": "Task", "Resource": "x", "Next": "Ready?"},
				"Ready?": {"Type": "Choice", "Choices": [{"Variable": "$.done", "BooleanEquals": true, "Next": "Done"}], "Default": "Wait"},
				"Wait": {"Type": "Wait", "Seconds": 5, "Next": "Poll"},
				"Done": {"Type": "Succeed"}}}`,
			back:  [2]string{"Wait", "Poll"},
			edges: [][2]string{{"Poll", "Ready?"}, {"Ready?", "Done"}, {"Ready?", "Wait"}, {"Wait", "Poll"}, {"Done", ""}},
		},
		{
			name: "a Choice looping to itself",
			def: `{"StartAt": "Again", "States": {
				"Again": {"Type": "Choice", "Choices": [{"Variable": "$.n", "NumericLessThan": 3, "Next": "Again"}], "Default": "Out"},
				"Out": {"Type": "Pass", "End": true}}}`,
			edges: [][2]string{{"Again", "Again"}, {"Again", "Out"}},
		},
		{
			name: "a loop back to the start with an unreachable state",
			def: `{"StartAt": "A", "States": {
				"A": {"Type": "Pass", "Next": "B"},
				"B": {"Type": "Choice", "Choices": [{"Variable": "$.x", "IsPresent": true, "Next": "A"}], "Default": "C"},
				"Orphan": {"Type": "Pass", "Next": "C"},
				"C": {"Type": "Fail"}}}`,
			back:  [2]string{"B", "A"},
			edges: [][2]string{{"A", "B"}, {"B", "A"}, {"B", "C"}, {"Orphan", "C"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := mustLayout(t, []byte(tt.def))
			checkLayout(t, l)
			d := read(t, l.SVG(Marks{}))
			for _, e := range tt.edges {
				if len(d.edge(e[0], e[1])) == 0 {
					t.Errorf("no edge %q → %q", e[0], e[1])
				}
			}
			backs := 0
			for _, e := range d.edges {
				if e.class["back"] {
					backs++
					if [2]string{e.from, e.to} != tt.back {
						t.Errorf("edge %q → %q is drawn back, want only %q", e.from, e.to, tt.back)
					}
				}
			}
			if want := tt.back != [2]string{}; want != (backs == 1) {
				t.Errorf("%d back edges, want %v", backs, tt.back)
			}
		})
	}
}
