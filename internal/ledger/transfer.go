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

// SweepShards is how many partitions of the InProgress index in-progress transfers are spread over, so that the
// index has no hot key; the reconciler's sweep visits each.
const SweepShards = 16

// SortKeyTransfer is the sort key of every transfer record (its partition key is TRANSFER#<scope hash>…).
const SortKeyTransfer = "TRANSFER"

const (
	transferPrefix = "TRANSFER#"
	transferSK     = SortKeyTransfer
	// TimeLayout is how every time is stored: UTC with milliseconds, so string order is time order.
	TimeLayout = "2006-01-02T15:04:05.000Z07:00"
)

var (
	// ErrNotFound reports that the item does not exist (or belongs to another scope, or has expired).
	ErrNotFound = errors.New("ledger: not found")
	// ErrUnavailable reports that DynamoDB throttled the request or could not be reached; the operation may be retried.
	ErrUnavailable = errors.New("ledger: dynamodb unavailable")
)

// KeepForever is the RetainUntil of a record kept forever (IDEMPOTENCY_TTL=0): 9999-12-31T23:59:59Z. A real time
// rather than a special value, so DynamoDB's TTL and every comparison treat it correctly without a special case.
const KeepForever int64 = 253402300799

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
	// FailureError is the error that decided a FAILED transfer, as Step Functions reports errors: a JSON object
	// {"Error": name, "Cause": text}. The workflow writes its caught error; the reconciler the execution's error and
	// cause, or its own explanation. Empty when nothing more than the code is known.
	FailureError string `dynamodbav:"failureError,omitempty"`
	// Legs lists the ledger legs applied so far (DEBIT, CREDIT, REFUND), added by each leg's own transaction, so the
	// record always agrees with the ledger and single-item status updates can check it.
	Legs []string `dynamodbav:"legs,stringset,omitempty"`
	// RetainUntil (Unix seconds) is when the record, and so its Idempotency-Key, may go: createdAt +
	// IDEMPOTENCY_TTL, or KeepForever. It is not the TTL attribute: every settlement copies it into ExpiresAt.
	RetainUntil int64 `dynamodbav:"retainUntil,omitempty"`
	// ExpiresAt is the table's TTL attribute (Unix seconds). Only a settled record has it, so DynamoDB never
	// deletes, and Reserve never takes over, a transfer that is still IN_PROGRESS.
	ExpiresAt int64 `dynamodbav:"expiresAt,omitempty"`
	// RedriveAt is when a replay last claimed the right to re-drive StartExecution (see ClaimRedrive).
	RedriveAt string `dynamodbav:"redriveAt,omitempty"`
	// SweepShard is set only while IN_PROGRESS; it keys the sparse InProgress index the reconciler's sweep reads.
	SweepShard string `dynamodbav:"sweepShard,omitempty"`
	// Operator is set on a transfer submitted on the operator route (POST /operator/transfers): its DEBIT is on an
	// operator's authority, out of an account without an owner. A client's transfer has none, and its DEBIT is on the
	// authority of Scope, which must own the source.
	Operator bool `dynamodbav:"operator,omitempty"`
	// Origin is empty for a transfer submitted through the API, OriginOpeningBalance for one SeedOpenings wrote
	// (COMPLETED, without a workflow execution).
	Origin string `dynamodbav:"origin,omitempty"`
}

// KeyHash derives the record's key from the caller's scope and Idempotency-Key: 26 base32 characters of SHA-256.
// The same key under two scopes gives two unrelated records. It is unkeyed, so anyone who knows the scope can
// confirm a guess of the key from it: client keys go through a KeyHasher with the deployment's secret; KeyHash is for
// keys that are not secret (the seed's opening transfers) and for records written before the secret.
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
// ttl is how long the record is retained after its creation; 0 keeps it forever. The record gets no TTL attribute
// until it is settled.
func NewTransferRecord(t Transfer, now time.Time, ttl time.Duration) Transfer {
	pk, _ := RecordKey(t.TransferID)
	t.PK, t.SK = pk, transferSK
	t.Status = StatusInProgress
	t.CreatedAt = now.UTC().Format(TimeLayout)
	t.UpdatedAt = t.CreatedAt
	t.RetainUntil = KeepForever
	if ttl > 0 {
		t.RetainUntil = min(now.Add(ttl).Unix(), KeepForever)
	}
	t.ExpiresAt = 0
	t.SweepShard = shardKey(strings.IndexByte(idAlphabet, pk[len(transferPrefix)]) % SweepShards)
	return t
}

// CreatedTime parses CreatedAt.
func (t Transfer) CreatedTime() time.Time {
	ts, _ := time.Parse(TimeLayout, t.CreatedAt)
	return ts
}

// Expired reports whether the record is settled and its TTL has passed; DynamoDB deletes such items lazily, so reads
// treat them as gone. A record in progress never expires.
func (t Transfer) Expired(now time.Time) bool {
	return t.Status != StatusInProgress && t.ExpiresAt != 0 && t.ExpiresAt <= now.Unix()
}

// LegRequest is leg of the transfer as the workflow applies it: a DEBIT of the source that also checks the
// destination, a CREDIT of the destination, a REFUND of the source.
func (t Transfer) LegRequest(leg string) LegRequest {
	req := LegRequest{TransferID: t.TransferID, Leg: leg, AccountID: t.SourceAccountID, Amount: t.Amount,
		Currency: t.Currency, ExecutionArn: t.ExecutionArn}
	switch leg {
	case LegDebit:
		req.DestinationAccountID = t.DestinationAccountID
		if t.Operator {
			req.Operator = true
		} else {
			req.Owner = t.Scope
		}
	case LegCredit:
		req.AccountID = t.DestinationAccountID
	}
	return req
}

// dynamoAPI is the part of the DynamoDB client the store uses.
type dynamoAPI interface {
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
	TransactGetItems(ctx context.Context, in *dynamodb.TransactGetItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactGetItemsOutput, error)
}

// Store reads and writes transfer records, opens and reads accounts, and lists ledger entries (a transfer's, or an
// account's). Balances change only through Ledger (and SeedOpenings, which writes ledger entries).
type Store struct {
	db    dynamoAPI
	table string
	// legacyUntil is when records under unkeyed key hashes stop being checked (WithLegacyKeysUntil); zero: never.
	legacyUntil time.Time
}

// NewStore returns a Store on table.
func NewStore(db dynamoAPI, table string, opts ...StoreOption) *Store {
	s := &Store{db: db, table: table}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Reserve writes rec if no live record exists for its key: one conditional PutItem. A settled record whose TTL has
// passed is taken over (the key is reusable); a record in progress never is, whatever its attributes. When a record
// exists, it is returned (from the same request's ALL_OLD image) with created false and rec is not written.
//
// The one exception is the request's own reservation: when the SDK retries a PutItem whose reply was lost, the retry's
// condition fails against the item the first attempt wrote. rec.TransferID is random and made once per request,
// before the first attempt, so it identifies the attempt chain: an existing record in progress with the same transfer
// id and request hash is this request's own, and Reserve reports it created. (Had it settled already, which a retry
// arriving seconds later cannot see, it is answered as any duplicate.)
//
// While the Store checks legacy keys (WithLegacyKeysUntil), the PutItem is a TransactWriteItems of the same Put and a
// ConditionCheck that no live record exists under the key's unkeyed hash, with the same condition; when one does, it
// is the existing record.
func (s *Store) Reserve(ctx context.Context, rec Transfer, now time.Time) (existing Transfer, created bool, err error) {
	item, err := attributevalue.MarshalMap(rec)
	if err != nil {
		return Transfer{}, false, fmt.Errorf("reserve %s: %w", rec.TransferID, err)
	}
	names := map[string]string{"#status": "status"}
	values := map[string]ddbtypes.AttributeValue{
		":now":        &ddbtypes.AttributeValueMemberN{Value: fmt.Sprint(now.Unix())},
		":inProgress": stringAV(StatusInProgress),
	}
	allOld := ddbtypes.ReturnValuesOnConditionCheckFailureAllOld
	if legacy := s.legacyKey(transferPrefix, rec.Scope, rec.IdempotencyKey, rec.PK, now); legacy != "" {
		return s.reserveChecking(ctx, rec, item, legacy, names, values)
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                           aws.String(s.table),
		Item:                                item,
		ConditionExpression:                 aws.String(reserveCondition),
		ExpressionAttributeNames:            names,
		ExpressionAttributeValues:           values,
		ReturnValuesOnConditionCheckFailure: allOld,
	})
	var ccf *ddbtypes.ConditionalCheckFailedException
	switch {
	case err == nil:
		return Transfer{}, true, nil
	case errors.As(err, &ccf):
		return reserved(rec, ccf.Item)
	default:
		return Transfer{}, false, fmt.Errorf("reserve %s: %w", rec.TransferID, translate(err))
	}
}

// reserveCondition is the condition under which Reserve writes a record: none is live under its key.
const reserveCondition = "attribute_not_exists(pk) OR (expiresAt <= :now AND #status <> :inProgress)"

// reserveChecking is Reserve's transaction while legacy keys are checked: the Put of rec (item) and a ConditionCheck
// that no live record is under legacyPK.
func (s *Store) reserveChecking(ctx context.Context, rec Transfer, item map[string]ddbtypes.AttributeValue, legacyPK string,
	names map[string]string, values map[string]ddbtypes.AttributeValue) (Transfer, bool, error) {
	table, cond := aws.String(s.table), aws.String(reserveCondition)
	allOld := ddbtypes.ReturnValuesOnConditionCheckFailureAllOld
	_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{
		{Put: &ddbtypes.Put{TableName: table, Item: item, ConditionExpression: cond, ExpressionAttributeNames: names,
			ExpressionAttributeValues: values, ReturnValuesOnConditionCheckFailure: allOld}},
		{ConditionCheck: &ddbtypes.ConditionCheck{TableName: table, Key: recordKey(legacyPK), ConditionExpression: cond,
			ExpressionAttributeNames: names, ExpressionAttributeValues: values, ReturnValuesOnConditionCheckFailure: allOld}},
	}})
	if err == nil {
		return Transfer{}, true, nil
	}
	var tce *ddbtypes.TransactionCanceledException
	if !errors.As(err, &tce) {
		return Transfer{}, false, fmt.Errorf("reserve %s: %w", rec.TransferID, translate(err))
	}
	for i, pk := range []string{rec.PK, legacyPK} {
		if i >= len(tce.CancellationReasons) || aws.ToString(tce.CancellationReasons[i].Code) != codeConditionFailed {
			continue
		}
		image := tce.CancellationReasons[i].Item
		if len(image) == 0 { // a server that returns no image: read the record
			out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: recordKey(pk), ConsistentRead: aws.Bool(true)})
			if err != nil {
				return Transfer{}, false, fmt.Errorf("reserve %s: read existing record: %w", rec.TransferID, translate(err))
			}
			if image = out.Item; len(image) == 0 {
				return Transfer{}, false, fmt.Errorf("reserve %s: existing record vanished: %w", rec.TransferID, ErrUnavailable)
			}
		}
		return reserved(rec, image)
	}
	// Contention or throttling: nothing was decided; the client retries with the same key.
	return Transfer{}, false, fmt.Errorf("reserve %s: transaction cancelled: %w", rec.TransferID, ErrUnavailable)
}

// reserved decodes the record whose condition refused rec's reservation: the existing record, or created when it
// is rec's own reservation, written by an earlier attempt of the same request.
func reserved(rec Transfer, image map[string]ddbtypes.AttributeValue) (existing Transfer, created bool, err error) {
	if err := attributevalue.UnmarshalMap(image, &existing); err != nil {
		return Transfer{}, false, fmt.Errorf("reserve %s: decode existing record: %w", rec.TransferID, err)
	}
	if existing.TransferID == rec.TransferID && existing.RequestHash == rec.RequestHash && existing.Status == StatusInProgress {
		return Transfer{}, true, nil // a retry of this request's own write, whose first reply was lost
	}
	return existing, false, nil
}

// GetTransfer reads a transfer by id with a strongly consistent read. A transfer of another scope, or whose record
// was replaced after expiry, is ErrNotFound.
func (s *Store) GetTransfer(ctx context.Context, scope, transferID string, now time.Time) (Transfer, error) {
	pk, ok := RecordKey(transferID)
	if !ok {
		return Transfer{}, ErrNotFound
	}
	t, err := getRecordByKey(ctx, s.db, s.table, pk)
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

// FindTransfer is GetTransfer for a transfer of any scope: what an operator reads.
func (s *Store) FindTransfer(ctx context.Context, transferID string, now time.Time) (Transfer, error) {
	pk, ok := RecordKey(transferID)
	if !ok {
		return Transfer{}, ErrNotFound
	}
	t, err := getRecordByKey(ctx, s.db, s.table, pk)
	switch {
	case errors.Is(err, ErrNotFound):
		return Transfer{}, ErrNotFound
	case err != nil:
		return Transfer{}, fmt.Errorf("find transfer %s: %w", transferID, err)
	case t.TransferID != transferID || t.Expired(now):
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

// MinRetention is the shortest time a transfer record is kept after its workflow was (re)started, or after it was
// settled by the reconciler: the shortest IDEMPOTENCY_TTL allowed. Because every (re)start raises retainUntil to at
// least then (RetainAtLeast), and the workflow settles within its 300 s timeout of starting, the retainUntil the
// workflow's settlement copies into expiresAt is always about a day or more in the future: a record never expires at
// the moment it settles, however late its workflow was re-driven.
const MinRetention = 24 * time.Hour

// RetainAtLeast is rec's retainUntil raised, if need be, to now + MinRetention.
func RetainAtLeast(rec Transfer, now time.Time) int64 {
	until := rec.RetainUntil
	if until == 0 {
		until = KeepForever // a record without one is kept forever
	}
	return max(until, min(now.Add(MinRetention).Unix(), KeepForever))
}

// ClaimRedrive claims the right to re-drive the StartExecution of rec, a transfer in progress, for one window: it sets
// redriveAt to now if the record is still IN_PROGRESS for this transfer and no claim was made in the window before
// now, so that duplicates of a request start the workflow at most once a window however many arrive (a window of 0
// claims unless a claim was made after now). The claim also raises retainUntil to RetainAtLeast(rec, now), so that
// a workflow started late still settles into a record that is kept. When the claim is refused it returns false and
// the time of the standing claim (zero if the record has settled or changed hands since).
func (s *Store) ClaimRedrive(ctx context.Context, rec Transfer, now time.Time, window time.Duration) (bool, time.Time, error) {
	pk, ok := RecordKey(rec.TransferID)
	if !ok {
		return false, time.Time{}, fmt.Errorf("claim re-drive %q: %w", rec.TransferID, ErrNotFound)
	}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(s.table),
		Key:                      recordKey(pk),
		UpdateExpression:         aws.String("SET redriveAt = :now, retainUntil = :retain"),
		ConditionExpression:      aws.String("#status = :inProgress AND transferId = :transferId AND (attribute_not_exists(redriveAt) OR redriveAt <= :since)"),
		ExpressionAttributeNames: map[string]string{"#status": "status"},
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{
			":now":        stringAV(now.UTC().Format(TimeLayout)),
			":since":      stringAV(now.Add(-window).UTC().Format(TimeLayout)),
			":retain":     numberAV(RetainAtLeast(rec, now)),
			":inProgress": stringAV(StatusInProgress),
			":transferId": stringAV(rec.TransferID),
		},
		ReturnValuesOnConditionCheckFailure: ddbtypes.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *ddbtypes.ConditionalCheckFailedException
	switch {
	case err == nil:
		return true, time.Time{}, nil
	case errors.As(err, &ccf):
		var t Transfer
		if err := attributevalue.UnmarshalMap(ccf.Item, &t); err != nil {
			return false, time.Time{}, fmt.Errorf("claim re-drive %s: decode record: %w", rec.TransferID, err)
		}
		if t.TransferID != rec.TransferID || t.Status != StatusInProgress {
			return false, time.Time{}, nil
		}
		last, _ := time.Parse(TimeLayout, t.RedriveAt)
		return false, last, nil
	default:
		return false, time.Time{}, fmt.Errorf("claim re-drive %s: %w", rec.TransferID, translate(err))
	}
}

// ReleaseRedrive gives back the claim ClaimRedrive made at claimedAt, after its StartExecution failed, so that the
// client's retry may re-drive at once instead of meeting the claim. A claim made since is left alone.
func (s *Store) ReleaseRedrive(ctx context.Context, transferID string, claimedAt time.Time) error {
	pk, ok := RecordKey(transferID)
	if !ok {
		return fmt.Errorf("release re-drive %q: %w", transferID, ErrNotFound)
	}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       recordKey(pk),
		UpdateExpression:          aws.String("REMOVE redriveAt"),
		ConditionExpression:       aws.String("transferId = :transferId AND redriveAt = :claimedAt"),
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":transferId": stringAV(transferID), ":claimedAt": stringAV(claimedAt.UTC().Format(TimeLayout))},
	})
	var ccf *ddbtypes.ConditionalCheckFailedException
	if err != nil && !errors.As(err, &ccf) {
		return fmt.Errorf("release re-drive %s: %w", transferID, translate(err))
	}
	return nil
}
