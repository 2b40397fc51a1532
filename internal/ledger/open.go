package ledger

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

const (
	accountKeyPrefix = "ACCOUNTKEY#"
	accountKeySK     = "ACCOUNTKEY"
)

// Outcomes of OpenAccount that callers branch on.
var (
	// ErrKeyReused reports an Idempotency-Key already used, in the same scope, to open an account with another
	// request.
	ErrKeyReused = errors.New("ledger: idempotency key reused with another request")
	// ErrAccountConflict reports an account id that exists with other attributes (currency, kind, floor) or another
	// owner.
	ErrAccountConflict = errors.New("ledger: account exists with other attributes")
)

// AccountKeyRecord is the idempotency record of a POST /accounts key: pk ACCOUNTKEY#<keyHash>, a namespace of its
// own, so a key used for a transfer (TRANSFER#<keyHash>) may also open an account and the two never meet.
type AccountKeyRecord struct {
	PK             string `dynamodbav:"pk"`
	SK             string `dynamodbav:"sk"`
	Scope          string `dynamodbav:"scope"`
	IdempotencyKey string `dynamodbav:"idempotencyKey"`
	RequestHash    string `dynamodbav:"requestHash"`
	AccountID      string `dynamodbav:"accountId"`
	CreatedAt      string `dynamodbav:"createdAt"`
	// ExpiresAt is the TTL attribute (Unix seconds): createdAt + IDEMPOTENCY_TTL; none keeps the key forever. An
	// expired key may be used again.
	ExpiresAt int64 `dynamodbav:"expiresAt,omitempty"`
}

// AccountKeyPK is the partition key of the idempotency record of (scope, key) for POST /accounts, with the
// unkeyed KeyHash: the key of a record written without a secret.
func AccountKeyPK(scope, idempotencyKey string) string {
	return accountKeyPrefix + KeyHash(scope, idempotencyKey)
}

// OpenRequest asks OpenAccount for a new account at balance 0. RequestHash is the canonical request's hash, which
// decides whether a second use of the key is a replay.
type OpenRequest struct {
	Scope          string
	IdempotencyKey string
	// KeyHash is the key hash of (Scope, IdempotencyKey) that keys the key record, from the deployment's
	// KeyHasher; empty is the unkeyed KeyHash.
	KeyHash     string
	RequestHash string
	AccountID   string
	Currency    string
	Kind        string
	// Owner is the customer account's owner (a caller scope); empty for a funding account, which has none.
	Owner string
	// Floor is a funding account's floor (MinFundingFloor to 0); nil for a customer account.
	Floor *int64
}

// OpenOutcome says what OpenAccount did.
type OpenOutcome int

// The outcomes of OpenAccount.
const (
	// Opened: the account and its key record were written, together.
	Opened OpenOutcome = iota
	// Replayed: the key had already opened this account with the same request; nothing was written.
	Replayed
	// AlreadyOpen: the key is new but the account exists with the same currency, kind and owner (opened by another
	// key of the same caller, or by the seed); nothing was written, the key is not recorded.
	AlreadyOpen
)

// OpenAccount opens an account at balance 0 under an Idempotency-Key: one TransactWriteItems of two conditional
// Puts, the key record (new, or expired) and the account (new). Either both are written or neither, so a key never
// names an account that was not opened, and an account opened by a key always has its key record; a crash between
// two separate writes could leave either alone. A second use of the key with the same request (same RequestHash) is
// Replayed and returns the account as it is now; with another request it is ErrKeyReused. A new key for an existing
// account with the same currency, kind, owner and (for a funding account) floor is AlreadyOpen; with other attributes,
// or another owner, ErrAccountConflict, which returns nothing of the account. ttl is how
// long the key record lives (0: forever). Throttling and transaction conflicts are ErrUnavailable. While the Store
// checks legacy keys (WithLegacyKeysUntil), the transaction also checks that no live key record is under the key's
// unkeyed hash; one that is is the key's record.
func (s *Store) OpenAccount(ctx context.Context, req OpenRequest, now time.Time, ttl time.Duration) (Account, OpenOutcome, error) {
	what := "open account " + req.AccountID
	if req.AccountID == "" || req.Currency == "" || !ValidKind(req.Kind) || req.RequestHash == "" {
		return Account{}, 0, fmt.Errorf("%s: needs an id, a currency, a kind and a request hash", what)
	}
	funding := req.Kind == KindFunding
	if funding != (req.Floor != nil) || (funding && req.Owner != "") || (req.Floor != nil && (*req.Floor > 0 || *req.Floor < MinFundingFloor)) {
		return Account{}, 0, fmt.Errorf("%s: a funding account needs a floor from %d to 0 and no owner; a customer account no floor", what, MinFundingFloor)
	}
	acct := newAccount(req.AccountID, req.Currency, req.Kind, 0, now)
	acct.Owner, acct.Floor = req.Owner, req.Floor
	keyHash := req.KeyHash
	if keyHash == "" {
		keyHash = KeyHash(req.Scope, req.IdempotencyKey)
	}
	keyRec := AccountKeyRecord{
		PK: accountKeyPrefix + keyHash, SK: accountKeySK,
		Scope: req.Scope, IdempotencyKey: req.IdempotencyKey, RequestHash: req.RequestHash,
		AccountID: req.AccountID, CreatedAt: acct.CreatedAt,
	}
	if ttl > 0 {
		keyRec.ExpiresAt = min(now.Add(ttl).Unix(), KeepForever)
	}
	keyItem, err := attributevalue.MarshalMap(keyRec)
	if err != nil {
		return Account{}, 0, fmt.Errorf("%s: encode key record: %w", what, err)
	}
	acctItem, err := attributevalue.MarshalMap(acct)
	if err != nil {
		return Account{}, 0, fmt.Errorf("%s: encode account: %w", what, err)
	}
	table := aws.String(s.table)
	allOld := ddbtypes.ReturnValuesOnConditionCheckFailureAllOld
	keyCond, keyValues := aws.String("attribute_not_exists(pk) OR expiresAt <= :now"), map[string]ddbtypes.AttributeValue{":now": numberAV(now.Unix())}
	items := []ddbtypes.TransactWriteItem{
		{Put: &ddbtypes.Put{
			TableName:                           table,
			Item:                                keyItem,
			ConditionExpression:                 keyCond,
			ExpressionAttributeValues:           keyValues,
			ReturnValuesOnConditionCheckFailure: allOld,
		}},
		{Put: &ddbtypes.Put{
			TableName:                           table,
			Item:                                acctItem,
			ConditionExpression:                 aws.String("attribute_not_exists(pk)"),
			ReturnValuesOnConditionCheckFailure: allOld,
		}},
	}
	keyPKs := map[int]string{0: keyRec.PK} // the key records checked, by their index in items
	if legacy := s.legacyKey(accountKeyPrefix, req.Scope, req.IdempotencyKey, keyRec.PK, now); legacy != "" {
		items = append(items, ddbtypes.TransactWriteItem{ConditionCheck: &ddbtypes.ConditionCheck{
			TableName:                           table,
			Key:                                 map[string]ddbtypes.AttributeValue{"pk": stringAV(legacy), "sk": stringAV(accountKeySK)},
			ConditionExpression:                 keyCond,
			ExpressionAttributeValues:           keyValues,
			ReturnValuesOnConditionCheckFailure: allOld,
		}})
		keyPKs[len(items)-1] = legacy
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if err == nil {
		return acct, Opened, nil
	}
	var tce *ddbtypes.TransactionCanceledException
	if !errors.As(err, &tce) {
		return Account{}, 0, fmt.Errorf("%s: %w", what, translate(err))
	}
	failed := func(i int) bool {
		return i < len(tce.CancellationReasons) && aws.ToString(tce.CancellationReasons[i].Code) == codeConditionFailed
	}
	keyFailed := -1 // the index in items of the key record (new or legacy) that exists
	for _, i := range slices.Sorted(maps.Keys(keyPKs)) {
		if keyFailed < 0 && failed(i) {
			keyFailed = i
		}
	}
	switch {
	case keyFailed >= 0:
		var prior AccountKeyRecord
		item := tce.CancellationReasons[keyFailed].Item
		if len(item) == 0 {
			out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, ConsistentRead: aws.Bool(true),
				Key: map[string]ddbtypes.AttributeValue{"pk": stringAV(keyPKs[keyFailed]), "sk": stringAV(accountKeySK)}})
			if err != nil {
				return Account{}, 0, fmt.Errorf("%s: read key record: %w", what, translate(err))
			}
			item = out.Item
		}
		if len(item) == 0 {
			return Account{}, 0, fmt.Errorf("%s: key record vanished: %w", what, ErrUnavailable)
		}
		if err := attributevalue.UnmarshalMap(item, &prior); err != nil {
			return Account{}, 0, fmt.Errorf("%s: decode key record: %w", what, err)
		}
		if prior.RequestHash != req.RequestHash {
			return Account{}, 0, fmt.Errorf("%s: %w", what, ErrKeyReused)
		}
		a, err := s.GetAccount(ctx, prior.AccountID)
		if err != nil {
			return Account{}, 0, fmt.Errorf("%s: replay: %w", what, err)
		}
		return a, Replayed, nil
	case failed(1):
		existing, found, err := decodeAccount(tce.CancellationReasons[1].Item)
		if err == nil && !found {
			existing, found, err = readAccount(ctx, s.db, s.table, req.AccountID)
		}
		if err != nil {
			return Account{}, 0, fmt.Errorf("%s: read existing account: %w", what, err)
		}
		if !found {
			return Account{}, 0, fmt.Errorf("%s: existing account vanished: %w", what, ErrUnavailable)
		}
		if existing.Currency != req.Currency || existing.AccountKind() != req.Kind || existing.Owner != req.Owner ||
			(funding && existing.FundingFloor() != *req.Floor) {
			return Account{}, 0, fmt.Errorf("%s: %w", what, ErrAccountConflict)
		}
		return existing, AlreadyOpen, nil
	}
	// Contention or throttling: nothing was decided; the client retries with the same key.
	return Account{}, 0, fmt.Errorf("%s: transaction cancelled: %w", what, ErrUnavailable)
}
