package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
		// wantLines are the starts of the output's lines, in order, when the whole output is too long to spell out.
		wantLines []string
	}{
		{name: "valid file", args: []string{"../../localaws/sfnengine/testdata/saga.asl.json"}, wantCode: 0,
			wantOut: "../../localaws/sfnengine/testdata/saga.asl.json: ok\n"},
		{name: "invalid file lists positioned errors", args: []string{filepath.Join("testdata", "bad.asl.json")}, wantCode: 1,
			wantOut: "testdata/bad.asl.json: States.Debit.Retry[0].BackoffRate: must be >= 1\n" +
				"testdata/bad.asl.json: States.Debit.Next: missing transition target: state \"Gone\" does not exist\n"},
		{name: "the project's state machine is clean", args: []string{"../../statemachine/transfer.asl.json"}, wantCode: 0,
			wantOut: "../../statemachine/transfer.asl.json: ok\n"},
		{name: "DynamoDB error names the integration never reports", args: []string{filepath.Join("testdata", "dynamodb-names.asl.json")}, wantCode: 1,
			wantLines: []string{
				`testdata/dynamodb-names.asl.json: States.Branches.Branches[0].States.Inner.Retry[0].ErrorEquals[0]: "DynamoDb.ConditionalCheckFailedException" is never reported by arn:aws:states:::dynamodb:getItem: it names errors after AWS SDK for Java exceptions; this one is DynamoDB.ConditionalCheckFailedException`,
				`testdata/dynamodb-names.asl.json: States.Settle.Retry[0].ErrorEquals[1]: "DynamoDB.ThrottlingException" is never reported by arn:aws:states:::dynamodb:updateItem: it names errors after AWS SDK for Java exceptions; this one is DynamoDB.AmazonDynamoDBException`,
				`testdata/dynamodb-names.asl.json: States.Settle.Catch[0].ErrorEquals[0]: "DynamoDB.InternalServerError" is never reported by arn:aws:states:::dynamodb:updateItem: it names errors after AWS SDK for Java exceptions; this one is DynamoDB.InternalServerErrorException`,
			}},
		{name: "EventBridge error names the integration never reports", args: []string{filepath.Join("testdata", "eventbridge-names.asl.json")}, wantCode: 1,
			wantLines: []string{
				`testdata/eventbridge-names.asl.json: States.Publish.Retry[0].ErrorEquals[1]: "EventBridge.Throttling" is never reported by arn:aws:states:::events:putEvents, which reports EventBridge.FailedEntry, `,
			}},
		{name: "no arguments", args: nil, wantCode: 2},
		{name: "missing file", args: []string{"testdata/none.json"}, wantCode: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := run(tt.args, &out, &errOut); code != tt.wantCode {
				t.Fatalf("exit %d, want %d (stderr %s)", code, tt.wantCode, errOut.String())
			}
			if tt.wantOut != "" && out.String() != tt.wantOut {
				t.Fatalf("stdout:\n%s\nwant:\n%s", out.String(), tt.wantOut)
			}
			if tt.wantLines != nil {
				lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
				if len(lines) != len(tt.wantLines) {
					t.Fatalf("stdout has %d lines, want %d:\n%s", len(lines), len(tt.wantLines), out.String())
				}
				for i, want := range tt.wantLines {
					if !strings.HasPrefix(lines[i], want) {
						t.Errorf("line %d:\n%s\nwant it to start\n%s", i, lines[i], want)
					}
				}
			}
		})
	}
}
