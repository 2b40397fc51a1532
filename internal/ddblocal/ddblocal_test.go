package ddblocal_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/transferflow/orchestrator/internal/ddblocal"
)

func TestStartWithTablesCreatesTemplateTables(t *testing.T) {
	srv, names := ddblocal.StartWithTablesT(t)
	table, ok := names["TransfersTable"]
	if !ok {
		t.Fatalf("template tables = %v, want TransfersTable", names)
	}
	db := ddblocal.NewClient(srv.URL, nil)
	out, err := db.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(out.Table.GlobalSecondaryIndexes); got != 1 || aws.ToString(out.Table.GlobalSecondaryIndexes[0].IndexName) != "InProgress" {
		t.Errorf("indexes = %+v, want the InProgress index", out.Table.GlobalSecondaryIndexes)
	}
	ttl, err := db.DescribeTimeToLive(context.Background(), &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(ttl.TimeToLiveDescription.AttributeName); got != "expiresAt" {
		t.Errorf("ttl attribute = %q, want expiresAt", got)
	}
}

func TestCloseStopsTheProcess(t *testing.T) {
	srv := ddblocal.StartT(t)
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-srv.Done():
	default:
		t.Fatal("process still running after Close")
	}
}
