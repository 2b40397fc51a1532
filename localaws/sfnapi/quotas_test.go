package sfnapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/transferflow/orchestrator/localaws/sfnapi"
	"github.com/transferflow/orchestrator/localaws/sfnengine"
	"github.com/transferflow/orchestrator/localaws/stepfunctions"
)

// call sends one request over the wire by hand (the Go SDK checks required members before sending; other clients do
// not) and returns the status and the error body.
func call(t *testing.T, url, op string, req any) (int, string, string) {
	t.Helper()
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return post(t, url, op, bytes.NewReader(b), int64(len(b)))
}

// post sends body, of length bytes, as a request for op and returns the status and the error body.
func post(t *testing.T, url, op string, body io.Reader, length int64) (int, string, string) {
	t.Helper()
	resp := postOp(t, url, op, body, length)
	defer resp.Body.Close()
	var out struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}
	raw, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out.Type, out.Message
}

// postOp sends body, of length bytes, as a request for op by hand; the caller closes the response's body.
func postOp(t *testing.T, url, op string, body io.Reader, length int64) *http.Response {
	t.Helper()
	hr, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, body)
	if err != nil {
		t.Fatal(err)
	}
	hr.ContentLength = length
	hr.Header.Set("X-Amz-Target", "AWSStepFunctions."+op)
	hr.Header.Set("Content-Type", "application/x-amz-json-1.0")
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// padded returns a valid definition of exactly n characters, padded with c in its Comment.
func padded(t *testing.T, n int, c rune) string {
	t.Helper()
	head, tail := `{"Comment":"`, `","StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`
	pad := n - len(head) - len(tail)
	if pad < 0 {
		t.Fatal("too short")
	}
	return head + strings.Repeat(string(c), pad) + tail
}

// TestQuotasAndValidationOrder: the API's quotas (names 80 characters, ARNs 256, a definition 1,048,576
// characters, an input 262,144 bytes) are ValidationExceptions naming the member, with AWS's wording, and they come
// before the checks of names, ARNs, state machines and inputs, in the order AWS makes them (measured on AWS for
// StartExecution: model constraints, then the state machine, then the name's characters and the input's JSON).
func TestQuotasAndValidationOrder(t *testing.T) {
	srv := stepfunctions.RunT(t)
	arn := create(t, srv.Client(), "sm", passChoice)
	missing := "arn:aws:states:us-east-1:123456789012:stateMachine:missing"
	long := strings.Repeat("n", 81)
	longArn := "arn:aws:states:us-east-1:123456789012:stateMachine:" + strings.Repeat("x", 257-len("arn:aws:states:us-east-1:123456789012:stateMachine:"))
	bigInput := `"` + strings.Repeat("i", sfnapi.MaxInputBytes-1) + `"` // 262,145 bytes
	const v1 = "1 validation error detected: "
	tests := []struct {
		name     string
		op       string
		req      map[string]any
		wantType string
		wantMsg  string // exact; a trailing "…" makes it a prefix
	}{
		{
			name: "definition over 1,048,576 characters", op: "CreateStateMachine",
			req:      map[string]any{"name": "big", "roleArn": role, "definition": padded(t, sfnapi.MaxDefinitionLength+1, 'c')},
			wantType: "ValidationException",
			wantMsg:  v1 + "Value at 'definition' failed to satisfy constraint: Member must have length less than or equal to 1048576",
		},
		{
			name: "2 MB definition in ASCII", op: "CreateStateMachine",
			req:      map[string]any{"name": "big2", "roleArn": role, "definition": padded(t, 2_000_000, 'c')},
			wantType: "ValidationException",
			wantMsg:  v1 + "Value at 'definition' failed to satisfy constraint: Member must have length less than or equal to 1048576",
		},
		{
			name: "state machine name of 81 characters", op: "CreateStateMachine",
			req:      map[string]any{"name": long, "roleArn": role, "definition": passChoice},
			wantType: "ValidationException",
			wantMsg:  v1 + "Value '" + long + "' at 'name' failed to satisfy constraint: Member must have length less than or equal to 80",
		},
		{
			name: "every violation at once, in the model's order", op: "CreateStateMachine",
			req:      map[string]any{"name": long, "roleArn": "", "definition": passChoice, "type": "BATCH"},
			wantType: "ValidationException",
			wantMsg: "3 validation errors detected: Value '" + long + "' at 'name' failed to satisfy constraint: Member must have length less than or equal to 80; " +
				"Value '' at 'roleArn' failed to satisfy constraint: Member must have length greater than or equal to 1; " +
				"Value 'BATCH' at 'type' failed to satisfy constraint: Member must satisfy enum value set: [STANDARD, EXPRESS]",
		},
		{
			name: "name characters after the quotas", op: "CreateStateMachine",
			req:      map[string]any{"name": "a b", "roleArn": role, "definition": "{"},
			wantType: "InvalidName", wantMsg: "Invalid Name: 'a b'",
		},
		{
			name: "role that is not an ARN, before the definition", op: "CreateStateMachine",
			req:      map[string]any{"name": "r", "roleArn": "role", "definition": "{"},
			wantType: "InvalidArn", wantMsg: "Invalid Arn: 'Invalid ARN prefix: role'",
		},
		{
			name: "ARN over 256 characters", op: "DescribeStateMachine",
			req:      map[string]any{"stateMachineArn": longArn},
			wantType: "ValidationException",
			wantMsg:  v1 + "Value '" + longArn + "' at 'stateMachineArn' failed to satisfy constraint: Member must have length less than or equal to 256",
		},
		{
			name: "execution name of 81 characters", op: "StartExecution",
			req:      map[string]any{"stateMachineArn": arn, "name": long},
			wantType: "ValidationException",
			wantMsg:  v1 + "Value '" + long + "' at 'name' failed to satisfy constraint: Member must have length less than or equal to 80",
		},
		{
			name: "input over 262,144 bytes", op: "StartExecution",
			req:      map[string]any{"stateMachineArn": arn, "input": bigInput},
			wantType: "ValidationException",
			wantMsg:  v1 + "Value at 'input' failed to satisfy constraint: Member must have size less than or equal to 262144 bytes in UTF-8 encoding",
		},
		{
			name: "quotas before the state machine's existence", op: "StartExecution",
			req:      map[string]any{"stateMachineArn": missing, "name": long, "input": bigInput},
			wantType: "ValidationException",
			wantMsg: "2 validation errors detected: Value '" + long + "' at 'name' failed to satisfy constraint: Member must have length less than or equal to 80; " +
				"Value at 'input' failed to satisfy constraint: Member must have size less than or equal to 262144 bytes in UTF-8 encoding",
		},
		{
			name: "the state machine before the name and the input", op: "StartExecution",
			req:      map[string]any{"stateMachineArn": missing, "name": "a b", "input": "{"},
			wantType: "StateMachineDoesNotExist", wantMsg: "State Machine Does Not Exist: '" + missing + "'",
		},
		{
			name: "the name before the input", op: "StartExecution",
			req:      map[string]any{"stateMachineArn": arn, "name": "a b", "input": "{"},
			wantType: "InvalidName", wantMsg: "Invalid Name: 'a b'",
		},
		{
			name: "input that is not JSON", op: "StartExecution",
			req:      map[string]any{"stateMachineArn": arn, "input": "{"},
			wantType: "InvalidExecutionInput", wantMsg: "Invalid State Machine Execution Input: '…",
		},
		{
			name: "state machine ARN that is not one", op: "StartExecution",
			req:      map[string]any{"stateMachineArn": "not-an-arn"},
			wantType: "InvalidArn", wantMsg: "Invalid Arn: 'Invalid ARN prefix: not-an-arn'",
		},
		{
			name: "stop cause over 32,768 characters", op: "StopExecution",
			req:      map[string]any{"executionArn": "arn:aws:states:us-east-1:123456789012:execution:sm:x", "cause": strings.Repeat("c", 32769)},
			wantType: "ValidationException",
			wantMsg:  v1 + "Value at 'cause' failed to satisfy constraint: Member must have length less than or equal to 32768",
		},
		{
			name: "history page over 1,000", op: "GetExecutionHistory",
			req:      map[string]any{"executionArn": "arn:aws:states:us-east-1:123456789012:execution:sm:x", "maxResults": 1001},
			wantType: "ValidationException",
			wantMsg:  v1 + "Value '1001' at 'maxResults' failed to satisfy constraint: Member must have value less than or equal to 1000",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, typ, msg := call(t, srv.URL(), tt.op, tt.req)
			prefix, isPrefix := strings.CutSuffix(tt.wantMsg, "…")
			if status != http.StatusBadRequest || typ != tt.wantType || (isPrefix && !strings.HasPrefix(msg, prefix)) || (!isPrefix && msg != tt.wantMsg) {
				t.Fatalf("%d %s %.300q\nwant 400 %s %.300q", status, typ, msg, tt.wantType, tt.wantMsg)
			}
		})
	}
}

// TestQuotasAreInclusive: a definition of exactly 1,048,576 characters (2 MiB of UTF-8: the quota counts
// characters), an 80-character name and an input of exactly 262,144 bytes are accepted.
func TestQuotasAreInclusive(t *testing.T) {
	srv := stepfunctions.RunT(t)
	c := srv.Client()
	ctx := context.Background()
	name := strings.Repeat("n", sfnapi.MaxNameLength)
	arn := create(t, c, name, padded(t, sfnapi.MaxDefinitionLength, 'é'))
	input := `"` + strings.Repeat("i", sfnapi.MaxInputBytes-2) + `"`
	out, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(arn), Name: aws.String(name), Input: aws.String(input)})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := srv.Engine().Wait(ctx, aws.ToString(out.ExecutionArn))
	if err != nil || rec.Status != sfnengine.StatusSucceeded || rec.Output == nil || len(*rec.Output) != sfnapi.MaxInputBytes {
		t.Fatalf("execution: %+v, %v", rec, err)
	}
	// Through the SDK, one character more is the typed ValidationException.
	_, err = c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(arn), Name: aws.String(name + "n")})
	var ve *types.ValidationException
	if !errors.As(err, &ve) {
		t.Fatalf("81-character name: %v, want ValidationException", err)
	}
}

// TestOversizedRequests: a request the local API can read (a 5 MB input) gets the ValidationException of the member
// that is too large; one over MaxRequestBytes is refused with HTTP 413 and a message saying so, by its
// Content-Length before it is read, or once MaxRequestBytes have been read when it has none.
func TestOversizedRequests(t *testing.T) {
	srv := stepfunctions.RunT(t)
	arn := create(t, srv.Client(), "sm", passChoice)
	status, typ, msg := call(t, srv.URL(), "StartExecution", map[string]any{"stateMachineArn": arn, "input": `"` + strings.Repeat("i", 5<<20) + `"`})
	if status != http.StatusBadRequest || typ != "ValidationException" || !strings.Contains(msg, "at 'input'") {
		t.Fatalf("5 MB input: %d %s %q", status, typ, msg)
	}
	huge := `{"stateMachineArn":"` + arn + `","input":"` + strings.Repeat("i", sfnapi.MaxRequestBytes) + `"}`
	for _, tt := range []struct {
		name   string
		length int64
	}{{"with its Content-Length", int64(len(huge))}, {"chunked", -1}} {
		t.Run(tt.name, func(t *testing.T) {
			status, typ, msg := post(t, srv.URL(), "StartExecution", io.MultiReader(strings.NewReader(huge)), tt.length)
			if status != http.StatusRequestEntityTooLarge || typ != "RequestEntityTooLarge" || !strings.Contains(msg, "exceeds 8388608 bytes") {
				t.Fatalf("%d %s %q", status, typ, msg)
			}
			if l, err := srv.Engine().ListExecutions(context.Background(), arn, ""); err != nil || len(l) != 0 {
				t.Fatalf("executions after a refused request: %d, %v", len(l), err)
			}
		})
	}
}
