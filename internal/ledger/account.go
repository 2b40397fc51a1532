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
	Kind string `dynamodbav:"kind,omitempty"`
	// Owner is the caller scope that may move money out of the account and read it (docs/security.md): the scope
	// that opened it, or one an operator assigned. A funding account has none (operators hold funding accounts as a
	// group), and neither has an account opened before accounts had owners until an operator assigns one: only the
	// operator routes reach such accounts.
	Owner string `dynamodbav:"owner,omitempty"`
	// Floor is how far below zero a funding account may go (a number <= 0); nil on a customer account, and on a
	// funding account opened before floors existed, which has DefaultFundingFloor. Use FundingFloor to read it.
	Floor     *int64 `dynamodbav:"floor,omitempty"`
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

// FundingFloor is the lowest balance a DEBIT may leave on a funding account: its Floor, or DefaultFundingFloor.
func (a Account) FundingFloor() int64 {
	if a.Floor == nil {
		return DefaultFundingFloor
	}
	return *a.Floor
}

// Bounds of a funding account's floor. DefaultFundingFloor is the floor of a funding account opened without one
// (and of one opened before floors existed): minus 10^10 minor units, 100 million units of a two-decimal currency.
// MinFundingFloor keeps every balance and every DEBIT's arithmetic far from the int64 range.
const (
	DefaultFundingFloor int64 = -10_000_000_000
	MinFundingFloor     int64 = -1_000_000_000_000_000
)

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

// CreateAccount writes a new customer account with an opening balance and version 1, and without an owner: one
// conditional PutItem. An account that already exists is left unchanged and ErrAccountExists is returned. A balance it opens with is
// explained by no ledger entry: tests use it; the API opens accounts at 0 (OpenAccount) and the local stack funds
// its seeds with transfers (SeedOpenings).
func (s *Store) CreateAccount(ctx context.Context, accountID, currency string, balance int64, now time.Time) (Account, error) {
	return s.CreateAccountOfKind(ctx, accountID, currency, KindCustomer, balance, now)
}

// CreateOwnedAccount is CreateAccount for an account that owner (a caller scope) owns.
func (s *Store) CreateOwnedAccount(ctx context.Context, owner, accountID, currency string, balance int64, now time.Time) (Account, error) {
	return s.createAccount(ctx, owner, accountID, currency, KindCustomer, balance, now)
}

// CreateAccountOfKind is CreateAccount for an account of kind (KindCustomer or KindFunding); only a funding account
// may open below zero, and it gets DefaultFundingFloor (or its opening balance, if lower) as its floor.
func (s *Store) CreateAccountOfKind(ctx context.Context, accountID, currency, kind string, balance int64, now time.Time) (Account, error) {
	return s.createAccount(ctx, "", accountID, currency, kind, balance, now)
}

func (s *Store) createAccount(ctx context.Context, owner, accountID, currency, kind string, balance int64, now time.Time) (Account, error) {
	if accountID == "" || currency == "" || !ValidKind(kind) || (balance < 0 && kind != KindFunding) {
		return Account{}, fmt.Errorf("create account %q: needs an id, a currency, a kind and (for a customer) a balance >= 0", accountID)
	}
	acct := newAccount(accountID, currency, kind, balance, now)
	if kind == KindCustomer {
		acct.Owner = owner
	}
	if kind == KindFunding {
		acct.Floor = aws.Int64(min(DefaultFundingFloor, balance))
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

// Outcomes of AssignOwner that callers branch on.
var (
	// ErrHasOwner reports an account that already has another owner.
	ErrHasOwner = errors.New("ledger: account has another owner")
	// ErrFundingAccount reports a funding account, which operators hold as a group and which never has an owner.
	ErrFundingAccount = errors.New("ledger: funding account")
)

// AssignOwner gives the customer account accountID, which has no owner (it was opened before accounts had owners,
// or by an operator without one), the owner scope: one conditional UpdateItem that changes nothing else, not even
// the version (no money moves). An account that already has this owner is returned as it is, so the call can be
// repeated. The errors are ErrNotFound, ErrHasOwner, ErrFundingAccount, or ErrUnavailable.
func (s *Store) AssignOwner(ctx context.Context, accountID, owner string, now time.Time) (Account, error) {
	what := "assign owner of " + accountID
	if owner == "" {
		return Account{}, fmt.Errorf("%s: needs an owner", what)
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(s.table),
		Key:                      accountKey(accountID),
		UpdateExpression:         aws.String("SET #owner = :owner, updatedAt = :now"),
		ConditionExpression:      aws.String("attribute_exists(pk) AND attribute_not_exists(#owner) AND (attribute_not_exists(#kind) OR #kind <> :funding)"),
		ExpressionAttributeNames: map[string]string{"#owner": "owner", "#kind": "kind"},
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{
			":owner": stringAV(owner), ":funding": stringAV(KindFunding), ":now": stringAV(now.UTC().Format(TimeLayout)),
		},
		ReturnValues:                        ddbtypes.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: ddbtypes.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *ddbtypes.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		existing, found, err := decodeAccount(ccf.Item)
		if err == nil && !found {
			existing, found, err = readAccount(ctx, s.db, s.table, accountID)
		}
		switch {
		case err != nil:
			return Account{}, fmt.Errorf("%s: read account: %w", what, err)
		case !found:
			return Account{}, ErrNotFound
		case existing.AccountKind() == KindFunding:
			return Account{}, fmt.Errorf("%s: %w", what, ErrFundingAccount)
		case existing.Owner == owner:
			return existing, nil
		case existing.Owner != "":
			return Account{}, fmt.Errorf("%s: %w", what, ErrHasOwner)
		}
		return Account{}, fmt.Errorf("%s: account changed during the update: %w", what, ErrUnavailable)
	case err != nil:
		return Account{}, fmt.Errorf("%s: %w", what, translate(err))
	}
	a, _, err := decodeAccount(out.Attributes)
	if err != nil {
		return Account{}, fmt.Errorf("%s: %w", what, err)
	}
	return a, nil
}
