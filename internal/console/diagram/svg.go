package diagram

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Marks is what an execution did, drawn over a Layout. States are named by their plain name, also inside Parallel
// branches and Map processors: when two machines of a definition have a state of the same name, a mark applies to
// both. The empty name stands for a machine's start and end markers in Edges: {"", "A"} is the start's edge to A and
// {"A", ""} the edge from A to the end.
type Marks struct {
	// Visited holds the states entered. The current and the failed states count as entered.
	Visited map[string]bool
	// Edges holds the transitions taken, from and to. An edge from the start is taken when its state was entered;
	// an edge to the end is taken when its state was entered, is neither current nor failed and took no other edge.
	Edges map[[2]string]bool
	// Current is the state running now, "" when none.
	Current string
	// Retried holds how many failed attempts of a state were retried, shown as a badge.
	Retried map[string]int
	// Caught holds the error a state's Catch caught; the first catcher that matches it is drawn as taken.
	Caught map[string]string
	// Failed holds the states that failed, ending the execution.
	Failed map[string]bool
}

// SVG renders the layout as a self-contained SVG document with m drawn over it. Every state is a group of class
// "state", "state-" and its lower-case type, and "visited", "current", "failed", "retried" and "caught" as m says,
// with a data-state attribute and a title that names its type and marks. Every edge is a group of class "edge" and
// its kind ("next", "choice", "default", "catch", "start" or "end"), "back" when it goes up, "visited" when taken and
// "caught" for the catcher that caught, with data-from and data-to attributes ("" for the markers). Default colours
// come from a style element scoped to the class "asl-diagram" of the root element; a page's CSS may override them.
// The arrow heads use the ids asl-arrow, asl-arrow-visited, asl-arrow-catch and asl-arrow-caught, the same in every
// drawing.
func (l *Layout) SVG(m Marks) []byte {
	r := renderer{m: m, from: make(map[string]bool)}
	for k, taken := range m.Edges {
		if taken {
			r.from[k[0]] = true
		}
	}
	w, h := num(l.width), num(l.height)
	r.printf(`<svg xmlns="http://www.w3.org/2000/svg" class="asl-diagram" role="img" aria-label="%s" width="%s" height="%s" viewBox="0 0 %s %s">`+"\n",
		esc(r.summary(l.graph)), w, h, w, h)
	r.buf.WriteString(style)
	r.block(l.root)
	r.buf.WriteString("</svg>\n")
	return r.buf.Bytes()
}

const style = `<style>
.asl-diagram{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif}
.asl-diagram text{font-size:13px;fill:#1f2937}
.asl-diagram .state>.box{fill:#f3f4f6;stroke:#6b7280;stroke-width:1.5}
.asl-diagram .state>.name,.asl-diagram .state>.header{fill:#374151}
.asl-diagram .state>.type{font-size:10px;fill:#4b5563}
.asl-diagram .state-parallel>.box,.asl-diagram .state-map>.box{fill:#fafafa}
.asl-diagram .state-fail>.box{stroke:#b91c1c}
.asl-diagram .state-fail>.name,.asl-diagram .state-fail>.type{fill:#991b1b}
.asl-diagram .state-succeed>.box{stroke:#15803d}
.asl-diagram .state.visited>.box{fill:#dcfce7;stroke:#15803d;stroke-width:2}
.asl-diagram .state-parallel.visited>.box,.asl-diagram .state-map.visited>.box{fill:#f0fdf4}
.asl-diagram .state.visited>.name,.asl-diagram .state.visited>.header{fill:#14532d}
.asl-diagram .state.visited>.type{fill:#166534}
.asl-diagram .state.caught>.box{stroke:#c2410c;stroke-width:2.5}
.asl-diagram .state.failed>.box{fill:#fee2e2;stroke:#b91c1c;stroke-width:3}
.asl-diagram .state.failed>.name,.asl-diagram .state.failed>.header,.asl-diagram .state.failed>.type{fill:#7f1d1d}
.asl-diagram .state.current>.box{stroke:#1d4ed8;stroke-width:4}
.asl-diagram .branch{fill:none;stroke:#9ca3af;stroke-dasharray:4 3}
.asl-diagram .retry>text{font-size:12px;fill:#4b5563}
.asl-diagram .retry.retried>rect{fill:#92400e}
.asl-diagram .retry.retried>text{font-size:11px;fill:#ffffff}
.asl-diagram .marker circle{fill:#374151}
.asl-diagram .marker .ring{fill:#ffffff;stroke:#374151;stroke-width:2}
.asl-diagram .edge>path{fill:none;stroke:#6b7280;stroke-width:1.5}
.asl-diagram .edge.catch>path{stroke:#b45309;stroke-dasharray:6 4}
.asl-diagram .edge.visited>path{stroke:#15803d;stroke-width:3}
.asl-diagram .edge.caught>path{stroke:#c2410c;stroke-width:3}
.asl-diagram .edge>text{font-size:11px;fill:#374151;paint-order:stroke;stroke:#ffffff;stroke-width:3px;stroke-linejoin:round}
.asl-diagram .edge.catch>text{fill:#92400e}
.asl-diagram .edge.visited>text{fill:#14532d;font-weight:600}
</style>
<defs>
<marker id="asl-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="9" markerHeight="9" markerUnits="userSpaceOnUse" orient="auto"><path d="M0,0L10,5L0,10z" fill="#6b7280"/></marker>
<marker id="asl-arrow-visited" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="11" markerHeight="11" markerUnits="userSpaceOnUse" orient="auto"><path d="M0,0L10,5L0,10z" fill="#15803d"/></marker>
<marker id="asl-arrow-catch" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="9" markerHeight="9" markerUnits="userSpaceOnUse" orient="auto"><path d="M0,0L10,5L0,10z" fill="#b45309"/></marker>
<marker id="asl-arrow-caught" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="11" markerHeight="11" markerUnits="userSpaceOnUse" orient="auto"><path d="M0,0L10,5L0,10z" fill="#c2410c"/></marker>
</defs>
`

type renderer struct {
	buf  bytes.Buffer
	m    Marks
	from map[string]bool // states some taken edge of m.Edges leaves
}

func (r *renderer) printf(format string, args ...any) {
	fmt.Fprintf(&r.buf, format, args...)
}

func (r *renderer) visited(name string) bool {
	return r.m.Visited[name] || r.m.Failed[name] || (name != "" && name == r.m.Current)
}

// summary is the drawing's accessible name: the size of the machine and what the execution did.
func (r *renderer) summary(g *Graph) string {
	var visited, failed []string
	var walk func(m *machine)
	walk = func(m *machine) {
		for _, s := range m.states {
			if r.visited(s.name) {
				visited = append(visited, s.name)
			}
			if r.m.Failed[s.name] {
				failed = append(failed, s.name)
			}
			for _, b := range s.branches {
				walk(b)
			}
			if s.processor != nil {
				walk(s.processor)
			}
		}
	}
	walk(g.root)
	var sb strings.Builder
	fmt.Fprintf(&sb, "State machine with %d states starting at %s", g.count, g.root.startAt)
	if len(visited) > 0 {
		fmt.Fprintf(&sb, "; states entered: %s", strings.Join(dedupe(visited), ", "))
	}
	if r.m.Current != "" {
		fmt.Fprintf(&sb, "; running now: %s", r.m.Current)
	}
	if len(failed) > 0 {
		fmt.Fprintf(&sb, "; failed: %s", strings.Join(dedupe(failed), ", "))
	}
	return sb.String()
}

func dedupe(names []string) []string {
	seen := make(map[string]bool, len(names))
	out := names[:0]
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

func (r *renderer) block(b *block) {
	for _, n := range b.nodes {
		r.node(n)
	}
	for _, e := range b.edges {
		r.edge(b, e)
	}
}

func (r *renderer) node(n *node) {
	box := n.box
	cx, cy := box.x+box.w/2, box.y+box.h/2
	switch n.kind {
	case startNode:
		r.printf(`<g class="marker start"><title>start</title><circle cx="%s" cy="%s" r="%s"/></g>`+"\n", num(cx), num(cy), num(box.w/2))
		return
	case endNode:
		r.printf(`<g class="marker end"><title>end</title><circle class="ring" cx="%s" cy="%s" r="%s"/><circle cx="%s" cy="%s" r="%s"/></g>`+"\n",
			num(cx), num(cy), num(box.w/2-1), num(cx), num(cy), num(box.w/2-5))
		return
	}
	s := n.st
	classes := []string{"state", "state-" + strings.ToLower(s.typ)}
	var notes []string
	if r.visited(s.name) {
		classes = append(classes, "visited")
		notes = append(notes, "visited")
	}
	if s.name == r.m.Current {
		classes = append(classes, "current")
		notes = append(notes, "running now")
	}
	retried := r.m.Retried[s.name]
	if retried > 0 {
		classes = append(classes, "retried")
		notes = append(notes, fmt.Sprintf("retried %d %s", retried, plural(retried, "time")))
	}
	caught, isCaught := r.m.Caught[s.name]
	if isCaught {
		classes = append(classes, "caught")
		notes = append(notes, "caught "+caught)
	}
	if r.m.Failed[s.name] {
		classes = append(classes, "failed")
		notes = append(notes, "failed")
	}
	title := s.name + " (" + s.typ + ")"
	if len(notes) > 0 {
		title += ": " + strings.Join(notes, ", ")
	}
	r.printf(`<g class="%s" data-state="%s"><title>%s</title>`+"\n", strings.Join(classes, " "), esc(s.name), esc(title))
	r.printf(`<rect class="box" x="%s" y="%s" width="%s" height="%s" rx="8"/>`+"\n", num(box.x), num(box.y), num(box.w), num(box.h))
	name := shorten(s.name, maxNameRunes)
	if len(n.children) > 0 {
		hx := cx
		if len(s.retries) > 0 {
			hx -= badgeW / 2
		}
		r.printf(`<text class="header" x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", num(hx), num(box.y+20), esc(s.typ+": "+name))
		for _, c := range n.children {
			cb := c.bounds
			if len(n.children) > 1 {
				r.printf(`<rect class="branch" x="%s" y="%s" width="%s" height="%s" rx="6"/>`+"\n", num(cb.x), num(cb.y), num(cb.w), num(cb.h))
			}
			r.block(c)
		}
	} else {
		tx := cx
		if len(s.retries) > 0 {
			tx -= badgeW / 2
		}
		r.printf(`<text class="name" x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", num(tx), num(box.y+20), esc(name))
		r.printf(`<text class="type" x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", num(tx), num(box.y+35), esc(s.typ))
	}
	if len(s.retries) > 0 || retried > 0 {
		r.retry(n, retried)
	}
	r.buf.WriteString("</g>\n")
}

// retry draws a state's retry policy in its top right corner: a ↻ sign, and the count when m says it retried.
func (r *renderer) retry(n *node, retried int) {
	var policy []string
	for _, rt := range n.st.retries {
		policy = append(policy, fmt.Sprintf("%s (at most %d %s)", strings.Join(rt.errors, ", "), rt.maxAttempts,
			plural(rt.maxAttempts, "retry")))
	}
	title := "Retry on " + strings.Join(policy, "; ")
	if len(policy) == 0 {
		title = "no Retry"
	}
	x, y := n.box.x+n.box.w-badgeW-4, n.box.y+6
	if retried > 0 {
		title = fmt.Sprintf("retried %d %s; %s", retried, plural(retried, "time"), title)
		r.printf(`<g class="retry retried"><title>%s</title><rect x="%s" y="%s" width="%s" height="18" rx="9"/><text x="%s" y="%s" text-anchor="middle">↻ %d</text></g>`+"\n",
			esc(shorten(title, maxTitleRunes)), num(x), num(y), num(badgeW), num(x+badgeW/2), num(y+13), retried)
		return
	}
	r.printf(`<g class="retry"><title>%s</title><text x="%s" y="%s" text-anchor="middle">↻</text></g>`+"\n",
		esc(shorten(title, maxTitleRunes)), num(x+badgeW/2), num(y+13))
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	if strings.HasSuffix(word, "y") {
		return strings.TrimSuffix(word, "y") + "ies"
	}
	return word + "s"
}

func (r *renderer) edge(b *block, e *edge) {
	from, to := nodeName(e.from), nodeName(e.to)
	classes := []string{"edge", edgeClass[e.kind]}
	if e.back {
		classes = append(classes, "back")
	}
	taken, caught := r.taken(b, e, from, to)
	if taken {
		classes = append(classes, "visited")
	}
	if caught {
		classes = append(classes, "caught")
	}
	arrow := "asl-arrow"
	switch {
	case caught:
		arrow = "asl-arrow-caught"
	case taken:
		arrow = "asl-arrow-visited"
	case e.kind == catchEdge:
		arrow = "asl-arrow-catch"
	}
	title := displayName(from, "start") + " → " + displayName(to, "end")
	switch e.kind {
	case choiceEdge:
		title += " when " + e.title
	case defaultEdge:
		title += " by default"
	case catchEdge:
		title += " on error " + e.title
	}
	if caught {
		title += " (caught " + r.m.Caught[from] + ")"
	} else if taken {
		title += " (taken)"
	}
	r.printf(`<g class="%s" data-from="%s" data-to="%s"><title>%s</title>`, strings.Join(classes, " "), esc(from), esc(to), esc(title))
	r.printf(`<path d="%s" marker-end="url(#%s)"/>`, pathData(e.segs), arrow)
	if e.hasLabel {
		r.printf(`<text x="%s" y="%s">%s</text>`, num(e.labelBox.x+2), num(e.labelBox.y+12), esc(e.label))
	}
	r.buf.WriteString("</g>\n")
}

// taken reports whether m marks e as taken, and whether e is the catcher that caught its state's error.
func (r *renderer) taken(b *block, e *edge, from, to string) (taken, caught bool) {
	switch e.kind {
	case startEdge:
		return r.m.Edges[[2]string{"", to}] || r.visited(to), false
	case endEdge:
		if r.m.Edges[[2]string{from, ""}] {
			return true, false
		}
		_, isCaught := r.m.Caught[from]
		return r.visited(from) && from != r.m.Current && !r.m.Failed[from] && !isCaught && !r.from[from], false
	}
	errName, isCaught := r.m.Caught[from]
	caughtBy := -1
	if isCaught {
		caughtBy = catcherFor(e.from.st, errName)
	}
	if e.kind == catchEdge {
		if e.catch == caughtBy {
			return true, true
		}
		return r.m.Edges[[2]string{from, to}] && !isCaught && !hasPlainEdge(b, e.from, e.to), false
	}
	// A plain edge shares its taken mark with a catcher to the same state only when no catcher caught.
	if caughtBy >= 0 && e.from.st.catches[caughtBy].next == to {
		return false, false
	}
	return r.m.Edges[[2]string{from, to}], false
}

// hasPlainEdge reports whether b has an edge other than a catcher from one node to another.
func hasPlainEdge(b *block, from, to *node) bool {
	for _, e := range b.edges {
		if e.from == from && e.to == to && e.kind != catchEdge {
			return true
		}
	}
	return false
}

// catcherFor returns the index of the first catcher of s that matches the error, or -1.
func catcherFor(s *state, errName string) int {
	for i, c := range s.catches {
		for _, want := range c.errors {
			if want == errName || want == "States.ALL" || (want == "States.TaskFailed" && errName != "States.Timeout") {
				return i
			}
		}
	}
	return -1
}

func nodeName(n *node) string {
	if n.kind == stateNode {
		return n.st.name
	}
	return ""
}

func displayName(name, marker string) string {
	if name == "" {
		return marker
	}
	return name
}

// pathData writes segments as SVG path data.
func pathData(segs []segment) string {
	var sb strings.Builder
	for i, s := range segs {
		if i == 0 {
			fmt.Fprintf(&sb, "M%s,%s", num(s.a.x), num(s.a.y))
		}
		if s.straight() {
			fmt.Fprintf(&sb, "L%s,%s", num(s.b.x), num(s.b.y))
			continue
		}
		fmt.Fprintf(&sb, "C%s,%s %s,%s %s,%s", num(s.c1.x), num(s.c1.y), num(s.c2.x), num(s.c2.y), num(s.b.x), num(s.b.y))
	}
	return sb.String()
}

// num writes a coordinate with at most one decimal.
func num(v float64) string {
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}

// esc escapes text for XML character data and attribute values.
func esc(s string) string {
	var sb strings.Builder
	_ = xml.EscapeText(&sb, []byte(s))
	return sb.String()
}
