// Package streamtest builds DynamoDB stream records as Lambda delivers them (aws-lambda-go's events types), from
// the Go values a table holds, for tests of functions triggered by a table's stream.
package streamtest

import (
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// StreamArn is the stream the records come from.
const StreamArn = "arn:aws:dynamodb:us-east-1:000000000000:table/transfers/stream/2026-11-29T10:00:00.000"

// Record is the NEW_AND_OLD_IMAGES stream record of a write from old to new (structs with dynamodbav tags, as the
// table's code writes them), keyed by keys (the attribute names of the table's key) and numbered seq. A nil old is
// an INSERT, a nil new a REMOVE, otherwise a MODIFY.
func Record(seq string, keys []string, old, new any) (events.DynamoDBEventRecord, error) {
	oldImage, err := image(old)
	if err != nil {
		return events.DynamoDBEventRecord{}, fmt.Errorf("old image: %w", err)
	}
	newImage, err := image(new)
	if err != nil {
		return events.DynamoDBEventRecord{}, fmt.Errorf("new image: %w", err)
	}
	name, keyed := events.DynamoDBOperationTypeModify, newImage
	switch {
	case oldImage == nil:
		name = events.DynamoDBOperationTypeInsert
	case newImage == nil:
		name, keyed = events.DynamoDBOperationTypeRemove, oldImage
	}
	keyValues := map[string]events.DynamoDBAttributeValue{}
	for _, k := range keys {
		if v, ok := keyed[k]; ok {
			keyValues[k] = v
		}
	}
	return events.DynamoDBEventRecord{
		AWSRegion: "us-east-1", EventID: fmt.Sprintf("%032x", seq), EventName: string(name), EventSource: "aws:dynamodb",
		EventVersion: "1.1", EventSourceArn: StreamArn,
		Change: events.DynamoDBStreamRecord{Keys: keyValues, NewImage: newImage, OldImage: oldImage, SequenceNumber: seq,
			SizeBytes: 400, StreamViewType: string(events.DynamoDBStreamViewTypeNewAndOldImages)},
	}, nil
}

// image marshals v as its item; nil stays nil.
func image(v any) (map[string]events.DynamoDBAttributeValue, error) {
	if v == nil {
		return nil, nil
	}
	item, err := attributevalue.MarshalMap(v)
	if err != nil {
		return nil, err
	}
	return Image(item)
}

// Image converts an item to the stream's form of it.
func Image(item map[string]ddbtypes.AttributeValue) (map[string]events.DynamoDBAttributeValue, error) {
	out := make(map[string]events.DynamoDBAttributeValue, len(item))
	for k, v := range item {
		sv, err := value(v)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", k, err)
		}
		out[k] = sv
	}
	return out, nil
}

func value(v ddbtypes.AttributeValue) (events.DynamoDBAttributeValue, error) {
	switch v := v.(type) {
	case *ddbtypes.AttributeValueMemberS:
		return events.NewStringAttribute(v.Value), nil
	case *ddbtypes.AttributeValueMemberN:
		return events.NewNumberAttribute(v.Value), nil
	case *ddbtypes.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(v.Value), nil
	case *ddbtypes.AttributeValueMemberNULL:
		return events.NewNullAttribute(), nil
	case *ddbtypes.AttributeValueMemberB:
		return events.NewBinaryAttribute(v.Value), nil
	case *ddbtypes.AttributeValueMemberSS:
		return events.NewStringSetAttribute(v.Value), nil
	case *ddbtypes.AttributeValueMemberNS:
		return events.NewNumberSetAttribute(v.Value), nil
	case *ddbtypes.AttributeValueMemberBS:
		return events.NewBinarySetAttribute(v.Value), nil
	case *ddbtypes.AttributeValueMemberL:
		list := make([]events.DynamoDBAttributeValue, len(v.Value))
		for i, e := range v.Value {
			sv, err := value(e)
			if err != nil {
				return events.DynamoDBAttributeValue{}, err
			}
			list[i] = sv
		}
		return events.NewListAttribute(list), nil
	case *ddbtypes.AttributeValueMemberM:
		m, err := Image(v.Value)
		if err != nil {
			return events.DynamoDBAttributeValue{}, err
		}
		return events.NewMapAttribute(m), nil
	}
	return events.DynamoDBAttributeValue{}, fmt.Errorf("attribute value %T", v)
}
