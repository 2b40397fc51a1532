package docexample

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParsePairsBlocks(t *testing.T) {
	src := strings.Join([]string{
		"# A page", //  1
		"",         //  2
		"```sh",    //  3
		"id=$(echo tr_1)",
		"```", //  5
		"",
		"```text expect", //  7
		"tr_…",
		"```", //  9
		"Prose between: the next expect would be an orphan, so there is none.",
		"```sh skip-test", // 11
		"aws stepfunctions list-executions",
		"```",
		"~~~~sh", // 14
		"echo '{\"a\": 1}'",
		"```", // not a closing fence: other character
		"~~~~",
		"```json expect", // 18
		`{"a": 1}`,
		"```",
		"```go", // 21: shown, not a shell example
		"fmt.Println()",
		"```",
		"  ```sh", // 24: inside a list item
		"  echo indented",
		"  ```",
	}, "\n")
	doc, err := Parse("page.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		line       int
		skip       bool
		code       string
		expectKind string
		expectLine int
	}{
		{3, false, "id=$(echo tr_1)\n", KindText, 7},
		{11, true, "aws stepfunctions list-executions\n", "", 0},
		{14, false, "echo '{\"a\": 1}'\n```\n", KindJSON, 18},
		{24, false, "echo indented\n", "", 0},
	}
	if len(doc.Blocks) != len(want) {
		t.Fatalf("blocks = %+v, want %d", doc.Blocks, len(want))
	}
	for i, w := range want {
		b := doc.Blocks[i]
		if b.Line != w.line || b.Skip != w.skip || b.Code != w.code {
			t.Errorf("block %d = line %d skip %v code %q, want line %d skip %v code %q", i, b.Line, b.Skip, b.Code, w.line, w.skip, w.code)
		}
		switch {
		case w.expectKind == "" && b.Expect != nil:
			t.Errorf("block %d has expectation %+v, want none", i, b.Expect)
		case w.expectKind != "" && (b.Expect == nil || b.Expect.Kind != w.expectKind || b.Expect.Line != w.expectLine):
			t.Errorf("block %d expectation = %+v, want %s at line %d", i, b.Expect, w.expectKind, w.expectLine)
		}
	}
	if n := len(doc.Run()); n != 3 {
		t.Errorf("run blocks = %d, want 3", n)
	}
	if s := doc.Skipped(); len(s) != 1 || s[0].Line != 11 {
		t.Errorf("skipped = %+v", s)
	}
}

// TestParseReportsMistakes: every mistake that would let an example escape the test, or check nothing, is an
// error at its line.
func TestParseReportsMistakes(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string // each a ParseError's text
	}{
		{"a typo after sh", "```sh skiptest\necho\n```\n", []string{`doc.md:1: unknown word "skiptest" after sh`}},
		{"an expect block with prose before it", "```sh\necho\n```\nSo it prints:\n```text expect\nx\n```\n",
			[]string{"doc.md:5: text expect block does not follow an sh block"}},
		{"an expect block first", "```json expect\n{}\n```\n", []string{"doc.md:1: json expect block does not follow an sh block"}},
		{"an expect block after a shown block", "```text\nx\n```\n```text expect\nx\n```\n", []string{"doc.md:4: text expect block does not follow"}},
		{"two expect blocks", "```sh\necho\n```\n```text expect\nx\n```\n```json expect\n{}\n```\n",
			[]string{"doc.md:7: second expect block for the sh block at line 1"}},
		{"json expect that is not JSON", "```sh\necho\n```\n```json expect\n{\"a\": …}\n```\n", []string{"doc.md:4: json expect block is not JSON"}},
		{"an expect of another kind", "```sh\necho\n```\n```yaml expect\na: 1\n```\n", []string{`doc.md:4: "yaml" expect`}},
		{"a bash block", "```bash\necho\n```\n", []string{`doc.md:1: a "bash" block is neither run nor marked skipped`}},
		{"a console block", "```console\n$ echo\n```\n", []string{`doc.md:1: a "console" block`}},
		{"a fence left open", "text\n```sh\necho\n", []string{"doc.md:2: the fenced block is never closed"}},
		{"all of them at once", "```bash\n```\n```sh skip\n```\n", []string{`doc.md:1: a "bash" block`, `doc.md:3: unknown word "skip"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("doc.md", []byte(tc.src))
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Errorf("error %T is not a *ParseError", err)
			}
		})
	}
}

func TestParseAcceptsAnExpectAfterASkippedBlock(t *testing.T) {
	doc, err := Parse("doc.md", []byte("```sh skip-test\naws sts get-caller-identity\n```\n\n```json expect\n{\"Account\": \"…\"}\n```\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Blocks) != 1 || !doc.Blocks[0].Skip || doc.Blocks[0].Expect == nil || len(doc.Run()) != 0 {
		t.Errorf("blocks = %+v", doc.Blocks)
	}
}

func TestParseCRLF(t *testing.T) {
	doc, err := Parse("doc.md", []byte("```sh\r\necho hi\r\n```\r\n```text expect\r\nhi\r\n```\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Blocks) != 1 || doc.Blocks[0].Code != "echo hi\n" || doc.Blocks[0].Expect == nil {
		t.Errorf("blocks = %+v", doc.Blocks)
	}
}

// TestUnfenced: the lines of fenced blocks are emptied, fences included, as Parse reads fences (a longer fence is
// closed only by one at least as long; tildes and info strings), and the other lines are kept where they were.
func TestUnfenced(t *testing.T) {
	doc := "# Title\n" +
		"````md\n" +
		"```sh\n" +
		"# not a heading\n" +
		"```\n" +
		"````\n" +
		"text [link](a.md)\n" +
		"~~~ json expect\n" +
		"{}\n" +
		"~~~\n" +
		"## After"
	want := []string{"# Title", "", "", "", "", "", "text [link](a.md)", "", "", "", "## After"}
	if got := Unfenced(doc); !slices.Equal(got, want) {
		t.Errorf("Unfenced:\n got %q\nwant %q", got, want)
	}
}
