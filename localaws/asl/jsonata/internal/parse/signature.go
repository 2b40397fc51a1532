package parse

import (
	"strconv"
	"strings"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/ast"
	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// SignatureError is the code of the error for a signature whose modifiers JSONata cannot compile (JSONata lets
// JavaScript's RegExp throw its SyntaxError, "Nothing to repeat", which has no code): <n++>, <n?+>, <n-+>.
const SignatureError = "S0403"

// Signature parses a function signature such as "<s-nn?:s>", "<a<n>:n>", "<s-(sf)(sf)n?:s>" or "<f<s:o>…>": the
// types b n s l a o f j x, a (…) choice of simple types, a <…> subtype on a or f, and the modifiers ? (optional),
// + (one or more) and - (the context item when the argument is missing) on the type before them; other characters
// are ignored, and so are modifiers before the first type. The result type after ':' is recorded (JSONata ignores
// it).
//
// The errors are S0401 (a <…> subtype on a type other than a or f) and S0402 (a choice holding a subtype), with
// Position the offset of the offending character in src and Value the type (S0401) or the choice's text (S0402),
// and SignatureError for what JSONata lets JavaScript refuse.
func Signature(src string) (*ast.Signature, error) {
	s := []rune(src)
	sig := &ast.Signature{Source: src}
	// JSONata checks arguments with a regular expression made of one class per parameter followed by its modifiers
	// as quantifiers ('-' counting as '?'); JavaScript refuses that expression unless each parameter's modifiers
	// form a quantifier, possibly lazy. quantifiers keeps them, parameter by parameter.
	var quantifiers []string
	for i := 1; i < len(s); i++ {
		c := s[i]
		last := len(sig.Params) - 1
		switch {
		case c == ':':
			sig.Result = signatureResult(s[i+1:])
			return sig, nil
		case strings.ContainsRune("snblaofjx", c):
			sig.Params = append(sig.Params, ast.Param{Type: byte(c)})
			quantifiers = append(quantifiers, "")
		case c == '(':
			choice, end := enclosed(s, i, '(', ')')
			if strings.ContainsRune(choice, '<') {
				return nil, &value.Error{Code: "S0402", Position: i, Value: choice}
			}
			if r := badRange(choice + "m"); r != "" {
				// JSONata makes the character class [<choice>m] of the choice, which JavaScript refuses when it
				// holds a range out of order ([ns-:n>m])
				return nil, &value.Error{Code: SignatureError, Position: i, Value: src,
					Message: "Invalid function signature " + src + ": the choice (" + choice + ") holds the range " +
						strconv.Quote(r) + ", which is out of order"}
			}
			sig.Params = append(sig.Params, ast.Param{Type: '(', Choice: choice})
			quantifiers = append(quantifiers, "")
			i = end
		case c == '<':
			if last < 0 || (sig.Params[last].Type != 'a' && sig.Params[last].Type != 'f') {
				var typ any
				if last >= 0 {
					typ = paramType(sig.Params[last])
				}
				return nil, &value.Error{Code: "S0401", Position: i, Value: typ}
			}
			sub, end := enclosed(s, i, '<', '>')
			sig.Params[last].Sub = sub
			i = end
		case (c == '-' || c == '?' || c == '+') && last >= 0:
			p := &sig.Params[last]
			q := '?'
			switch c {
			case '-':
				p.Context = true
			case '?':
				p.Optional = true
			default:
				p.OneOrMore = true
				q = '+'
			}
			quantifiers[last] += string(q)
			switch quantifiers[last] {
			case "?", "+", "??", "+?":
			default:
				return nil, &value.Error{Code: SignatureError, Position: i, Value: src,
					Message: "Invalid function signature " + src + ": the modifiers " + quantifiers[last] +
						" cannot be combined"}
			}
		}
	}
	return sig, nil
}

// paramType writes a parameter's type as JSONata names it: its letter, or (…) for a choice.
func paramType(p ast.Param) string {
	if p.Type == '(' {
		return "(" + p.Choice + ")"
	}
	return string(rune(p.Type))
}

// enclosed returns what lies between the bracket open at s[at] and its matching close (the rest of s when it is
// not closed), and the index of that close (len(s) when missing).
func enclosed(s []rune, at int, open, close rune) (string, int) {
	depth := 1
	for i := at + 1; i < len(s); i++ {
		switch s[i] {
		case close:
			if depth--; depth == 0 {
				return string(s[at+1 : i]), i
			}
		case open:
			depth++
		}
	}
	return string(s[at+1:]), len(s)
}

// signatureResult reads the result type after ':' (up to the closing '>'), leniently: nil when there is no type.
func signatureResult(s []rune) *ast.Param {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case 's', 'n', 'b', 'l', 'o', 'a', 'f', 'j', 'x':
			p := &ast.Param{Type: byte(s[i])}
			if i+1 < len(s) && s[i+1] == '<' {
				depth := 0
				for j := i + 1; j < len(s); j++ {
					if s[j] == '<' {
						depth++
					} else if s[j] == '>' {
						depth--
						if depth == 0 {
							p.Sub = string(s[i+2 : j])
							break
						}
					}
				}
			}
			return p
		case '(':
			for j := i + 1; j < len(s); j++ {
				if s[j] == ')' {
					return &ast.Param{Type: '(', Choice: string(s[i+1 : j])}
				}
			}
			return nil
		case '>':
			return nil
		}
	}
	return nil
}

// badRange returns the first range out of order (z-a) in the character class whose content is class (up to its
// first ']'), or "".
func badRange(class string) string {
	rs := []rune(class)
	for i := 0; i < len(rs) && rs[i] != ']'; i++ {
		if i+2 < len(rs) && rs[i+1] == '-' && rs[i+2] != ']' {
			if rs[i] > rs[i+2] {
				return string(rs[i : i+3])
			}
			i += 2
		}
	}
	return ""
}
