// Package asl holds the Amazon States Language definition model, for both query languages (JSONPath and JSONata
// states, workflow variables): Parse turns a definition document into an immutable *Definition, Validate reports
// every problem with the path of the offending field (for example States.Debit.Retry[0].BackoffRate). The engine in
// package sfnengine runs a validated Definition.
package asl

import "github.com/transferflow/orchestrator/localaws/asl/jsonvalue"

// Error is one positioned problem in a definition. Path names the field, e.g. States.Debit.Retry[0].BackoffRate.
type Error struct {
	Path string
	Msg  string
	// Code is the ValidateStateMachineDefinition diagnostic code of the problem; empty means
	// SCHEMA_VALIDATION_FAILED.
	Code string
}

// Error returns "path: message".
func (e *Error) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// State types.
const (
	TypePass     = "Pass"
	TypeTask     = "Task"
	TypeChoice   = "Choice"
	TypeWait     = "Wait"
	TypeSucceed  = "Succeed"
	TypeFail     = "Fail"
	TypeParallel = "Parallel"
	TypeMap      = "Map"
)

// Definition is a parsed state machine, or a Parallel branch, or a Map item processor. It must not be modified
// after Parse returns: executions share it.
type Definition struct {
	Comment        string
	StartAt        string
	States         map[string]*State
	Order          []string // state names in document order
	TimeoutSeconds int64    // 0: none
	Version        string
	// QueryLanguage is the field as written ("" when absent); JSONata reports whether the machine's language is
	// JSONata (then every state is).
	QueryLanguage string
	JSONata       bool
	// ProcessorMode is the Map ItemProcessor ProcessorConfig.Mode ("INLINE" when absent).
	ProcessorMode string
	// ExecutionType is the ProcessorConfig.ExecutionType of a DISTRIBUTED item processor: STANDARD or EXPRESS.
	ExecutionType string

	problems  []*Error // decode problems found by Parse, reported by Validate
	hasStates bool     // the States field is present and an object
}

// OptPath is an InputPath, OutputPath or ResultPath field: absent (the default "$"), null, or a path.
type OptPath struct {
	Set  bool
	Null bool
	Path string
}

// Retrier is one entry of a state's Retry field.
type Retrier struct {
	ErrorEquals     []string
	IntervalSeconds int64
	MaxAttempts     int64
	BackoffRate     float64
	MaxDelaySeconds int64 // 0: no cap
	JitterStrategy  string
}

// Catcher is one entry of a state's Catch field.
type Catcher struct {
	ErrorEquals []string
	Next        string
	ResultPath  OptPath
	// Assign and Output (JSONata states) are evaluated with $states.errorOutput.
	Assign    any
	HasAssign bool
	Output    any
	HasOutput bool
}

// ChoiceRule is a Choice rule: a comparison (Variable, Operator, Operand), or a boolean combination (And, Or, Not).
// Top-level rules carry Next.
type ChoiceRule struct {
	Variable string
	Operator string // e.g. StringEquals, NumericLessThanPath, IsPresent
	Operand  any    // the literal, or the path for *Path operators
	And      []*ChoiceRule
	Or       []*ChoiceRule
	Not      *ChoiceRule
	Next     string
	// Condition is the rule of a JSONata Choice state: a "{% … %}" string or a boolean.
	Condition    any
	HasCondition bool
	// Assign and Output of a top-level rule apply when it matches.
	Assign    any
	HasAssign bool
	Output    any
	HasOutput bool
}

// State is one state of a definition. Only the fields of its Type are meaningful.
type State struct {
	Name    string
	Type    string
	Comment string
	Next    string
	End     bool
	// QueryLanguage is the field as written on the state ("" when absent); JSONata reports whether the state's
	// language, its own or the machine's, is JSONata.
	QueryLanguage string
	JSONata       bool
	// langConflict: a JSONPath state in a JSONata machine (reported once by Validate).
	langConflict bool

	// Assign is the state's variable assignments (both languages), nil when absent (HasAssign false).
	Assign    any
	HasAssign bool
	// JSONata fields: Arguments (Task, Parallel), Output, Items (Map).
	Arguments    any
	HasArguments bool
	Output       any
	HasOutput    bool
	Items        any
	HasItems     bool
	// Expressions given for numeric fields in JSONata states ("{% … %}"): TimeoutSeconds, HeartbeatSeconds, Wait
	// Seconds and Timestamp, Map MaxConcurrency, ToleratedFailurePercentage and ToleratedFailureCount.
	TimeoutSecondsExpr        string
	HeartbeatSecondsExpr      string
	SecondsExpr               string
	TimestampExpr             string
	MaxConcurrencyExpr        string
	ToleratedFailurePctExpr   any
	ToleratedFailureCountExpr any

	InputPath      OptPath
	OutputPath     OptPath
	ResultPath     OptPath
	Parameters     any // nil when absent (HasParameters false)
	HasParameters  bool
	ResultSelector any
	HasSelector    bool

	// Pass
	Result    any
	HasResult bool

	// Task
	Resource             string
	TimeoutSeconds       int64
	TimeoutSecondsPath   string
	HeartbeatSeconds     int64
	HeartbeatSecondsPath string
	Retry                []Retrier
	Catch                []Catcher

	// Choice
	Choices []*ChoiceRule
	Default string

	// Wait
	Seconds       *int64
	SecondsPath   string
	Timestamp     string
	TimestampPath string

	// Fail
	Error     string
	ErrorPath string
	Cause     string
	CausePath string

	// Parallel
	Branches []*Definition

	// Map
	ItemProcessor      *Definition
	ItemsPath          OptPath
	ItemSelector       any
	HasItemSelector    bool
	MaxConcurrency     int64
	MaxConcurrencyPath string
	// Distributed Map only (ItemProcessor.ProcessorMode DISTRIBUTED).
	Label                          string
	ToleratedFailurePercentage     float64
	HasToleratedFailurePercentage  bool
	ToleratedFailurePercentagePath string
	ToleratedFailureCount          int64
	HasToleratedFailureCount       bool
	ToleratedFailureCountPath      string
	ItemBatcher                    *ItemBatcher
	// HasItemReader and HasResultWriter report the S3 fields, which the engine rejects.
	HasItemReader   bool
	HasResultWriter bool
}

// MaxInputBytesPerBatchLimit is the largest MaxInputBytesPerBatch AWS allows: "up to 256 KiB"
// (https://docs.aws.amazon.com/step-functions/latest/dg/input-output-itembatcher.html), whether the bound is a
// number, a MaxInputBytesPerBatchPath or a JSONata expression.
const MaxInputBytesPerBatchLimit = 256 * 1024

// ItemBatcher is a Distributed Map's ItemBatcher: items are grouped into batches of at most MaxItemsPerBatch items
// and MaxInputBytesPerBatch bytes (0: no bound), each processed as one {"BatchInput":…,"Items":[…]} input.
type ItemBatcher struct {
	MaxItemsPerBatch      int64
	MaxInputBytesPerBatch int64
	// MaxItemsPerBatchPath and MaxInputBytesPerBatchPath are the bounds given as reference paths in a JSONPath
	// state ("" when absent), resolved when the state runs; each excludes its number or expression form.
	MaxItemsPerBatchPath      string
	MaxInputBytesPerBatchPath string
	// MaxItemsPerBatchExpr and MaxInputBytesPerBatchExpr are the bounds given as "{% … %}" expressions in a JSONata
	// state ("" when the bound is a number or absent), evaluated when the state runs.
	MaxItemsPerBatchExpr      string
	MaxInputBytesPerBatchExpr string
	// BatchInput is a payload template (".$" keys) in a JSONPath state, a JSONata template ("{% … %}" strings at
	// any depth, or the whole value) in a JSONata state; nil when absent.
	BatchInput    any
	HasBatchInput bool
}

// Decode parses JSON text into a generic value: objects as *jsonvalue.Object (key order kept), numbers as
// json.Number.
func Decode(data []byte) (any, error) { return jsonvalue.Decode(data) }

// Load parses and validates a definition, returning the definition or all problems joined.
func Load(data []byte) (*Definition, error) {
	def, err := Parse(data)
	if err != nil {
		return nil, err
	}
	if err := Validate(def); err != nil {
		return nil, err
	}
	return def, nil
}
