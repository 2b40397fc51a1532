// Package jsonpath evaluates the JSONPath subset used by the Amazon States Language (JSONPath query language) over
// decoded JSON values (map[string]any, []any, string, json.Number, bool, nil), with the Jayway semantics that AWS
// Step Functions exhibits: a definite path yields one value or an error when it matches nothing, an indefinite path
// (wildcards, slices, deep scan, filters, unions) yields a list, empty when it matches nothing.
//
// Set writes a value at a reference path (the ResultPath form), creating missing objects on the way.
package jsonpath

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// ErrNoMatch reports that a definite path matched nothing in the document.
var ErrNoMatch = errors.New("jsonpath: no results for path")

// SyntaxError reports a path that cannot be parsed; Pos is the byte offset of the problem.
type SyntaxError struct {
	Path string
	Pos  int
	Msg  string
}

// Error returns the message with the path and offset.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("jsonpath: invalid path %q at offset %d: %s", e.Path, e.Pos, e.Msg)
}

type segKind int

const (
	segName segKind = iota
	segIndex
	segWildcard
	segSlice
	segUnionNames
	segUnionIndexes
	segDeepName
	segDeepWildcard
	segFilter
)

type segment struct {
	kind    segKind
	name    string
	names   []string
	index   int
	indexes []int
	start   *int
	end     *int
	step    int
	filter  *filter
}

// Path is a parsed JSONPath expression. It is immutable and safe for concurrent use.
type Path struct {
	src      string
	segs     []segment
	definite bool
}

// String returns the source text of the path.
func (p *Path) String() string { return p.src }

// Definite reports whether the path selects at most one value (no wildcard, slice, union, filter or deep scan).
func (p *Path) Definite() bool { return p.definite }

// IsReference reports whether the path is a reference path: only names and single indexes, usable with Set.
func (p *Path) IsReference() bool {
	for _, s := range p.segs {
		if s.kind != segName && s.kind != segIndex {
			return false
		}
	}
	return true
}

// Parse parses a path that must start with "$".
func Parse(src string) (*Path, error) {
	ps := &parser{src: src}
	segs, err := ps.parse()
	if err != nil {
		return nil, err
	}
	p := &Path{src: src, segs: segs, definite: true}
	for _, s := range segs {
		if s.kind != segName && s.kind != segIndex {
			p.definite = false
		}
	}
	return p, nil
}

type parser struct {
	src string
	pos int
}

func (p *parser) errf(format string, args ...any) error {
	return &SyntaxError{Path: p.src, Pos: p.pos, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) parse() ([]segment, error) {
	s := p.src
	if !strings.HasPrefix(s, "$") {
		return nil, p.errf("path must start with $")
	}
	p.pos = 1
	var segs []segment
	for p.pos < len(s) {
		switch s[p.pos] {
		case '.':
			if strings.HasPrefix(s[p.pos:], "..") {
				p.pos += 2
				if p.pos < len(s) && s[p.pos] == '*' {
					p.pos++
					segs = append(segs, segment{kind: segDeepWildcard})
					continue
				}
				if p.pos < len(s) && s[p.pos] == '[' {
					// $..['name'] form
					seg, err := p.bracket()
					if err != nil {
						return nil, err
					}
					if seg.kind == segName {
						seg.kind = segDeepName
					} else if seg.kind == segWildcard {
						seg.kind = segDeepWildcard
					} else {
						return nil, p.errf("unsupported deep scan")
					}
					segs = append(segs, seg)
					continue
				}
				name := p.name()
				if name == "" {
					return nil, p.errf("expected a name after ..")
				}
				segs = append(segs, segment{kind: segDeepName, name: name})
				continue
			}
			p.pos++
			if p.pos < len(s) && s[p.pos] == '*' {
				p.pos++
				segs = append(segs, segment{kind: segWildcard})
				continue
			}
			name := p.name()
			if name == "" {
				return nil, p.errf("expected a name after .")
			}
			segs = append(segs, segment{kind: segName, name: name})
		case '[':
			seg, err := p.bracket()
			if err != nil {
				return nil, err
			}
			segs = append(segs, seg)
		default:
			return nil, p.errf("unexpected character %q", s[p.pos])
		}
	}
	return segs, nil
}

func (p *parser) name() string {
	start := p.pos
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if c == '.' || c == '[' {
			break
		}
		p.pos++
	}
	return p.src[start:p.pos]
}

func (p *parser) skipSpace() {
	for p.pos < len(p.src) && p.src[p.pos] == ' ' {
		p.pos++
	}
}

// bracket parses [...] starting at '['.
func (p *parser) bracket() (segment, error) {
	s := p.src
	p.pos++ // '['
	p.skipSpace()
	if p.pos >= len(s) {
		return segment{}, p.errf("unterminated [")
	}
	switch {
	case s[p.pos] == '\'' || s[p.pos] == '"':
		var names []string
		for {
			p.skipSpace()
			if p.pos >= len(s) || (s[p.pos] != '\'' && s[p.pos] != '"') {
				return segment{}, p.errf("expected a quoted name")
			}
			q := s[p.pos]
			p.pos++
			var b strings.Builder
			for {
				if p.pos >= len(s) {
					return segment{}, p.errf("unterminated quoted name")
				}
				c := s[p.pos]
				if c == '\\' && p.pos+1 < len(s) && s[p.pos+1] == q {
					b.WriteByte(q)
					p.pos += 2
					continue
				}
				if c == q {
					p.pos++
					break
				}
				b.WriteByte(c)
				p.pos++
			}
			names = append(names, b.String())
			p.skipSpace()
			if p.pos < len(s) && s[p.pos] == ',' {
				p.pos++
				continue
			}
			break
		}
		if p.pos >= len(s) || s[p.pos] != ']' {
			return segment{}, p.errf("expected ]")
		}
		p.pos++
		if len(names) == 1 {
			return segment{kind: segName, name: names[0]}, nil
		}
		return segment{kind: segUnionNames, names: names}, nil
	case s[p.pos] == '*':
		p.pos++
		p.skipSpace()
		if p.pos >= len(s) || s[p.pos] != ']' {
			return segment{}, p.errf("expected ]")
		}
		p.pos++
		return segment{kind: segWildcard}, nil
	case s[p.pos] == '?':
		p.pos++
		end := matchingParen(s, p.pos)
		if end < 0 || s[p.pos] != '(' {
			return segment{}, p.errf("malformed filter")
		}
		f, err := parseFilter(s[p.pos+1 : end])
		if err != nil {
			return segment{}, p.errf("%v", err)
		}
		p.pos = end + 1
		p.skipSpace()
		if p.pos >= len(s) || s[p.pos] != ']' {
			return segment{}, p.errf("expected ]")
		}
		p.pos++
		return segment{kind: segFilter, filter: f}, nil
	}
	end := strings.IndexByte(s[p.pos:], ']')
	if end < 0 {
		return segment{}, p.errf("unterminated [")
	}
	body := strings.TrimSpace(s[p.pos : p.pos+end])
	p.pos += end + 1
	if strings.Contains(body, ":") {
		parts := strings.Split(body, ":")
		if len(parts) > 3 {
			return segment{}, p.errf("malformed slice %q", body)
		}
		seg := segment{kind: segSlice, step: 1}
		for i, part := range parts {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			n, err := strconv.Atoi(part)
			if err != nil {
				return segment{}, p.errf("malformed slice %q", body)
			}
			switch i {
			case 0:
				seg.start = &n
			case 1:
				seg.end = &n
			case 2:
				if n == 0 {
					return segment{}, p.errf("slice step 0")
				}
				seg.step = n
			}
		}
		return seg, nil
	}
	if strings.Contains(body, ",") {
		var idx []int
		for _, part := range strings.Split(body, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(part))
			if err != nil {
				return segment{}, p.errf("malformed index %q", body)
			}
			idx = append(idx, n)
		}
		return segment{kind: segUnionIndexes, indexes: idx}, nil
	}
	n, err := strconv.Atoi(body)
	if err != nil {
		return segment{}, p.errf("malformed index %q", body)
	}
	return segment{kind: segIndex, index: n}, nil
}

func matchingParen(s string, at int) int {
	if at >= len(s) || s[at] != '(' {
		return -1
	}
	depth := 0
	var quote byte
	for i := at; i < len(s); i++ {
		c := s[i]
		if quote != 0 {
			if c == quote {
				quote = 0
			}
			continue
		}
		switch c {
		case '\'', '"':
			quote = c
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// Get evaluates src against doc. See Path.Get.
func Get(doc any, src string) (any, error) {
	p, err := Parse(src)
	if err != nil {
		return nil, err
	}
	return p.Get(doc)
}

// Get evaluates the path against doc. A definite path returns the single value or ErrNoMatch (wrapped); an
// indefinite path returns a []any of every match, possibly empty.
func (p *Path) Get(doc any) (any, error) {
	if p.definite {
		return p.getDefinite(doc)
	}
	cur := []any{doc}
	for _, s := range p.segs {
		var next []any
		for _, v := range cur {
			next = s.apply(v, next)
		}
		cur = next
		if p.definite && len(cur) == 0 {
			return nil, fmt.Errorf("%w: %s", ErrNoMatch, p.bracketed())
		}
	}
	if p.definite {
		if len(cur) == 0 {
			return nil, fmt.Errorf("%w: %s", ErrNoMatch, p.bracketed())
		}
		return cur[0], nil
	}
	if cur == nil {
		cur = []any{}
	}
	return cur, nil
}

// getDefinite walks a path of names and indexes, which selects at most one value at every step.
func (p *Path) getDefinite(doc any) (any, error) {
	cur := doc
	for _, s := range p.segs {
		var ok bool
		switch s.kind {
		case segName:
			cur, ok = jsonvalue.Lookup(cur, s.name)
		case segIndex:
			var a []any
			if a, ok = cur.([]any); ok {
				i := s.index
				if i < 0 {
					i += len(a)
				}
				if ok = i >= 0 && i < len(a); ok {
					cur = a[i]
				}
			}
		}
		if !ok {
			return nil, fmt.Errorf("%w: %s", ErrNoMatch, p.bracketed())
		}
	}
	return cur, nil
}

// bracketed renders the path in Jayway's normalised form, e.g. $['a'][0], used in error messages.
func (p *Path) bracketed() string {
	var b strings.Builder
	b.WriteString("$")
	for _, s := range p.segs {
		switch s.kind {
		case segName:
			b.WriteString("['" + s.name + "']")
		case segIndex:
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
		default:
			b.WriteString("[*]")
		}
	}
	return b.String()
}

// Bracketed returns the path in Jayway's normalised bracket form, e.g. $['a'][0].
func (p *Path) Bracketed() string { return p.bracketed() }

func (s segment) apply(v any, out []any) []any {
	switch s.kind {
	case segName:
		if x, ok := jsonvalue.Lookup(v, s.name); ok {
			out = append(out, x)
		}
	case segUnionNames:
		for _, n := range s.names {
			if x, ok := jsonvalue.Lookup(v, n); ok {
				out = append(out, x)
			}
		}
	case segIndex:
		if a, ok := v.([]any); ok {
			i := s.index
			if i < 0 {
				i += len(a)
			}
			if i >= 0 && i < len(a) {
				out = append(out, a[i])
			}
		}
	case segUnionIndexes:
		if a, ok := v.([]any); ok {
			for _, i := range s.indexes {
				if i < 0 {
					i += len(a)
				}
				if i >= 0 && i < len(a) {
					out = append(out, a[i])
				}
			}
		}
	case segWildcard:
		out = appendChildren(v, out)
	case segSlice:
		a, ok := v.([]any)
		if !ok {
			break
		}
		n := len(a)
		norm := func(x int) int {
			if x < 0 {
				x += n
			}
			return min(max(x, 0), n)
		}
		if s.step > 0 {
			start, end := 0, n
			if s.start != nil {
				start = norm(*s.start)
			}
			if s.end != nil {
				end = norm(*s.end)
			}
			for i := start; i < end; i += s.step {
				out = append(out, a[i])
				if s.step >= end-i { // the next index is past the end; i+step could overflow
					break
				}
			}
		} else {
			start, end := n-1, -1
			if s.start != nil {
				start = min(norm(*s.start), n-1)
			}
			if s.end != nil {
				end = norm(*s.end)
			}
			for i := start; i > end; i += s.step {
				out = append(out, a[i])
			}
		}
	case segDeepName, segDeepWildcard:
		out = deepScan(v, s, out)
	case segFilter:
		for _, c := range appendChildren(v, nil) {
			if s.filter.match(c) {
				out = append(out, c)
			}
		}
	}
	return out
}

func appendChildren(v any, out []any) []any {
	switch t := v.(type) {
	case *jsonvalue.Object:
		out = append(out, t.Values()...)
	case map[string]any:
		for _, k := range sortedKeys(t) {
			out = append(out, t[k])
		}
	case []any:
		out = append(out, t...)
	}
	return out
}

func deepScan(v any, s segment, out []any) []any {
	switch t := v.(type) {
	case *jsonvalue.Object:
		vals := t.Values()
		for i, k := range t.Keys() {
			if s.kind == segDeepWildcard || k == s.name {
				out = append(out, vals[i])
			}
		}
		for _, x := range vals {
			out = deepScan(x, s, out)
		}
	case map[string]any:
		for _, k := range sortedKeys(t) {
			if s.kind == segDeepWildcard || k == s.name {
				out = append(out, t[k])
			}
		}
		for _, k := range sortedKeys(t) {
			out = deepScan(t[k], s, out)
		}
	case []any:
		if s.kind == segDeepWildcard {
			out = append(out, t...)
		}
		for _, x := range t {
			out = deepScan(x, s, out)
		}
	}
	return out
}

// Set returns doc with value written at the reference path p. Missing intermediate objects are created; the
// root path "$" replaces the whole document. Writing through a non-object, or at an index out of range, fails.
func (p *Path) Set(doc any, value any) (any, error) {
	if !p.IsReference() {
		return nil, fmt.Errorf("jsonpath: %s is not a reference path", p.src)
	}
	if len(p.segs) == 0 {
		return value, nil
	}
	return setAt(doc, p.segs, value, p.src)
}

func setAt(cur any, segs []segment, value any, src string) (any, error) {
	if len(segs) == 0 {
		return value, nil
	}
	s := segs[0]
	switch s.kind {
	case segName:
		var obj *jsonvalue.Object
		switch t := cur.(type) {
		case *jsonvalue.Object:
			obj = t.Clone()
		case map[string]any:
			obj = jsonvalue.NewObject(len(t) + 1)
			for _, k := range sortedKeys(t) {
				obj.Set(k, t[k])
			}
		case nil:
			obj = jsonvalue.NewObject(1)
		default:
			return nil, fmt.Errorf("jsonpath: set %s: cannot write field %q into a %s", src, s.name, typeName(cur))
		}
		old, _ := obj.Get(s.name)
		child, err := setAt(old, segs[1:], value, src)
		if err != nil {
			return nil, err
		}
		obj.Set(s.name, child)
		return obj, nil
	case segIndex:
		a, ok := cur.([]any)
		if !ok {
			return nil, fmt.Errorf("jsonpath: set %s: cannot index a %s", src, typeName(cur))
		}
		i := s.index
		if i < 0 {
			i += len(a)
		}
		if i < 0 || i >= len(a) {
			return nil, fmt.Errorf("jsonpath: set %s: index %d out of range", src, s.index)
		}
		b := append([]any(nil), a...)
		child, err := setAt(b[i], segs[1:], value, src)
		if err != nil {
			return nil, err
		}
		b[i] = child
		return b, nil
	}
	return nil, fmt.Errorf("jsonpath: set %s: not a reference path", src)
}

func typeName(v any) string {
	switch v.(type) {
	case map[string]any, *jsonvalue.Object:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number, float64, int, int64:
		return "number"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}
