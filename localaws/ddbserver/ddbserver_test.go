package ddbserver_test

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/transferflow/orchestrator/localaws/ddbserver"
)

func TestStartWithTablesCreatesTemplateTables(t *testing.T) {
	srv, names := ddbserver.StartWithTablesT(t)
	table, ok := names["TransfersTable"]
	if !ok {
		t.Fatalf("template tables = %v, want TransfersTable", names)
	}
	db := ddbserver.NewClient(srv.URL, nil)
	out, err := db.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	var indexes []string
	for _, ix := range out.Table.GlobalSecondaryIndexes {
		indexes = append(indexes, aws.ToString(ix.IndexName))
	}
	sort.Strings(indexes)
	if fmt.Sprint(indexes) != "[AccountActivity InProgress]" {
		t.Errorf("indexes = %v, want AccountActivity and InProgress", indexes)
	}
	if s := out.Table.StreamSpecification; s != nil && aws.ToBool(s.StreamEnabled) {
		t.Errorf("the test's table has the %s stream, want none", s.StreamViewType)
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
	srv := ddbserver.StartT(t)
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-srv.Done():
	default:
		t.Fatal("process still running after Close")
	}
}

// BenchmarkNewClientConcurrentGetItem measures NewClient's default client under concurrency (16 goroutines per
// CPU), where the number of idle connections it keeps decides whether requests reuse connections.
func BenchmarkNewClientConcurrentGetItem(b *testing.B) {
	srv, names := ddbserver.StartWithTablesT(b)
	db := ddbserver.NewClient(srv.URL, nil)
	in := &dynamodb.GetItemInput{TableName: aws.String(names["TransfersTable"]), Key: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "ACCOUNT#nobody"}, "sk": &types.AttributeValueMemberS{Value: "ACCOUNT"}}}
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := db.GetItem(context.Background(), in); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
