package sfnapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
	"github.com/transferflow/orchestrator/localaws/stepfunctions"
)

// TestWireFormat checks what the SDKs depend on below the client: status codes, content type and error bodies.
func TestWireFormat(t *testing.T) {
	srv := stepfunctions.RunT(t)
	tests := []struct {
		name       string
		target     string
		body       string
		wantStatus int
		wantType   string
	}{
		{name: "unknown operation", target: "AWSStepFunctions.Nope", body: `{}`, wantStatus: 400, wantType: "UnknownOperationException"},
		{name: "body that is not JSON", target: "AWSStepFunctions.ListStateMachines", body: `{`, wantStatus: 400, wantType: "SerializationException"},
		{name: "missing required member", target: "AWSStepFunctions.DescribeExecution", body: `{}`, wantStatus: 400, wantType: "ValidationException"},
		{name: "bad page token", target: "AWSStepFunctions.ListStateMachines", body: `{"nextToken":"???"}`, wantStatus: 400, wantType: "InvalidToken"},
		{name: "success", target: "AWSStepFunctions.ListStateMachines", body: `{}`, wantStatus: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, srv.URL()+"/", strings.NewReader(tt.body))
			req.Header.Set("X-Amz-Target", tt.target)
			req.Header.Set("Content-Type", "application/x-amz-json-1.0")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.wantStatus || resp.Header.Get("Content-Type") != "application/x-amz-json-1.0" {
				t.Fatalf("status %d content type %q body %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
			}
			var body map[string]any
			if err := json.Unmarshal(b, &body); err != nil {
				t.Fatalf("body is not JSON: %s", b)
			}
			if tt.wantType != "" && (body["__type"] != tt.wantType || resp.Header.Get("X-Amzn-ErrorType") != tt.wantType || body["message"] == "") {
				t.Fatalf("error body %s, header %q, want type %s", b, resp.Header.Get("X-Amzn-ErrorType"), tt.wantType)
			}
		})
	}
}

func TestListExecutionsPagesAndValidation(t *testing.T) {
	srv := stepfunctions.RunT(t)
	c := srv.Client()
	ctx := context.Background()
	smArn := create(t, c, "many", passChoice)
	for range 5 {
		startAndWait(t, c, srv.Engine(), smArn, "")
	}
	seen := map[string]bool{}
	var token *string
	for pages := 0; pages < 10; pages++ {
		out, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(smArn), MaxResults: 2, NextToken: token})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range out.Executions {
			seen[aws.ToString(e.ExecutionArn)] = true
		}
		if token = out.NextToken; token == nil {
			break
		}
	}
	if len(seen) != 5 {
		t.Fatalf("paged through %d executions, want 5", len(seen))
	}
	_, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(smArn), MaxResults: 1001})
	var ve *types.ValidationException
	if !errors.As(err, &ve) {
		t.Fatalf("maxResults 1001: %v, want ValidationException", err)
	}
	v, err := c.ValidateStateMachineDefinition(ctx, &sfn.ValidateStateMachineDefinitionInput{Definition: aws.String(`{"StartAt":"X","States":{}}`)})
	if err != nil {
		t.Fatal(err)
	}
	if v.Result != types.ValidateStateMachineDefinitionResultCodeFail || len(v.Diagnostics) == 0 {
		t.Fatalf("validate = %+v", v)
	}
}

func TestDescribeStateMachineForExecution(t *testing.T) {
	srv := stepfunctions.RunT(t, stepfunctions.WithClock(sfnengine.NewManualClock(time.Unix(1_700_000_000, 0))))
	c := srv.Client()
	ctx := context.Background()
	smArn := create(t, c, "sm", passChoice)
	out, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn)})
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.DescribeStateMachineForExecution(ctx, &sfn.DescribeStateMachineForExecutionInput{ExecutionArn: out.ExecutionArn})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(d.StateMachineArn) != smArn || aws.ToString(d.Definition) != passChoice || !d.UpdateDate.Equal(time.Unix(1_700_000_000, 0)) {
		t.Fatalf("describe for execution = %+v", d)
	}
}

func TestUpdateStateMachine(t *testing.T) {
	srv := stepfunctions.RunT(t)
	c := srv.Client()
	ctx := context.Background()
	smArn := create(t, c, "upd", passChoice)
	newDef := `{"StartAt":"P","States":{"P":{"Type":"Pass","Result":"v2","End":true}}}`
	if _, err := c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(smArn), Definition: aws.String(newDef)}); err != nil {
		t.Fatal(err)
	}
	out, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn)})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := srv.Engine().Wait(ctx, aws.ToString(out.ExecutionArn))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Output == nil || *rec.Output != `"v2"` {
		t.Fatalf("execution after update returned %v", rec.Output)
	}
	_, err = c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(smArn), Definition: aws.String(`{"StartAt":"Q","States":{}}`)})
	var inv *types.InvalidDefinition
	if !errors.As(err, &inv) {
		t.Fatalf("invalid definition: %v", err)
	}
	_, err = c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(smArn)})
	var missing *types.MissingRequiredParameter
	if !errors.As(err, &missing) {
		t.Fatalf("no change: %v, want MissingRequiredParameter", err)
	}
}
