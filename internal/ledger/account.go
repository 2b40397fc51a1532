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

// Account kinds. Only a funding account may go below zero: it is where money enters and leaves the system, so the
// sum of all balances, funding accounts included, never changes (docs/ledger.md, "Funding accounts").
const (
	KindCustomer = "customer"
	KindFunding  = "funding"
)

// Account is an account item. Balance is in minor units of Currency; a customer account's never goes below zero, a
// funding account's may. Version counts the account's writes (1 + its ledger entries). No leg reads it or
// conditions on it: a leg changes the balance by arithmetic in its transaction (docs/ledger.md).
type Account struct {
	PK        string `dynamodbav:"pk"`
	SK        string `dynamodbav:"sk"`
	AccountID string `dynamodbav:"accountId"`
	// Kind is KindCustomer or KindFunding; an item without one (written before kinds existed) is a customer
	// account. Use AccountKind to read it.
	Kind      string `dynamodbav:"kind,omitempty"`
	Balance   int64  `dynamodbav:"balance"`
	Currency  string `dynamodbav:"currency"`
	Version   int64  `dynamodbav:"version"`
	CreatedAt string `dynamodbav:"createdAt"`
	UpdatedAt string `dynamodbav:"updatedAt"`
}

// AccountKind is the account's kind, KindCustomer when the item has none.
func (a Account) AccountKind() string {
	if a.Kind == "" {
		return KindCustomer
	}
	return a.Kind
}

// ValidKind reports whether kind is KindCustomer or KindFunding.
func ValidKind(kind string) bool { return kind == KindCustomer || kind == KindFunding }

// AccountKey returns the partition key of the account accountID.
func AccountKey(accountID string) string { return accountPrefix + accountID }

func accountKey(accountID string) map[string]ddbtypes.AttributeValue {
	return map[string]ddbtypes.AttributeValue{
		"pk": &ddbtypes.AttributeValueMemberS{Value: AccountKey(accountID)},
		"sk": &ddbtypes.AttributeValueMemberS{Value: accountSK},
	}
}

// CreateAccount writes a new customer account with an opening balance and version 1: one conditional PutItem. An
// account that already exists is left unchanged and ErrAccountExists is returned. A balance it opens with is
// explained by no ledger entry: tests use it; the API opens accounts at 0 (OpenAccount) and the local stack funds
// its seeds with transfers (SeedOpenings).
func (s *Store) CreateAccount(ctx context.Context, accountID, currency string, balance int64, now time.Time) (Account, error) {
	return s.CreateAccountOfKind(ctx, accountID, currency, KindCustomer, balance, now)
}

// CreateAccountOfKind is CreateAccount for an account of kind (KindCustomer or KindFunding); only a funding account
// may open below zero.
func (s *Store) CreateAccountOfKind(ctx context.Context, accountID, currency, kind string, balance int64, now time.Time) (Account, error) {
	if accountID == "" || currency == "" || !ValidKind(kind) || (balance < 0 && kind != KindFunding) {
		return Account{}, fmt.Errorf("create account %q: needs an id, a currency, a kind and (for a customer) a balance >= 0", accountID)
	}
	acct := newAccount(accountID, currency, kind, balance, now)
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

// newAccount is a new account item at version 1.
func newAccount(accountID, currency, kind string, balance int64, now time.Time) Account {
	ts := now.UTC().Format(TimeLayout)
	return Account{
		PK: AccountKey(accountID), SK: accountSK, AccountID: accountID, Kind: kind,
		Balance: balance, Currency: currency, Version: 1, CreatedAt: ts, UpdatedAt: ts,
	}
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
