// Package intrinsic parses and evaluates the Amazon States Language intrinsic functions (States.Format,
// States.JsonToString, States.Array*, States.Hash, States.MathAdd, States.UUID, …) used in the values of ".$"
// fields. Parse turns the text into an immutable *Call; Eval computes it with paths resolved by the caller.
package intrinsic

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Error is a failure while evaluating an intrinsic function; the engine reports it as States.IntrinsicFailure.
type Error struct {
	Func string
	Msg  string
}

// Error returns the message.
func (e *Error) Error() string { return e.Msg }

// argKind is the kind of one argument of a call.
type argKind int

const (
	argString argKind = iota
	argNumber
	argBool
	argNull
	argPath
	argCall
)

// Arg is one argument of an intrinsic call.
type Arg struct {
	kind argKind
	str  string      // string literal (unescaped) or path
	raw  string      // string literal as written, escapes kept (States.Format needs them)
	num  json.Number // number literal
	b    bool
	call *Call
}

// Call is a parsed intrinsic function call such as States.Format('{}', $.a).
type Call struct {
	Name string
	Args []Arg
}

// Is reports whether s looks like an intrinsic function call (starts with "States.").
func Is(s string) bool { return strings.HasPrefix(strings.TrimSpace(s), "States.") }

// Parse parses an intrinsic function call.
func Parse(src string) (*Call, error) {
	p := &parser{s: strings.TrimSpace(src)}
	c, err := p.call()
	if err != nil {
		return nil, fmt.Errorf("intrinsic %q: %w", src, err)
	}
	p.space()
	if p.i != len(p.s) {
		return nil, fmt.Errorf("intrinsic %q: unexpected text at offset %d", src, p.i)
	}
	if _, ok := funcs[c.Name]; !ok {
		return nil, fmt.Errorf("intrinsic %q: unknown function %s", src, c.Name)
	}
	return c, nil
}

type parser struct {
	s string
	i int
}

func (p *parser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n') {
		p.i++
	}
}

func (p *parser) call() (*Call, error) {
	start := p.i
	for p.i < len(p.s) && p.s[p.i] != '(' {
		p.i++
	}
	if p.i >= len(p.s) {
		return nil, fmt.Errorf("expected (")
	}
	name := strings.TrimSpace(p.s[start:p.i])
	if !strings.HasPrefix(name, "States.") {
		return nil, fmt.Errorf("function name %q must start with States.", name)
	}
	p.i++ // (
	c := &Call{Name: name}
	p.space()
	if p.i < len(p.s) && p.s[p.i] == ')' {
		p.i++
		return c, nil
	}
	for {
		p.space()
		a, err := p.arg()
		if err != nil {
			return nil, err
		}
		c.Args = append(c.Args, a)
		p.space()
		if p.i >= len(p.s) {
			return nil, fmt.Errorf("unterminated call to %s", name)
		}
		if p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.s[p.i] == ')' {
			p.i++
			return c, nil
		}
		return nil, fmt.Errorf("unexpected %q at offset %d", p.s[p.i], p.i)
	}
}

func (p *parser) arg() (Arg, error) {
	if p.i >= len(p.s) {
		return Arg{}, fmt.Errorf("missing argument")
	}
	switch c := p.s[p.i]; {
	case c == '\'':
		p.i++
		var b, raw strings.Builder
		for {
			if p.i >= len(p.s) {
				return Arg{}, fmt.Errorf("unterminated string literal")
			}
			ch := p.s[p.i]
			if ch == '\\' && p.i+1 < len(p.s) {
				raw.WriteByte(ch)
				raw.WriteByte(p.s[p.i+1])
				b.WriteByte(p.s[p.i+1])
				p.i += 2
				continue
			}
			if ch == '\'' {
				p.i++
				break
			}
			raw.WriteByte(ch)
			b.WriteByte(ch)
			p.i++
		}
		return Arg{kind: argString, str: b.String(), raw: raw.String()}, nil
	case c == '$':
		start := p.i
		depth := 0
		var quote byte
		for p.i < len(p.s) {
			ch := p.s[p.i]
			if quote != 0 {
				if ch == quote {
					quote = 0
				}
				p.i++
				continue
			}
			if ch == '\'' || ch == '"' {
				quote = ch
			} else if ch == '[' || ch == '(' {
				depth++
			} else if ch == ']' || ch == ')' {
				if depth == 0 {
					break
				}
				depth--
			} else if (ch == ',' || ch == ' ') && depth == 0 {
				break
			}
			p.i++
		}
		return Arg{kind: argPath, str: p.s[start:p.i]}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		start := p.i
		p.i++
		for p.i < len(p.s) && strings.IndexByte("0123456789.eE+-", p.s[p.i]) >= 0 {
			p.i++
		}
		lit := p.s[start:p.i]
		var n json.Number
		if err := json.Unmarshal([]byte(lit), &n); err != nil {
			return Arg{}, fmt.Errorf("malformed number %q", lit)
		}
		return Arg{kind: argNumber, num: n}, nil
	case strings.HasPrefix(p.s[p.i:], "true"):
		p.i += 4
		return Arg{kind: argBool, b: true}, nil
	case strings.HasPrefix(p.s[p.i:], "false"):
		p.i += 5
		return Arg{kind: argBool}, nil
	case strings.HasPrefix(p.s[p.i:], "null"):
		p.i += 4
		return Arg{kind: argNull}, nil
	case strings.HasPrefix(p.s[p.i:], "States."):
		c, err := p.call()
		if err != nil {
			return Arg{}, err
		}
		if _, ok := funcs[c.Name]; !ok {
			return Arg{}, fmt.Errorf("unknown function %s", c.Name)
		}
		return Arg{kind: argCall, call: c}, nil
	}
	return Arg{}, fmt.Errorf("unexpected %q at offset %d", p.s[p.i], p.i)
}

// Paths returns every path argument of the call and its nested calls, for validation.
func (c *Call) Paths() []string {
	var out []string
	for _, a := range c.Args {
		switch a.kind {
		case argPath:
			out = append(out, a.str)
		case argCall:
			out = append(out, a.call.Paths()...)
		}
	}
	return out
}

// Env supplies what evaluation needs from the engine.
type Env struct {
	// Resolve evaluates a path argument ($... against the state input, $$... against the context object).
	Resolve func(path string) (any, error)
	// NewUUID returns a new random UUID for States.UUID.
	NewUUID func() string
	// RandomInt returns an integer in [lo, hi) for States.MathRandom.
	RandomInt func(lo, hi int64) int64
}

// Eval evaluates the call.
func (c *Call) Eval(env Env) (any, error) {
	args := make([]any, len(c.Args))
	for i, a := range c.Args {
		switch a.kind {
		case argString:
			args[i] = a.str
		case argNumber:
			args[i] = a.num
		case argBool:
			args[i] = a.b
		case argNull:
			args[i] = nil
		case argPath:
			v, err := env.Resolve(a.str)
			if err != nil {
				return nil, err
			}
			args[i] = v
		case argCall:
			v, err := a.call.Eval(env)
			if err != nil {
				return nil, err
			}
			args[i] = v
		}
	}
	return funcs[c.Name](c, args, env)
}
