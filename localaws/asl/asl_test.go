package asl_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/transferflow/orchestrator/localaws/asl"
)

func TestLoadReportsEveryProblemWithItsPath(t *testing.T) {
	tests := []struct {
		name string
		def  string
		want []string
	}{
		{
			name: "valid definition",
			def:  `{"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}}`,
		},
		{
			name: "missing StartAt and States",
			def:  `{}`,
			want: []string{"StartAt: field is required", "States: field is required"},
		},
		{
			name: "StartAt names no state",
			def:  `{"StartAt":"B","States":{"A":{"Type":"Pass","End":true}}}`,
			want: []string{`StartAt: state "B" does not exist`},
		},
		{
			name: "Next and End together, and a missing target",
			def:  `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"Z","End":true}}}`,
			want: []string{"States.A: a state must not have both Next and End", `States.A.Next: missing transition target: state "Z" does not exist`},
		},
		{
			name: "retrier values",
			def: `{"StartAt":"Debit","States":{"Debit":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","End":true,
			  "Retry":[{"ErrorEquals":["States.ALL"],"BackoffRate":0.5,"IntervalSeconds":0,"JitterStrategy":"SOME"},{"ErrorEquals":[]}]}}}`,
			want: []string{
				"States.Debit.Retry[0].IntervalSeconds: must be a positive integer",
				"States.Debit.Retry[0].BackoffRate: must be >= 1",
				"States.Debit.Retry[0].JitterStrategy: must be FULL or NONE",
				"States.Debit.Retry[0].ErrorEquals[0]: States.ALL must appear in the last retrier or catcher",
				"States.Debit.Retry[1].ErrorEquals: must contain at least one error name",
			},
		},
		{
			name: "catch with States.ALL among others",
			def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","End":true,
			  "Catch":[{"ErrorEquals":["States.ALL","X"],"Next":"F"}]},"F":{"Type":"Fail"}}}`,
			want: []string{"States.T.Catch[0].ErrorEquals[0]: States.ALL must appear alone"},
		},
		{
			name: "choice rules",
			def: `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[
			  {"Variable":"$.a","StringEquals":1},
			  {"Not":{"Variable":"$.b","IsPresent":true,"Next":"S"},"Next":"S"},
			  {"Variable":"$.c","Next":"S"}]},"S":{"Type":"Succeed"}}}`,
			want: []string{
				"States.C.Choices[0].StringEquals: must be a string",
				"States.C.Choices[0].Next: field is required",
				"States.C.Choices[1].Not.Next: a nested choice rule must not have Next",
				"States.C.Choices[2]: choice rule has no comparison operator",
			},
		},
		{
			name: "unreachable state",
			def:  `{"StartAt":"A","States":{"A":{"Type":"Succeed"},"B":{"Type":"Succeed"}}}`,
			want: []string{"States.B: state is not reachable from StartAt"},
		},
		{
			name: "wait with two durations",
			def:  `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":1,"Timestamp":"2020-01-01T00:00:00Z","End":true}}}`,
			want: []string{"States.W: a Wait state must have exactly one of Seconds, SecondsPath, Timestamp and TimestampPath"},
		},
		{
			name: "unknown field and bad paths",
			def: `{"StartAt":"P","States":{"P":{"Type":"Pass","Foo":1,"InputPath":"a.b","ResultPath":"$.a[*]",
			  "Parameters":{"x.$":"States.Nope(1)","y.$":"$.ok"},"End":true}}}`,
			want: []string{
				"States.P.Foo: field is not supported by a Pass state",
				`States.P.InputPath: invalid JSONPath "a.b": jsonpath: invalid path "a.b" at offset 0: path must start with $`,
				`States.P.ResultPath: must be a reference path (names and indexes only), got "$.a[*]"`,
				`States.P.Parameters.x.$: intrinsic "States.Nope(1)": unknown function States.Nope`,
			},
		},
		{
			name: "problems inside a Parallel branch and a Map processor",
			def: `{"StartAt":"P","States":{"P":{"Type":"Parallel","Next":"M","Branches":[{"StartAt":"X","States":{"X":{"Type":"Pass"}}}]},
			  "M":{"Type":"Map","End":true,"ItemProcessor":{"StartAt":"Y","States":{"Y":{"Type":"Task","End":true}}}}}}`,
			want: []string{
				"States.M.ItemProcessor.States.Y.Resource: field is required",
				"States.P.Branches[0].States.X: a state must have either Next or End: true",
			},
		},
		{
			// Found by FuzzRunValidDefinition: an empty StartAt passed validation and the engine then failed the
			// execution with an internal error (testdata/fuzz/FuzzRunValidDefinition in package sfnengine).
			name: "empty transition targets",
			def: `{"StartAt":"","States":{"A":{"Type":"Choice","Choices":[{"Variable":"$.a","IsPresent":true,"Next":""}],"Default":""},
				"B":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Next":"","Catch":[{"ErrorEquals":["States.ALL"],"Next":""}]}}}`,
			want: []string{
				"StartAt: missing transition target: a state name must not be empty",
				"States.A.Default: missing transition target: a state name must not be empty",
				"States.A.Choices[0].Next: missing transition target: a state name must not be empty",
				"States.B.Next: missing transition target: a state name must not be empty",
				"States.B.Catch[0].Next: missing transition target: a state name must not be empty",
				"States.B: a state must have either Next or End: true",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := loadProblems(tt.def)
			if err != nil && len(got) == 0 {
				t.Fatalf("error without positions: %v", err)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			var ae *asl.Error
			if len(tt.want) > 0 && !errors.As(err, &ae) {
				t.Fatalf("error %T is not an *asl.Error", err)
			}
		})
	}
}

func TestParseRejectsNonObjects(t *testing.T) {
	for _, src := range []string{`[]`, `{`, `"x"`} {
		if _, err := asl.Parse([]byte(src)); err == nil {
			t.Errorf("Parse(%s) succeeded", src)
		}
	}
}

func TestSagaFixtureIsValid(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "sfnengine", "testdata", "saga.asl.json"))
	if err != nil {
		t.Fatal(err)
	}
	def, err := asl.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	if def.StartAt != "Debit" || len(def.States) != 7 || def.TimeoutSeconds != 300 {
		t.Fatalf("parsed %q with %d states, timeout %d", def.StartAt, len(def.States), def.TimeoutSeconds)
	}
	if r := def.States["Debit"].Retry[0]; r.MaxAttempts != 3 || r.BackoffRate != 2 || r.IntervalSeconds != 1 {
		t.Fatalf("retrier = %+v", r)
	}
}

// TestItemBatcherValidation: a Distributed Map's ItemBatcher as AWS documents it
// (https://docs.aws.amazon.com/step-functions/latest/dg/input-output-itembatcher.html): MaxItemsPerBatchPath and
// MaxInputBytesPerBatchPath are JSONPath paths, JSONPath only, each exclusive of its number (or expression) form,
// and MaxInputBytesPerBatch is at most 256 KiB.
func TestItemBatcherValidation(t *testing.T) {
	def := func(lang, batcher string) string {
		return `{` + lang + `"StartAt":"M","States":{"M":{"Type":"Map","End":true,"ItemBatcher":` + batcher + `,
		  "ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}}}}`
	}
	const jsonata = `"QueryLanguage":"JSONata",`
	tests := []struct {
		name string
		def  string
		want []string
	}{
		{name: "both paths", def: def("", `{"MaxItemsPerBatchPath":"$.n","MaxInputBytesPerBatchPath":"$$.Execution.Input.bytes"}`)},
		{name: "a path and the other bound a number", def: def("", `{"MaxItemsPerBatchPath":"$.n","MaxInputBytesPerBatch":262144}`)},
		{name: "both forms of each bound",
			def: def("", `{"MaxItemsPerBatch":2,"MaxItemsPerBatchPath":"$.n","MaxInputBytesPerBatch":1024,"MaxInputBytesPerBatchPath":"$.b"}`),
			want: []string{
				"States.M.ItemBatcher: MaxItemsPerBatch and MaxItemsPerBatchPath are mutually exclusive",
				"States.M.ItemBatcher: MaxInputBytesPerBatch and MaxInputBytesPerBatchPath are mutually exclusive",
			}},
		{name: "bad paths", def: def("", `{"MaxItemsPerBatchPath":"n","MaxInputBytesPerBatchPath":5}`),
			want: []string{
				"States.M.ItemBatcher.MaxInputBytesPerBatchPath: must be a string",
				`States.M.ItemBatcher.MaxItemsPerBatchPath: invalid JSONPath "n"`,
			}},
		{name: "MaxInputBytesPerBatch over 256 KiB", def: def("", `{"MaxInputBytesPerBatch":262145}`),
			want: []string{"States.M.ItemBatcher.MaxInputBytesPerBatch: must be at most 262144 (256 KiB)"}},
		{name: "MaxInputBytesPerBatch over 256 KiB in a JSONata state", def: def(jsonata, `{"MaxInputBytesPerBatch":300000}`),
			want: []string{"States.M.ItemBatcher.MaxInputBytesPerBatch: must be at most 262144 (256 KiB)"}},
		{name: "the paths in a JSONata state", def: def(jsonata, `{"MaxItemsPerBatchPath":"$.n","MaxInputBytesPerBatchPath":"$.b"}`),
			want: []string{
				"States.M.ItemBatcher: The QueryLanguage is set to 'JSONata', but field 'MaxItemsPerBatchPath' is only supported for the 'JSONPath' QueryLanguage",
				"States.M.ItemBatcher: The QueryLanguage is set to 'JSONata', but field 'MaxInputBytesPerBatchPath' is only supported for the 'JSONPath' QueryLanguage",
			}},
		{name: "an expression and its path in a JSONata state", def: def(jsonata, `{"MaxItemsPerBatch":"{% 2 %}","MaxItemsPerBatchPath":"$.n"}`),
			want: []string{
				"States.M.ItemBatcher: MaxItemsPerBatch and MaxItemsPerBatchPath are mutually exclusive",
				"States.M.ItemBatcher: The QueryLanguage is set to 'JSONata', but field 'MaxItemsPerBatchPath' is only supported for the 'JSONPath' QueryLanguage",
			}},
		{name: "no bound", def: def("", `{"BatchInput":{}}`),
			want: []string{"States.M.ItemBatcher: must have MaxItemsPerBatch or MaxInputBytesPerBatch (or MaxItemsPerBatchPath or MaxInputBytesPerBatchPath)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := loadProblems(tc.def)
			if err != nil && len(got) == 0 {
				t.Fatalf("error without positions: %v", err)
			}
			checkProblemPrefixes(t, got, tc.want)
		})
	}
}
