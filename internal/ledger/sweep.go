package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// inProgressIndex is the sparse index of transfers still IN_PROGRESS (template.yaml).
const inProgressIndex = "InProgress"

// GetRecord reads a transfer record by id, whatever its scope (the reconciler acts for every caller); ErrNotFound if
// it does not exist or the key now belongs to another transfer.
func (s *Store) GetRecord(ctx context.Context, transferID string) (Transfer, error) {
	return getRecord(ctx, s.db, s.table, transferID)
}

// getRecord reads transferID's record with a strongly consistent read; ErrNotFound if it does not exist or the key
// now belongs to another transfer.
func getRecord(ctx context.Context, db itemGetter, table, transferID string) (Transfer, error) {
	pk, ok := RecordKey(transferID)
	if !ok {
		return Transfer{}, ErrNotFound
	}
	t, err := getRecordByKey(ctx, db, table, pk)
	if err != nil {
		return Transfer{}, fmt.Errorf("get record %s: %w", transferID, err)
	}
	if t.TransferID != transferID {
		return Transfer{}, ErrNotFound
	}
	return t, nil
}

func getRecordByKey(ctx context.Context, db itemGetter, table, pk string) (Transfer, error) {
	out, err := db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(table), Key: recordKey(pk), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return Transfer{}, translate(err)
	}
	if out.Item == nil {
		return Transfer{}, ErrNotFound
	}
	var t Transfer
	if err := attributevalue.UnmarshalMap(out.Item, &t); err != nil {
		return Transfer{}, fmt.Errorf("decode: %w", err)
	}
	return t, nil
}

// SweepCursor is where a read of one shard of the InProgress index left off.
type SweepCursor struct {
	key map[string]ddbtypes.AttributeValue
}

// StaleInShard returns up to limit transfers of one shard of the InProgress index (0 to SweepShards-1) that are still
// IN_PROGRESS and were created before cutoff, oldest first, starting after the cursor (nil: at the oldest). next is
// where it left off, nil when the shard has nothing more. It queries the sparse index (keys only) and reads each
// record consistently, skipping those settled since the index was written.
func (s *Store) StaleInShard(ctx context.Context, shard int, cutoff time.Time, limit int, after *SweepCursor) (stale []Transfer, next *SweepCursor, err error) {
	if limit < 1 {
		return nil, after, nil
	}
	var start map[string]ddbtypes.AttributeValue
	if after != nil {
		start = after.key
	}
	for {
		page, err := s.db.Query(ctx, &dynamodb.QueryInput{
			TableName:              aws.String(s.table),
			IndexName:              aws.String(inProgressIndex),
			KeyConditionExpression: aws.String("sweepShard = :shard AND createdAt < :cutoff"),
			ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{
				":shard":  stringAV(shardKey(shard)),
				":cutoff": stringAV(cutoff.UTC().Format(TimeLayout)),
			},
			Limit:             aws.Int32(int32(limit - len(stale))),
			ExclusiveStartKey: start,
		})
		if err != nil {
			return nil, nil, fmt.Errorf("query in-progress shard %d: %w", shard, translate(err))
		}
		for _, item := range page.Items {
			pk, ok := item["pk"].(*ddbtypes.AttributeValueMemberS)
			if !ok {
				continue
			}
			t, err := getRecordByKey(ctx, s.db, s.table, pk.Value)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, nil, fmt.Errorf("read stale record: %w", err)
			}
			if t.Status == StatusInProgress {
				stale = append(stale, t)
			}
		}
		start = page.LastEvaluatedKey
		if start == nil {
			return stale, nil, nil
		}
		if len(stale) >= limit {
			return stale, &SweepCursor{key: start}, nil
		}
	}
}

// shardKey is the InProgress index's partition key of shard n.
func shardKey(n int) string { return fmt.Sprintf("IN_PROGRESS#%02d", n) }
