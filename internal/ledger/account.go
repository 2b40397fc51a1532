package ledger

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

const (
	accountPrefix = "ACCOUNT#"
	accountSK     = "ACCOUNT"
)

// ErrAccountExists reports that CreateAccount found an account with the same id; the existing account is unchanged.
var ErrAccountExists = errors.New("ledger: account already exists")

// Account is an account item. Balance is in minor units of Currency and never goes below zero; Version counts the
// account's writes (1 + its ledger entries). No leg reads it or conditions on it: a leg changes the balance by
// arithmetic in its transaction (docs/ledger.md).
type Account struct {
	PK        string `dynamodbav:"pk"`
	SK        string `dynamodbav:"sk"`
	AccountID string `dynamodbav:"accountId"`
	Balance   int64  `dynamodbav:"balance"`
	Currency  string `dynamodbav:"currency"`
	Version   int64  `dynamodbav:"version"`
	CreatedAt string `dynamodbav:"createdAt"`
	UpdatedAt string `dynamodbav:"updatedAt"`
}

// AccountKey returns the partition key of the account accountID.
func AccountKey(accountID string) string { return accountPrefix + accountID }

func accountKey(accountID string) map[string]ddbtypes.AttributeValue {
	return map[string]ddbtypes.AttributeValue{
		"pk": &ddbtypes.AttributeValueMemberS{Value: AccountKey(accountID)},
		"sk": &ddbtypes.AttributeValueMemberS{Value: accountSK},
	}
}

// CreateAccount writes a new account with an opening balance and version 1: one conditional PutItem. An account that
// already exists is left unchanged and ErrAccountExists is returned, so seeding is safe to repeat.
func (s *Store) CreateAccount(ctx context.Context, accountID, currency string, balance int64, now time.Time) (Account, error) {
	if accountID == "" || currency == "" || balance < 0 {
		return Account{}, fmt.Errorf("create account %q: needs an id, a currency and a balance >= 0", accountID)
	}
	ts := now.UTC().Format(TimeLayout)
	acct := Account{
		PK: AccountKey(accountID), SK: accountSK, AccountID: accountID,
		Balance: balance, Currency: currency, Version: 1, CreatedAt: ts, UpdatedAt: ts,
	}
	item, err := attributevalue.MarshalMap(acct)
	if err != nil {
		return Account{}, fmt.Errorf("create account %s: %w", accountID, err)
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:           aws.String(s.table),
		Item:                item,
		ConditionExpression: aws.String("attribute_not_exists(pk)"),
	})
	var ccf *ddbtypes.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		return Account{}, fmt.Errorf("create account %s: %w", accountID, ErrAccountExists)
	case err != nil:
		return Account{}, fmt.Errorf("create account %s: %w", accountID, translate(err))
	}
	return acct, nil
}

// GetAccount reads an account with a strongly consistent read; ErrNotFound if it does not exist.
func (s *Store) GetAccount(ctx context.Context, accountID string) (Account, error) {
	a, found, err := readAccount(ctx, s.db, s.table, accountID)
	if err != nil {
		return Account{}, fmt.Errorf("get account %s: %w", accountID, err)
	}
	if !found {
		return Account{}, ErrNotFound
	}
	return a, nil
}

// itemGetter is the read the account helpers need; both stores' clients have it.
type itemGetter interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
}

// readAccount reads an account with a strongly consistent read; found is false if it does not exist.
func readAccount(ctx context.Context, db itemGetter, table, accountID string) (Account, bool, error) {
	out, err := db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(table),
		Key:            accountKey(accountID),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return Account{}, false, translate(err)
	}
	return decodeAccount(out.Item)
}

// decodeAccount decodes an account item; an empty item (DynamoDB's answer for a missing one) is not found.
func decodeAccount(item map[string]ddbtypes.AttributeValue) (Account, bool, error) {
	if len(item) == 0 {
		return Account{}, false, nil
	}
	var a Account
	if err := attributevalue.UnmarshalMap(item, &a); err != nil {
		return Account{}, false, fmt.Errorf("decode account: %w", err)
	}
	return a, true, nil
}

func numberAV(n int64) ddbtypes.AttributeValue {
	return &ddbtypes.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func stringAV(s string) ddbtypes.AttributeValue { return &ddbtypes.AttributeValueMemberS{Value: s} }
