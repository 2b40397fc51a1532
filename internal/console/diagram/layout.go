package diagram

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// Sizes of the drawing, in pixels.
const (
	charW         = 7.0  // a character of a 13 px state name
	smallCharW    = 6.2  // a character of an 11 px edge label or a 10 px type
	nodeH         = 44.0 // a state's box
	nodePad       = 14.0 // between a box's side and its text
	minNodeW      = 90.0
	badgeW        = 34.0 // room on a box for the retry badge
	labelH        = 16.0
	rankGap       = 22.0 // between two rows of the layered layout
	nodeGap       = 28.0 // between two boxes of a row
	lineGap       = 14.0 // between a box, an edge and a label of a row
	blockPad      = 12.0 // around a machine
	headerH       = 30.0 // the title row of a Parallel or Map box
	groupPad      = 12.0 // inside a Parallel or Map box, around its machines
	branchGap     = 16.0 // between the branches of a Parallel
	loopW         = 30.0 // room right of a box for an edge to itself
	startD        = 16.0 // the start marker's diameter
	endD          = 20.0 // the end marker's diameter
	portStep      = 14.0 // between the ends of two edges on a box's side
	sweeps        = 8    // barycenter sweeps, alternately down and up
	placePasses   = 16   // passes of placeX, alternately down and up
	maxNameRunes  = 32
	maxLabelRunes = 24
	maxTitleRunes = 300
)

// Layout is a Graph placed on the plane: every state's box, the markers, and the route of every edge. It is
// computed once and rendered any number of times with different Marks; it is not changed by rendering and may be
// used by several goroutines at once.
type Layout struct {
	graph  *Graph
	root   *block
	width  float64
	height float64
}

type point struct{ x, y float64 }

type rect struct{ x, y, w, h float64 }

// overlaps reports whether r and o share more than a border.
func (r rect) overlaps(o rect) bool {
	return r.x < o.x+o.w && o.x < r.x+r.w && r.y < o.y+o.h && o.y < r.y+r.h
}

// contains reports whether o lies inside r, borders included.
func (r rect) contains(o rect) bool {
	const eps = 1e-6
	return o.x >= r.x-eps && o.y >= r.y-eps && o.x+o.w <= r.x+r.w+eps && o.y+o.h <= r.y+r.h+eps
}

// block is a machine laid out: the whole definition, a Parallel branch or a Map's processor.
type block struct {
	m      *machine
	bounds rect
	nodes  []*node // the states in definition order, then the start marker, then the end marker if any
	edges  []*edge
}

type nodeKind int

const (
	stateNode nodeKind = iota
	startNode
	endNode
)

// node is a state's box or a marker. A Parallel or Map box holds the blocks of its machines.
type node struct {
	kind     nodeKind
	st       *state
	box      rect
	children []*block
	childAt  []point // where each child block sits, from box's corner
	loops    int     // edges from the node to itself
}

type edgeKind int

const (
	nextEdge edgeKind = iota
	choiceEdge
	defaultEdge
	catchEdge
	startEdge
	endEdge
)

var edgeClass = [...]string{nextEdge: "next", choiceEdge: "choice", defaultEdge: "default", catchEdge: "catch",
	startEdge: "start", endEdge: "end"}

// edge is a transition with its route.
type edge struct {
	from, to *node
	kind     edgeKind
	catch    int    // the catcher's index for a catch edge
	label    string // shown beside the edge
	title    string // the whole condition or error list
	back     bool   // goes up: it closes a cycle
	segs     []segment
	labelBox rect
	hasLabel bool
}

// segment is a cubic Bézier curve; a straight one has its control points at its ends.
type segment struct{ a, c1, c2, b point }

func (s segment) straight() bool { return s.c1 == s.a && s.c2 == s.b }

// at returns the point of s at parameter t in [0, 1].
func (s segment) at(t float64) point {
	u := 1 - t
	f := func(a, b, c, d float64) float64 { return u*u*u*a + 3*u*u*t*b + 3*u*t*t*c + t*t*t*d }
	return point{f(s.a.x, s.c1.x, s.c2.x, s.b.x), f(s.a.y, s.c1.y, s.c2.y, s.b.y)}
}

// Layout places the graph's states with a layered layout, top to bottom: cycles are broken by a depth-first walk
// from the start, states are put one row below their deepest predecessor, long edges get a point in every row they
// cross, rows are ordered by barycenter sweeps to reduce crossings (ties follow the definition's order), and each
// row is placed as close to its neighbours' positions as the gaps allow. Parallel and Map states are laid out
// inside-out: their machines first, then a box that holds them. The result is deterministic.
func (g *Graph) Layout() *Layout {
	root := layoutMachine(g.root)
	root.move(0, 0)
	return &Layout{graph: g, root: root, width: root.bounds.w, height: root.bounds.h}
}

// layoutMachine lays out m with its top-left corner at the origin; move puts it in place.
func layoutMachine(m *machine) *block {
	b := &block{m: m}
	byName := make(map[string]*node, len(m.states))
	for _, s := range m.states {
		n := newStateNode(s)
		b.nodes = append(b.nodes, n)
		byName[s.name] = n
	}
	start := &node{kind: startNode, box: rect{w: startD, h: startD}}
	var end *node
	add := func(from, to *node, kind edgeKind, label, title string) *edge {
		e := &edge{from: from, to: to, kind: kind, catch: -1, label: label, title: title}
		b.edges = append(b.edges, e)
		return e
	}
	add(start, byName[m.startAt], startEdge, "", "")
	for _, n := range b.nodes {
		s := n.st
		for _, r := range s.choices {
			add(n, byName[r.next], choiceEdge, r.label, r.title)
		}
		if s.deflt != "" {
			add(n, byName[s.deflt], defaultEdge, "default", "default")
		}
		if s.next != "" {
			add(n, byName[s.next], nextEdge, "", "")
		}
		if s.end || s.typ == "Succeed" {
			if end == nil {
				end = &node{kind: endNode, box: rect{w: endD, h: endD}}
			}
			add(n, end, endEdge, "", "")
		}
		for i, c := range s.catches {
			errs := strings.Join(c.errors, ", ")
			add(n, byName[c.next], catchEdge, shorten(errs, maxLabelRunes), shorten(errs, maxTitleRunes)).catch = i
		}
	}
	b.nodes = append(b.nodes, start)
	if end != nil {
		b.nodes = append(b.nodes, end)
	}
	b.place()
	return b
}

// newStateNode sizes the box of s; a Parallel or Map box is sized to hold its machines, laid out first.
func newStateNode(s *state) *node {
	n := &node{kind: stateNode, st: s}
	name := shorten(s.name, maxNameRunes)
	extra := 0.0
	if len(s.retries) > 0 {
		extra = badgeW
	}
	subs := s.branches
	if s.processor != nil {
		subs = []*machine{s.processor}
	}
	if len(subs) == 0 {
		w := max(minNodeW, textWidth(name, charW)+2*nodePad+extra, textWidth(s.typ, smallCharW)+2*nodePad)
		n.box = rect{w: w, h: nodeH}
		return n
	}
	innerW, innerH := 0.0, 0.0
	for i, sm := range subs {
		c := layoutMachine(sm)
		n.children = append(n.children, c)
		if i > 0 {
			innerW += branchGap
		}
		innerW += c.bounds.w
		innerH = max(innerH, c.bounds.h)
	}
	w := max(minNodeW, innerW+2*groupPad, textWidth(s.typ+": "+name, charW)+2*nodePad+extra)
	x := (w - innerW) / 2
	for _, c := range n.children {
		n.childAt = append(n.childAt, point{x, headerH})
		x += c.bounds.w + branchGap
	}
	n.box = rect{w: w, h: headerH + innerH + groupPad}
	return n
}

// lnode is a node of the layered graph: a box, or a point where an edge crosses a row (with its label, for one of
// the points of a labelled edge).
type lnode struct {
	n            *node
	label        *edge
	rank         int
	left, right  float64 // room taken left and right of x
	h            float64
	x            float64
	tie          int
	preds, succs []int
}

// place lays out the block's nodes and edges with the block's corner at the origin.
func (b *block) place() {
	nn := len(b.nodes)
	idx := make(map[*node]int, nn)
	for i, n := range b.nodes {
		idx[n] = i
	}
	var edges []*edge
	for _, e := range b.edges {
		if e.from == e.to {
			e.from.loops++
			continue
		}
		edges = append(edges, e)
	}
	breakCycles(b.nodes, idx, edges)
	k := longestPath(b.nodes, idx, edges)

	ln := make([]lnode, nn, nn+2*len(edges))
	for i, n := range b.nodes {
		ln[i] = lnode{n: n, rank: 2 * k[i], left: n.box.w / 2, right: n.box.w / 2, h: n.box.h, tie: i}
		if n.loops > 0 {
			ln[i].right += loopW + 8*float64(n.loops-1)
		}
	}
	chains := make([][]int, len(edges))
	for ei, e := range edges {
		a, c := idx[e.from], idx[e.to]
		if e.back {
			a, c = c, a
		}
		labelRank := -1
		if e.label != "" {
			labelRank = ln[a].rank + 1
			if e.back {
				labelRank = ln[c].rank - 1
			}
		}
		chain := []int{a}
		for r := ln[a].rank + 1; r < ln[c].rank; r++ {
			d := lnode{rank: r, tie: nn + ei}
			if r == labelRank {
				d.label = e
				d.right = 3 + textWidth(e.label, smallCharW) + 4
				d.h = labelH
			}
			ln = append(ln, d)
			chain = append(chain, len(ln)-1)
		}
		chain = append(chain, c)
		for i := 1; i < len(chain); i++ {
			ln[chain[i-1]].succs = append(ln[chain[i-1]].succs, chain[i])
			ln[chain[i]].preds = append(ln[chain[i]].preds, chain[i-1])
		}
		chains[ei] = chain
	}

	ranks := orderRanks(ln)
	placeX(ln, ranks)
	straighten(ln, ranks, chains)

	bandH := make([]float64, len(ranks))
	top := make([]float64, len(ranks))
	y := blockPad
	for r, row := range ranks {
		for _, v := range row {
			bandH[r] = max(bandH[r], ln[v].h)
		}
		top[r] = y
		y += bandH[r] + rankGap
	}
	height := y - rankGap + blockPad

	minX, maxX := 0.0, 0.0
	for i, v := range ln {
		if i == 0 || v.x-v.left < minX {
			minX = v.x - v.left
		}
		if i == 0 || v.x+v.right > maxX {
			maxX = v.x + v.right
		}
	}
	for i := range ln {
		ln[i].x += blockPad - minX
	}
	b.bounds = rect{w: maxX - minX + 2*blockPad, h: height}

	for i, n := range b.nodes {
		v := ln[i]
		n.box.x = v.x - n.box.w/2
		n.box.y = top[v.rank] + (bandH[v.rank]-n.box.h)/2
	}
	b.route(ln, chains, edges, top, bandH)
}

// breakCycles marks as back the edges that close a cycle in a depth-first walk from the start marker, then from
// every state the walk did not reach, in definition order.
func breakCycles(nodes []*node, idx map[*node]int, edges []*edge) {
	out := make([][]*edge, len(nodes))
	for _, e := range edges {
		out[idx[e.from]] = append(out[idx[e.from]], e)
	}
	const (
		unseen = iota
		onPath
		done
	)
	mark := make([]int, len(nodes))
	var walk func(u int)
	walk = func(u int) {
		mark[u] = onPath
		for _, e := range out[u] {
			switch v := idx[e.to]; mark[v] {
			case unseen:
				walk(v)
			case onPath:
				e.back = true
			}
		}
		mark[u] = done
	}
	for i, n := range nodes {
		if n.kind == startNode {
			walk(i)
		}
	}
	for i := range nodes {
		if mark[i] == unseen {
			walk(i)
		}
	}
}

// longestPath gives every node its row: the start marker row 0, every other node the row after its deepest
// predecessor (back edges counted reversed), and at least row 1.
func longestPath(nodes []*node, idx map[*node]int, edges []*edge) []int {
	succ := make([][]int, len(nodes))
	indeg := make([]int, len(nodes))
	for _, e := range edges {
		a, c := idx[e.from], idx[e.to]
		if e.back {
			a, c = c, a
		}
		succ[a] = append(succ[a], c)
		indeg[c]++
	}
	k := make([]int, len(nodes))
	var queue []int
	for i, n := range nodes {
		if n.kind != startNode {
			k[i] = 1
		}
		if indeg[i] == 0 {
			queue = append(queue, i)
		}
	}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, v := range succ[u] {
			k[v] = max(k[v], k[u]+1)
			if indeg[v]--; indeg[v] == 0 {
				queue = append(queue, v)
			}
		}
	}
	return k
}

// orderRanks groups the layered nodes by row and orders each row: first by the barycenter of the row above, then
// by sweeps down and up that keep the order with the fewest crossings. Ties keep the previous order, which starts
// as the definition's.
func orderRanks(ln []lnode) [][]int {
	maxRank := 0
	for _, v := range ln {
		maxRank = max(maxRank, v.rank)
	}
	ranks := make([][]int, maxRank+1)
	for i, v := range ln {
		ranks[v.rank] = append(ranks[v.rank], i)
	}
	pos := make([]int, len(ln))
	setPos := func(row []int) {
		for i, v := range row {
			pos[v] = i
		}
	}
	for r, row := range ranks {
		key := make(map[int]float64, len(row))
		for _, v := range row {
			if r == 0 || len(ln[v].preds) == 0 {
				key[v] = float64(len(ln)) + float64(ln[v].tie)
				continue
			}
			key[v] = mean(ln[v].preds, func(u int) float64 { return float64(pos[u]) })
		}
		sort.SliceStable(row, func(i, j int) bool {
			if key[row[i]] != key[row[j]] {
				return key[row[i]] < key[row[j]]
			}
			return ln[row[i]].tie < ln[row[j]].tie
		})
		setPos(row)
	}

	best := cloneRanks(ranks)
	bestCross := crossings(ln, ranks, pos)
	for it := 0; it < sweeps && bestCross > 0; it++ {
		down := it%2 == 0
		for step := 1; step <= maxRank; step++ {
			r := step
			if !down {
				r = maxRank - step
			}
			row := ranks[r]
			key := make(map[int]float64, len(row))
			for _, v := range row {
				nb := ln[v].preds
				if !down {
					nb = ln[v].succs
				}
				if len(nb) == 0 {
					key[v] = float64(pos[v])
					continue
				}
				key[v] = mean(nb, func(u int) float64 { return float64(pos[u]) })
			}
			sort.SliceStable(row, func(i, j int) bool { return key[row[i]] < key[row[j]] })
			setPos(row)
		}
		if c := crossings(ln, ranks, pos); c < bestCross {
			best, bestCross = cloneRanks(ranks), c
		}
	}
	return best
}

func cloneRanks(ranks [][]int) [][]int {
	out := make([][]int, len(ranks))
	for i, r := range ranks {
		out[i] = append([]int(nil), r...)
	}
	return out
}

// crossings counts the pairs of edges that cross between consecutive rows.
func crossings(ln []lnode, ranks [][]int, pos []int) int {
	total := 0
	type pair struct{ a, b int }
	for _, row := range ranks {
		var ps []pair
		for _, u := range row {
			for _, v := range ln[u].succs {
				ps = append(ps, pair{pos[u], pos[v]})
			}
		}
		for i := range ps {
			for j := i + 1; j < len(ps); j++ {
				if (ps[i].a-ps[j].a)*(ps[i].b-ps[j].b) < 0 {
					total++
				}
			}
		}
	}
	return total
}

func mean(ids []int, f func(int) float64) float64 {
	s := 0.0
	for _, v := range ids {
		s += f(v)
	}
	return s / float64(len(ids))
}

// placeX gives every layered node its x: each row packed, then moved row by row towards the mean position of the
// nodes it is linked to, keeping the order and the gaps.
func placeX(ln []lnode, ranks [][]int) {
	sep := separation(ln)
	for _, row := range ranks {
		x := 0.0
		for i, v := range row {
			if i > 0 {
				x += sep(row[i-1], v)
			}
			ln[v].x = x
		}
		for _, v := range row {
			ln[v].x -= x / 2
		}
	}
	want := make([]float64, len(ln))
	for pass := 0; pass < placePasses; pass++ {
		down, both := pass%2 == 0, pass >= placePasses-4
		for step := range ranks {
			r := step
			if !down {
				r = len(ranks) - 1 - step
			}
			for _, v := range ranks[r] {
				both := both || ln[v].n == nil
				sum, count := 0.0, 0
				if down || both {
					for _, u := range ln[v].preds {
						sum += ln[u].x
					}
					count += len(ln[v].preds)
				}
				if !down || both {
					for _, u := range ln[v].succs {
						sum += ln[u].x
					}
					count += len(ln[v].succs)
				}
				want[v] = ln[v].x
				if count > 0 {
					want[v] = sum / float64(count)
				}
			}
			closest(ranks[r], want, sep, ln)
		}
	}
}

// separation returns the distance two neighbours of a row keep between their x.
func separation(ln []lnode) func(a, c int) float64 {
	return func(a, c int) float64 {
		gap := lineGap
		if ln[a].n != nil && ln[c].n != nil {
			gap = nodeGap
		}
		return ln[a].right + ln[c].left + gap
	}
}

// straighten puts the points of a long edge one above the other where its rows leave room, so that the edge runs
// straight down instead of weaving: it tries the median of the points' x, then the first's and the last's, and
// where none fits, moves each point under or over its neighbour on the edge.
func straighten(ln []lnode, ranks [][]int, chains [][]int) {
	sep := separation(ln)
	pos := make([]int, len(ln))
	for _, row := range ranks {
		for i, v := range row {
			pos[v] = i
		}
	}
	fits := func(d int, x float64) bool {
		row := ranks[ln[d].rank]
		i := pos[d]
		if i > 0 && ln[row[i-1]].x+sep(row[i-1], d) > x+1e-9 {
			return false
		}
		return i+1 >= len(row) || x+sep(d, row[i+1]) <= ln[row[i+1]].x+1e-9
	}
	for range 2 {
		for _, ch := range chains {
			inner := ch[1 : len(ch)-1]
			if len(inner) < 2 {
				continue
			}
			xs := make([]float64, len(inner))
			for i, d := range inner {
				xs[i] = ln[d].x
			}
			first, last := xs[0], xs[len(xs)-1]
			sort.Float64s(xs)
			for _, x := range []float64{xs[len(xs)/2], first, last} {
				ok := true
				for _, d := range inner {
					if !fits(d, x) {
						ok = false
						break
					}
				}
				if ok {
					for _, d := range inner {
						ln[d].x = x
					}
					break
				}
			}
			for i := 1; i < len(inner); i++ {
				if x := ln[inner[i-1]].x; fits(inner[i], x) {
					ln[inner[i]].x = x
				}
			}
			for i := len(inner) - 2; i >= 0; i-- {
				if x := ln[inner[i+1]].x; fits(inner[i], x) {
					ln[inner[i]].x = x
				}
			}
		}
	}
}

// closest places a row as near to want as possible in the least-squares sense while keeping its order and the gaps
// sep asks for: with c the packed offsets, x - c must not decrease, which pooling adjacent violators solves exactly.
func closest(row []int, want []float64, sep func(a, c int) float64, ln []lnode) {
	if len(row) == 0 {
		return
	}
	c := make([]float64, len(row))
	for i := 1; i < len(row); i++ {
		c[i] = c[i-1] + sep(row[i-1], row[i])
	}
	type pool struct {
		sum   float64
		count int
	}
	var pools []pool
	for i, v := range row {
		pools = append(pools, pool{want[v] - c[i], 1})
		for len(pools) > 1 {
			p, q := pools[len(pools)-2], pools[len(pools)-1]
			if p.sum/float64(p.count) <= q.sum/float64(q.count) {
				break
			}
			pools = append(pools[:len(pools)-2], pool{p.sum + q.sum, p.count + q.count})
		}
	}
	i := 0
	for _, p := range pools {
		y := p.sum / float64(p.count)
		for j := 0; j < p.count; j++ {
			ln[row[i]].x = y + c[i]
			i++
		}
	}
}

// route draws every edge: out of the bottom of the upper node, straight down through its row, a curve through each
// gap, straight through every row it crosses at its own point, and into the top of the lower node. Edges that go up
// are routed the same way and drawn reversed; an edge to its own node loops on the node's right.
func (b *block) route(ln []lnode, chains [][]int, edges []*edge, top, bandH []float64) {
	type end struct {
		e   int
		key float64
	}
	outs := make(map[int][]end)
	ins := make(map[int][]end)
	for ei, ch := range chains {
		outs[ch[0]] = append(outs[ch[0]], end{ei, ln[ch[1]].x})
		ins[ch[len(ch)-1]] = append(ins[ch[len(ch)-1]], end{ei, ln[ch[len(ch)-2]].x})
	}
	portX := make([][2]float64, len(edges)) // x of the edge's upper and lower end
	assign := func(m map[int][]end, side int) {
		for v, ends := range m {
			sort.SliceStable(ends, func(i, j int) bool {
				if ends[i].key != ends[j].key {
					return ends[i].key < ends[j].key
				}
				return ends[i].e < ends[j].e
			})
			n := ln[v].n
			cx := n.box.x + n.box.w/2
			step := 0.0
			if len(ends) > 1 && n.kind == stateNode {
				step = min(portStep, (n.box.w-16)/float64(len(ends)-1))
			}
			for i, en := range ends {
				portX[en.e][side] = cx + (float64(i)-float64(len(ends)-1)/2)*step
			}
		}
	}
	assign(outs, 0)
	assign(ins, 1)

	for ei, e := range edges {
		ch := chains[ei]
		first, last := ln[ch[0]], ln[ch[len(ch)-1]]
		var pts []point
		addPt := func(p point) {
			if len(pts) == 0 || pts[len(pts)-1] != p {
				pts = append(pts, p)
			}
		}
		x0 := portX[ei][0]
		addPt(point{x0, first.n.box.y + first.n.box.h})
		addPt(point{x0, top[first.rank] + bandH[first.rank]})
		for _, d := range ch[1 : len(ch)-1] {
			v := ln[d]
			addPt(point{v.x, top[v.rank]})
			addPt(point{v.x, top[v.rank] + bandH[v.rank]})
			if v.label != nil {
				e.hasLabel = true
				e.labelBox = rect{v.x + 3, top[v.rank] + (bandH[v.rank]-labelH)/2, v.right - 3, labelH}
			}
		}
		x1 := portX[ei][1]
		addPt(point{x1, top[last.rank]})
		addPt(point{x1, last.n.box.y})
		if e.back {
			for i, j := 0, len(pts)-1; i < j; i, j = i+1, j-1 {
				pts[i], pts[j] = pts[j], pts[i]
			}
		}
		for i := 1; i < len(pts); i++ {
			p, q := pts[i-1], pts[i]
			s := segment{p, p, q, q}
			if p.x != q.x {
				mid := (p.y + q.y) / 2
				s.c1, s.c2 = point{p.x, mid}, point{q.x, mid}
			}
			e.segs = append(e.segs, s)
		}
	}

	loops := make(map[*node]int)
	for _, e := range b.edges {
		if e.from != e.to {
			continue
		}
		n := e.from
		i := float64(loops[n])
		loops[n]++
		x, cy := n.box.x+n.box.w, n.box.y+n.box.h/2
		out, dy := 24+8*i, 6.0
		e.segs = []segment{{point{x, cy - dy}, point{x + out, cy - dy - 16}, point{x + out, cy + dy + 16}, point{x, cy + dy}}}
	}
}

// move puts the block's corner at (x, y), and the blocks inside its Parallel and Map boxes where those boxes are.
func (b *block) move(x, y float64) {
	dx, dy := x-b.bounds.x, y-b.bounds.y
	shift := func(p *point) { p.x += dx; p.y += dy }
	b.bounds.x, b.bounds.y = x, y
	for _, n := range b.nodes {
		n.box.x += dx
		n.box.y += dy
	}
	for _, e := range b.edges {
		for i := range e.segs {
			s := &e.segs[i]
			shift(&s.a)
			shift(&s.c1)
			shift(&s.c2)
			shift(&s.b)
		}
		e.labelBox.x += dx
		e.labelBox.y += dy
	}
	for _, n := range b.nodes {
		for i, c := range n.children {
			c.move(n.box.x+n.childAt[i].x, n.box.y+n.childAt[i].y)
		}
	}
}

// textWidth estimates the width of s at w pixels a character.
func textWidth(s string, w float64) float64 {
	return float64(utf8.RuneCountInString(s)) * w
}

// shorten cuts s to n characters, ending with an ellipsis when it cut.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
