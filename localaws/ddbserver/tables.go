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

// tableAPI is the part of the DynamoDB client that CreateTables uses.
type tableAPI interface {
	CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	UpdateTimeToLive(ctx context.Context, in *dynamodb.UpdateTimeToLiveInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error)
}

// CreateTables creates each table (an existing one is left alone) and turns on its TTL attribute.
func CreateTables(ctx context.Context, db tableAPI, tables []samtemplate.Table) error {
	for _, t := range tables {
		_, err := db.CreateTable(ctx, t.Create)
		var inUse *ddbtypes.ResourceInUseException
		if err != nil && !errors.As(err, &inUse) {
			return fmt.Errorf("create table %s: %w", aws.ToString(t.Create.TableName), err)
		}
		if t.TTLAttribute == "" || err != nil {
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
