package ddbserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/transferflow/orchestrator/localaws/ddbserver"
	"github.com/transferflow/orchestrator/localaws/samtemplate"
)

// TestCreateTablesGivesAnExistingTableItsStream: a table created with a stream has it; a table that exists without
// one (a data folder from before the template asked for it) gets it at the next CreateTables; one whose stream
// shows other images gets a new stream, with a new ARN. StreamARNs names the latest stream of each.
func TestCreateTablesGivesAnExistingTableItsStream(t *testing.T) {
	srv := ddbserver.StartT(t)
	db := ddbserver.NewClient(srv.URL, nil)
	ctx := context.Background()
	table := func(view string) []samtemplate.Table {
		in := &dynamodb.CreateTableInput{TableName: aws.String("streamed"), BillingMode: types.BillingModePayPerRequest,
			AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
			KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}}}
		if view != "" {
			in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewType(view)}
		}
		return []samtemplate.Table{{LogicalID: "Streamed", Create: in, StreamViewType: view}}
	}
	stream := func() (string, types.StreamViewType) {
		t.Helper()
		out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("streamed")})
		if err != nil {
			t.Fatal(err)
		}
		if s := out.Table.StreamSpecification; s != nil && aws.ToBool(s.StreamEnabled) {
			return aws.ToString(out.Table.LatestStreamArn), s.StreamViewType
		}
		return "", ""
	}

	if err := ddbserver.CreateTables(ctx, db, table("")); err != nil {
		t.Fatal(err)
	}
	if arn, _ := stream(); arn != "" {
		t.Fatalf("a table without StreamSpecification has the stream %s", arn)
	}
	if arns, err := ddbserver.StreamARNs(ctx, db, table("")); err != nil || len(arns) != 0 {
		t.Errorf("StreamARNs of a table without stream: %v, %v", arns, err)
	}
	if err := ddbserver.CreateTables(ctx, db, table("NEW_AND_OLD_IMAGES")); err != nil {
		t.Fatal(err)
	}
	first, view := stream()
	if first == "" || view != types.StreamViewTypeNewAndOldImages || !strings.Contains(first, ":table/streamed/stream/") {
		t.Fatalf("after CreateTables with a stream: %q %q, want a NEW_AND_OLD_IMAGES stream", first, view)
	}
	arns, err := ddbserver.StreamARNs(ctx, db, table("NEW_AND_OLD_IMAGES"))
	if err != nil || arns["Streamed"] != first {
		t.Errorf("StreamARNs = %v, %v; want Streamed: %s", arns, err, first)
	}
	if err := ddbserver.CreateTables(ctx, db, table("NEW_AND_OLD_IMAGES")); err != nil {
		t.Fatal(err)
	}
	if again, _ := stream(); again != first {
		t.Errorf("the same template again replaced the stream %s with %s", first, again)
	}
	if err := ddbserver.CreateTables(ctx, db, table("KEYS_ONLY")); err != nil {
		t.Fatal(err)
	}
	if arn, view := stream(); arn == "" || arn == first || view != types.StreamViewTypeKeysOnly {
		t.Errorf("after a new view type: %q %q, want a new KEYS_ONLY stream", arn, view)
	}
}
