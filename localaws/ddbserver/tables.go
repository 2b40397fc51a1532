package ddbserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/transferflow/orchestrator/localaws/samtemplate"
)

// tableAPI is the part of the DynamoDB client that CreateTables and StreamARNs use.
type tableAPI interface {
	CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	UpdateTable(ctx context.Context, in *dynamodb.UpdateTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateTableOutput, error)
	UpdateTimeToLive(ctx context.Context, in *dynamodb.UpdateTimeToLiveInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error)
}

// CreateTables creates each table with its stream, if it has one, and turns on its TTL attribute. An existing table
// (a restart on the same data) is left alone, except for its stream: a table the template gives a stream that has
// none gets one (UpdateTable), and one whose stream shows other images gets a new stream with the template's view
// type, as CloudFormation replaces it. A stream the table has and the template does not ask for is kept.
func CreateTables(ctx context.Context, db tableAPI, tables []samtemplate.Table) error {
	for _, t := range tables {
		_, err := db.CreateTable(ctx, t.Create)
		var inUse *ddbtypes.ResourceInUseException
		if err != nil && !errors.As(err, &inUse) {
			return fmt.Errorf("create table %s: %w", aws.ToString(t.Create.TableName), err)
		}
		if err != nil {
			if err := ensureStream(ctx, db, t); err != nil {
				return err
			}
			continue
		}
		if t.TTLAttribute == "" {
			continue
		}
		_, err = db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
			TableName: t.Create.TableName,
			TimeToLiveSpecification: &ddbtypes.TimeToLiveSpecification{
				AttributeName: aws.String(t.TTLAttribute), Enabled: aws.Bool(true),
			},
		})
		if err != nil {
			return fmt.Errorf("enable ttl on %s: %w", aws.ToString(t.Create.TableName), err)
		}
	}
	return nil
}

// ensureStream gives an existing table the stream the template asks for.
func ensureStream(ctx context.Context, db tableAPI, t samtemplate.Table) error {
	if t.StreamViewType == "" {
		return nil
	}
	name := aws.ToString(t.Create.TableName)
	out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: t.Create.TableName})
	if err != nil {
		return fmt.Errorf("describe table %s: %w", name, err)
	}
	spec := out.Table.StreamSpecification
	enabled := spec != nil && aws.ToBool(spec.StreamEnabled)
	if enabled && string(spec.StreamViewType) == t.StreamViewType {
		return nil
	}
	if enabled {
		// DynamoDB changes no stream's view type: the stream is turned off and a new one on.
		if _, err := db.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: t.Create.TableName,
			StreamSpecification: &ddbtypes.StreamSpecification{StreamEnabled: aws.Bool(false)}}); err != nil {
			return fmt.Errorf("turn off the %s stream of table %s: %w", spec.StreamViewType, name, err)
		}
	}
	if _, err := db.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: t.Create.TableName, StreamSpecification: t.Create.StreamSpecification}); err != nil {
		return fmt.Errorf("turn on the stream of table %s: %w", name, err)
	}
	return nil
}

// StreamARNs returns the ARN of the latest stream of each table the template gives a stream, by logical id, as the
// server names it (DescribeTable's LatestStreamArn). Dynoxide's ARNs have a region "dynoxide" and a label of epoch
// seconds; streamsource.AWSStreamARN writes one as AWS does.
func StreamARNs(ctx context.Context, db tableAPI, tables []samtemplate.Table) (map[string]string, error) {
	out := map[string]string{}
	for _, t := range tables {
		if t.StreamViewType == "" {
			continue
		}
		d, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: t.Create.TableName})
		if err != nil {
			return nil, fmt.Errorf("describe table %s: %w", aws.ToString(t.Create.TableName), err)
		}
		arn := aws.ToString(d.Table.LatestStreamArn)
		if arn == "" {
			return nil, fmt.Errorf("table %s has no stream", aws.ToString(t.Create.TableName))
		}
		out[t.LogicalID] = arn
	}
	return out, nil
}
