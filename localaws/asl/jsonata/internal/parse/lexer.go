package parse

import (
	"math"
	"strconv"
	"unicode/utf16"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// The scanner turns the source into tokens. It works on UTF-16 code units, because JSONata is JavaScript: the
// positions it reports count UTF-16 units, and a \uXXXX escape may be half of a surrogate pair.
//
// It is a small state machine driven by the parser: each call to scan says which state the grammar is in, "an
// operand may start here" or "an operator may follow here". The only token whose meaning depends on it is '/', the
// start of a regex literal in the first state and the division operator in the second. JSONata decides the state
// by grammatical role, not by the previous token alone (the '(' of a block is followed by the operator state, the
// '(' of a call by the operand state), so the parser, which knows the role, passes it.

// tokKind is what a token is.
type tokKind uint8

const (
	tokEnd     tokKind = iota // the end of the source
	tokOp                     // an operator or punctuation, in text (also the keywords and, or, in)
	tokName                   // a field name, plain or `quoted`
	tokVar                    // $name: text is the name without $
	tokString                 // a string literal: text is its value
	tokNumber                 // num
	tokLiteral                // true, false, null: lit
	tokRegex                  // re
)

// token is one token. end is the position just after it, which is how JSONata positions tokens and nodes.
type token struct {
	kind tokKind
	text string
	num  float64
	lit  any
	re   *value.Regex
	end  int
}

// display is the token as JSONata writes it in an error's token: the value JavaScript would turn into a string.
func (t *token) display() string {
	switch t.kind {
	case tokEnd:
		return "(end)"
	case tokNumber:
		return value.NumberText(t.num)
	case tokLiteral:
		return tokenText(t.lit)
	case tokRegex:
		return tokenText(t.re)
	}
	return t.text
}

// scanner holds the source and the position of the next code unit to read.
type scanner struct {
	src []uint16
	pos int
}

// isBlank is JSONata's white space: only these five characters (a form feed is part of a name).
func isBlank(c uint16) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' }

// isPunct reports whether c is a character JSONata treats as an operator on its own; such a character also ends a
// name. '!' and '~' are among them although only != and ~> are operators: alone they are unknown operators.
func isPunct(c uint16) bool {
	switch c {
	case '.', '[', ']', '{', '}', '(', ')', ',', '@', '#', ';', ':', '?', '+', '-', '*', '/', '%', '|', '=', '<',
		'>', '^', '&', '!', '~':
		return true
	}
	return false
}

// pairs are the two-character operators, each under its first character.
var pairs = map[[2]uint16]string{
	{'.', '.'}: "..", {':', '='}: ":=", {'!', '='}: "!=", {'>', '='}: ">=", {'<', '='}: "<=", {'*', '*'}: "**",
	{'~', '>'}: "~>",
}

func (s *scanner) text(from, to int) string { return string(utf16.Decode(s.src[from:to])) }

// unitAt is the code unit at i, and whether there is one.
func (s *scanner) unitAt(i int) (uint16, bool) {
	if i < 0 || i >= len(s.src) {
		return 0, false
	}
	return s.src[i], true
}

// skip passes white space and /* comments */, however many follow each other.
func (s *scanner) skip() {
	for {
		for s.pos < len(s.src) && isBlank(s.src[s.pos]) {
			s.pos++
		}
		if c, _ := s.unitAt(s.pos); c != '/' {
			return
		}
		if c, _ := s.unitAt(s.pos + 1); c != '*' {
			return
		}
		start := s.pos
		closed := -1
		for i := start + 2; i+1 < len(s.src); i++ {
			if s.src[i] == '*' && s.src[i+1] == '/' {
				closed = i
				break
			}
		}
		if closed < 0 {
			fail("S0106", start, "")
		}
		s.pos = closed + 2
	}
}

// scan reads the next token. operand is the state: true where an operand may start (so / opens a regex).
func (s *scanner) scan(operand bool) token {
	s.skip()
	if s.pos >= len(s.src) {
		return token{kind: tokEnd, end: len(s.src)}
	}
	c := s.src[s.pos]
	switch {
	case c == '/' && operand:
		return s.regex()
	case c == '"' || c == '\'':
		return s.quoted(c)
	case c == '`':
		return s.backquoted()
	case c >= '0' && c <= '9':
		return s.number()
	}
	if d, ok := s.unitAt(s.pos + 1); ok {
		if op, ok := pairs[[2]uint16{c, d}]; ok {
			s.pos += 2
			return token{kind: tokOp, text: op, end: s.pos}
		}
	}
	if isPunct(c) {
		s.pos++
		return token{kind: tokOp, text: string(rune(c)), end: s.pos}
	}
	return s.word()
}

// word reads a name, a $variable, a keyword (and, or, in) or a literal (true, false, null): everything up to white
// space or an operator character.
func (s *scanner) word() token {
	start := s.pos
	for s.pos < len(s.src) && !isBlank(s.src[s.pos]) && !isPunct(s.src[s.pos]) {
		s.pos++
	}
	if s.src[start] == '$' {
		return token{kind: tokVar, text: s.text(start+1, s.pos), end: s.pos}
	}
	w := s.text(start, s.pos)
	t := token{kind: tokName, text: w, end: s.pos}
	switch w {
	case "and", "or", "in":
		t.kind = tokOp
	case "true":
		t.kind, t.lit = tokLiteral, true
	case "false":
		t.kind, t.lit = tokLiteral, false
	case "null":
		t.kind, t.lit = tokLiteral, value.Null
	}
	return t
}

// backquoted reads a `name`, which may hold any character but a backquote.
func (s *scanner) backquoted() token {
	for i := s.pos + 1; i < len(s.src); i++ {
		if s.src[i] == '`' {
			name := s.text(s.pos+1, i)
			s.pos = i + 1
			return token{kind: tokName, text: name, end: s.pos}
		}
	}
	s.pos = len(s.src)
	fail("S0105", s.pos, "")
	panic("unreachable")
}

// jsonEscapes are the one-character escapes of a string literal (JSON's).
var jsonEscapes = map[uint16]uint16{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// quoted reads a string literal from its opening quote (either kind; the other kind needs no escape inside).
func (s *scanner) quoted(quote uint16) token {
	var out []uint16
	i := s.pos + 1
	for ; i < len(s.src); i++ {
		c := s.src[i]
		switch {
		case c == quote:
			s.pos = i + 1
			return token{kind: tokString, text: string(utf16.Decode(out)), end: s.pos}
		case c != '\\':
			out = append(out, c)
			continue
		}
		i++
		e, ok := s.unitAt(i)
		if r, known := jsonEscapes[e]; ok && known {
			out = append(out, r)
			continue
		}
		if !ok || e != 'u' {
			tok := ""
			if ok {
				tok = s.text(i, i+1)
			}
			fail("S0103", i, tok)
		}
		// \u and four hex digits; like JSONata, fewer digits are taken at the very end of the source, and the
		// scan then moves on by four anyway (so an unterminated string reports a position past the end)
		digits := s.src[i+1 : min(i+5, len(s.src))]
		u, good := hexValue(digits)
		if !good {
			fail("S0104", i, "")
		}
		out = append(out, u)
		i += 4
	}
	s.pos = i
	fail("S0101", i, "")
	panic("unreachable")
}

// hexValue reads one or more hex digits.
func hexValue(ds []uint16) (uint16, bool) {
	if len(ds) == 0 {
		return 0, false
	}
	var v uint16
	for _, c := range ds {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | (c - '0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | (c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | (c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return v, true
}

// number reads a number literal: an integer part without leading zeros, an optional fraction (a dot followed by a
// digit: 1.a is 1 then .a) and an optional exponent (only when digits follow it: 1e is 1 then the name e).
func (s *scanner) number() token {
	isDigit := func(i int) bool { c, ok := s.unitAt(i); return ok && c >= '0' && c <= '9' }
	i := s.pos + 1
	if s.src[s.pos] != '0' {
		for isDigit(i) {
			i++
		}
	}
	if c, _ := s.unitAt(i); c == '.' && isDigit(i+1) {
		for i += 2; isDigit(i); i++ {
		}
	}
	if c, _ := s.unitAt(i); c == 'e' || c == 'E' {
		j := i + 1
		if c, _ := s.unitAt(j); c == '+' || c == '-' {
			j++
		}
		if isDigit(j) {
			for i = j; isDigit(i); i++ {
			}
		}
	}
	lexeme := s.text(s.pos, i)
	n, _ := strconv.ParseFloat(lexeme, 64)
	if math.IsInf(n, 0) {
		fail("S0102", s.pos, lexeme)
	}
	s.pos = i
	return token{kind: tokNumber, num: n, end: s.pos}
}

// regex reads a regex literal from its opening slash. The closing slash is the first one outside brackets that is
// not escaped (preceded by an even number of backslashes). JSONata counts (, [ and { as opening brackets and ), ]
// and } as closing ones, unless a backslash precedes them, without matching kinds: /a{/ is unterminated. The flags
// i and m may follow.
func (s *scanner) regex() token {
	start := s.pos + 1
	depth := 0
	for i := start; i < len(s.src); i++ {
		c := s.src[i]
		escaped := s.src[i-1] == '\\'
		if c == '/' && depth == 0 && evenBackslashes(s.src[:i]) {
			if i == start {
				fail("S0301", i, "")
			}
			pattern := s.text(start, i)
			j := i + 1
			for j < len(s.src) && (s.src[j] == 'i' || s.src[j] == 'm') {
				j++
			}
			flags := s.text(i+1, j)
			s.pos = j
			re, err := compileRegex(pattern, flags, j)
			if err != nil {
				panic(failure{err.(*value.Error)})
			}
			return token{kind: tokRegex, re: re, end: j}
		}
		switch {
		case escaped:
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
		}
	}
	s.pos = len(s.src)
	fail("S0302", s.pos, "")
	panic("unreachable")
}

// evenBackslashes reports whether the units end with an even number (maybe none) of backslashes.
func evenBackslashes(units []uint16) bool {
	n := 0
	for i := len(units) - 1; i >= 0 && units[i] == '\\'; i-- {
		n++
	}
	return n%2 == 0
}
