package diagram

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

const transferPath = "../../../statemachine/transfer.asl.json"

// readTransfer returns the transfer workflow's definition.
func readTransfer(t testing.TB) []byte {
	t.Helper()
	def, err := os.ReadFile(transferPath)
	if err != nil {
		t.Fatalf("read the transfer workflow: %v", err)
	}
	return def
}

// mustLayout parses and lays out a definition.
func mustLayout(t testing.TB, def []byte) *Layout {
	t.Helper()
	g, err := Parse(def)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return g.Layout()
}

// checkLayout fails t when two boxes of a machine overlap, when a box or label leaves its machine, when a machine
// leaves the Parallel or Map box that holds it, when two machines of one box overlap, or when an edge runs through a
// box or a label other than its own ends.
func checkLayout(t *testing.T, l *Layout) {
	t.Helper()
	if l.root.bounds.x < 0 || l.root.bounds.y < 0 || l.root.bounds.x+l.root.bounds.w > l.width+1e-6 ||
		l.root.bounds.y+l.root.bounds.h > l.height+1e-6 {
		t.Errorf("the machine's bounds %+v leave the drawing's %gx%g", l.root.bounds, l.width, l.height)
	}
	checkBlock(t, l.root, "top")
}

func checkBlock(t *testing.T, b *block, where string) {
	t.Helper()
	type item struct {
		name string
		box  rect
		node *node
		edge *edge
	}
	var items []item
	for _, n := range b.nodes {
		items = append(items, item{name: describe(n), box: n.box, node: n})
	}
	for _, e := range b.edges {
		if e.hasLabel {
			items = append(items, item{name: fmt.Sprintf("label %q of %s → %s", e.label, describe(e.from), describe(e.to)), box: e.labelBox, edge: e})
		}
	}
	for i, a := range items {
		if !b.bounds.contains(a.box) {
			t.Errorf("%s: %s %+v lies outside its machine %+v", where, a.name, a.box, b.bounds)
		}
		for _, c := range items[i+1:] {
			if a.box.overlaps(c.box) {
				t.Errorf("%s: %s %+v overlaps %s %+v", where, a.name, a.box, c.name, c.box)
			}
		}
	}
	for _, e := range b.edges {
		if len(e.segs) == 0 {
			t.Errorf("%s: edge %s → %s has no route", where, describe(e.from), describe(e.to))
		}
		for _, s := range e.segs {
			for step := 0; step <= 20; step++ {
				p := s.at(float64(step) / 20)
				for _, it := range items {
					if it.node == e.from || it.node == e.to || it.edge == e {
						continue
					}
					in := rect{it.box.x + 1, it.box.y + 1, it.box.w - 2, it.box.h - 2}
					if p.x > in.x && p.x < in.x+in.w && p.y > in.y && p.y < in.y+in.h {
						t.Errorf("%s: edge %s → %s runs through %s at (%.1f, %.1f)", where, describe(e.from), describe(e.to), it.name, p.x, p.y)
					}
				}
			}
		}
	}
	for _, n := range b.nodes {
		for i, c := range n.children {
			if !n.box.contains(c.bounds) {
				t.Errorf("%s: machine %d of %s %+v lies outside its box %+v", where, i, describe(n), c.bounds, n.box)
			}
			for _, d := range n.children[i+1:] {
				if c.bounds.overlaps(d.bounds) {
					t.Errorf("%s: two machines of %s overlap: %+v and %+v", where, describe(n), c.bounds, d.bounds)
				}
			}
			checkBlock(t, c, fmt.Sprintf("%s/%s[%d]", where, n.st.name, i))
		}
	}
}

func describe(n *node) string {
	switch n.kind {
	case startNode:
		return "start"
	case endNode:
		return "end"
	}
	return fmt.Sprintf("state %q", n.st.name)
}

// drawing is what a test reads back from an SVG document.
type drawing struct {
	root   map[string]string            // the <svg> element's attributes
	states map[string][]map[string]bool // data-state → the class sets of the groups that carry it
	titles map[string]string            // data-state → the group's title
	edges  []drawnEdge
}

type drawnEdge struct {
	from, to string
	class    map[string]bool
}

// read decodes an SVG document token by token, failing t when it is not well-formed XML.
func read(t *testing.T, svg []byte) drawing {
	t.Helper()
	d := drawing{states: map[string][]map[string]bool{}, titles: map[string]string{}}
	dec := xml.NewDecoder(strings.NewReader(string(svg)))
	var titleFor string
	var inTitle bool
	var stack []string // data-state of the enclosing <g>, "" for others
	for {
		tok, err := dec.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			attrs := map[string]string{}
			for _, a := range el.Attr {
				attrs[a.Name.Local] = a.Value
			}
			class := map[string]bool{}
			for _, c := range strings.Fields(attrs["class"]) {
				class[c] = true
			}
			switch el.Name.Local {
			case "svg":
				d.root = attrs
			case "g":
				name, isState := attrs["data-state"]
				if isState && class["state"] {
					d.states[name] = append(d.states[name], class)
					stack = append(stack, name)
				} else {
					stack = append(stack, "")
				}
				if class["edge"] {
					from, okF := attrs["data-from"]
					to, okT := attrs["data-to"]
					if !okF || !okT {
						t.Errorf("an edge group lacks data-from or data-to: %v", attrs)
					}
					d.edges = append(d.edges, drawnEdge{from, to, class})
				}
			case "title":
				inTitle = true
				titleFor = ""
				if len(stack) > 0 {
					titleFor = stack[len(stack)-1]
				}
			}
		case xml.EndElement:
			switch el.Name.Local {
			case "g":
				stack = stack[:len(stack)-1]
			case "title":
				inTitle = false
			}
		case xml.CharData:
			if inTitle && titleFor != "" {
				if _, seen := d.titles[titleFor]; !seen {
					d.titles[titleFor] = string(el)
				}
				titleFor = ""
			}
		}
	}
	return d
}

// edge returns the drawn edges from one state to another.
func (d drawing) edge(from, to string) []drawnEdge {
	var out []drawnEdge
	for _, e := range d.edges {
		if e.from == from && e.to == to {
			out = append(out, e)
		}
	}
	return out
}
