package jsonpath_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/transferflow/orchestrator/localaws/asl/jsonpath"
	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// FuzzPath parses any path and evaluates it on any document. A path either parses or is a *SyntaxError; evaluation
// never changes the document and gives the same answer every time; a definite path gives one value or ErrNoMatch,
// an indefinite one a list; a reference path reads the same through its normalised bracket form, and what Set
// writes at it, Get reads back, without changing the original document.
func FuzzPath(f *testing.F) {
	const doc = `{"a":{"b":[1,2,3],"c":"x"},"items":[{"v":1,"k":"p"},{"v":2,"k":"q"},{"v":3}],"Test\\\"\"Name\"":"esc","n":null}`
	for _, p := range []string{
		"$", "$.a.c", "$.a.b[1]", "$.a.b[-1]", `$['Test\""Name"']`, "$.n", "$.items[*].v", "$.nothing[*].v",
		"$.a.b[0:2]", "$.a.b[1:]", "$.a.b[::-1]", "$.a.b[-5:5:2]", "$.a.b[1::99999999]", "$.a.b[0,2]", "$..v", "$..*",
		"$..['k']", "$.items[?(@.v > 1)].k", "$.items[?(@.k)].v", `$.items[?(@.k == 'q')]`, "$.items[?(@.v >= 2 && @.v < 3)]",
		"$['a','items']", "$.a.zz", "$.a.b[9]", "a.b", "$.", "$[", "$['x'", "$[1:2:0]", "$[abc]", "$.a.b.c.d",
	} {
		f.Add(p, []byte(doc))
	}
	f.Add("$.x", []byte(`[1,[2,[3]]]`))
	f.Add("$[0][1][0]", []byte(`[1,[2,[3]]]`))
	f.Fuzz(func(t *testing.T, src string, data []byte) {
		if len(src) > 512 || len(data) > 4<<10 {
			return
		}
		p, err := jsonpath.Parse(src)
		if err != nil {
			var se *jsonpath.SyntaxError
			if !errors.As(err, &se) || se.Pos < 0 || se.Pos > len(src) {
				t.Fatalf("Parse(%q): %v is not a positioned *SyntaxError", src, err)
			}
			return
		}
		if p.String() != src {
			t.Fatalf("Parse(%q).String() = %q", src, p.String())
		}
		doc, err := jsonvalue.Decode(data)
		if err != nil {
			return
		}
		before := jsonvalue.Marshal(doc)
		got, err := p.Get(doc)
		again, err2 := p.Get(doc)
		if jsonvalue.Marshal(got) != jsonvalue.Marshal(again) || (err == nil) != (err2 == nil) {
			t.Fatalf("%s on %s: %s, %v then %s, %v", src, before, jsonvalue.Marshal(got), err, jsonvalue.Marshal(again), err2)
		}
		if after := jsonvalue.Marshal(doc); after != before {
			t.Fatalf("%s changed the document %s into %s", src, before, after)
		}
		if p.Definite() {
			if err != nil && !errors.Is(err, jsonpath.ErrNoMatch) {
				t.Fatalf("definite %s on %s: %v", src, before, err)
			}
		} else if _, isList := got.([]any); err != nil || !isList {
			t.Fatalf("indefinite %s on %s: %s, %v", src, before, jsonvalue.Marshal(got), err)
		}
		if !p.IsReference() {
			return
		}

		// A reference path is definite. Its normalised form reads the same, unless a name holds a quote or a
		// backslash, which that form does not escape.
		if !p.Definite() {
			t.Fatalf("reference path %s is not definite", src)
		}
		if br := p.Bracketed(); !strings.Contains(br, `\`) && !hasQuoteInName(br) {
			q, err2 := jsonpath.Parse(br)
			if err2 != nil {
				t.Fatalf("normalised form %s of %s does not parse: %v", br, src, err2)
			}
			v, err2 := q.Get(doc)
			if jsonvalue.Marshal(v) != jsonvalue.Marshal(got) || (err == nil) != (err2 == nil) {
				t.Fatalf("%s reads %s, %v; its normalised form %s reads %s, %v", src, jsonvalue.Marshal(got), err,
					br, jsonvalue.Marshal(v), err2)
			}
		}

		const marker = "\x00fuzz-marker"
		written, err := p.Set(doc, marker)
		if after := jsonvalue.Marshal(doc); after != before {
			t.Fatalf("Set %s changed the document %s into %s", src, before, after)
		}
		if err != nil {
			return
		}
		if v, err := p.Get(written); err != nil || v != marker {
			t.Fatalf("Set %s on %s gave %s, where Get reads %s, %v", src, before, jsonvalue.Marshal(written), jsonvalue.Marshal(v), err)
		}
	})
}

// hasQuoteInName reports whether a normalised path ['a']['b'][0] has a quote inside one of its names.
func hasQuoteInName(br string) bool {
	rest := br[1:]
	for rest != "" {
		switch {
		case strings.HasPrefix(rest, "['"):
			end := strings.Index(rest[2:], "']")
			if end < 0 || strings.Contains(rest[2:2+end], "'") {
				return true
			}
			rest = rest[2+end+2:]
		case strings.HasPrefix(rest, "["):
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return true
			}
			rest = rest[end+1:]
		default:
			return true
		}
	}
	return false
}
