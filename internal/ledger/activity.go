package ledger

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ActivityIndex is the sparse global secondary index of ledger entries by account (template.yaml): hash key
// activityAccount, range key activityAt. Only ledger entries carry those attributes, so account items and transfer
// records are not in it.
const ActivityIndex = "AccountActivity"

// MaxActivityPage is the most entries one ListActivity call returns: a page's details then take at most one
// TransactGetItems of 100 items (a record and a DEBIT entry per entry).
const MaxActivityPage = 50

// ErrInvalidCursor reports an activity cursor that is not an activityAt value of the account's entries.
var ErrInvalidCursor = errors.New("ledger: invalid activity cursor")

// ActivitySortKey is an entry's activityAt: its creation time (TimeLayout, fixed width, so string order is time
// order), its transfer id and its leg, joined by '#'. The transfer id and leg make it unique within the account and
// give the entry's table key back (ParseActivitySortKey).
func ActivitySortKey(createdAt, transferID, leg string) string {
	return createdAt + "#" + transferID + "#" + leg
}

// ParseActivitySortKey splits an activityAt value; ok is false for a value ActivitySortKey cannot have made.
func ParseActivitySortKey(s string) (createdAt, transferID, leg string, ok bool) {
	parts := strings.Split(s, "#")
	if len(parts) != 3 {
		return "", "", "", false
	}
	createdAt, transferID, leg = parts[0], parts[1], parts[2]
	if _, err := time.Parse(TimeLayout, createdAt); err != nil || len(createdAt) != len(TimeLayout)-5 {
		return "", "", "", false
	}
	if _, valid := RecordKey(transferID); !valid {
		return "", "", "", false
	}
	switch leg {
	case LegDebit, LegCredit, LegRefund:
	default:
		return "", "", "", false
	}
	return createdAt, transferID, leg, true
}

// Activity is one ledger entry of an account, newest first in a page, with what the listing shows about its
// transfer.
type Activity struct {
	Entry
	// Counterparty is the transfer's other account: the DEBIT's destination for a DEBIT, the DEBIT's account for a
	// CREDIT or REFUND; empty when no entry names it (a DEBIT written before counterparties were recorded).
	Counterparty string
	// Record is the transfer's record where it still exists (records expire with the idempotency TTL, entries are
	// kept forever); nil otherwise. Its Scope says whose transfer it is.
	Record *Transfer
}

// ActivityPage is one page of an account's entries, newest first. Next is the activityAt of the last entry when
// more may follow (pass it to ListActivity as after), empty otherwise.
type ActivityPage struct {
	Entries []Activity
	Next    string
}

// ListActivity returns up to limit (1 to MaxActivityPage) of the account's ledger entries older than after (an
// activityAt value; empty starts at the newest), newest first: with a cursor, one GetItem that checks it names an
// entry of this account; one Query of the AccountActivity index; then one TransactGetItems for the transfer records and, for CREDIT and REFUND entries, the DEBIT
// entries that name the counterparty. The index is eventually consistent on AWS: an entry written a moment ago
// may not be listed yet. An after that is not the activityAt of one of the account's entries is ErrInvalidCursor.
func (s *Store) ListActivity(ctx context.Context, accountID string, limit int, after string) (ActivityPage, error) {
	if limit < 1 || limit > MaxActivityPage {
		return ActivityPage{}, fmt.Errorf("list activity of %s: limit %d is not 1 to %d", accountID, limit, MaxActivityPage)
	}
	in := &dynamodb.QueryInput{
		TableName:              aws.String(s.table),
		IndexName:              aws.String(ActivityIndex),
		KeyConditionExpression: aws.String("activityAccount = :account"),
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{
			":account": stringAV(accountID),
		},
		ScanIndexForward: aws.Bool(false),
		Limit:            aws.Int32(int32(limit)),
	}
	if after != "" {
		_, transferID, leg, ok := ParseActivitySortKey(after)
		if !ok {
			return ActivityPage{}, ErrInvalidCursor
		}
		// The cursor must be an entry of this account's listing: one GetItem of the entry it names, so that a
		// cursor made up, or taken from another account's listing, is refused rather than followed.
		cur, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
			TableName:            aws.String(s.table),
			Key:                  entryKey(transferID, leg),
			ProjectionExpression: aws.String("activityAccount, activityAt"),
		})
		if err != nil {
			return ActivityPage{}, fmt.Errorf("list activity of %s: read the cursor's entry: %w", accountID, translate(err))
		}
		var at struct {
			Account string `dynamodbav:"activityAccount"`
			At      string `dynamodbav:"activityAt"`
		}
		if err := attributevalue.UnmarshalMap(cur.Item, &at); err != nil || at.Account != accountID || at.At != after {
			return ActivityPage{}, ErrInvalidCursor
		}
		in.ExclusiveStartKey = map[string]ddbtypes.AttributeValue{
			"activityAccount": stringAV(accountID),
			"activityAt":      stringAV(after),
			"pk":              stringAV(LedgerKey(transferID)),
			"sk":              stringAV(leg),
		}
	}
	out, err := s.db.Query(ctx, in)
	if err != nil {
		return ActivityPage{}, fmt.Errorf("list activity of %s: %w", accountID, translate(err))
	}
	var entries []Entry
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &entries); err != nil {
		return ActivityPage{}, fmt.Errorf("list activity of %s: decode: %w", accountID, err)
	}
	page := ActivityPage{Entries: make([]Activity, len(entries))}
	for i, e := range entries {
		page.Entries[i] = Activity{Entry: e, Counterparty: e.CounterpartyAccountID}
	}
	if len(out.LastEvaluatedKey) > 0 && len(entries) > 0 {
		page.Next = entries[len(entries)-1].ActivityAt
	}
	if err := s.details(ctx, page.Entries); err != nil {
		return ActivityPage{}, fmt.Errorf("list activity of %s: %w", accountID, err)
	}
	return page, nil
}

// maxReadRounds bounds the TransactGetItems calls one read makes when contention cancels it.
const maxReadRounds = 5

// details fills in each entry's record and, for a CREDIT or REFUND, its counterparty from the transfer's DEBIT: one
// TransactGetItems (at most 2 × MaxActivityPage = 100 items), tried again only when a concurrent write cancelled it.
// TransactGetItems rather than BatchGetItem: it needs only dynamodb:GetItem, and the roles are never granted
// BatchGetItem (lab/deploy's forbidden actions: a bulk read of the ledger).
func (s *Store) details(ctx context.Context, acts []Activity) error {
	var keys []map[string]ddbtypes.AttributeValue
	seen := map[string]bool{}
	add := func(pk, sk string) {
		if !seen[pk+"/"+sk] {
			seen[pk+"/"+sk] = true
			keys = append(keys, map[string]ddbtypes.AttributeValue{"pk": stringAV(pk), "sk": stringAV(sk)})
		}
	}
	for _, a := range acts {
		if pk, ok := RecordKey(a.TransferID); ok {
			add(pk, transferSK)
		}
		if a.Leg != LegDebit {
			add(LedgerKey(a.TransferID), LegDebit)
		}
	}
	items, err := s.getItems(ctx, keys)
	if err != nil {
		return fmt.Errorf("read transfer details: %w", err)
	}
	records := map[string]Transfer{} // by transfer id
	debits := map[string]Entry{}     // by transfer id
	for _, item := range items {
		pk, _ := item["pk"].(*ddbtypes.AttributeValueMemberS)
		if pk == nil {
			continue
		}
		if strings.HasPrefix(pk.Value, transferPrefix) {
			var t Transfer
			if err := attributevalue.UnmarshalMap(item, &t); err != nil {
				return fmt.Errorf("read transfer details: decode record: %w", err)
			}
			records[t.TransferID] = t
			continue
		}
		var e Entry
		if err := attributevalue.UnmarshalMap(item, &e); err != nil {
			return fmt.Errorf("read transfer details: decode entry: %w", err)
		}
		debits[e.TransferID] = e
	}
	for i := range acts {
		a := &acts[i]
		// A record whose id differs was replaced after expiry by another transfer with the same key.
		if t, ok := records[a.TransferID]; ok {
			a.Record = &t
		}
		if a.Leg != LegDebit {
			if d, ok := debits[a.TransferID]; ok {
				a.Counterparty = d.AccountID
			}
		} else if a.Counterparty == "" && a.Record != nil {
			a.Counterparty = a.Record.DestinationAccountID
		}
	}
	return nil
}

// getItems reads up to 100 items by key with one TransactGetItems (serializable, so strongly consistent) and
// returns those that exist. A call cancelled by a concurrent write to one of the items is tried again, a few times.
func (s *Store) getItems(ctx context.Context, keys []map[string]ddbtypes.AttributeValue) ([]map[string]ddbtypes.AttributeValue, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	gets := make([]ddbtypes.TransactGetItem, len(keys))
	for i, k := range keys {
		gets[i] = ddbtypes.TransactGetItem{Get: &ddbtypes.Get{TableName: aws.String(s.table), Key: k}}
	}
	for round := 1; ; round++ {
		out, err := s.db.TransactGetItems(ctx, &dynamodb.TransactGetItemsInput{TransactItems: gets})
		if err == nil {
			var items []map[string]ddbtypes.AttributeValue
			for _, r := range out.Responses {
				if len(r.Item) > 0 {
					items = append(items, r.Item)
				}
			}
			return items, nil
		}
		var tce *ddbtypes.TransactionCanceledException
		if !errors.As(err, &tce) {
			return nil, translate(err)
		}
		if round == maxReadRounds {
			return nil, fmt.Errorf("%d attempts cancelled by concurrent writes: %w", round, ErrUnavailable)
		}
		if err := sleepCtx(ctx, time.Duration(round*round)*20*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

// sleepCtx waits d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
