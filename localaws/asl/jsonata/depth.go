package jsonata

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	lib "github.com/blues/jsonata-go"
)

// MaxLambdaDepth is how deeply the functions an expression defines may call each other. The library evaluates a
// call by recursing on the Go stack, so an unbounded recursion ($f := function($x){ $f($x) }) would end the
// process; past this depth the evaluation fails instead (Step Functions bounds evaluations too).
const MaxLambdaDepth = 1000

// errTooDeep is the failure of an evaluation past MaxLambdaDepth.
var errTooDeep = fmt.Errorf("the functions of the expression call each other more than %d levels deep", MaxLambdaDepth)

// guardLambdas rewrites every function the expression defines (function(…){ body } or λ(…){ body }) so that its
// body counts the call depth: { ($__enter(); $__r := (body); $__leave(); $__r) }. ok is false when the expression
// defines none (it is evaluated as written).
func guardLambdas(src string) (string, bool) {
	var b strings.Builder
	found := false
	i := 0
	for i < len(src) {
		c := src[i]
		if c == '\'' || c == '"' || c == '`' {
			j := skipQuoted(src, i)
			b.WriteString(src[i:j])
			i = j
			continue
		}
		open, ok := lambdaBodyStart(src, i)
		if !ok {
			b.WriteByte(c)
			i++
			continue
		}
		end := matchingBrace(src, open)
		if end < 0 {
			return src, false // does not parse; the library reports it
		}
		inner, _ := guardLambdas(src[open+1 : end])
		b.WriteString(src[i:open])
		b.WriteString("{($__enter(); $__r := (")
		b.WriteString(inner)
		b.WriteString("); $__leave(); $__r)}")
		found = true
		i = end + 1
	}
	return b.String(), found
}

// signatureStart returns the index of the "<" opening the signature of a function defined at i, or false.
func signatureStart(src string, i int) (int, bool) {
	j, ok := afterParams(src, i)
	if !ok || j >= len(src) || src[j] != '<' {
		return 0, false
	}
	return j, true
}

// afterParams returns the index after the parameter list (and white space) of a function defined at i.
func afterParams(src string, i int) (int, bool) {
	var rest string
	switch {
	case strings.HasPrefix(src[i:], "function") && (i == 0 || !isIdent(src[i-1])):
		rest = src[i+len("function"):]
	case strings.HasPrefix(src[i:], "λ"):
		rest = src[i+len("λ"):]
	default:
		return 0, false
	}
	j := skipSpace(src, len(src)-len(rest))
	if j >= len(src) || src[j] != '(' {
		return 0, false
	}
	depth := 0
	for ; j < len(src); j++ {
		if src[j] == '(' {
			depth++
		} else if src[j] == ')' {
			depth--
			if depth == 0 {
				break
			}
		}
	}
	return skipSpace(src, j+1), true
}

// lambdaBodyStart returns the index of the "{" opening the body of a function defined at i ("function" or "λ",
// parameters, an optional signature), or false.
func lambdaBodyStart(src string, i int) (int, bool) {
	j, ok := afterParams(src, i)
	if !ok {
		return 0, false
	}
	if j < len(src) && src[j] == '<' { // a signature
		k := strings.IndexByte(src[j:], '>')
		if k < 0 {
			return 0, false
		}
		j = skipSpace(src, j+k+1)
	}
	if j >= len(src) || src[j] != '{' {
		return 0, false
	}
	return j, true
}

func isIdent(c byte) bool {
	return c == '_' || c == '$' || c >= 0x80 || unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c))
}

func skipSpace(s string, i int) int {
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			break
		}
		i += n
	}
	return i
}

// skipQuoted returns the index after the string literal (or backquoted name) starting at i.
func skipQuoted(s string, i int) int {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		if s[j] == '\\' && q != '`' {
			j++
			continue
		}
		if s[j] == q {
			return j + 1
		}
	}
	return len(s)
}

// matchingBrace returns the index of the "}" closing the "{" at open, skipping string literals, or -1.
func matchingBrace(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'', '"', '`':
			i = skipQuoted(s, i) - 1
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// depthFunctions returns the $__enter and $__leave of one evaluation.
func depthFunctions() (enter, leave interface{}) {
	depth := 0
	enter = callable("__enter", lib.Extension{Func: func() (bool, error) {
		depth++
		if depth > MaxLambdaDepth {
			return false, errTooDeep
		}
		return true, nil
	}})
	leave = callable("__leave", lib.Extension{Func: func() bool {
		depth--
		return true
	}})
	return enter, leave
}
