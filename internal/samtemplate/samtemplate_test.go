package samtemplate

import (
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
)

func TestProjectTemplateTables(t *testing.T) {
	tmpl, err := Load(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tables, err := tmpl.Tables()
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 1 {
		t.Fatalf("tables = %d, want 1", len(tables))
	}
	tb := tables[0]
	if tb.LogicalID != "TransfersTable" || aws.ToString(tb.Create.TableName) != "TransfersTable" || tb.TTLAttribute != "expiresAt" {
		t.Errorf("table = %+v", tb)
	}
	if len(tb.Create.KeySchema) != 2 || aws.ToString(tb.Create.KeySchema[0].AttributeName) != "pk" || tb.Create.KeySchema[0].KeyType != "HASH" {
		t.Errorf("key schema = %+v", tb.Create.KeySchema)
	}
	if len(tb.Create.AttributeDefinitions) != 4 || len(tb.Create.GlobalSecondaryIndexes) != 1 {
		t.Errorf("attributes %d, indexes %d", len(tb.Create.AttributeDefinitions), len(tb.Create.GlobalSecondaryIndexes))
	}
}

func TestParseKeepsShortFormTags(t *testing.T) {
	tmpl, err := Parse([]byte("Resources:\n  T:\n    Type: AWS::DynamoDB::Table\n    Properties:\n      TableName: !Ref Name\n      BillingMode: PAY_PER_REQUEST\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := tmpl.Resources["T"].Properties.Content[1].Tag; got != "!Ref" {
		t.Errorf("tag = %q, want !Ref", got)
	}
	if _, err := Parse([]byte("Parameters: {}\n")); err == nil {
		t.Error("a template without Resources must be refused")
	}
}
