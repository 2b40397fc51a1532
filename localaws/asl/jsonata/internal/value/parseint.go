package value

import (
	"strings"
	"unicode"
)

// ParseInt reads an integer at the start of s as JavaScript's parseInt(s, 10) does: white space, then a sign, then
// decimal digits, up to the first other character. ok is false when there are no digits (parseInt's NaN); "-0" is
// -0, as in JavaScript.
func ParseInt(s string) (n float64, ok bool) {
	s = strings.TrimLeftFunc(s, isJSSpace)
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	digits := 0
	for digits < len(s) && s[digits] >= '0' && s[digits] <= '9' {
		n = n*10 + float64(s[digits]-'0')
		digits++
	}
	if digits == 0 {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// isJSSpace reports whether r is white space to JavaScript (ECMAScript's StrWhiteSpaceChar): Unicode's white space
// except U+0085 (next line), and the byte order mark U+FEFF.
func isJSSpace(r rune) bool {
	return r == '\uFEFF' || r != '\u0085' && unicode.IsSpace(r)
}
