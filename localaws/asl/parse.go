package asl

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// Parse decodes a definition document. It fails only when the text is not a JSON object; field-level problems
// (wrong types, unknown fields) are kept and reported by Validate together with the semantic ones.
func Parse(data []byte) (*Definition, error) {
	v, err := Decode(data)
	if err != nil {
		return nil, &Error{Msg: "definition is not valid JSON: " + err.Error()}
	}
	obj, ok := jsonvalue.AsMap(v)
	if !ok {
		return nil, &Error{Msg: "definition must be a JSON object"}
	}
	p := &decoder{}
	def := p.machine(obj, "", true)
	def.problems = p.errs
	return def, nil
}

type decoder struct {
	errs []*Error
	// jsonata: the state machine's query language is JSONata. States in branches and item processors fall back
	// to the machine's language, not to the enclosing state's.
	jsonata bool
}

func (p *decoder) errf(path, format string, args ...any) {
	p.errs = append(p.errs, &Error{Path: path, Msg: fmt.Sprintf(format, args...)})
}

func join(base, field string) string {
	if base == "" {
		return field
	}
	return base + "." + field
}

var machineFields = map[string]bool{"Comment": true, "StartAt": true, "States": true, "TimeoutSeconds": true,
	"Version": true}

// Query languages.
const (
	LangJSONPath = "JSONPath"
	LangJSONata  = "JSONata"
)

// machine decodes a state machine or a branch/processor object at path base.
func (p *decoder) machine(obj map[string]any, base string, top bool) *Definition {
	def := &Definition{States: map[string]*State{}, ProcessorMode: "INLINE"}
	// Fields are visited in sorted order, here and below, so that problems are reported in a stable order.
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if machineFields[k] || (top && k == "QueryLanguage") {
			continue
		}
		if !top && k == "ProcessorConfig" {
			continue
		}
		p.errf(join(base, k), "field is not supported")
	}
	def.Comment = p.str(obj, base, "Comment")
	def.StartAt = p.target(obj, base, "StartAt")
	if _, ok := obj["StartAt"]; !ok {
		p.errf(join(base, "StartAt"), "field is required")
	}
	def.Version = p.str(obj, base, "Version")
	if top {
		def.QueryLanguage = p.queryLanguage(obj, base)
		p.jsonata = def.QueryLanguage == LangJSONata
	}
	def.JSONata = p.jsonata
	if _, ok := obj["TimeoutSeconds"]; ok {
		if !top {
			p.errf(join(base, "TimeoutSeconds"), "field is not supported")
		}
		def.TimeoutSeconds = p.posInt(obj, base, "TimeoutSeconds")
	}
	if pc, ok := obj["ProcessorConfig"]; ok {
		m, ok := jsonvalue.AsMap(pc)
		if !ok {
			p.errf(join(base, "ProcessorConfig"), "must be an object")
		} else {
			for _, k := range slices.Sorted(maps.Keys(m)) {
				v := m[k]
				switch k {
				case "Mode":
					s, _ := v.(string)
					if s != "INLINE" && s != "DISTRIBUTED" {
						p.errf(join(base, "ProcessorConfig.Mode"), "must be INLINE or DISTRIBUTED")
					}
					def.ProcessorMode = s
				case "ExecutionType":
					s, isStr := v.(string)
					if !isStr || (s != "STANDARD" && s != "EXPRESS") {
						p.errf(join(base, "ProcessorConfig.ExecutionType"), "must be STANDARD or EXPRESS")
					}
					def.ExecutionType = s
				default:
					p.errf(join(base, "ProcessorConfig."+k), "field is not supported")
				}
			}
		}
	}
	states, ok := jsonvalue.AsMap(obj["States"])
	if !ok {
		if _, present := obj["States"]; present {
			p.errf(join(base, "States"), "must be an object")
		} else {
			p.errf(join(base, "States"), "field is required")
		}
		return def
	}
	def.hasStates = true
	def.Order = stateOrder(states)
	for _, name := range def.Order {
		sp := join(base, "States."+name)
		so, ok := jsonvalue.AsMap(states[name])
		if !ok {
			p.errf(sp, "state must be an object")
			continue
		}
		def.States[name] = p.state(name, so, sp)
	}
	return def
}

// stateOrder returns the state names sorted, so that problems are reported in a stable order.
func stateOrder(states map[string]any) []string {
	return slices.Sorted(maps.Keys(states))
}

var commonFields = map[string]bool{"Type": true, "Comment": true, "QueryLanguage": true}

// fieldsByType lists the fields of each state type in either query language; Validate refuses those of the
// other language (jsonPathOnly, jsonataOnly).
var fieldsByType = map[string][]string{
	TypePass:     {"Next", "End", "InputPath", "OutputPath", "ResultPath", "Parameters", "Result", "Assign", "Output"},
	TypeTask:     {"Next", "End", "InputPath", "OutputPath", "ResultPath", "Parameters", "ResultSelector", "Resource", "TimeoutSeconds", "TimeoutSecondsPath", "HeartbeatSeconds", "HeartbeatSecondsPath", "Retry", "Catch", "Credentials", "Assign", "Output", "Arguments"},
	TypeChoice:   {"InputPath", "OutputPath", "Choices", "Default", "Assign", "Output"},
	TypeWait:     {"Next", "End", "InputPath", "OutputPath", "Seconds", "SecondsPath", "Timestamp", "TimestampPath", "Assign", "Output"},
	TypeSucceed:  {"InputPath", "OutputPath", "Output"},
	TypeFail:     {"Error", "ErrorPath", "Cause", "CausePath"},
	TypeParallel: {"Next", "End", "InputPath", "OutputPath", "ResultPath", "Parameters", "ResultSelector", "Branches", "Retry", "Catch", "Assign", "Output", "Arguments"},
	TypeMap:      {"Next", "End", "InputPath", "OutputPath", "ResultPath", "Parameters", "ResultSelector", "Iterator", "ItemProcessor", "ItemsPath", "ItemSelector", "MaxConcurrency", "MaxConcurrencyPath", "Retry", "Catch", "Label", "ToleratedFailurePercentage", "ToleratedFailureCount", "ToleratedFailurePercentagePath", "ToleratedFailureCountPath", "ItemBatcher", "ItemReader", "ResultWriter", "Assign", "Output", "Items"},
}

func (p *decoder) state(name string, obj map[string]any, sp string) *State {
	st := &State{Name: name}
	st.Type = p.str(obj, sp, "Type")
	allowed, ok := fieldsByType[st.Type]
	if !ok {
		if _, present := obj["Type"]; !present {
			p.errf(join(sp, "Type"), "field is required")
		} else {
			p.errf(join(sp, "Type"), "unknown state type %q", st.Type)
		}
		return st
	}
	set := map[string]bool{}
	for _, f := range allowed {
		set[f] = true
	}
	keys := slices.Sorted(maps.Keys(obj))
	for _, k := range keys {
		if !set[k] && !commonFields[k] {
			p.errf(join(sp, k), "field is not supported by a %s state", st.Type)
		}
	}
	st.Comment = p.str(obj, sp, "Comment")
	p.stateLanguage(st, obj, sp)
	p.jsonataFields(st, obj, sp)
	st.Next = p.target(obj, sp, "Next")
	if v, ok := obj["End"]; ok {
		b, isBool := v.(bool)
		if !isBool {
			p.errf(join(sp, "End"), "must be a boolean")
		}
		st.End = b
	}
	st.InputPath = p.optPath(obj, sp, "InputPath")
	st.OutputPath = p.optPath(obj, sp, "OutputPath")
	st.ResultPath = p.optPath(obj, sp, "ResultPath")
	if v, ok := obj["Parameters"]; ok {
		st.Parameters, st.HasParameters = v, true
	}
	if v, ok := obj["ResultSelector"]; ok {
		st.ResultSelector, st.HasSelector = v, true
	}
	if v, ok := obj["Result"]; ok {
		st.Result, st.HasResult = v, true
	}
	st.Resource = p.str(obj, sp, "Resource")
	if _, ok := obj["TimeoutSeconds"]; ok && !p.expr(st, obj, "TimeoutSeconds", &st.TimeoutSecondsExpr) {
		st.TimeoutSeconds = p.posInt(obj, sp, "TimeoutSeconds")
	}
	st.TimeoutSecondsPath = p.str(obj, sp, "TimeoutSecondsPath")
	if _, ok := obj["HeartbeatSeconds"]; ok && !p.expr(st, obj, "HeartbeatSeconds", &st.HeartbeatSecondsExpr) {
		st.HeartbeatSeconds = p.posInt(obj, sp, "HeartbeatSeconds")
	}
	st.HeartbeatSecondsPath = p.str(obj, sp, "HeartbeatSecondsPath")
	st.Retry = p.retry(obj, sp)
	st.Catch = p.catch(obj, sp)
	st.Default = p.target(obj, sp, "Default")
	for i, r := range p.array(obj, sp, "Choices") {
		st.Choices = append(st.Choices, p.rule(r, fmt.Sprintf("%s.Choices[%d]", sp, i), true))
	}
	if _, ok := obj["Seconds"]; ok && !p.expr(st, obj, "Seconds", &st.SecondsExpr) {
		n := p.nonNegInt(obj, sp, "Seconds")
		st.Seconds = &n
	}
	st.SecondsPath = p.str(obj, sp, "SecondsPath")
	if !p.expr(st, obj, "Timestamp", &st.TimestampExpr) {
		st.Timestamp = p.str(obj, sp, "Timestamp")
	}
	st.TimestampPath = p.str(obj, sp, "TimestampPath")
	st.Error = p.str(obj, sp, "Error")
	st.ErrorPath = p.str(obj, sp, "ErrorPath")
	st.Cause = p.str(obj, sp, "Cause")
	st.CausePath = p.str(obj, sp, "CausePath")
	for i, b := range p.array(obj, sp, "Branches") {
		bp := fmt.Sprintf("%s.Branches[%d]", sp, i)
		bo, isObj := jsonvalue.AsMap(b)
		if !isObj {
			p.errf(bp, "must be an object")
			continue
		}
		st.Branches = append(st.Branches, p.machine(bo, bp, false))
	}
	for _, f := range []string{"ItemProcessor", "Iterator"} {
		if v, ok := obj[f]; ok {
			bo, isObj := jsonvalue.AsMap(v)
			if !isObj {
				p.errf(join(sp, f), "must be an object")
				continue
			}
			if st.ItemProcessor != nil {
				p.errf(join(sp, f), "only one of ItemProcessor and Iterator may be given")
				continue
			}
			st.ItemProcessor = p.machine(bo, join(sp, f), false)
		}
	}
	st.ItemsPath = p.optPath(obj, sp, "ItemsPath")
	if v, ok := obj["ItemSelector"]; ok {
		st.ItemSelector, st.HasItemSelector = v, true
	}
	if _, ok := obj["MaxConcurrency"]; ok && !p.expr(st, obj, "MaxConcurrency", &st.MaxConcurrencyExpr) {
		st.MaxConcurrency = p.nonNegInt(obj, sp, "MaxConcurrency")
	}
	st.MaxConcurrencyPath = p.str(obj, sp, "MaxConcurrencyPath")
	p.distributed(st, obj, sp)
	return st
}

// distributed decodes the fields of a Distributed Map.
func (p *decoder) distributed(st *State, obj map[string]any, sp string) {
	st.Label = p.str(obj, sp, "Label")
	// In a JSONata state the tolerated failure fields may be "{% … %}" expressions (jsonataFields keeps them).
	exprField := func(k string) bool { s, isStr := obj[k].(string); return st.JSONata && isStr && isExpr(s) }
	if v, ok := obj["ToleratedFailurePercentage"]; ok && !exprField("ToleratedFailurePercentage") {
		n, isNum := v.(json.Number)
		f, err := strconv.ParseFloat(string(n), 64)
		if !isNum || err != nil || f < 0 || f > 100 {
			p.errf(join(sp, "ToleratedFailurePercentage"), "must be a number between 0 and 100")
		}
		st.ToleratedFailurePercentage, st.HasToleratedFailurePercentage = f, true
	}
	if _, ok := obj["ToleratedFailureCount"]; ok && !exprField("ToleratedFailureCount") {
		st.ToleratedFailureCount, st.HasToleratedFailureCount = p.nonNegInt(obj, sp, "ToleratedFailureCount"), true
	}
	st.ToleratedFailurePercentagePath = p.str(obj, sp, "ToleratedFailurePercentagePath")
	st.ToleratedFailureCountPath = p.str(obj, sp, "ToleratedFailureCountPath")
	_, st.HasItemReader = obj["ItemReader"]
	_, st.HasResultWriter = obj["ResultWriter"]
	v, ok := obj["ItemBatcher"]
	if !ok {
		return
	}
	bp := join(sp, "ItemBatcher")
	m, isObj := jsonvalue.AsMap(v)
	if !isObj {
		p.errf(bp, "must be an object")
		return
	}
	b := &ItemBatcher{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		switch k {
		case "MaxItemsPerBatch":
			if !p.expr(st, m, k, &b.MaxItemsPerBatchExpr) {
				b.MaxItemsPerBatch = p.posInt(m, bp, k)
			}
		case "MaxInputBytesPerBatch":
			if !p.expr(st, m, k, &b.MaxInputBytesPerBatchExpr) {
				b.MaxInputBytesPerBatch = p.posInt(m, bp, k)
				if b.MaxInputBytesPerBatch > MaxInputBytesPerBatchLimit {
					p.errf(join(bp, k), "must be at most %d (256 KiB)", MaxInputBytesPerBatchLimit)
				}
			}
		case "MaxItemsPerBatchPath":
			b.MaxItemsPerBatchPath = p.str(m, bp, k)
		case "MaxInputBytesPerBatchPath":
			b.MaxInputBytesPerBatchPath = p.str(m, bp, k)
		case "BatchInput":
			b.BatchInput, b.HasBatchInput = m[k], true
		default:
			p.errf(join(bp, k), "field is not supported")
		}
	}
	if b.MaxItemsPerBatch == 0 && b.MaxInputBytesPerBatch == 0 && b.MaxItemsPerBatchExpr == "" && b.MaxInputBytesPerBatchExpr == "" &&
		b.MaxItemsPerBatchPath == "" && b.MaxInputBytesPerBatchPath == "" {
		p.errf(bp, "must have MaxItemsPerBatch or MaxInputBytesPerBatch (or MaxItemsPerBatchPath or MaxInputBytesPerBatchPath)")
	}
	st.ItemBatcher = b
}

func (p *decoder) str(obj map[string]any, base, key string) string {
	v, ok := obj[key]
	if !ok {
		return ""
	}
	s, isStr := v.(string)
	if !isStr {
		p.errf(join(base, key), "must be a string")
	}
	return s
}

// target reads a transition field (StartAt, Next, Default): a string that, when present, names a state, so it is
// never empty. Validate checks that the state exists; an empty name is refused here, where absent and empty differ.
func (p *decoder) target(obj map[string]any, base, key string) string {
	s := p.str(obj, base, key)
	if v, ok := obj[key].(string); ok && v == "" {
		p.errf(join(base, key), "missing transition target: a state name must not be empty")
	}
	return s
}

func (p *decoder) optPath(obj map[string]any, base, key string) OptPath {
	v, ok := obj[key]
	if !ok {
		return OptPath{}
	}
	if v == nil {
		return OptPath{Set: true, Null: true}
	}
	s, isStr := v.(string)
	if !isStr {
		p.errf(join(base, key), "must be a string or null")
	}
	return OptPath{Set: true, Path: s}
}

// integer returns the integer value of obj[key], recording an error for non-integers.
func (p *decoder) integer(obj map[string]any, base, key string) (int64, bool) {
	n, ok := obj[key].(json.Number)
	if !ok {
		p.errf(join(base, key), "must be an integer")
		return 0, false
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(string(n), 64)
		if ferr != nil || f != math.Trunc(f) || math.Abs(f) > math.MaxInt64/2 {
			p.errf(join(base, key), "must be an integer")
			return 0, false
		}
		i = int64(f)
	}
	return i, true
}

func (p *decoder) posInt(obj map[string]any, base, key string) int64 {
	i, ok := p.integer(obj, base, key)
	if ok && i <= 0 {
		p.errf(join(base, key), "must be a positive integer")
	}
	return i
}

func (p *decoder) nonNegInt(obj map[string]any, base, key string) int64 {
	i, ok := p.integer(obj, base, key)
	if ok && i < 0 {
		p.errf(join(base, key), "must be a non-negative integer")
	}
	return i
}

func (p *decoder) strings(obj map[string]any, base, key string) []string {
	v, ok := obj[key]
	if !ok {
		return nil
	}
	arr, isArr := v.([]any)
	if !isArr {
		p.errf(join(base, key), "must be an array of strings")
		return nil
	}
	out := make([]string, 0, len(arr))
	for i, x := range arr {
		s, isStr := x.(string)
		if !isStr {
			p.errf(fmt.Sprintf("%s[%d]", join(base, key), i), "must be a string")
			continue
		}
		out = append(out, s)
	}
	return out
}

var retrierFields = map[string]bool{"ErrorEquals": true, "IntervalSeconds": true, "MaxAttempts": true, "BackoffRate": true, "MaxDelaySeconds": true, "JitterStrategy": true, "Comment": true}

// array returns the optional array obj[field] of a state at sp: nil when it is absent, or when it is not an array,
// which is an error.
func (p *decoder) array(obj map[string]any, sp, field string) []any {
	v, ok := obj[field]
	if !ok {
		return nil
	}
	arr, isArr := v.([]any)
	if !isArr {
		p.errf(join(sp, field), "must be an array")
	}
	return arr
}

// objects walks the optional array obj[field] of a state at sp: each element must be an object with only the allowed
// fields, and is handed to each with its path (e.g. States.Debit.Retry[0]).
func (p *decoder) objects(obj map[string]any, sp, field string, allowed map[string]bool, each func(path string, o map[string]any)) {
	for i, x := range p.array(obj, sp, field) {
		ep := fmt.Sprintf("%s.%s[%d]", sp, field, i)
		eo, isObj := jsonvalue.AsMap(x)
		if !isObj {
			p.errf(ep, "must be an object")
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(eo)) {
			if !allowed[k] {
				p.errf(join(ep, k), "field is not supported")
			}
		}
		each(ep, eo)
	}
}

func (p *decoder) retry(obj map[string]any, sp string) []Retrier {
	var out []Retrier
	p.objects(obj, sp, "Retry", retrierFields, func(rp string, ro map[string]any) {
		r := Retrier{IntervalSeconds: 1, MaxAttempts: 3, BackoffRate: 2.0, JitterStrategy: "NONE"}
		r.ErrorEquals = p.strings(ro, rp, "ErrorEquals")
		if _, ok := ro["ErrorEquals"]; !ok {
			p.errf(join(rp, "ErrorEquals"), "field is required")
		}
		if _, ok := ro["IntervalSeconds"]; ok {
			r.IntervalSeconds = p.posInt(ro, rp, "IntervalSeconds")
		}
		if _, ok := ro["MaxAttempts"]; ok {
			r.MaxAttempts = p.nonNegInt(ro, rp, "MaxAttempts")
		}
		if _, ok := ro["MaxDelaySeconds"]; ok {
			r.MaxDelaySeconds = p.posInt(ro, rp, "MaxDelaySeconds")
		}
		if v, ok := ro["BackoffRate"]; ok {
			n, isNum := v.(json.Number)
			f, err := strconv.ParseFloat(string(n), 64)
			if !isNum || err != nil {
				p.errf(join(rp, "BackoffRate"), "must be a number")
			} else if f < 1 {
				p.errf(join(rp, "BackoffRate"), "must be >= 1")
			}
			r.BackoffRate = f
		}
		if _, ok := ro["JitterStrategy"]; ok {
			r.JitterStrategy = p.str(ro, rp, "JitterStrategy")
			if r.JitterStrategy != "FULL" && r.JitterStrategy != "NONE" {
				p.errf(join(rp, "JitterStrategy"), "must be FULL or NONE")
			}
		}
		out = append(out, r)
	})
	return out
}

var catcherFields = map[string]bool{"ErrorEquals": true, "Next": true, "ResultPath": true, "Comment": true, "Assign": true, "Output": true}

func (p *decoder) catch(obj map[string]any, sp string) []Catcher {
	var out []Catcher
	p.objects(obj, sp, "Catch", catcherFields, func(cp string, co map[string]any) {
		c := Catcher{ErrorEquals: p.strings(co, cp, "ErrorEquals"), Next: p.target(co, cp, "Next"), ResultPath: p.optPath(co, cp, "ResultPath")}
		c.Assign, c.HasAssign = co["Assign"]
		c.Output, c.HasOutput = co["Output"]
		if _, ok := co["ErrorEquals"]; !ok {
			p.errf(join(cp, "ErrorEquals"), "field is required")
		}
		if _, ok := co["Next"]; !ok {
			p.errf(join(cp, "Next"), "field is required")
		}
		out = append(out, c)
	})
	return out
}

// comparisonOperators lists every Choice comparison operator with whether its operand is a path.
var comparisonOperators = map[string]string{}

func init() {
	for _, base := range []string{"StringEquals", "StringLessThan", "StringGreaterThan", "StringLessThanEquals", "StringGreaterThanEquals",
		"NumericEquals", "NumericLessThan", "NumericGreaterThan", "NumericLessThanEquals", "NumericGreaterThanEquals",
		"BooleanEquals", "TimestampEquals", "TimestampLessThan", "TimestampGreaterThan", "TimestampLessThanEquals", "TimestampGreaterThanEquals"} {
		comparisonOperators[base] = "literal"
		comparisonOperators[base+"Path"] = "path"
	}
	comparisonOperators["StringMatches"] = "literal"
	for _, is := range []string{"IsNull", "IsPresent", "IsNumeric", "IsString", "IsBoolean", "IsTimestamp"} {
		comparisonOperators[is] = "bool"
	}
}

// IsComparisonOperator reports whether name is a Choice comparison operator.
func IsComparisonOperator(name string) bool { _, ok := comparisonOperators[name]; return ok }

func (p *decoder) rule(v any, rp string, top bool) *ChoiceRule {
	r := &ChoiceRule{}
	obj, ok := jsonvalue.AsMap(v)
	if !ok {
		p.errf(rp, "choice rule must be an object")
		return r
	}
	keys := slices.Sorted(maps.Keys(obj))
	var ops []string
	for _, k := range keys {
		val := obj[k]
		switch {
		case k == "Variable":
			r.Variable = p.str(obj, rp, k)
		case k == "Next":
			r.Next = p.target(obj, rp, k)
			if !top {
				p.errf(join(rp, k), "a nested choice rule must not have Next")
			}
		case k == "Comment":
		case k == "Condition":
			ops = append(ops, k)
			r.Condition, r.HasCondition = val, true
			if _, isBool := val.(bool); !isBool {
				if s, isStr := val.(string); !isStr || !isExpr(s) {
					p.errf(join(rp, k), "must be a JSONata expression (\"{%% … %%}\") or a boolean")
				}
			}
		case (k == "Assign" || k == "Output") && top:
			if k == "Assign" {
				r.Assign, r.HasAssign = val, true
			} else {
				r.Output, r.HasOutput = val, true
			}
		case k == "And" || k == "Or":
			ops = append(ops, k)
			arr, isArr := val.([]any)
			if !isArr || len(arr) == 0 {
				p.errf(join(rp, k), "must be a non-empty array of choice rules")
				continue
			}
			for i, x := range arr {
				sub := p.rule(x, fmt.Sprintf("%s.%s[%d]", rp, k, i), false)
				if k == "And" {
					r.And = append(r.And, sub)
				} else {
					r.Or = append(r.Or, sub)
				}
			}
		case k == "Not":
			ops = append(ops, k)
			r.Not = p.rule(val, join(rp, k), false)
		case IsComparisonOperator(k):
			ops = append(ops, k)
			r.Operator, r.Operand = k, val
			switch comparisonOperators[k] {
			case "path":
				if _, isStr := val.(string); !isStr {
					p.errf(join(rp, k), "must be a path string")
				}
			case "bool":
				if _, isBool := val.(bool); !isBool {
					p.errf(join(rp, k), "must be a boolean")
				}
			default:
				p.checkLiteral(k, val, join(rp, k))
			}
		default:
			p.errf(join(rp, k), "field is not supported in a choice rule")
		}
	}
	switch {
	case len(ops) == 0:
		p.errf(rp, "choice rule has no comparison operator")
	case len(ops) > 1:
		p.errf(rp, "choice rule has more than one operator: %s", strings.Join(ops, ", "))
	}
	if r.Operator != "" {
		if _, ok := obj["Variable"]; !ok {
			p.errf(join(rp, "Variable"), "field is required with %s", r.Operator)
		}
	} else if r.Variable != "" && len(ops) > 0 {
		p.errf(join(rp, "Variable"), "field is not allowed with a boolean operator")
	}
	if top {
		if _, ok := obj["Next"]; !ok {
			p.errf(join(rp, "Next"), "field is required")
		}
	}
	return r
}

func (p *decoder) checkLiteral(op string, val any, path string) {
	switch {
	case strings.HasPrefix(op, "String"), strings.HasPrefix(op, "Timestamp"):
		if _, ok := val.(string); !ok {
			p.errf(path, "must be a string")
		}
	case strings.HasPrefix(op, "Numeric"):
		if _, ok := val.(json.Number); !ok {
			p.errf(path, "must be a number")
		}
	case op == "BooleanEquals":
		if _, ok := val.(bool); !ok {
			p.errf(path, "must be a boolean")
		}
	}
}
