package sfnengine

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/transferflow/orchestrator/localaws/asl"
	"github.com/transferflow/orchestrator/localaws/asl/intrinsic"
	"github.com/transferflow/orchestrator/localaws/asl/jsonpath"
	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// program is a definition compiled for running: every path parsed, every Parameters, ResultSelector and
// ItemSelector template and Choice rule compiled, every Task resource resolved, for the definition and its nested
// branches and item processors. It is built once per state machine, is read-only afterwards and is shared by the
// machine's executions. A field that does not compile keeps its error, reported when a state evaluates it, exactly
// where and as the uncompiled evaluation reported it.
type program struct {
	states map[*asl.State]*stateProgram
}

// stateProgram is one state compiled.
type stateProgram struct {
	st           *asl.State
	enteredType  string // history event types, e.g. PassStateEntered
	exitedType   string
	name         any // st.Name, boxed once for the events' details
	inputPath    *selector
	outputPath   *selector
	resultPath   *resultPath
	parameters   *template // nil when the state has none
	resultSel    *template
	itemSelector *template
	itemsPath    *selector
	batchInput   *template     // a Distributed Map's ItemBatcher.BatchInput (JSONPath state; jBatchInput in a JSONata one)
	catch        []*resultPath // each catcher's ResultPath
	choices      []*rule
	integ        integration // Task
	integErr     error
	// resourceType and resource of integ, boxed once for the events' details.
	resourceType, resource any
	// taskStarted is the details of the TaskStarted event, the same for every execution: events are immutable, so
	// they share it.
	taskStarted map[string]any

	// Variables and JSONata (jsonata.go): the state's Assign, each catcher's and each Choice rule's; the JSONata
	// fields of a JSONata state.
	assign        *assignProgram
	catchAssign   []*assignProgram
	ruleAssign    []*assignProgram
	jArguments    *jtemplate
	jOutput       *jtemplate
	jItems        *jtemplate
	jItemSelector *jtemplate
	jTimeout      *jtemplate
	jHeartbeat    *jtemplate
	jSeconds      *jtemplate
	jTimestamp    *jtemplate
	jMaxConc      *jtemplate
	jTolPct       *jtemplate // a Distributed Map's ToleratedFailurePercentage and ToleratedFailureCount expressions
	jTolCount     *jtemplate
	jError        *jtemplate
	jCause        *jtemplate
	catchOutput   []*jtemplate
	ruleCond      []*jtemplate
	ruleOutput    []*jtemplate
	// A Distributed Map's ItemBatcher in a JSONata state: its BatchInput template and its bounds' expressions.
	jBatchInput *jtemplate
	jMaxItems   *jtemplate
	jMaxBytes   *jtemplate
}

// program returns the machine's compiled definition, compiling it on first use.
func (m *machine) program() *program {
	m.progOnce.Do(func() { m.prog = compileProgram(m.def) })
	return m.prog
}

func compileProgram(def *asl.Definition) *program {
	p := &program{states: map[*asl.State]*stateProgram{}}
	p.addDefinition(def)
	return p
}

func (p *program) addDefinition(def *asl.Definition) {
	if def == nil {
		return
	}
	for _, st := range def.States {
		p.states[st] = compileState(st)
		for _, b := range st.Branches {
			p.addDefinition(b)
		}
		p.addDefinition(st.ItemProcessor)
	}
}

func compileState(st *asl.State) *stateProgram {
	sp := &stateProgram{st: st, enteredType: st.Type + "StateEntered", exitedType: st.Type + "StateExited", name: st.Name,
		inputPath: compileSelector(st.InputPath), outputPath: compileSelector(st.OutputPath),
		resultPath: compileResultPath(st.ResultPath)}
	if st.HasParameters {
		sp.parameters = compileTemplate(st.Parameters)
	}
	if st.HasSelector {
		sp.resultSel = compileTemplate(st.ResultSelector)
	}
	if st.HasItemSelector {
		sp.itemSelector = compileTemplate(st.ItemSelector)
	}
	if st.Type == asl.TypeMap {
		sp.itemsPath = compileSelector(st.ItemsPath)
		if b := st.ItemBatcher; b != nil && b.HasBatchInput && !st.JSONata {
			sp.batchInput = compileTemplate(b.BatchInput)
		}
	}
	for _, c := range st.Catch {
		sp.catch = append(sp.catch, compileResultPath(c.ResultPath))
	}
	for _, r := range st.Choices {
		sp.choices = append(sp.choices, compileRule(r))
	}
	compileVariables(sp, st)
	if st.Type == asl.TypeTask {
		sp.integ, sp.integErr = resolveResource(st.Resource)
		sp.resourceType, sp.resource = sp.integ.resourceType, sp.integ.resource
		sp.taskStarted = map[string]any{"resourceType": sp.resourceType, "resource": sp.resource}
	}
	return sp
}

// pathProgram is a compiled path: a JSONPath over the state's data, or over the context object when it starts
// with $$.
type pathProgram struct {
	src     string // as written
	context bool
	// part is the member of the context object that a $$.Execution…, $$.StateMachine… or $$.State… path starts
	// with: path is then the rest of the path, evaluated against that member alone, which gives the same result
	// without building the whole context object.
	part contextPart
	// variable is the workflow variable a "$name…" path reads ("states" for $states); path is then the rest.
	variable string
	path     *jsonpath.Path
	err      error // the parse error, returned by every evaluation
}

// contextPart names a member of the context object.
type contextPart int

const (
	contextWhole contextPart = iota
	contextExecution
	contextStateMachine
	contextState
)

var contextParts = []struct {
	name string
	part contextPart
}{{"Execution", contextExecution}, {"StateMachine", contextStateMachine}, {"State", contextState}}

func compilePath(src string) *pathProgram {
	p := &pathProgram{src: src}
	if name, rest, ok := asl.VariablePath(src); ok {
		p.variable = name
		p.path, p.err = compiledPath(rest)
		return p
	}
	s := src
	if strings.HasPrefix(s, "$$") {
		p.context, s = true, s[1:]
	}
	p.path, p.err = compiledPath(s)
	if !p.context || p.err != nil {
		return p
	}
	for _, cp := range contextParts {
		rest, ok := strings.CutPrefix(s, "$."+cp.name)
		if !ok || (rest != "" && rest[0] != '.' && rest[0] != '[') {
			continue
		}
		if sub, err := compiledPath("$" + rest); err == nil {
			p.part, p.path = cp.part, sub
		}
		break
	}
	return p
}

// eval evaluates the path against doc, or against the context object.
func (x *execution) eval(sr *stateRun, p *pathProgram, doc any) (any, error) {
	if p.variable != "" {
		v, ok := x.variable(sr, p.variable)
		if !ok {
			return nil, fmt.Errorf("the variable '$%s' is not defined: %w", p.variable, jsonpath.ErrNoMatch)
		}
		doc = v
	} else if p.context {
		switch p.part {
		case contextExecution:
			doc, _ = x.contextConstants()
		case contextStateMachine:
			_, doc = x.contextConstants()
		case contextState:
			doc = x.contextState(sr)
		default:
			doc = x.contextObject(sr)
		}
	}
	if p.err != nil {
		return nil, p.err
	}
	return p.path.Get(doc)
}

// selector is a compiled InputPath, OutputPath or ItemsPath.
type selector struct {
	opt  asl.OptPath
	path *pathProgram // when opt is a path
}

func compileSelector(p asl.OptPath) *selector {
	s := &selector{opt: p}
	if p.Set && !p.Null {
		s.path = compilePath(p.Path)
	}
	return s
}

// resultPath is a compiled ResultPath (of a state or a catcher).
type resultPath struct {
	opt  asl.OptPath
	path *jsonpath.Path
	err  error
}

func compileResultPath(p asl.OptPath) *resultPath {
	r := &resultPath{opt: p}
	if p.Set && !p.Null {
		r.path, r.err = compiledPath(p.Path)
	}
	return r
}

// template is a compiled Parameters, ResultSelector or ItemSelector template (or a value inside one).
type template struct {
	// static: the template holds no ".$" field, so its value is the template itself, shared by every evaluation.
	static bool
	value  any
	// An object with dynamic parts: the result's keys (shared by every result), the literal fields in template
	// order, the ".$" fields in template order (their evaluation order) and where each goes in the result.
	obj     bool
	keys    []string
	lits    []litField
	dynamic []dynField
	// An array with dynamic parts.
	items []*template
}

type litField struct {
	pos int
	t   *template
}

type dynField struct {
	pos    int
	key    string // as written, with ".$"
	src    string // the path or intrinsic call
	isCall bool
	call   *intrinsic.Call
	err    error // the intrinsic's parse error
	path   *pathProgram
}

func compileTemplate(v any) *template {
	switch t := v.(type) {
	case *jsonvalue.Object:
		tp := &template{obj: true}
		static := true
		var dynNames []string
		var lits []*template
		var litKeys []string
		for i, k := range t.Keys() {
			val := t.Values()[i]
			if name, ok := strings.CutSuffix(k, ".$"); ok {
				static = false
				s, _ := val.(string)
				d := dynField{key: k, src: s}
				if intrinsic.Is(s) {
					d.isCall = true
					d.call, d.err = compiledCall(s)
				} else {
					d.path = compilePath(s)
				}
				tp.dynamic = append(tp.dynamic, d)
				dynNames = append(dynNames, name)
				continue
			}
			lt := compileTemplate(val)
			static = static && lt.static
			lits = append(lits, lt)
			litKeys = append(litKeys, k)
		}
		if static {
			return &template{static: true, value: v}
		}
		// The literal fields come first, in template order; the ".$" fields follow in the order Step Functions
		// emits them (java.util.HashMap iteration order of the result names). A name given both ways keeps the
		// literal's place and takes the ".$" value.
		pos := map[string]int{}
		place := func(k string) int {
			if p, ok := pos[k]; ok {
				return p
			}
			pos[k] = len(tp.keys)
			tp.keys = append(tp.keys, k)
			return pos[k]
		}
		for i, k := range litKeys {
			tp.lits = append(tp.lits, litField{pos: place(k), t: lits[i]})
		}
		for _, name := range jsonvalue.HashMapOrder(dynNames) {
			place(name)
		}
		for i, name := range dynNames {
			tp.dynamic[i].pos = pos[name]
		}
		return tp
	case []any:
		tp := &template{}
		static := true
		for _, item := range t {
			it := compileTemplate(item)
			static = static && it.static
			tp.items = append(tp.items, it)
		}
		if static {
			return &template{static: true, value: v}
		}
		return tp
	}
	return &template{static: true, value: v}
}

// rule is a compiled Choice rule.
type rule struct {
	r        *asl.ChoiceRule
	and, or  []*rule
	not      *rule
	variable *pathProgram
	// op is the comparison without its Path suffix; operandPath is set for the *Path operators.
	op          string
	operandPath *pathProgram
	kind        ruleKind
	cmp         string // Equals, LessThan, …: the comparison of String*, Numeric* and Timestamp* operators
	// The literal operand as a number or a time, when it is one.
	num   float64
	numOK bool
	ts    time.Time
	tsOK  bool
}

type ruleKind int

const (
	ruleOther ruleKind = iota
	ruleString
	ruleNumeric
	ruleTimestamp
)

func compileRule(r *asl.ChoiceRule) *rule {
	c := &rule{r: r}
	switch {
	case r.And != nil:
		c.and = make([]*rule, 0, len(r.And))
		for _, s := range r.And {
			c.and = append(c.and, compileRule(s))
		}
		return c
	case r.Or != nil:
		c.or = make([]*rule, 0, len(r.Or))
		for _, s := range r.Or {
			c.or = append(c.or, compileRule(s))
		}
		return c
	case r.Not != nil:
		c.not = compileRule(r.Not)
		return c
	}
	c.variable = compilePath(r.Variable)
	c.op = r.Operator
	if base, ok := strings.CutSuffix(c.op, "Path"); ok {
		p, _ := r.Operand.(string)
		c.op, c.operandPath = base, compilePath(p)
	}
	switch {
	case strings.HasPrefix(c.op, "String"):
		c.kind, c.cmp = ruleString, c.op[len("String"):]
	case strings.HasPrefix(c.op, "Numeric"):
		c.kind, c.cmp = ruleNumeric, c.op[len("Numeric"):]
	case strings.HasPrefix(c.op, "Timestamp"):
		c.kind, c.cmp = ruleTimestamp, c.op[len("Timestamp"):]
	}
	if c.operandPath == nil {
		c.num, c.numOK = number(r.Operand)
		c.ts, c.tsOK = timestamp(r.Operand)
	}
	return c
}

var callCache sync.Map // string -> *intrinsic.Call

// compiledCall parses an intrinsic function call once per text.
func compiledCall(src string) (*intrinsic.Call, error) {
	if c, ok := callCache.Load(src); ok {
		return c.(*intrinsic.Call), nil
	}
	c, err := intrinsic.Parse(src)
	if err != nil {
		return nil, err
	}
	callCache.Store(src, c)
	return c, nil
}

// compileVariables compiles the state's Assign fields (both languages) and, for a JSONata state, its JSONata fields.
func compileVariables(sp *stateProgram, st *asl.State) {
	j := st.JSONata
	sp.assign = compileAssign(st.Assign, st.HasAssign, j, "Assign")
	for i, c := range st.Catch {
		sp.catchAssign = append(sp.catchAssign, compileAssign(c.Assign, c.HasAssign, j, fmt.Sprintf("Catch[%d]/Assign", i)))
		var out *jtemplate
		if j {
			out = compileJ(c.Output, c.HasOutput, fmt.Sprintf("Catch[%d]/Output", i))
		}
		sp.catchOutput = append(sp.catchOutput, out)
	}
	for i, r := range st.Choices {
		sp.ruleAssign = append(sp.ruleAssign, compileAssign(r.Assign, r.HasAssign, j, fmt.Sprintf("Choices[%d]/Assign", i)))
		var cond, out *jtemplate
		if j {
			cond = compileJ(r.Condition, r.HasCondition, fmt.Sprintf("Choices[%d]/Condition", i))
			out = compileJ(r.Output, r.HasOutput, fmt.Sprintf("Choices[%d]/Output", i))
		}
		sp.ruleCond = append(sp.ruleCond, cond)
		sp.ruleOutput = append(sp.ruleOutput, out)
	}
	if !j {
		return
	}
	sp.jArguments = compileJ(st.Arguments, st.HasArguments, "Arguments")
	sp.jOutput = compileJ(st.Output, st.HasOutput, "Output")
	sp.jItems = compileJ(st.Items, st.HasItems, "Items")
	sp.jItemSelector = compileJ(st.ItemSelector, st.HasItemSelector, "ItemSelector")
	sp.jTimeout = compileJ(st.TimeoutSecondsExpr, st.TimeoutSecondsExpr != "", "TimeoutSeconds")
	sp.jHeartbeat = compileJ(st.HeartbeatSecondsExpr, st.HeartbeatSecondsExpr != "", "HeartbeatSeconds")
	sp.jSeconds = compileJ(st.SecondsExpr, st.SecondsExpr != "", "Seconds")
	sp.jTimestamp = compileJ(st.TimestampExpr, st.TimestampExpr != "", "Timestamp")
	sp.jMaxConc = compileJ(st.MaxConcurrencyExpr, st.MaxConcurrencyExpr != "", "MaxConcurrency")
	// A number is read by the parser (State.ToleratedFailurePercentage/Count); only an expression is compiled.
	sp.jTolPct = compileJ(st.ToleratedFailurePctExpr, isExpression(st.ToleratedFailurePctExpr), "ToleratedFailurePercentage")
	sp.jTolCount = compileJ(st.ToleratedFailureCountExpr, isExpression(st.ToleratedFailureCountExpr), "ToleratedFailureCount")
	if b := st.ItemBatcher; b != nil {
		sp.jBatchInput = compileJ(b.BatchInput, b.HasBatchInput, "ItemBatcher/BatchInput")
		sp.jMaxItems = compileJ(b.MaxItemsPerBatchExpr, b.MaxItemsPerBatchExpr != "", "ItemBatcher/MaxItemsPerBatch")
		sp.jMaxBytes = compileJ(b.MaxInputBytesPerBatchExpr, b.MaxInputBytesPerBatchExpr != "", "ItemBatcher/MaxInputBytesPerBatch")
	}
	sp.jError = compileJ(st.Error, st.Error != "", "Error")
	sp.jCause = compileJ(st.Cause, st.Cause != "", "Cause")
}
