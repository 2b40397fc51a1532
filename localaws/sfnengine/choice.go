package sfnengine

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// evalRule evaluates a compiled Choice rule against the state's effective input.
func (x *execution) evalRule(sr *stateRun, c *rule, in any) (bool, *failure) {
	r := c.r
	switch {
	case c.and != nil:
		for _, s := range c.and {
			ok, f := x.evalRule(sr, s, in)
			if f != nil || !ok {
				return false, f
			}
		}
		return true, nil
	case c.or != nil:
		for _, s := range c.or {
			ok, f := x.evalRule(sr, s, in)
			if f != nil {
				return false, f
			}
			if ok {
				return true, nil
			}
		}
		return false, nil
	case c.not != nil:
		ok, f := x.evalRule(sr, c.not, in)
		return !ok && f == nil, f
	}
	v, err := x.eval(sr, c.variable, in)
	present := err == nil
	if r.Operator == "IsPresent" {
		return present == r.Operand.(bool), nil
	}
	if !present {
		return false, x.runtimeErr(sr, "Invalid path '%s': The choice state's condition path references an invalid value.", r.Variable)
	}
	operand := r.Operand
	if c.operandPath != nil {
		ov, err := x.eval(sr, c.operandPath, in)
		if err != nil {
			return false, x.runtimeErr(sr, "Invalid path '%s': The choice state's condition path references an invalid value.", c.operandPath.src)
		}
		operand = ov
	}
	switch c.op {
	case "IsNull":
		return (v == nil) == operand.(bool), nil
	case "IsNumeric":
		_, ok := v.(json.Number)
		return ok == operand.(bool), nil
	case "IsString":
		_, ok := v.(string)
		return ok == operand.(bool), nil
	case "IsBoolean":
		_, ok := v.(bool)
		return ok == operand.(bool), nil
	case "IsTimestamp":
		_, ok := timestamp(v)
		return ok == operand.(bool), nil
	case "BooleanEquals":
		a, ok1 := v.(bool)
		b, ok2 := operand.(bool)
		return ok1 && ok2 && a == b, nil
	case "StringMatches":
		a, ok1 := v.(string)
		b, ok2 := operand.(string)
		return ok1 && ok2 && wildcardMatch(b, a), nil
	}
	switch c.kind {
	case ruleString:
		a, ok1 := v.(string)
		b, ok2 := operand.(string)
		if !ok1 || !ok2 {
			return false, nil
		}
		return compare(c.cmp, strings.Compare(a, b)), nil
	case ruleNumeric:
		a, ok1 := number(v)
		b, ok2 := c.num, c.numOK
		if c.operandPath != nil {
			b, ok2 = number(operand)
		}
		if !ok1 || !ok2 {
			return false, nil
		}
		n := 0
		if a < b {
			n = -1
		} else if a > b {
			n = 1
		}
		return compare(c.cmp, n), nil
	case ruleTimestamp:
		a, ok1 := timestamp(v)
		b, ok2 := c.ts, c.tsOK
		if c.operandPath != nil {
			b, ok2 = timestamp(operand)
		}
		if !ok1 || !ok2 {
			return false, nil
		}
		return compare(c.cmp, a.Compare(b)), nil
	}
	return false, nil
}

func compare(kind string, c int) bool {
	switch kind {
	case "Equals":
		return c == 0
	case "LessThan":
		return c < 0
	case "GreaterThan":
		return c > 0
	case "LessThanEquals":
		return c <= 0
	case "GreaterThanEquals":
		return c >= 0
	}
	return false
}

func number(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(n), 64)
	return f, err == nil
}

func timestamp(v any) (time.Time, bool) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

// wildcardMatch matches s against a StringMatches pattern: * matches any run of characters, \* and \\ are literal.
func wildcardMatch(pattern, s string) bool {
	var toks []rune // -1 marks a wildcard
	esc := false
	for _, r := range pattern {
		switch {
		case esc:
			toks = append(toks, r)
			esc = false
		case r == '\\':
			esc = true
		case r == '*':
			toks = append(toks, -1)
		default:
			toks = append(toks, r)
		}
	}
	rs := []rune(s)
	var match func(i, j int) bool
	memo := map[[2]int]bool{}
	match = func(i, j int) bool {
		if i == len(toks) {
			return j == len(rs)
		}
		key := [2]int{i, j}
		if v, ok := memo[key]; ok {
			return v
		}
		var res bool
		if toks[i] == -1 {
			res = match(i+1, j) || (j < len(rs) && match(i, j+1))
		} else {
			res = j < len(rs) && rs[j] == toks[i] && match(i+1, j+1)
		}
		memo[key] = res
		return res
	}
	return match(0, 0)
}
