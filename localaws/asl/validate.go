package asl

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/transferflow/orchestrator/localaws/asl/intrinsic"
	"github.com/transferflow/orchestrator/localaws/asl/jsonpath"
	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// Validate checks a parsed definition and returns every problem as a *Error, joined with errors.Join, or nil.
func Validate(def *Definition) error {
	v := &validator{}
	v.errs = append(v.errs, def.problems...)
	v.machine(def, "")
	if len(v.errs) == 0 {
		return nil
	}
	errs := make([]error, len(v.errs))
	for i, e := range v.errs {
		errs[i] = e
	}
	return errors.Join(errs...)
}

// Errors returns the positioned problems inside an error returned by Load or Validate.
func Errors(err error) []*Error {
	var out []*Error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			out = append(out, Errors(e)...)
		}
		return out
	}
	var e *Error
	if errors.As(err, &e) {
		out = append(out, e)
	}
	return out
}

type validator struct {
	errs []*Error
}

func (v *validator) errf(path, format string, args ...any) {
	v.errs = append(v.errs, &Error{Path: path, Msg: fmt.Sprintf(format, args...)})
}

func (v *validator) machine(def *Definition, base string) {
	if len(def.States) == 0 {
		if def.hasStates {
			v.errf(join(base, "States"), "must contain at least one state")
		}
		return
	}
	if def.StartAt != "" {
		if _, ok := def.States[def.StartAt]; !ok {
			v.errf(join(base, "StartAt"), "state %q does not exist", def.StartAt)
		}
	}
	for _, name := range def.Order {
		st := def.States[name]
		if st == nil {
			continue
		}
		v.state(def, st, join(base, "States."+name))
	}
	// Reachability from StartAt.
	if _, ok := def.States[def.StartAt]; ok {
		seen := map[string]bool{}
		stack := []string{def.StartAt}
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[n] {
				continue
			}
			seen[n] = true
			st := def.States[n]
			if st == nil {
				continue
			}
			for _, t := range transitions(st) {
				if _, ok := def.States[t]; ok && !seen[t] {
					stack = append(stack, t)
				}
			}
		}
		for _, name := range def.Order {
			if !seen[name] {
				v.errf(join(base, "States."+name), "state is not reachable from StartAt")
			}
		}
	}
}

func transitions(st *State) []string {
	var out []string
	if st.Next != "" {
		out = append(out, st.Next)
	}
	if st.Default != "" {
		out = append(out, st.Default)
	}
	for _, c := range st.Catch {
		out = append(out, c.Next)
	}
	for _, r := range st.Choices {
		out = append(out, r.Next)
	}
	return out
}

func (v *validator) target(def *Definition, path, name string) {
	if name == "" {
		return
	}
	if _, ok := def.States[name]; !ok {
		v.errf(path, "missing transition target: state %q does not exist", name)
	}
}

func (v *validator) state(def *Definition, st *State, sp string) {
	if _, ok := fieldsByType[st.Type]; !ok {
		return
	}
	switch st.Type {
	case TypePass, TypeTask, TypeWait, TypeParallel, TypeMap:
		switch {
		case st.Next != "" && st.End:
			v.errf(sp, "a state must not have both Next and End")
		case st.Next == "" && !st.End:
			v.errf(sp, "a state must have either Next or End: true")
		}
		v.target(def, join(sp, "Next"), st.Next)
	}
	v.language(st, sp)
	v.path(sp, "InputPath", st.InputPath, false)
	v.path(sp, "OutputPath", st.OutputPath, false)
	v.path(sp, "ResultPath", st.ResultPath, true)
	if st.HasParameters {
		v.payload(join(sp, "Parameters"), st.Parameters)
	}
	if st.HasSelector {
		v.payload(join(sp, "ResultSelector"), st.ResultSelector)
	}
	v.retriers(sp, st.Retry)
	for i, c := range st.Catch {
		cp := fmt.Sprintf("%s.Catch[%d]", sp, i)
		v.errorEquals(cp, c.ErrorEquals, i == len(st.Catch)-1)
		v.target(def, join(cp, "Next"), c.Next)
		v.path(cp, "ResultPath", c.ResultPath, true)
	}
	switch st.Type {
	case TypeTask:
		if st.Resource == "" {
			v.errf(join(sp, "Resource"), "field is required")
		} else if !strings.HasPrefix(st.Resource, "arn:") {
			v.errf(join(sp, "Resource"), "must be an ARN, got %q", st.Resource)
		}
		if st.TimeoutSeconds != 0 && st.TimeoutSecondsPath != "" {
			v.errf(sp, "TimeoutSeconds and TimeoutSecondsPath are mutually exclusive")
		}
		if st.HeartbeatSeconds != 0 && st.HeartbeatSecondsPath != "" {
			v.errf(sp, "HeartbeatSeconds and HeartbeatSecondsPath are mutually exclusive")
		}
		if st.HeartbeatSeconds != 0 && st.TimeoutSeconds != 0 && st.HeartbeatSeconds >= st.TimeoutSeconds {
			v.errf(join(sp, "HeartbeatSeconds"), "must be smaller than TimeoutSeconds")
		}
		v.plainPath(sp, "TimeoutSecondsPath", st.TimeoutSecondsPath)
		v.plainPath(sp, "HeartbeatSecondsPath", st.HeartbeatSecondsPath)
	case TypeChoice:
		if len(st.Choices) == 0 {
			v.errf(join(sp, "Choices"), "must contain at least one choice rule")
		}
		for i, r := range st.Choices {
			rp := fmt.Sprintf("%s.Choices[%d]", sp, i)
			v.target(def, join(rp, "Next"), r.Next)
			v.rule(r, rp)
		}
		v.target(def, join(sp, "Default"), st.Default)
	case TypeWait:
		n := 0
		if st.Seconds != nil {
			n++
		}
		for _, s := range []string{st.SecondsPath, st.Timestamp, st.TimestampPath, st.SecondsExpr, st.TimestampExpr} {
			if s != "" {
				n++
			}
		}
		if n != 1 {
			v.errf(sp, "a Wait state must have exactly one of Seconds, SecondsPath, Timestamp and TimestampPath")
		}
		if st.Timestamp != "" {
			if _, err := time.Parse(time.RFC3339Nano, st.Timestamp); err != nil {
				v.errf(join(sp, "Timestamp"), "must be an RFC 3339 timestamp, got %q", st.Timestamp)
			}
		}
		v.plainPath(sp, "SecondsPath", st.SecondsPath)
		v.plainPath(sp, "TimestampPath", st.TimestampPath)
	case TypeFail:
		if st.Error != "" && st.ErrorPath != "" {
			v.errf(sp, "Error and ErrorPath are mutually exclusive")
		}
		if st.Cause != "" && st.CausePath != "" {
			v.errf(sp, "Cause and CausePath are mutually exclusive")
		}
		v.dynamicPath(sp, "ErrorPath", st.ErrorPath)
		v.dynamicPath(sp, "CausePath", st.CausePath)
	case TypeParallel:
		if len(st.Branches) == 0 {
			v.errf(join(sp, "Branches"), "must contain at least one branch")
		}
		for i, b := range st.Branches {
			v.machine(b, fmt.Sprintf("%s.Branches[%d]", sp, i))
		}
	case TypeMap:
		if st.ItemProcessor == nil {
			v.errf(sp, "a Map state must have an ItemProcessor (or Iterator)")
		} else {
			name := "ItemProcessor"
			v.machine(st.ItemProcessor, join(sp, name))
			v.distributed(st, sp)
		}
		v.path(sp, "ItemsPath", st.ItemsPath, false)
		if st.HasItemSelector && !st.JSONata {
			v.payload(join(sp, "ItemSelector"), st.ItemSelector)
		}
		if st.HasItemSelector && st.HasParameters {
			v.errf(sp, "ItemSelector and Parameters are mutually exclusive")
		}
		if st.MaxConcurrency != 0 && st.MaxConcurrencyPath != "" {
			v.errf(sp, "MaxConcurrency and MaxConcurrencyPath are mutually exclusive")
		}
		v.plainPath(sp, "MaxConcurrencyPath", st.MaxConcurrencyPath)
	}
}

// labelRE is what a Distributed Map's Label may hold: up to 40 characters, none of those a name may not have.
var labelRE = regexp.MustCompile("^[^\\s<>{}\\[\\]?*\"#%\\\\^|~`$&,;:/\\x00-\\x1f\\x7f-\\x9f]{1,40}$")

// distributed checks the fields of a Distributed Map, and that an inline Map has none of them.
func (v *validator) distributed(st *State, sp string) {
	if st.ItemProcessor.ProcessorMode != "DISTRIBUTED" {
		for _, f := range []struct {
			name string
			set  bool
		}{{"Label", st.Label != ""}, {"ToleratedFailurePercentage", st.HasToleratedFailurePercentage},
			{"ToleratedFailureCount", st.HasToleratedFailureCount},
			{"ToleratedFailurePercentagePath", st.ToleratedFailurePercentagePath != ""},
			{"ToleratedFailureCountPath", st.ToleratedFailureCountPath != ""}, {"ItemBatcher", st.ItemBatcher != nil},
			{"ItemReader", st.HasItemReader}, {"ResultWriter", st.HasResultWriter}} {
			if f.set {
				v.errf(join(sp, f.name), "is only supported in a Map whose ItemProcessor.ProcessorConfig.Mode is DISTRIBUTED")
			}
		}
		return
	}
	if st.ItemProcessor.ExecutionType == "" {
		v.errf(join(sp, "ItemProcessor.ProcessorConfig.ExecutionType"), "is required when Mode is DISTRIBUTED")
	}
	if st.HasItemReader {
		v.errf(join(sp, "ItemReader"), "is not supported by this engine: a Distributed Map reads its items from the state input (ItemsPath)")
	}
	if st.HasResultWriter {
		v.errf(join(sp, "ResultWriter"), "is not supported by this engine: a Distributed Map's results are its output")
	}
	if st.Label != "" && !labelRE.MatchString(st.Label) {
		v.errf(join(sp, "Label"), "must have at most 40 characters, without whitespace, brackets, wildcards or special characters")
	}
	if st.HasToleratedFailurePercentage && st.ToleratedFailurePercentagePath != "" {
		v.errf(sp, "ToleratedFailurePercentage and ToleratedFailurePercentagePath are mutually exclusive")
	}
	if st.HasToleratedFailureCount && st.ToleratedFailureCountPath != "" {
		v.errf(sp, "ToleratedFailureCount and ToleratedFailureCountPath are mutually exclusive")
	}
	v.plainPath(sp, "ToleratedFailurePercentagePath", st.ToleratedFailurePercentagePath)
	v.plainPath(sp, "ToleratedFailureCountPath", st.ToleratedFailureCountPath)
	if b := st.ItemBatcher; b != nil {
		v.itemBatcher(st, b, join(sp, "ItemBatcher"))
	}
}

// itemBatcher checks a Distributed Map's ItemBatcher (bp is its path): a bound and its …Path form are mutually
// exclusive, as AWS documents ("You can specify either the MaxItemsPerBatch or the MaxItemsPerBatchPath (JSONPath
// only) sub-field, but not both", and the same of MaxInputBytesPerBatch), reported at the ItemBatcher as
// MaxConcurrency and MaxConcurrencyPath are at the state; a …Path form is a JSONPath path, checked as
// MaxConcurrencyPath is (language refuses it in a JSONata state).
func (v *validator) itemBatcher(st *State, b *ItemBatcher, bp string) {
	if (b.MaxItemsPerBatch != 0 || b.MaxItemsPerBatchExpr != "") && b.MaxItemsPerBatchPath != "" {
		v.errf(bp, "MaxItemsPerBatch and MaxItemsPerBatchPath are mutually exclusive")
	}
	if (b.MaxInputBytesPerBatch != 0 || b.MaxInputBytesPerBatchExpr != "") && b.MaxInputBytesPerBatchPath != "" {
		v.errf(bp, "MaxInputBytesPerBatch and MaxInputBytesPerBatchPath are mutually exclusive")
	}
	v.plainPath(bp, "MaxItemsPerBatchPath", b.MaxItemsPerBatchPath)
	v.plainPath(bp, "MaxInputBytesPerBatchPath", b.MaxInputBytesPerBatchPath)
	// A JSONata state's BatchInput is checked with its other JSONata fields (language).
	if b.HasBatchInput && !st.JSONata {
		v.payload(join(bp, "BatchInput"), b.BatchInput)
	}
}

// path checks an InputPath/OutputPath/ResultPath-style field.
func (v *validator) path(sp, field string, p OptPath, reference bool) {
	if !p.Set || p.Null {
		return
	}
	v.checkPath(join(sp, field), p.Path, reference)
}

func (v *validator) plainPath(sp, field, p string) {
	if p == "" {
		return
	}
	v.checkPath(join(sp, field), p, false)
}

// dynamicPath accepts a path or an intrinsic function (ErrorPath and CausePath allow both).
func (v *validator) dynamicPath(sp, field, p string) {
	if p == "" {
		return
	}
	if intrinsic.Is(p) {
		if _, err := intrinsic.Parse(p); err != nil {
			v.errf(join(sp, field), "%v", err)
		}
		return
	}
	v.checkPath(join(sp, field), p, false)
}

func (v *validator) checkPath(path, p string, reference bool) {
	src := p
	if name, rest, ok := VariablePath(p); ok {
		if reference {
			v.errf(path, "a variable cannot be written: %q", p)
			return
		}
		if name == "states" && !strings.HasPrefix(rest, "$.input") && !strings.HasPrefix(rest, "$.result") &&
			!strings.HasPrefix(rest, "$.errorOutput") && !strings.HasPrefix(rest, "$.context") {
			v.errf(path, "invalid JSONPath %q: $states has only input, result, errorOutput and context", p)
			return
		}
		src = rest
	} else if strings.HasPrefix(p, "$$") {
		if reference {
			v.errf(path, "the context object cannot be written: %q", p)
			return
		}
		src = p[1:]
	}
	jp, err := jsonpath.Parse(src)
	if err != nil {
		v.errf(path, "invalid JSONPath %q: %v", p, err)
		return
	}
	if reference && !jp.IsReference() {
		v.errf(path, "must be a reference path (names and indexes only), got %q", p)
	}
}

// payload checks a Parameters/ResultSelector/ItemSelector template: every "x.$" value is a path or intrinsic.
func (v *validator) payload(path string, tmpl any) {
	if m, ok := jsonvalue.AsMap(tmpl); ok {
		tmpl = m
	}
	switch t := tmpl.(type) {
	case map[string]any:
		keys := slices.Sorted(maps.Keys(t))
		for _, k := range keys {
			val := t[k]
			kp := path + "." + k
			if strings.HasSuffix(k, ".$") {
				s, ok := val.(string)
				if !ok {
					v.errf(kp, "the value of a field ending in .$ must be a path or an intrinsic function")
					continue
				}
				if intrinsic.Is(s) {
					if _, err := intrinsic.Parse(s); err != nil {
						v.errf(kp, "%v", err)
					}
					continue
				}
				v.checkPath(kp, s, false)
				continue
			}
			v.payload(kp, val)
		}
	case []any:
		for i, x := range t {
			v.payload(fmt.Sprintf("%s[%d]", path, i), x)
		}
	}
}

func (v *validator) errorEquals(base string, names []string, last bool) {
	if len(names) == 0 {
		v.errf(join(base, "ErrorEquals"), "must contain at least one error name")
	}
	for i, n := range names {
		if n == "States.ALL" {
			if len(names) != 1 {
				v.errf(fmt.Sprintf("%s.ErrorEquals[%d]", base, i), "States.ALL must appear alone")
			}
			if !last {
				v.errf(fmt.Sprintf("%s.ErrorEquals[%d]", base, i), "States.ALL must appear in the last retrier or catcher")
			}
		}
	}
}

func (v *validator) retriers(sp string, rs []Retrier) {
	for i, r := range rs {
		v.errorEquals(fmt.Sprintf("%s.Retry[%d]", sp, i), r.ErrorEquals, i == len(rs)-1)
	}
}

func (v *validator) rule(r *ChoiceRule, rp string) {
	if r.Operator != "" {
		if r.Variable != "" {
			v.checkPath(join(rp, "Variable"), r.Variable, false)
		}
		if strings.HasSuffix(r.Operator, "Path") {
			if s, ok := r.Operand.(string); ok {
				v.checkPath(join(rp, r.Operator), s, false)
			}
		}
		if strings.HasPrefix(r.Operator, "Timestamp") && !strings.HasSuffix(r.Operator, "Path") {
			if s, ok := r.Operand.(string); ok {
				if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
					v.errf(join(rp, r.Operator), "must be an RFC 3339 timestamp, got %q", s)
				}
			}
		}
	}
	for i, s := range r.And {
		v.rule(s, fmt.Sprintf("%s.And[%d]", rp, i))
	}
	for i, s := range r.Or {
		v.rule(s, fmt.Sprintf("%s.Or[%d]", rp, i))
	}
	if r.Not != nil {
		v.rule(r.Not, rp+".Not")
	}
}
