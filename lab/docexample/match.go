package docexample

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Wildcard matches any run of characters in a text expectation and in a JSON expectation's strings; the JSON string
// "…" alone matches any value.
const Wildcard = "…"

// Check compares a block's standard output with its expectation (MatchText or MatchJSON by kind).
func Check(e Expectation, stdout []byte) error {
	switch e.Kind {
	case KindText:
		return MatchText(e.Body, string(stdout))
	case KindJSON:
		return MatchJSON(e.Body, stdout)
	}
	return fmt.Errorf("unknown expectation kind %q", e.Kind)
}

// MatchText checks output against a text expectation: each non-blank expected line must match a line of the output,
// in order; other output lines may come between them. A line matches when it is equal to the expected line, where
// "…" in the expected line matches any run of characters (none included). Trailing blanks and carriage returns (an
// HTTP status line from curl -i ends in "\r") are ignored on both sides. The error names the first expected line
// that could not be matched and where the search for it started.
func MatchText(expected, output string) error {
	out := splitLines(output)
	pos := 0
	for i, want := range splitLines(expected) {
		if strings.TrimSpace(want) == "" {
			continue
		}
		re := linePattern(want)
		found := -1
		for j := pos; j < len(out); j++ {
			if re.MatchString(out[j]) {
				found = j
				break
			}
		}
		if found < 0 {
			where := "in the output"
			if pos > 0 {
				where = fmt.Sprintf("after output line %d (%q)", pos, out[pos-1])
			}
			if len(out) == 0 || (len(out) == 1 && out[0] == "") {
				where = "the output is empty"
			}
			return &TextMismatch{ExpectLine: i + 1, Want: want, After: pos, Msg: fmt.Sprintf("expected line %d %q not found %s", i+1, want, where)}
		}
		pos = found + 1
	}
	return nil
}

// TextMismatch is a text expectation line that the output does not have.
type TextMismatch struct {
	// ExpectLine is the line in the expect block, from 1; Want its text.
	ExpectLine int
	Want       string
	// After is how many output lines were consumed by the lines matched before it.
	After int
	Msg   string
}

// Error returns the message.
func (e *TextMismatch) Error() string { return e.Msg }

func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	return lines
}

// linePattern compiles an expected line: literal text, "…" for any run of characters, anchored at both ends.
func linePattern(want string) *regexp.Regexp {
	parts := strings.Split(want, Wildcard)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(`^` + strings.Join(parts, `.*`) + `$`)
}

// MatchJSON checks that output is one JSON value containing the expected value: an object must have every
// expected key with a matching value (other keys are allowed), an array must have as many elements as expected,
// matching one by one, numbers must be equal as numbers (1250 and 1.25e3 are), other values equal. The string "…"
// matches any value, and a string with "…" in it matches strings as a text line does. The error lists every
// difference with its path ($.failure.code), at most 20.
func MatchJSON(expected string, output []byte) error {
	want, err := decodeOne([]byte(expected))
	if err != nil {
		return fmt.Errorf("the expectation is not JSON: %w", err)
	}
	got, err := decodeOne(output)
	if err != nil {
		return fmt.Errorf("the output is not one JSON value: %w", err)
	}
	var diffs []string
	matchValue("$", want, got, &diffs)
	if len(diffs) == 0 {
		return nil
	}
	const maxDiffs = 20
	if len(diffs) > maxDiffs {
		diffs = append(diffs[:maxDiffs], fmt.Sprintf("… and %d more", len(diffs)-maxDiffs))
	}
	return &JSONMismatch{Diffs: diffs}
}

// JSONMismatch lists the differences between a JSON output and its expectation.
type JSONMismatch struct {
	Diffs []string
}

// Error lists the differences, one a line.
func (e *JSONMismatch) Error() string {
	return "the JSON output does not match:\n  " + strings.Join(e.Diffs, "\n  ")
}

func decodeOne(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty")
		}
		return nil, err
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("more after the first value (at byte %d)", d.InputOffset())
	}
	return v, nil
}

func validJSON(s string) error {
	_, err := decodeOne([]byte(s))
	return err
}

func matchValue(path string, want, got any, diffs *[]string) {
	if s, ok := want.(string); ok && s == Wildcard {
		return
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			*diffs = append(*diffs, fmt.Sprintf("%s: got %s, want an object", path, brief(got)))
			return
		}
		for _, k := range slices.Sorted(maps.Keys(w)) {
			p := path + "." + k
			if !simpleKey.MatchString(k) {
				p = path + "[" + strconv.Quote(k) + "]"
			}
			gv, ok := g[k]
			if !ok {
				*diffs = append(*diffs, fmt.Sprintf("%s: missing, want %s", p, brief(w[k])))
				continue
			}
			matchValue(p, w[k], gv, diffs)
		}
	case []any:
		g, ok := got.([]any)
		if !ok {
			*diffs = append(*diffs, fmt.Sprintf("%s: got %s, want an array", path, brief(got)))
			return
		}
		if len(g) != len(w) {
			*diffs = append(*diffs, fmt.Sprintf("%s: got %d elements, want %d", path, len(g), len(w)))
			return
		}
		for i := range w {
			matchValue(fmt.Sprintf("%s[%d]", path, i), w[i], g[i], diffs)
		}
	case string:
		g, ok := got.(string)
		if !ok || !(g == w || strings.Contains(w, Wildcard) && linePattern(w).MatchString(g)) {
			*diffs = append(*diffs, fmt.Sprintf("%s: got %s, want %s", path, brief(got), brief(w)))
		}
	case json.Number:
		g, ok := got.(json.Number)
		if !ok || !sameNumber(w, g) {
			*diffs = append(*diffs, fmt.Sprintf("%s: got %s, want %s", path, brief(got), w))
		}
	default: // bool, nil
		if got != want {
			*diffs = append(*diffs, fmt.Sprintf("%s: got %s, want %s", path, brief(got), brief(want)))
		}
	}
}

var simpleKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func sameNumber(a, b json.Number) bool {
	x, ok1 := new(big.Rat).SetString(string(a))
	y, ok2 := new(big.Rat).SetString(string(b))
	return ok1 && ok2 && x.Cmp(y) == 0
}

// brief renders a value for a message, cut at 80 characters.
func brief(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if r := []rune(s); len(r) > 80 {
		s = string(r[:79]) + "…"
	}
	return s
}
