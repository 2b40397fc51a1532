package docexample

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// Expectation kinds: the first word of an expect block's info string.
const (
	KindText = "text"
	KindJSON = "json"
)

// Block is one "sh" example of a document.
type Block struct {
	// Line is the line of the opening fence, from 1.
	Line int
	// Skip is set for "sh skip-test": shown in the document, not run.
	Skip bool
	// Code is the block's content, the commands.
	Code string
	// Expect is the expect block that follows it, if any.
	Expect *Expectation
}

// Expectation is an expect block: what the "sh" block before it must print on standard output.
type Expectation struct {
	// Kind is KindText or KindJSON.
	Kind string
	// Line is the line of the opening fence, from 1.
	Line int
	// Body is the block's content.
	Body string
}

// Document is a parsed document: its name (as given to Parse, used in messages) and its "sh" blocks in order.
type Document struct {
	Name   string
	Blocks []Block
}

// Run returns the blocks that are run, in document order.
func (d *Document) Run() []Block {
	var out []Block
	for _, b := range d.Blocks {
		if !b.Skip {
			out = append(out, b)
		}
	}
	return out
}

// Skipped returns the "sh skip-test" blocks.
func (d *Document) Skipped() []Block {
	var out []Block
	for _, b := range d.Blocks {
		if b.Skip {
			out = append(out, b)
		}
	}
	return out
}

// ParseError is a mistake in a document's examples, at a line.
type ParseError struct {
	Doc  string
	Line int
	Msg  string
}

// Error returns "doc:line: message".
func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %s", e.Doc, e.Line, e.Msg) }

// shellLanguages are info strings of shell code that would escape the test: an example in a tested document is
// "sh" (run) or "sh skip-test" (shown), never one of these.
var shellLanguages = map[string]bool{"bash": true, "shell": true, "console": true, "zsh": true, "shell-session": true, "shellsession": true}

// fence is an open fenced code block.
type fence struct {
	char   byte
	size   int
	indent int
	line   int
	info   []string
	body   []string
}

// Parse reads a Markdown document's fenced code blocks (``` or ~~~, CommonMark's rules for opening and closing
// fences) and returns its "sh" blocks, each with the expect block that follows it. Every mistake is reported, all
// at once (errors.Join of *ParseError): an unknown word after "sh", an expect block that does not follow an "sh"
// block or is the second after one, a "json expect" that is not JSON, a shell block under another info string
// (bash, shell, console: it would silently not be run), a fence left open.
func Parse(name string, src []byte) (*Document, error) {
	doc := &Document{Name: name}
	var errs []error
	fail := func(line int, format string, args ...any) {
		errs = append(errs, &ParseError{Doc: name, Line: line, Msg: fmt.Sprintf(format, args...)})
	}
	var (
		open *fence
		// lastSh is the index in doc.Blocks of the "sh" block an expect block may follow: set when an "sh" block
		// closes, cleared by any non-blank line outside a block and by any other block.
		lastSh  = -1
		lineNum int
	)
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 0, 64*1024), 4<<20)
	for sc.Scan() {
		lineNum++
		line := strings.TrimSuffix(sc.Text(), "\r")
		if open != nil {
			if closes(line, open) {
				lastSh = closeBlock(doc, open, lastSh, fail)
				open = nil
				continue
			}
			open.body = append(open.body, stripIndent(line, open.indent))
			continue
		}
		if f, ok := opening(line); ok {
			f.line = lineNum
			open = f
			continue
		}
		if strings.TrimSpace(line) != "" {
			lastSh = -1
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if open != nil {
		fail(open.line, "the fenced block is never closed")
	}
	return doc, errors.Join(errs...)
}

// closeBlock records the block f that just closed and returns the new lastSh.
func closeBlock(doc *Document, f *fence, lastSh int, fail func(int, string, ...any)) int {
	body := strings.Join(f.body, "\n")
	if len(f.body) > 0 {
		body += "\n"
	}
	lang := ""
	if len(f.info) > 0 {
		lang = f.info[0]
	}
	attrs := f.info[min(1, len(f.info)):]
	switch {
	case lang == "sh":
		b := Block{Line: f.line, Code: body}
		for _, a := range attrs {
			switch a {
			case "skip-test":
				b.Skip = true
			default:
				fail(f.line, "unknown word %q after sh: the info string is \"sh\" (run) or \"sh skip-test\" (shown, not run)", a)
			}
		}
		doc.Blocks = append(doc.Blocks, b)
		return len(doc.Blocks) - 1
	case contains(attrs, "expect"):
		if lang != KindText && lang != KindJSON {
			fail(f.line, "%q expect: an expect block is \"text expect\" or \"json expect\"", lang)
			return -1
		}
		for _, a := range attrs {
			if a != "expect" {
				fail(f.line, "unknown word %q in %q", a, strings.Join(f.info, " "))
			}
		}
		if lastSh < 0 {
			fail(f.line, "%s expect block does not follow an sh block (only blank lines may come between them)", lang)
			return -1
		}
		b := &doc.Blocks[lastSh]
		if b.Expect != nil {
			fail(f.line, "second expect block for the sh block at line %d (one block's output has one expectation)", b.Line)
			return -1
		}
		if lang == KindJSON {
			if err := validJSON(body); err != nil {
				fail(f.line, "json expect block is not JSON: %v", err)
			}
		}
		b.Expect = &Expectation{Kind: lang, Line: f.line, Body: body}
		return lastSh // so that a second expect block right after is reported as such
	case shellLanguages[lang]:
		fail(f.line, "a %q block is neither run nor marked skipped: use \"sh\" (run) or \"sh skip-test\" (shown, not run)", lang)
	}
	return -1
}

// Unfenced returns the lines of a Markdown document with those of its fenced code blocks (fences included) made
// empty, so that what is left is Markdown text, line for line: fences are read as Parse reads them.
func Unfenced(doc string) []string {
	lines := strings.Split(doc, "\n")
	var open *fence
	for i, line := range lines {
		switch {
		case open != nil:
			if closes(strings.TrimSuffix(line, "\r"), open) {
				open = nil
			}
			lines[i] = ""
		default:
			if f, ok := opening(strings.TrimSuffix(line, "\r")); ok {
				open = f
				lines[i] = ""
			}
		}
	}
	return lines
}

// opening reads an opening fence: up to three spaces (more are accepted, for blocks inside list items), then three
// or more backticks or tildes, then the info string. A backtick fence's info string has no backtick.
func opening(line string) (*fence, bool) {
	trimmed := strings.TrimLeft(line, " ")
	indent := len(line) - len(trimmed)
	if len(trimmed) < 3 || (trimmed[0] != '`' && trimmed[0] != '~') {
		return nil, false
	}
	c := trimmed[0]
	n := 0
	for n < len(trimmed) && trimmed[n] == c {
		n++
	}
	if n < 3 {
		return nil, false
	}
	info := trimmed[n:]
	if c == '`' && strings.Contains(info, "`") {
		return nil, false
	}
	return &fence{char: c, size: n, indent: indent, info: strings.Fields(info)}, true
}

// closes reports whether line closes f: the same character, at least as many, nothing else but spaces.
func closes(line string, f *fence) bool {
	t := strings.TrimSpace(line)
	if len(t) < f.size {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] != f.char {
			return false
		}
	}
	return true
}

// stripIndent removes up to n leading spaces, as CommonMark does for the content of an indented fence.
func stripIndent(line string, n int) string {
	for n > 0 && strings.HasPrefix(line, " ") {
		line = line[1:]
		n--
	}
	return line
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
