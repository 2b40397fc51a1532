package asl_test

import (
	"strings"
	"testing"
)

// TestQueryLanguageValidation: the fields of each query language, AWS's messages for the other language's fields
// (as measured with ValidateStateMachineDefinition), Assign names, and JSONata expressions checked at creation.
func TestQueryLanguageValidation(t *testing.T) {
	tests := []struct {
		name string
		def  string
		want []string
	}{
		{
			name: "a JSONata machine with Arguments, Output, Assign and Condition",
			def: `{"QueryLanguage":"JSONata","StartAt":"T","States":{
			  "T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Arguments":{"FunctionName":"f","Payload":"{% $states.input %}"},
			    "Output":"{% $states.result.Payload %}","Assign":{"id":"{% $states.input.id %}"},"TimeoutSeconds":"{% 3 + 4 %}","Next":"C"},
			  "C":{"Type":"Choice","Choices":[{"Condition":"{% $id = 1 %}","Next":"W","Assign":{"x":1},"Output":{"y":"{% $x %}"}}],"Default":"W"},
			  "W":{"Type":"Wait","Seconds":"{% 1 %}","Next":"M"},
			  "M":{"Type":"Map","Items":"{% [1,2] %}","ItemSelector":{"v":"{% $states.context.Map.Item.Value %}"},
			    "ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
		},
		{
			name: "a JSONPath machine with a JSONata state and variables in paths",
			def: `{"StartAt":"A","States":{
			  "A":{"Type":"Pass","Result":{"n":1},"Assign":{"n.$":"$.n","lit":"x","sum.$":"States.MathAdd($.n, 1)"},"Next":"B"},
			  "B":{"Type":"Pass","QueryLanguage":"JSONata","Output":"{% $n %}","Next":"C"},
			  "C":{"Type":"Pass","Parameters":{"n.$":"$n","s.$":"$states.input"},"End":true}}}`,
		},
		{
			name: "JSONPath fields in a JSONata state",
			def: `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke",
			  "InputPath":"$.a","Parameters":{},"ResultPath":"$.r","End":true,"Catch":[{"ErrorEquals":["States.ALL"],"ResultPath":"$.e","Next":"F"}]},
			  "F":{"Type":"Fail"}}}`,
			want: []string{
				"States.A: The QueryLanguage is set to 'JSONata', but field 'InputPath' is only supported for the 'JSONPath' QueryLanguage",
				"States.A: The QueryLanguage is set to 'JSONata', but field 'ResultPath' is only supported for the 'JSONPath' QueryLanguage",
				"States.A: The QueryLanguage is set to 'JSONata', but field 'Parameters' is only supported for the 'JSONPath' QueryLanguage",
				"States.A.Catch[0]: The QueryLanguage is set to 'JSONata', but field 'ResultPath' is only supported for the 'JSONPath' QueryLanguage",
			},
		},
		{
			name: "JSONata fields in a JSONPath state",
			def: `{"StartAt":"A","States":{"A":{"Type":"Pass","Output":{"a":1},"Next":"C"},
			  "C":{"Type":"Choice","Choices":[{"Condition":"{% true %}","Next":"S"}]},"S":{"Type":"Succeed"}}}`,
			want: []string{
				"States.A: The QueryLanguage is set to 'JSONPath', but field 'Output' is only supported for the 'JSONata' QueryLanguage",
				"States.C.Choices[0]: The QueryLanguage is set to 'JSONPath', but field 'Condition' is only supported for the 'JSONata' QueryLanguage",
			},
		},
		{
			name: "a JSONPath state in a JSONata machine",
			def:  `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","QueryLanguage":"JSONPath","End":true}}}`,
			want: []string{"States.A: 'QueryLanguage' can not be 'JSONPath' if set to 'JSONata' for whole state machine"},
		},
		{
			name: "an unknown query language",
			def:  `{"QueryLanguage":"XPath","StartAt":"A","States":{"A":{"Type":"Pass","End":true}}}`,
			want: []string{"QueryLanguage: Value should be one of the following: [JSONPath, JSONata]"},
		},
		{
			name: "QueryLanguage on a branch object",
			def: `{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[
			  {"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","End":true}}}]}}}`,
			want: []string{"States.P.Branches[0].QueryLanguage: field is not supported"},
		},
		{
			name: "bad expressions",
			def: `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","Output":{"a":"{% $states.input.( %}",
			  "b":"{% phone %}","c":"{% $$.Execution %}","d":"{% $states.errorOutput %}"},"End":true}}}`,
			want: []string{
				"States.A.Output.a: INVALID_JSONATA_EXPRESSION:",
				"States.A.Output.b: UNSUPPORTED_JSONATA_EXPRESSION: Reference to 'phone' at the top level is not supported.",
				"States.A.Output.c: UNSUPPORTED_JSONATA_EXPRESSION: Reference to '$$' is not supported.",
				"States.A.Output.d: UNSUPPORTED_JSONATA_EXPRESSION: $states.errorOutput is only available in a Catch's Output and Assign.",
			},
		},
		{
			name: "a JSONata Distributed Map's ItemBatcher: expressions, and a .$ key that is a key like any other",
			def: `{"QueryLanguage":"JSONata","StartAt":"M","States":{"M":{"Type":"Map","End":true,
			  "ItemBatcher":{"MaxItemsPerBatch":"{% $states.input.n %}","MaxInputBytesPerBatch":"{% 1024 %}",
			    "BatchInput":{"a":"{% $states.input.a %}","lit.$":"not a path","list":[1,"{% $states.context.State.Name %}"]}},
			  "ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}}}}`,
		},
		{
			name: "bad expressions in a JSONata ItemBatcher",
			def: `{"QueryLanguage":"JSONata","StartAt":"M","States":{"M":{"Type":"Map","End":true,
			  "ItemBatcher":{"MaxItemsPerBatch":"{% $states.input.( %}","MaxInputBytesPerBatch":"{% phone %}",
			    "BatchInput":{"a":"{% $states.input.( %}","b":["{% phone %}"]}},
			  "ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}}}}`,
			want: []string{
				"States.M.ItemBatcher.BatchInput.a: INVALID_JSONATA_EXPRESSION:",
				"States.M.ItemBatcher.BatchInput.b[0]: UNSUPPORTED_JSONATA_EXPRESSION: Reference to 'phone' at the top level is not supported.",
				"States.M.ItemBatcher.MaxItemsPerBatch: INVALID_JSONATA_EXPRESSION:",
				"States.M.ItemBatcher.MaxInputBytesPerBatch: UNSUPPORTED_JSONATA_EXPRESSION: Reference to 'phone' at the top level is not supported.",
			},
		},
		{
			name: "a JSONPath ItemBatcher: BatchInput is a payload template, its bounds numbers",
			def: `{"StartAt":"M","States":{"M":{"Type":"Map","End":true,
			  "ItemBatcher":{"MaxItemsPerBatch":"{% $states.input.n %}","MaxInputBytesPerBatch":1024,"BatchInput":{"a.$":"not a path"}},
			  "ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}}}}`,
			want: []string{
				"States.M.ItemBatcher.MaxItemsPerBatch: must be an integer",
				"States.M.ItemBatcher.BatchInput.a.$:",
			},
		},
		{
			name: "variable names",
			def: `{"StartAt":"A","States":{"A":{"Type":"Pass","Assign":{"states":1,"1x":2,"ok_1":3,"a-b.$":"$.x",
			  "` + strings.Repeat("v", 81) + `":0},"End":true}}}`,
			want: []string{
				"States.A.Assign.1x: the variable name '1x' is not valid: it must start with a letter or _ and contain only letters, digits and _",
				"States.A.Assign.a-b.$: the variable name 'a-b' is not valid: it must start with a letter or _ and contain only letters, digits and _",
				"States.A.Assign.states: the variable name 'states' is reserved",
				"States.A.Assign." + strings.Repeat("v", 81) + ": the variable name '" + strings.Repeat("v", 81) + "' is longer than 80 characters",
			},
		},
		{
			name: "Assign on a Succeed state and a JSONPath Assign path",
			def:  `{"StartAt":"A","States":{"A":{"Type":"Pass","Assign":{"x.$":"$..["},"Next":"S"},"S":{"Type":"Succeed","Assign":{}}}}`,
			want: []string{"States.A.Assign.x.$: invalid JSONPath", "States.S.Assign: field is not supported by a Succeed state"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := loadProblems(tc.def)
			checkProblemPrefixes(t, got, tc.want)
		})
	}
}
