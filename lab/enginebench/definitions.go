package enginebench

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
	"github.com/transferflow/orchestrator/localaws/sfnengine/instantaws"
)

// definition is one compared workflow: its ASL text, the input every execution gets, and for the Node side the
// result each Task state answers with.
type definition struct {
	name        string // Row.Definition
	machineName string
	asl         string
	input       string
	taskResults map[string]any // by state name
	// motoSkip, when set, is why moto does not run the definition.
	motoSkip string
}

// placeholder is a DefinitionSubstitutions placeholder such as ${TableName}.
var placeholder = regexp.MustCompile(`\$\{[A-Za-z0-9_]+\}`)

//go:embed testdata/passchoice10.asl.json
var passChoice10 string

// roleArn is the execution role both sides report in $$.Execution.RoleArn.
const roleArn = "arn:aws:iam::123456789012:role/transfer-orchestrator"

// transferInput is the input of a transfer execution, as the orchestrator function starts it.
const transferInput = `{"transferId":"t1","recordKey":"TRANSFER#t1","sourceAccountId":"acc-alice",` +
	`"destinationAccountId":"acc-bob","amount":1250,"currency":"EUR","reference":"","createdAt":"2026-06-01T00:00:00.000Z","authority":"owner:test"}`

// transferSubstitutions are the DefinitionSubstitutions of template.yaml, with values of the right shape.
var transferSubstitutions = map[string]string{
	"DebitFunctionArn":  "arn:aws:lambda:us-east-1:123456789012:function:transfer-debit",
	"CreditFunctionArn": "arn:aws:lambda:us-east-1:123456789012:function:transfer-credit",
	"TableName":         "transfers",
	"EventBusName":      "transfers",
}

// definitions returns the compared workflows: statemachine/transfer.asl.json under root, placeholders substituted,
// and the embedded 10-state Pass/Choice workflow.
func definitions(root string) ([]definition, error) {
	path := filepath.Join(root, "statemachine", "transfer.asl.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the transfer workflow: %w", err)
	}
	transfer := sfnengine.SubstituteDefinition(string(b), transferSubstitutions)
	if m := placeholder.FindString(transfer); m != "" {
		return nil, fmt.Errorf("%s: placeholder %s has no value here", path, m)
	}
	defs := []definition{
		{name: "transfer.asl.json (instant tasks)", machineName: "transfer", asl: transfer, input: transferInput,
			motoSkip: "its Tasks call Lambda functions, which moto runs only in Docker containers"},
		{name: "10-state Pass/Choice", machineName: "passchoice10", asl: passChoice10, input: `{"x":1}`},
	}
	for i := range defs {
		if defs[i].taskResults, err = taskResults(defs[i].asl); err != nil {
			return nil, fmt.Errorf("%s: %w", defs[i].name, err)
		}
	}
	return defs, nil
}

// taskResults returns, for each top-level Task state, the result our engine's integration produces when the call
// answers at once, so that the Node side's local handler returns the same document.
func taskResults(text string) (map[string]any, error) {
	var def struct {
		States map[string]struct {
			Type     string `json:"Type"`
			Resource string `json:"Resource"`
		} `json:"States"`
	}
	if err := json.Unmarshal([]byte(text), &def); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	out := map[string]any{}
	for name, st := range def.States {
		if st.Type != "Task" {
			continue
		}
		switch {
		case st.Resource == "arn:aws:states:::lambda:invoke":
			out[name] = lambdaInvokeResult()
		case strings.HasPrefix(st.Resource, "arn:aws:states:::dynamodb:"):
			out[name] = dynamoResult()
		case st.Resource == "arn:aws:states:::events:putEvents":
			out[name] = putEventsResult()
		default:
			return nil, fmt.Errorf("state %s: resource %s has no instant answer here", name, st.Resource)
		}
	}
	return out, nil
}

// lambdaInvokeResult is the shape of a lambda:invoke task result whose function returned instantaws.LegAnswer.
func lambdaInvokeResult() map[string]any {
	headers := map[string]any{"Connection": "keep-alive", "Content-Type": "application/json", "Content-Length": strconv.Itoa(len(instantaws.LegAnswer)),
		"Date": "Mon, 01 Jun 2026 00:00:00 GMT", "X-Amz-Executed-Version": "$LATEST", "x-amzn-Remapped-Content-Length": "0",
		"x-amzn-RequestId": "00000000-0000-4000-8000-000000000000"}
	all := map[string]any{}
	for k, v := range headers {
		all[k] = []any{v}
	}
	return map[string]any{
		"ExecutedVersion":     "$LATEST",
		"Payload":             map[string]any{"ok": true, "completedAt": instantaws.CompletedAt},
		"SdkHttpMetadata":     map[string]any{"AllHttpHeaders": all, "HttpHeaders": headers, "HttpStatusCode": 200},
		"SdkResponseMetadata": map[string]any{"RequestId": headers["x-amzn-RequestId"]},
		"StatusCode":          200,
	}
}

// putEventsResult is the shape of an events:putEvents task result with one entry accepted.
func putEventsResult() map[string]any {
	return map[string]any{"Entries": []any{map[string]any{"EventId": instantaws.EventID}}, "FailedEntryCount": 0}
}

// dynamoResult is the shape of a dynamodb:updateItem task result with ReturnValues ALL_NEW (instantaws.SettledRecord).
func dynamoResult() map[string]any {
	attrs := map[string]any{}
	for k, v := range instantaws.SettledRecord {
		attrs[k] = map[string]any{"S": v}
	}
	return map[string]any{
		"Attributes":          attrs,
		"SdkHttpMetadata":     map[string]any{"AllHttpHeaders": map[string]any{}, "HttpHeaders": map[string]any{}, "HttpStatusCode": 200},
		"SdkResponseMetadata": map[string]any{"RequestId": ""},
	}
}
