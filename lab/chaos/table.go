package chaos

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/transferflow/orchestrator/internal/ledger"
)

// Table is what the campaign reads back from the transfers table (docs/data-model.md): every account, transfer
// record and ledger leg, and the keys of any item of none of these kinds.
type Table struct {
	Accounts  []ledger.Account
	Transfers []ledger.Transfer
	Legs      []ledger.Entry
	Unknown   []string
}

// Item key prefixes of the one table (docs/data-model.md).
const (
	accountPrefix  = "ACCOUNT#"
	transferPrefix = "TRANSFER#"
	ledgerPrefix   = "LEDGER#"
)

// ReadTable scans the whole table with strongly consistent reads and sorts its items by kind.
func ReadTable(ctx context.Context, db dynamodb.ScanAPIClient, table string) (Table, error) {
	var t Table
	p := dynamodb.NewScanPaginator(db, &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return Table{}, fmt.Errorf("scan %s: %w", table, err)
		}
		for _, item := range page.Items {
			if err := t.add(item); err != nil {
				return Table{}, fmt.Errorf("scan %s: %w", table, err)
			}
		}
	}
	return t, nil
}

// add decodes one item into its kind.
func (t *Table) add(item map[string]ddbtypes.AttributeValue) error {
	var key struct {
		PK string `dynamodbav:"pk"`
		SK string `dynamodbav:"sk"`
	}
	if err := attributevalue.UnmarshalMap(item, &key); err != nil {
		return fmt.Errorf("decode item key: %w", err)
	}
	var err error
	switch {
	case strings.HasPrefix(key.PK, accountPrefix):
		var a ledger.Account
		if err = attributevalue.UnmarshalMap(item, &a); err == nil {
			t.Accounts = append(t.Accounts, a)
		}
	case strings.HasPrefix(key.PK, transferPrefix):
		var r ledger.Transfer
		if err = attributevalue.UnmarshalMap(item, &r); err == nil {
			t.Transfers = append(t.Transfers, r)
		}
	case strings.HasPrefix(key.PK, ledgerPrefix):
		var e ledger.Entry
		if err = attributevalue.UnmarshalMap(item, &e); err == nil {
			t.Legs = append(t.Legs, e)
		}
	default:
		t.Unknown = append(t.Unknown, key.PK+"/"+key.SK)
	}
	if err != nil {
		return fmt.Errorf("decode %s/%s: %w", key.PK, key.SK, err)
	}
	return nil
}

// InProgress counts the transfer records that are not terminal.
func (t Table) InProgress() int {
	n := 0
	for _, r := range t.Transfers {
		if r.Status != ledger.StatusCompleted && r.Status != ledger.StatusFailed {
			n++
		}
	}
	return n
}
