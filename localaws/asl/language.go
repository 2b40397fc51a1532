package asl

import (
	"github.com/transferflow/orchestrator/localaws/asl/jsonata"
)

// isExpr reports whether s is a JSONata expression string ("{% … %}").
func isExpr(s string) bool { return jsonata.Is(s) }

// queryLanguage reads the machine's QueryLanguage: JSONPath (the default) or JSONata.
func (p *decoder) queryLanguage(obj map[string]any, base string) string {
	v, ok := obj["QueryLanguage"]
	if !ok {
		return ""
	}
	s, isStr := v.(string)
	switch {
	case !isStr:
		p.errf(join(base, "QueryLanguage"), "Expected value of type [STRING]")
	case s != LangJSONPath && s != LangJSONata:
		p.errf(join(base, "QueryLanguage"), "Value should be one of the following: [JSONPath, JSONata]")
	}
	return s
}

// stateLanguage sets the state's QueryLanguage and JSONata: its own field, else the machine's. A state of a JSONata
// machine cannot go back to JSONPath.
func (p *decoder) stateLanguage(st *State, obj map[string]any, sp string) {
	st.QueryLanguage = p.queryLanguage(obj, sp)
	switch st.QueryLanguage {
	case LangJSONata:
		st.JSONata = true
	case LangJSONPath:
		if p.jsonata {
			p.errf(sp, "'QueryLanguage' can not be 'JSONPath' if set to 'JSONata' for whole state machine")
			st.langConflict = true
		}
	default:
		st.JSONata = p.jsonata
	}
}

// jsonataFields reads Assign, Arguments, Output and Items, and Map's tolerated failure fields.
func (p *decoder) jsonataFields(st *State, obj map[string]any, sp string) {
	st.Assign, st.HasAssign = obj["Assign"]
	st.Arguments, st.HasArguments = obj["Arguments"]
	st.Output, st.HasOutput = obj["Output"]
	st.Items, st.HasItems = obj["Items"]
	st.ToleratedFailurePctExpr = obj["ToleratedFailurePercentage"]
	st.ToleratedFailureCountExpr = obj["ToleratedFailureCount"]
}

// expr stores obj[key] in dst when the state is a JSONata state and the value is a "{% … %}" string, and reports
// whether it did; the caller reads a number otherwise.
func (p *decoder) expr(st *State, obj map[string]any, key string, dst *string) bool {
	s, ok := obj[key].(string)
	if !ok || !st.JSONata || !isExpr(s) {
		return false
	}
	*dst = s
	return true
}

// VariablePath splits a JSONPath that reads a variable, "$name…", into the variable's name and the path inside
// its value ("$…"). ok is false for other paths ("$", "$.x", "$[0]", "$$.x").
func VariablePath(p string) (name, rest string, ok bool) {
	if len(p) < 2 || p[0] != '$' {
		return "", "", false
	}
	end := 1
	for end < len(p) {
		c := p[end]
		if c == '.' || c == '[' {
			break
		}
		if c == '$' || c == ' ' || c == '@' {
			return "", "", false
		}
		end++
	}
	if end == 1 {
		return "", "", false
	}
	return p[1:end], "$" + p[end:], true
}
