package asl

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/transferflow/orchestrator/localaws/asl/intrinsic"
	"github.com/transferflow/orchestrator/localaws/asl/jsonata"
	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// MaxVariableNameLength is the longest variable name Step Functions accepts.
const MaxVariableNameLength = 80

// jsonPathOnly and jsonataOnly are the state fields of one query language only; a state of the other language that
// has one is refused with AWS's message.
var (
	jsonPathOnly = []string{"InputPath", "OutputPath", "ResultPath", "Parameters", "ResultSelector", "Result",
		"ItemsPath", "MaxConcurrencyPath", "TimeoutSecondsPath", "HeartbeatSecondsPath", "SecondsPath",
		"TimestampPath", "ErrorPath", "CausePath"}
	jsonataOnly = []string{"Arguments", "Output", "Items"}
)

// present reports whether the state has the named field of jsonPathOnly or jsonataOnly.
func present(st *State, field string) bool {
	switch field {
	case "InputPath":
		return st.InputPath.Set
	case "OutputPath":
		return st.OutputPath.Set
	case "ResultPath":
		return st.ResultPath.Set
	case "Parameters":
		return st.HasParameters
	case "ResultSelector":
		return st.HasSelector
	case "Result":
		return st.HasResult
	case "ItemsPath":
		return st.ItemsPath.Set
	case "MaxConcurrencyPath":
		return st.MaxConcurrencyPath != ""
	case "TimeoutSecondsPath":
		return st.TimeoutSecondsPath != ""
	case "HeartbeatSecondsPath":
		return st.HeartbeatSecondsPath != ""
	case "SecondsPath":
		return st.SecondsPath != ""
	case "TimestampPath":
		return st.TimestampPath != ""
	case "ErrorPath":
		return st.ErrorPath != ""
	case "CausePath":
		return st.CausePath != ""
	case "Arguments":
		return st.HasArguments
	case "Output":
		return st.HasOutput
	case "Items":
		return st.HasItems
	}
	return false
}

func wrongLanguage(lang, field string) string {
	other := LangJSONPath
	if lang == LangJSONPath {
		other = LangJSONata
	}
	return fmt.Sprintf("The QueryLanguage is set to '%s', but field '%s' is only supported for the '%s' QueryLanguage", lang, field, other)
}

// language checks the fields of a state against its query language, its Assign, and every JSONata expression.
func (v *validator) language(st *State, sp string) {
	if !st.langConflict {
		lang, refused := LangJSONPath, jsonataOnly
		if st.JSONata {
			lang, refused = LangJSONata, jsonPathOnly
		}
		for _, f := range refused {
			if present(st, f) {
				v.errf(sp, "%s", wrongLanguage(lang, f))
			}
		}
		for i, c := range st.Catch {
			cp := fmt.Sprintf("%s.Catch[%d]", sp, i)
			if st.JSONata && c.ResultPath.Set {
				v.errf(cp, "%s", wrongLanguage(lang, "ResultPath"))
			}
			if !st.JSONata && c.HasOutput {
				v.errf(cp, "%s", wrongLanguage(lang, "Output"))
			}
		}
		for i, r := range st.Choices {
			v.ruleLanguage(r, fmt.Sprintf("%s.Choices[%d]", sp, i), st.JSONata)
		}
		// The ItemBatcher's …Path forms are JSONPath only, as AWS documents; refused at the ItemBatcher as a
		// catcher's ResultPath is at the catcher.
		if b := st.ItemBatcher; b != nil && st.JSONata {
			for _, f := range []struct {
				name string
				set  bool
			}{{"MaxItemsPerBatchPath", b.MaxItemsPerBatchPath != ""}, {"MaxInputBytesPerBatchPath", b.MaxInputBytesPerBatchPath != ""}} {
				if f.set {
					v.errf(join(sp, "ItemBatcher"), "%s", wrongLanguage(lang, f.name))
				}
			}
		}
	}
	if st.HasAssign {
		v.assign(join(sp, "Assign"), st.Assign, st.JSONata, false)
	}
	for i, c := range st.Catch {
		if c.HasAssign {
			v.assign(fmt.Sprintf("%s.Catch[%d].Assign", sp, i), c.Assign, st.JSONata, true)
		}
	}
	for i, r := range st.Choices {
		if r.HasAssign {
			v.assign(fmt.Sprintf("%s.Choices[%d].Assign", sp, i), r.Assign, st.JSONata, false)
		}
	}
	if !st.JSONata {
		return
	}
	var batcher ItemBatcher
	if st.ItemBatcher != nil {
		batcher = *st.ItemBatcher
	}
	for _, f := range []struct {
		name string
		val  any
		has  bool
	}{{"Arguments", st.Arguments, st.HasArguments}, {"Output", st.Output, st.HasOutput}, {"Items", st.Items, st.HasItems},
		{"ItemSelector", st.ItemSelector, st.HasItemSelector},
		{"TimeoutSeconds", st.TimeoutSecondsExpr, st.TimeoutSecondsExpr != ""},
		{"HeartbeatSeconds", st.HeartbeatSecondsExpr, st.HeartbeatSecondsExpr != ""},
		{"Seconds", st.SecondsExpr, st.SecondsExpr != ""}, {"Timestamp", st.TimestampExpr, st.TimestampExpr != ""},
		{"MaxConcurrency", st.MaxConcurrencyExpr, st.MaxConcurrencyExpr != ""},
		{"ToleratedFailurePercentage", st.ToleratedFailurePctExpr, st.ToleratedFailurePctExpr != nil},
		{"ToleratedFailureCount", st.ToleratedFailureCountExpr, st.ToleratedFailureCountExpr != nil},
		{"ItemBatcher.MaxItemsPerBatch", batcher.MaxItemsPerBatchExpr, batcher.MaxItemsPerBatchExpr != ""},
		{"ItemBatcher.MaxInputBytesPerBatch", batcher.MaxInputBytesPerBatchExpr, batcher.MaxInputBytesPerBatchExpr != ""},
		{"ItemBatcher.BatchInput", batcher.BatchInput, batcher.HasBatchInput},
		{"Error", st.Error, st.Error != ""}, {"Cause", st.Cause, st.Cause != ""}} {
		if f.has {
			v.expressions(join(sp, f.name), f.val, false)
		}
	}
	for i, c := range st.Catch {
		if c.HasOutput {
			v.expressions(fmt.Sprintf("%s.Catch[%d].Output", sp, i), c.Output, true)
		}
	}
	for i, r := range st.Choices {
		rp := fmt.Sprintf("%s.Choices[%d]", sp, i)
		if r.HasCondition {
			v.expressions(join(rp, "Condition"), r.Condition, false)
		}
		if r.HasOutput {
			v.expressions(join(rp, "Output"), r.Output, false)
		}
	}
}

// ruleLanguage refuses the fields of a Choice rule that belong to the other query language.
func (v *validator) ruleLanguage(r *ChoiceRule, rp string, isJSONata bool) {
	if isJSONata {
		lang := LangJSONata
		switch {
		case r.Variable != "":
			v.errf(rp, "%s", wrongLanguage(lang, "Variable"))
		case r.Operator != "":
			v.errf(rp, "%s", wrongLanguage(lang, r.Operator))
		case r.And != nil:
			v.errf(rp, "%s", wrongLanguage(lang, "And"))
		case r.Or != nil:
			v.errf(rp, "%s", wrongLanguage(lang, "Or"))
		case r.Not != nil:
			v.errf(rp, "%s", wrongLanguage(lang, "Not"))
		}
		return
	}
	if r.HasCondition {
		v.errf(rp, "%s", wrongLanguage(LangJSONPath, "Condition"))
	}
	if r.HasOutput {
		v.errf(rp, "%s", wrongLanguage(LangJSONPath, "Output"))
	}
}

// assign checks an Assign field: an object of valid variable names; in JSONPath states, names ending in ".$" take
// a path or an intrinsic function, in JSONata states every "{% … %}" string is an expression.
func (v *validator) assign(path string, val any, isJSONata, inCatch bool) {
	m, ok := jsonvalue.AsMap(val)
	if !ok {
		v.errf(path, "must be an object")
		return
	}
	names := slices.Sorted(maps.Keys(m))
	for _, k := range names {
		name := k
		if !isJSONata {
			name = strings.TrimSuffix(k, ".$")
		}
		if msg := checkVariableName(name); msg != "" {
			v.errf(join(path, k), "%s", msg)
			continue
		}
		if isJSONata {
			v.expressions(join(path, k), m[k], inCatch)
			continue
		}
		if strings.HasSuffix(k, ".$") {
			s, isStr := m[k].(string)
			switch {
			case !isStr:
				v.errf(join(path, k), "the value of a field ending in .$ must be a path or an intrinsic function")
			case intrinsic.Is(s):
				if _, err := intrinsic.Parse(s); err != nil {
					v.errf(join(path, k), "%v", err)
				}
			default:
				v.checkPath(join(path, k), s, false)
			}
			continue
		}
		v.payload(join(path, k), m[k])
	}
}

// checkVariableName returns why name cannot be a variable's name, or "": a Unicode identifier (a letter or _, then
// letters, digits and _) of at most 80 characters, not the reserved "states".
func checkVariableName(name string) string {
	if name == "" {
		return "a variable name must not be empty"
	}
	if name == "states" {
		return "the variable name 'states' is reserved"
	}
	if utf8.RuneCountInString(name) > MaxVariableNameLength {
		return fmt.Sprintf("the variable name '%s' is longer than %d characters", name, MaxVariableNameLength)
	}
	for i, r := range name {
		ok := r == '_' || unicode.IsLetter(r) || (i > 0 && (unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) ||
			unicode.Is(unicode.Mc, r) || unicode.Is(unicode.Pc, r)))
		if !ok {
			return fmt.Sprintf("the variable name '%s' is not valid: it must start with a letter or _ and contain only letters, digits and _", name)
		}
	}
	return ""
}

// expressions compiles every JSONata expression in a JSONata field value (strings "{% … %}" at any depth).
func (v *validator) expressions(path string, val any, inCatch bool) {
	if m, ok := jsonvalue.AsMap(val); ok {
		keys := slices.Sorted(maps.Keys(m))
		for _, k := range keys {
			v.expressions(join(path, k), m[k], inCatch)
		}
		return
	}
	switch t := val.(type) {
	case []any:
		for i, x := range t {
			v.expressions(fmt.Sprintf("%s[%d]", path, i), x, inCatch)
		}
	case string:
		if !jsonata.Is(t) {
			return
		}
		src := jsonata.Body(t)
		e, err := jsonata.Compile(src)
		if err != nil {
			v.errf(path, "INVALID_JSONATA_EXPRESSION: %v", err)
			return
		}
		if strings.Contains(src, "$$") {
			v.errf(path, "UNSUPPORTED_JSONATA_EXPRESSION: Reference to '$$' is not supported.")
			return
		}
		if name := e.TopLevelReference(); name != "" {
			v.errf(path, "UNSUPPORTED_JSONATA_EXPRESSION: Reference to '%s' at the top level is not supported.", name)
		}
		if !inCatch && strings.Contains(src, "$states.errorOutput") {
			v.errf(path, "UNSUPPORTED_JSONATA_EXPRESSION: $states.errorOutput is only available in a Catch's Output and Assign.")
		}
	}
}
