package chaos

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/transferflow/orchestrator/localaws/ddbserver"
	"github.com/transferflow/orchestrator/localaws/samtemplate"
)

// TestReadTableFromDynoxide: the checks read the table through the real SDK, the table as template.yaml declares
// it, from Dynoxide; each item lands in its kind, across pages, and a stranger item is kept by key.
func TestReadTableFromDynoxide(t *testing.T) {
	srv := ddbserver.StartT(t)
	db := ddbserver.NewClient(srv.URL, nil)
	ctx := context.Background()
	tmpl, err := samtemplate.Load(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tables, err := tmpl.Tables()
	if err != nil {
		t.Fatal(err)
	}
	if err := ddbserver.CreateTables(ctx, db, tables); err != nil {
		t.Fatal(err)
	}
	name, err := tableName(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := clean()
	put := func(v any) {
		t.Helper()
		item, err := attributevalue.MarshalMap(v)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(name), Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range seed.Accounts {
		put(a)
	}
	for _, r := range seed.Transfers {
		put(r)
	}
	for _, l := range seed.Legs {
		put(l)
	}
	junk := map[string]ddbtypes.AttributeValue{
		"pk": &ddbtypes.AttributeValueMemberS{Value: "JUNK#1"}, "sk": &ddbtypes.AttributeValueMemberS{Value: "x"}}
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(name), Item: junk}); err != nil {
		t.Fatal(err)
	}

	got, err := ReadTable(ctx, db, name)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Accounts) != 3 || len(got.Transfers) != 3 || len(got.Legs) != 4 || len(got.Unknown) != 1 || got.Unknown[0] != "JUNK#1/x" {
		t.Fatalf("read %d accounts, %d transfers, %d legs, unknown %v; want 3, 3, 4 and JUNK#1/x",
			len(got.Accounts), len(got.Transfers), len(got.Legs), got.Unknown)
	}
	got.Unknown = nil
	_, expect := clean()
	if v := Check(got, expect); len(v) != 0 {
		t.Fatalf("the clean table read back from Dynoxide has violations: %v", v)
	}
	got.Transfers[0].Status = "IN_PROGRESS"
	if got.InProgress() != 1 {
		t.Fatalf("InProgress = %d, want 1", got.InProgress())
	}
}
