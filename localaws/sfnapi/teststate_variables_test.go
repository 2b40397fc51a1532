package sfnapi_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
	"github.com/transferflow/orchestrator/localaws/stepfunctions"
)

// TestTestStateVariablesAndJSONata: TestState runs JSONata states (Output, Arguments, Condition, the catcher's Output)
// and the Assign of both query languages, with the request's variables visible to the state; inspectionData's
// variables are those the state leaves: the request's and those it assigned. (TestState ran every state as JSONPath
// and ignored Assign: a JSONata Pass answered its input, a JSONata Choice States.Runtime.)
func TestTestStateVariablesAndJSONata(t *testing.T) {
	srv := stepfunctions.RunT(t, stepfunctions.WithEngineOptions(sfnengine.Options{Lambda: &scriptedLambda{}}))
	c := srv.Client()
	ctx := context.Background()
	s := aws.String
	tests := []struct {
		name                  string
		in                    sfn.TestStateInput
		wantStatus            types.TestExecutionStatus
		wantOutput, wantNext  string
		wantVariables         string
		wantError, wantCauses string
	}{
		{name: "JSONata pass", in: sfn.TestStateInput{
			Definition: s(`{"Type":"Pass","QueryLanguage":"JSONata","Output":"{% $states.input.a + $x %}","Assign":{"y":"{% $x * 2 %}"},"Next":"N"}`),
			Input:      s(`{"a":2}`), Variables: s(`{"x":1}`)},
			wantStatus: types.TestExecutionStatusSucceeded, wantOutput: `3`, wantNext: "N", wantVariables: `{"x":1,"y":2}`},
		{name: "JSONata task with a mock", in: sfn.TestStateInput{
			Definition: s(`{"Type":"Task","QueryLanguage":"JSONata","Resource":"arn:aws:states:::lambda:invoke",
			  "Arguments":{"FunctionName":"f","Payload":"{% $x %}"},"Output":"{% $states.result.v %}","Assign":{"r":"{% $states.result.v + $x %}"},"End":true}`),
			Mock: &types.MockInput{Result: s(`{"v":5}`)}, Variables: s(`{"x":1}`)},
			wantStatus: types.TestExecutionStatusSucceeded, wantOutput: `5`, wantVariables: `{"r":6,"x":1}`},
		{name: "JSONata task calls with its Arguments", in: sfn.TestStateInput{
			Definition: s(`{"Type":"Task","QueryLanguage":"JSONata","Resource":"arn:aws:states:::lambda:invoke",
			  "Arguments":{"FunctionName":"f","Payload":{"n":"{% $x %}"}},"Output":"{% $states.result.Payload.echo %}","End":true}`),
			RoleArn: s(role), Variables: s(`{"x":1}`)},
			wantStatus: types.TestExecutionStatusSucceeded, wantOutput: `{"n":1}`, wantVariables: `{"x":1}`},
		{name: "JSONata task caught", in: sfn.TestStateInput{
			Definition: s(`{"Type":"Task","QueryLanguage":"JSONata","Resource":"arn:aws:states:::lambda:invoke",
			  "Arguments":{"FunctionName":"f"},"Catch":[{"ErrorEquals":["States.ALL"],"Next":"H",
			  "Output":"{% $states.errorOutput.Error %}","Assign":{"failed":true}}],"End":true}`),
			Mock: &types.MockInput{ErrorOutput: &types.MockErrorOutput{Error: s("Boom"), Cause: s("c")}}},
			wantStatus: types.TestExecutionStatusCaughtError, wantOutput: `"Boom"`, wantNext: "H", wantVariables: `{"failed":true}`,
			wantError: "Boom"},
		{name: "JSONata choice", in: sfn.TestStateInput{
			Definition: s(`{"Type":"Choice","QueryLanguage":"JSONata","Choices":[{"Condition":"{% $x > 0 %}","Next":"Pos",
			  "Assign":{"sign":"+"}}],"Default":"Neg"}`),
			Input: s(`{}`), Variables: s(`{"x":1}`)},
			wantStatus: types.TestExecutionStatusSucceeded, wantOutput: `{}`, wantNext: "Pos", wantVariables: `{"sign":"+","x":1}`},
		{name: "JSONPath pass reads and assigns variables", in: sfn.TestStateInput{
			Definition: s(`{"Type":"Pass","Parameters":{"w.$":"$x","a.$":"$.a"},"Assign":{"z.$":"$.a"},"End":true}`),
			Input:      s(`{"a":2}`), Variables: s(`{"x":7}`)},
			wantStatus: types.TestExecutionStatusSucceeded, wantOutput: `{"a":2,"w":7}`, wantVariables: `{"x":7,"z":2}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.InspectionLevel = types.InspectionLevelDebug
			out, err := c.TestState(ctx, &tc.in)
			if err != nil {
				t.Fatal(err)
			}
			checkTestStateAnswer(t, out, tc.wantStatus, tc.wantOutput, tc.wantNext, tc.wantError)
			if out.InspectionData == nil || aws.ToString(out.InspectionData.Variables) != tc.wantVariables {
				var got string
				if out.InspectionData != nil {
					got = aws.ToString(out.InspectionData.Variables)
				}
				t.Fatalf("inspectionData.variables %s, want %s", got, tc.wantVariables)
			}
		})
	}
}
