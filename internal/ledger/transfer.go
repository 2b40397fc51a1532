package ledger

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Transfer statuses. IN_PROGRESS is the only status that ever changes.
const (
	StatusInProgress = "IN_PROGRESS"
	StatusCompleted  = "COMPLETED"
	StatusFailed     = "FAILED"
)

const (
	transferPrefix = "TRANSFER#"
	transferSK     = "TRANSFER"
	// sweepShards spreads in-progress transfers over this many partitions of the InProgress index.
	sweepShards = 16
	// TimeLayout is how every time is stored: UTC with milliseconds, so string order is time order.
	TimeLayout = "2006-01-02T15:04:05.000Z07:00"
)

var (
	// ErrNotFound reports that the item does not exist (or belongs to another scope, or has expired).
	ErrNotFound = errors.New("ledger: not found")
	// ErrUnavailable reports that DynamoDB throttled the request or could not be reached; the operation may be retried.
	ErrUnavailable = errors.New("ledger: dynamodb unavailable")
)

const idAlphabet = "abcdefghijklmnopqrstuvwxyz234567"

var idEncoding = base32.NewEncoding(idAlphabet).WithPadding(base32.NoPadding)

// Transfer is the transfer record. Reserve writes it once, complete; afterwards each ledger leg adds itself to Legs,
// and the workflow's status updates or the reconciler settle it.
type Transfer struct {
	PK                   string `dynamodbav:"pk"`
	SK                   string `dynamodbav:"sk"`
	TransferID           string `dynamodbav:"transferId"`
	Scope                string `dynamodbav:"scope"`
	IdempotencyKey       string `dynamodbav:"idempotencyKey"`
	RequestHash          string `dynamodbav:"requestHash"`
	Status               string `dynamodbav:"status"`
	SourceAccountID      string `dynamodbav:"sourceAccountId"`
	DestinationAccountID string `dynamodbav:"destinationAccountId"`
	Amount               int64  `dynamodbav:"amount"`
	Currency             string `dynamodbav:"currency"`
	Reference            string `dynamodbav:"reference,omitempty"`
	ExecutionArn         string `dynamodbav:"executionArn"`
	CreatedAt            string `dynamodbav:"createdAt"`
	UpdatedAt            string `dynamodbav:"updatedAt"`
	CompletedAt          string `dynamodbav:"completedAt,omitempty"`
	FailureCode          string `dynamodbav:"failureCode,omitempty"`
	FailureMessage       string `dynamodbav:"failureMessage,omitempty"`
	// Legs lists the ledger legs applied so far (DEBIT, CREDIT, REFUND), added by each leg's own transaction, so the
	// record always agrees with the ledger and single-item status updates can check it.
	Legs []string `dynamodbav:"legs,stringset,omitempty"`
	// ExpiresAt is the TTL attribute (Unix seconds); 0 keeps the record forever.
	ExpiresAt int64 `dynamodbav:"expiresAt,omitempty"`
	// SweepShard is set only while IN_PROGRESS; it keys the sparse InProgress index the reconciler's sweep reads.
	SweepShard string `dynamodbav:"sweepShard,omitempty"`
}

// KeyHash derives the record's key from the caller's scope and Idempotency-Key: 26 base32 characters of SHA-256.
// The same key under two scopes gives two unrelated records.
func KeyHash(scope, idempotencyKey string) string {
	sum := sha256.Sum256([]byte(scope + "\x00" + idempotencyKey))
	return idEncoding.EncodeToString(sum[:16])
}

// NewTransferID returns a transfer id for a new reservation of keyHash: "tr_" + keyHash + 16 random characters.
// The random part makes a key reused after its record expired start a new transfer (and a new execution name).
func NewTransferID(keyHash string, random io.Reader) (string, error) {
	if random == nil {
		random = rand.Reader
	}
	var b [10]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		return "", fmt.Errorf("new transfer id: %w", err)
	}
	return "tr_" + keyHash + idEncoding.EncodeToString(b[:]), nil
}

// RecordKey returns the partition key of a transfer's record from its id, and false for an id of the wrong shape.
func RecordKey(transferID string) (string, bool) {
	rest, ok := strings.CutPrefix(transferID, "tr_")
	if !ok || len(rest) != 42 {
		return "", false
	}
	for _, c := range rest {
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return "", false
		}
	}
	return transferPrefix + rest[:26], true
}

// NewTransferRecord fills the keys, status, times and index attributes of a record about to be reserved.
// ttl of 0 keeps the record forever.
func NewTransferRecord(t Transfer, now time.Time, ttl time.Duration) Transfer {
	pk, _ := RecordKey(t.TransferID)
	t.PK, t.SK = pk, transferSK
	t.Status = StatusInProgress
	t.CreatedAt = now.UTC().Format(TimeLayout)
	t.UpdatedAt = t.CreatedAt
	if ttl > 0 {
		t.ExpiresAt = now.Add(ttl).Unix()
	}
	t.SweepShard = fmt.Sprintf("IN_PROGRESS#%02d", strings.IndexByte(idAlphabet, pk[len(transferPrefix)])%sweepShards)
	return t
}

// CreatedTime parses CreatedAt.
func (t Transfer) CreatedTime() time.Time {
	ts, _ := time.Parse(TimeLayout, t.CreatedAt)
	return ts
}

// Expired reports whether the record's TTL has passed; DynamoDB deletes such items lazily, so reads treat them as
// gone.
func (t Transfer) Expired(now time.Time) bool { return t.ExpiresAt != 0 && t.ExpiresAt <= now.Unix() }

// dynamoAPI is the part of the DynamoDB client the store uses.
type dynamoAPI interface {
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
}

// Store reads and writes transfer records, creates and reads accounts, and lists ledger entries. Balances change
// only through Ledger.
type Store struct {
	db    dynamoAPI
	table string
}

// NewStore returns a Store on table.
func NewStore(db dynamoAPI, table string) *Store { return &Store{db: db, table: table} }

// Reserve writes rec if no live record exists for its key: one conditional PutItem. When a record exists, it is
// returned (from the same request's ALL_OLD image) with created false; rec is not written.
func (s *Store) Reserve(ctx context.Context, rec Transfer, now time.Time) (existing Transfer, created bool, err error) {
	item, err := attributevalue.MarshalMap(rec)
	if err != nil {
		return Transfer{}, false, fmt.Errorf("reserve %s: %w", rec.TransferID, err)
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:           aws.String(s.table),
		Item:                item,
		ConditionExpression: aws.String("attribute_not_exists(pk) OR expiresAt <= :now"),
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{
			":now": &ddbtypes.AttributeValueMemberN{Value: fmt.Sprint(now.Unix())},
		},
		ReturnValuesOnConditionCheckFailure: ddbtypes.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *ddbtypes.ConditionalCheckFailedException
	switch {
	case err == nil:
		return Transfer{}, true, nil
	case errors.As(err, &ccf):
		if err := attributevalue.UnmarshalMap(ccf.Item, &existing); err != nil {
			return Transfer{}, false, fmt.Errorf("reserve %s: decode existing record: %w", rec.TransferID, err)
		}
		return existing, false, nil
	default:
		return Transfer{}, false, fmt.Errorf("reserve %s: %w", rec.TransferID, translate(err))
	}
}

// GetTransfer reads a transfer by id with a strongly consistent read. A transfer of another scope, or whose record
// was replaced after expiry, is ErrNotFound.
func (s *Store) GetTransfer(ctx context.Context, scope, transferID string, now time.Time) (Transfer, error) {
	pk, ok := RecordKey(transferID)
	if !ok {
		return Transfer{}, ErrNotFound
	}
	t, err := s.getRecordByKey(ctx, pk)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return Transfer{}, fmt.Errorf("get transfer %s: %w", transferID, err)
	}
	if err != nil {
		return Transfer{}, ErrNotFound
	}
	if t.TransferID != transferID || t.Scope != scope || t.Expired(now) {
		return Transfer{}, ErrNotFound
	}
	return t, nil
}

func recordKey(pk string) map[string]ddbtypes.AttributeValue {
	return map[string]ddbtypes.AttributeValue{
		"pk": &ddbtypes.AttributeValueMemberS{Value: pk},
		"sk": &ddbtypes.AttributeValueMemberS{Value: transferSK},
	}
}
