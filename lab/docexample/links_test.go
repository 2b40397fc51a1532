package docexample_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/transferflow/orchestrator/lab/docexample"
)

// mdLink is a Markdown inline link or image: the target up to a closing parenthesis or a title.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// skippedDirs hold no documents of the repository's own: installs, builds, and test data copied from elsewhere.
var skippedDirs = map[string]bool{".git": true, "node_modules": true, "bin": true, ".aws-sam": true, "testdata": true}

// TestDocLinksResolve reads every Markdown file of the repository and fails on a link to a file of the repository that
// is not there, or to a heading (#anchor) that the target document does not have, as GitHub makes anchors of
// headings. Links to the web are not followed.
//
// It lives here, in a package whose tests are quick, rather than beside slower ones: it reads the repository's root,
// and go test keys its cached result on every entry of what it reads, the modification time of .git included, so
// any git command that writes the index (git status, the go command's version stamping) makes this package run again.
func TestDocLinksResolve(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (skippedDirs[d.Name()] || strings.HasPrefix(d.Name(), ".venv")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			docs = append(docs, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) < 10 {
		t.Fatalf("found %d Markdown files under %s: the walk is wrong", len(docs), root)
	}
	anchors := map[string]map[string]bool{} // document → its anchors, read once
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		a := headingAnchors(string(b))
		anchors[path] = a
		return a
	}
	links := 0
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, doc)
		for i, line := range strings.Split(stripCode(string(b)), "\n") {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				file, anchor, _ := strings.Cut(target, "#")
				path := doc
				if file != "" {
					path = filepath.Join(filepath.Dir(doc), filepath.FromSlash(file))
					if _, err := os.Stat(path); err != nil {
						t.Errorf("%s:%d: %s: no such file", rel, i+1, target)
						continue
					}
				}
				if anchor != "" && strings.HasSuffix(path, ".md") && !anchorsOf(path)[anchor] {
					t.Errorf("%s:%d: %s: no heading with that anchor", rel, i+1, target)
				}
			}
		}
	}
	t.Logf("%d links to the repository's files and headings in %d documents", links, len(docs))
	if links < 100 {
		t.Errorf("checked %d links in %d documents: the link pattern is wrong", links, len(docs))
	}
}

// stripCode blanks fenced code blocks and inline code spans, keeping the line count.
func stripCode(doc string) string {
	lines := docexample.Unfenced(doc)
	for i, l := range lines {
		lines[i] = inlineCode.ReplaceAllString(l, "``")
	}
	return strings.Join(lines, "\n")
}

var inlineCode = regexp.MustCompile("`[^`]*`")

// headingAnchors returns the anchors GitHub gives the headings of a Markdown document: the heading's text in lower
// case, without Markdown's marks and punctuation other than hyphens and underscores, spaces turned into hyphens; a
// repeated anchor gets -1, -2, … Explicit <a name="…"> and id="…" anchors count too.
func headingAnchors(doc string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range docexample.Unfenced(doc) {
		for _, m := range htmlAnchor.FindAllStringSubmatch(l, -1) {
			out[m[1]] = true
		}
		m := atxHeading.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		text := closingHashes.ReplaceAllString(strings.TrimSpace(m[1]), "")
		text = mdLinkText.ReplaceAllString(text, "$1") // [text](target) reads as text
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.M, r):
				b.WriteRune(r)
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			out[slug+"-"+strconv.Itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

var (
	htmlAnchor    = regexp.MustCompile(`<a (?:name|id)="([^"]+)"`)
	mdLinkText    = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	atxHeading    = regexp.MustCompile(`^ {0,3}#{1,6}(?:\s+(.*))?$`) // CommonMark: up to six #, then a space or the end
	closingHashes = regexp.MustCompile(`\s+#+$`)
)

// TestHeadingAnchors pins the slug rules on the kinds of headings these documents have.
func TestHeadingAnchors(t *testing.T) {
	doc := "# Title\n" +
		"## `local invoke`: `sam local invoke` without Docker\n" +
		"## Express workflows, StartSyncExecution and TestState\n" +
		"## Faults (`--fault`)\n" +
		"### Step 1 — the reserve, €\n" +
		"## Faults (`--fault`)\n" +
		"#operator = :true (a wrapped line, not a heading)\n" +
		"```sh\n# a comment in code, not a heading\n```\n" +
		"## [Linked](other.md) heading ##\n" +
		"<a name=\"explicit\"></a>\n"
	got := headingAnchors(doc)
	for _, want := range []string{"title", "local-invoke-sam-local-invoke-without-docker",
		"express-workflows-startsyncexecution-and-teststate",
		"faults---fault", "faults---fault-1", "step-1--the-reserve-", "linked-heading", "explicit"} {
		if !got[want] {
			t.Errorf("no anchor %q; have %v", want, got)
		}
	}
	for _, absent := range []string{"operator--true-a-wrapped-line-not-a-heading", "a-comment-in-code-not-a-heading"} {
		if got[absent] {
			t.Errorf("anchor %q from a line that is not a heading", absent)
		}
	}
}
