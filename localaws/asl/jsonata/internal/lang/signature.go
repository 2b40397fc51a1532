package lang

import (
	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/ast"
	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/parse"
	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// signature is a function signature ready to validate arguments.
type signature struct {
	params []sigParam
}

// sigParam is one parameter: the symbols it accepts and how many arguments it takes.
type sigParam struct {
	typ      byte   // the symbol; '(' for a choice
	accepts  string // the symbols an argument may have (m: missing)
	min, max int    // how many arguments (max -1: any number)
	context  bool   // the context item stands in for a missing argument
	base     string // the symbols the context item may have
	sub      string // the <…> subtype of an array
}

// anySymbol lists every symbol, m included.
const anySymbol = "asnblfom"

// parseSignature compiles a signature; an empty source is no signature (nil).
func parseSignature(src string) (*signature, error) {
	if src == "" {
		return nil, nil
	}
	s, err := parse.Signature(src)
	if err != nil {
		return nil, err
	}
	return compileSignature(s), nil
}

// compileSignature turns a parsed signature into its matcher.
func compileSignature(s *ast.Signature) *signature {
	sig := &signature{params: make([]sigParam, 0, len(s.Params))}
	for _, p := range s.Params {
		sp := sigParam{typ: p.Type, min: 1, max: 1, sub: p.Sub}
		switch p.Type {
		case 's', 'n', 'b', 'l', 'o':
			sp.accepts = string(p.Type) + "m"
		case 'a', 'x':
			sp.accepts = anySymbol
		case 'f':
			sp.accepts = "f"
		case 'j':
			sp.accepts = "asnblom"
		case '(':
			sp.accepts = p.Choice + "m"
		default:
			sp.accepts = string(p.Type)
		}
		if p.Context {
			sp.context, sp.base = true, sp.accepts
			sp.min = 0
		}
		if p.Optional {
			sp.min = 0
		}
		if p.OneOrMore {
			sp.max = -1
		}
		sig.params = append(sig.params, sp)
	}
	return sig
}

// match matches the argument symbols sup against params[pi:k] from position si, trying longer matches first (as
// JSONata's regular expression does); counts receives how many symbols each parameter took. With full, the match
// must use all of sup.
func (s *signature) match(sup []byte, pi, k, si int, counts []int, full bool) (int, bool) {
	if pi == k {
		if full && si != len(sup) {
			return 0, false
		}
		return si, true
	}
	p := &s.params[pi]
	n := 0
	for si+n < len(sup) && (p.max < 0 || n < p.max) && containsByte(p.accepts, sup[si+n]) {
		n++
	}
	for ; n >= p.min; n-- {
		counts[pi] = n
		if end, ok := s.match(sup, pi+1, k, si+n, counts, full); ok {
			return end, true
		}
	}
	return 0, false
}

func containsByte(s string, c byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return true
		}
	}
	return false
}

// arrayTypes names the subtypes of an array parameter in the message of T0412.
var arrayTypes = map[string]string{"a": "arrays", "b": "booleans", "f": "functions", "n": "numbers", "o": "objects", "s": "strings"}

// validate checks arguments against the signature and returns them as the function receives them: the context item
// for a missing '-' argument, single values wrapped into arrays for an a parameter.
func (s *signature) validate(args []any, context any) ([]any, error) {
	sup := make([]byte, len(args))
	for i, a := range args {
		sup[i] = typeSymbol(a)
	}
	counts := make([]int, len(s.params))
	if _, ok := s.match(sup, 0, len(s.params), 0, counts, true); !ok {
		return nil, s.mismatch(args, sup)
	}
	out := make([]any, 0, len(s.params))
	ai := 0
	for pi := range s.params {
		p := &s.params[pi]
		if counts[pi] == 0 {
			if p.context {
				if !containsByte(p.base, typeSymbol(context)) {
					return nil, &value.Error{Code: "T0411", Value: context, Index: ai + 1}
				}
				out = append(out, context)
				continue
			}
			out = append(out, argAt(args, ai))
			ai++
			continue
		}
		for range counts[pi] {
			arg := argAt(args, ai)
			if p.typ == 'a' && arg != nil {
				arr, isArr := arg.(*value.Array)
				if p.sub != "" {
					ok := true
					if !isArr {
						ok = string(typeSymbol(arg)) == p.sub
					} else if len(arr.Items) > 0 {
						first := typeSymbol(arr.Items[0])
						ok = first == p.sub[0]
						for _, x := range arr.Items {
							if typeSymbol(x) != first {
								ok = false
								break
							}
						}
					}
					if !ok {
						return nil, &value.Error{Code: "T0412", Value: arg, Index: ai + 1, Type: arrayTypes[p.sub]}
					}
				}
				if !isArr {
					arg = &value.Array{Items: []any{arg}}
				}
			}
			out = append(out, arg)
			ai++
		}
	}
	return out, nil
}

func argAt(args []any, i int) any {
	if i < len(args) {
		return args[i]
	}
	return nil
}

// mismatch is the T0410 error of arguments that do not match: it names the first argument past the longest prefix of
// the parameters that does match.
func (s *signature) mismatch(args []any, sup []byte) error {
	good := 0
	counts := make([]int, len(s.params))
	for k := 1; k <= len(s.params); k++ {
		end, ok := s.match(sup, 0, k, 0, counts, false)
		if !ok {
			break
		}
		good = end
	}
	return &value.Error{Code: "T0410", Value: argAt(args, good), Index: good + 1}
}
