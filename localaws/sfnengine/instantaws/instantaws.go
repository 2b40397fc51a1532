// Package instantaws holds AWS clients for the Step Functions engine that answer every call at once, as the
// transfer's debit and credit functions, its table and EventBridge do on the happy path: the engine's own
// benchmarks and lab/enginebench run the transfer workflow on them to measure the engine alone. Their answers are
// fixed values, exported so that a comparison (another engine's mocks) can answer the same.
package instantaws

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// CompletedAt is when the instant credit settled the transfer.
const CompletedAt = "2026-06-01T00:00:00.100Z"

// LegAnswer is what the instant debit and credit functions answer: the credit's completedAt is what the workflow's
// Credit state reads for the outcome event (the debit's result is discarded).
var LegAnswer = []byte(`{"ok":true,"completedAt":"` + CompletedAt + `"}`)

// SettledRecord is the transfer record a settling UpdateItem returns (ReturnValues ALL_NEW): the attributes, all
// strings, that the workflow's ResultSelector reads for the outcome event.
var SettledRecord = map[string]string{
	"executionArn": "arn:aws:states:us-east-1:123456789012:execution:transfer:t1",
	"createdAt":    "2026-06-01T00:00:00.000Z", "updatedAt": CompletedAt, "completedAt": CompletedAt,
}

// EventID is the id the instant EventBridge gives every event.
const EventID = "00000000-0000-4000-8000-000000000001"

// Lambda answers every invocation at once with LegAnswer.
type Lambda struct{}

// Invoke answers LegAnswer.
func (Lambda) Invoke(context.Context, string, []byte) ([]byte, error) { return LegAnswer, nil }

// DynamoDB answers every item operation at once with an empty result (a condition holds), UpdateItem with
// SettledRecord.
type DynamoDB struct{}

// PutItem answers an empty output.
func (DynamoDB) PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return &dynamodb.PutItemOutput{}, nil
}

// GetItem answers an empty output (no item).
func (DynamoDB) GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return &dynamodb.GetItemOutput{}, nil
}

// UpdateItem answers SettledRecord's attributes.
func (DynamoDB) UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	attrs := make(map[string]ddbtypes.AttributeValue, len(SettledRecord))
	for k, v := range SettledRecord {
		attrs[k] = &ddbtypes.AttributeValueMemberS{Value: v}
	}
	return &dynamodb.UpdateItemOutput{Attributes: attrs}, nil
}

// DeleteItem answers an empty output.
func (DynamoDB) DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	return &dynamodb.DeleteItemOutput{}, nil
}

// EventBridge accepts every event at once, each with EventID.
type EventBridge struct{}

// PutEvents accepts every entry.
func (EventBridge) PutEvents(_ context.Context, in *eventbridge.PutEventsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	entries := make([]ebtypes.PutEventsResultEntry, len(in.Entries))
	for i := range entries {
		entries[i].EventId = aws.String(EventID)
	}
	return &eventbridge.PutEventsOutput{Entries: entries}, nil
}

var (
	_ sfnengine.LambdaInvoker  = Lambda{}
	_ sfnengine.DynamoDBAPI    = DynamoDB{}
	_ sfnengine.EventBridgeAPI = EventBridge{}
)
