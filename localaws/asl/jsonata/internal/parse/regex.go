package parse

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// RegexError is the code of the error for a regex literal that is not a valid JavaScript pattern (JSONata lets
// JavaScript's RegExp throw its SyntaxError, which has no code) or that uses what Go's regexp (RE2) lacks:
// look-around, back references. The message says which.
const RegexError = "S0303"

// compileRegex translates a JavaScript regex literal's pattern and flags into Go's syntax and compiles it. position is
// the position after the literal (for errors).
func compileRegex(pattern, flags string, position int) (*value.Regex, error) {
	translated, err := translateRegex(pattern)
	if flags == "ii" || flags == "mm" || len(flags) > 2 {
		err = fmt.Errorf("invalid flags %q (a flag given twice)", flags)
	}
	if err == nil {
		prefix := ""
		if flags != "" {
			prefix = "(?" + flags + ")"
		}
		var re *regexp.Regexp
		re, err = regexp.Compile(prefix + translated)
		if err == nil {
			return &value.Regex{Source: pattern, Flags: flags, Pattern: re}, nil
		}
		err = fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	return nil, &value.Error{
		Code:     RegexError,
		Position: position,
		Token:    "/" + pattern + "/" + flags,
		Message:  "Regular expression /" + pattern + "/" + flags + " cannot be used: " + err.Error(),
	}
}

// jsSpace is the class of JavaScript's \s (white space and line terminators), as the inside of a character class.
const jsSpace = `\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}`

// translateRegex rewrites a JavaScript pattern (without the u, v or s flags, which JSONata does not accept) in Go's
// syntax: named groups (?<n>…) as (?P<n>…), \s and . with JavaScript's sets of characters, \uXXXX (and surrogate
// pairs) as \x{…}, identity escapes as literals, [^] and [] as the classes they are. Look-around and back references,
// which RE2 lacks, are errors that say so, as are the patterns JavaScript refuses and RE2 would accept (a quantifier
// after ^, $, \b or \B). Two differences remain: \S inside a class is RE2's (not \v nor Unicode spaces), and with
// the m flag ^ and $ match at \n only (JavaScript: also at \r, U+2028, U+2029).
func translateRegex(p string) (string, error) {
	src := []rune(p)
	var b strings.Builder
	inClass := false
	classStart := false // just after [ or [^
	// assertion is set after ^, $, \b or \B: JavaScript refuses a quantifier there ("Nothing to repeat"), RE2 not.
	assertion := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		if assertion && !inClass && isQuantifier(src, i) {
			return "", fmt.Errorf("nothing to repeat before %q", string(c))
		}
		assertion = !inClass && (c == '^' || c == '$' || c == '\\' && i+1 < len(src) && (src[i+1] == 'b' || src[i+1] == 'B'))
		switch {
		case c == '\\':
			if i+1 >= len(src) {
				return "", fmt.Errorf("\\ at end of pattern")
			}
			i++
			e := src[i]
			switch {
			case e == 'd' || e == 'D' || e == 'w' || e == 'W':
				b.WriteRune('\\')
				b.WriteRune(e)
			case e == 's':
				if inClass {
					b.WriteString(jsSpace)
				} else {
					b.WriteString("[" + jsSpace + "]")
				}
			case e == 'S':
				if inClass {
					// RE2's \S, which differs from JavaScript's on \v and Unicode spaces only: a class cannot
					// hold the complement of another
					b.WriteString(`\S`)
				} else {
					b.WriteString("[^" + jsSpace + "]")
				}
			case e == 'b' || e == 'B':
				if inClass {
					if e == 'b' {
						b.WriteString(`\x08`)
					} else {
						b.WriteRune('B')
					}
				} else {
					b.WriteRune('\\')
					b.WriteRune(e)
				}
			case e == 'n' || e == 'r' || e == 't' || e == 'f' || e == 'v':
				b.WriteRune('\\')
				b.WriteRune(e)
			case e == '0' && (i+1 >= len(src) || src[i+1] < '0' || src[i+1] > '9'):
				b.WriteString(`\x00`)
			case e >= '1' && e <= '9':
				if inClass {
					return "", fmt.Errorf("octal escape \\%c is not supported", e)
				}
				return "", fmt.Errorf("back reference \\%c is not supported (Go's regexp, RE2, has no back references)", e)
			case e == 'k' && i+1 < len(src) && src[i+1] == '<':
				return "", fmt.Errorf("back reference \\k<…> is not supported (Go's regexp, RE2, has no back references)")
			case e == 'c' && i+1 < len(src) && isASCIILetter(src[i+1]):
				i++
				fmt.Fprintf(&b, `\x{%x}`, src[i]%32)
			case e == 'x' && i+2 < len(src) && isHex(src[i+1]) && isHex(src[i+2]):
				fmt.Fprintf(&b, `\x{%s}`, string(src[i+1:i+3]))
				i += 2
			case e == 'u' && i+4 < len(src) && isHex4(src[i+1:i+5]):
				cp, _ := strconv.ParseUint(string(src[i+1:i+5]), 16, 32)
				i += 4
				r := rune(cp)
				if utf16.IsSurrogate(r) && i+6 < len(src) && src[i+1] == '\\' && src[i+2] == 'u' && isHex4(src[i+3:i+7]) {
					lo, _ := strconv.ParseUint(string(src[i+3:i+7]), 16, 32)
					if d := utf16.DecodeRune(r, rune(lo)); d != '\uFFFD' {
						r = d
						i += 6
					}
				}
				fmt.Fprintf(&b, `\x{%x}`, r)
			case strings.ContainsRune("!\"#$%&'()*+,-./:;<=>?@[\\]^`{|}~", e):
				// an escaped punctuation character: itself (Go accepts the same escapes of punctuation)
				b.WriteRune('\\')
				b.WriteRune(e)
			default:
				// an identity escape: the character itself
				b.WriteString(quoteLiteral(e, inClass))
			}
			classStart = false
		case inClass:
			switch c {
			case ']':
				if classStart {
					// [] matches nothing, [^] anything
					s := b.String()
					b.Reset()
					if strings.HasSuffix(s, "[^") {
						b.WriteString(s[:len(s)-2] + `[\x{0}-\x{10FFFF}]`)
					} else {
						b.WriteString(s[:len(s)-1] + `[^\x{0}-\x{10FFFF}]`)
					}
				} else {
					b.WriteRune(']')
				}
				inClass = false
			case '[':
				b.WriteString(`\[`)
			default:
				b.WriteRune(c)
			}
			classStart = false
		case c == '[':
			inClass, classStart = true, true
			b.WriteRune('[')
			if i+1 < len(src) && src[i+1] == '^' {
				i++
				b.WriteRune('^')
			}
		case c == '(':
			if i+1 < len(src) && src[i+1] == '?' {
				rest := string(src[i+2:])
				switch {
				case strings.HasPrefix(rest, "="), strings.HasPrefix(rest, "!"):
					return "", fmt.Errorf("look-ahead (?%c…) is not supported (Go's regexp, RE2, has no look-around)", src[i+2])
				case strings.HasPrefix(rest, "<="), strings.HasPrefix(rest, "<!"):
					return "", fmt.Errorf("look-behind (?%s…) is not supported (Go's regexp, RE2, has no look-around)", rest[:2])
				case strings.HasPrefix(rest, "<"):
					b.WriteString("(?P<")
					i += 2
					continue
				case strings.HasPrefix(rest, ":"):
					b.WriteString("(?:")
					i += 2
					continue
				default:
					return "", fmt.Errorf("invalid group (?%s", firstRune(rest))
				}
			}
			b.WriteRune('(')
		case c == '.':
			b.WriteString(`[^\n\r\x{2028}\x{2029}]`)
		default:
			b.WriteRune(c)
		}
	}
	if inClass {
		return "", fmt.Errorf("missing terminating ] for character class")
	}
	return b.String(), nil
}

func quoteLiteral(r rune, inClass bool) string {
	if inClass && (r == '^' || r == '-' || r == ']' || r == '[' || r == '\\') {
		return `\` + string(r)
	}
	return regexp.QuoteMeta(string(r))
}

func firstRune(s string) string {
	for _, r := range s {
		return string(r)
	}
	return ""
}

func isASCIILetter(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }

func isHex(r rune) bool { return r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F' }

func isHex4(rs []rune) bool {
	if len(rs) < 4 {
		return false
	}
	for _, r := range rs[:4] {
		if !isHex(r) {
			return false
		}
	}
	return true
}

// isQuantifier reports whether a quantifier starts at src[i]: *, +, ?, or {n}, {n,}, {n,m} (a { that does not start
// one is a literal in JavaScript).
func isQuantifier(src []rune, i int) bool {
	switch src[i] {
	case '*', '+', '?':
		return true
	case '{':
		j := i + 1
		digits := func() bool {
			start := j
			for j < len(src) && src[j] >= '0' && src[j] <= '9' {
				j++
			}
			return j > start
		}
		if !digits() {
			return false
		}
		if j < len(src) && src[j] == ',' {
			j++
			digits()
		}
		return j < len(src) && src[j] == '}'
	}
	return false
}
