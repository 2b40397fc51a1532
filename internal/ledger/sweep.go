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
	pk, ok := RecordKey(transferID)
	if !ok {
		return Transfer{}, ErrNotFound
	}
	t, err := s.getRecordByKey(ctx, pk)
	if err != nil {
		return Transfer{}, fmt.Errorf("get record %s: %w", transferID, err)
	}
	if t.TransferID != transferID {
		return Transfer{}, ErrNotFound
	}
	return t, nil
}

func (s *Store) getRecordByKey(ctx context.Context, pk string) (Transfer, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: recordKey(pk), ConsistentRead: aws.Bool(true),
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

// StaleInProgress returns transfers still IN_PROGRESS that were created before cutoff, oldest first within each of
// the index's shards, at most limit of them. It queries the sparse InProgress index (keys only) and reads each
// record consistently, skipping those settled since the index was written.
func (s *Store) StaleInProgress(ctx context.Context, cutoff time.Time, limit int) ([]Transfer, error) {
	var out []Transfer
	for shard := 0; shard < sweepShards && len(out) < limit; shard++ {
		var start map[string]ddbtypes.AttributeValue
		for len(out) < limit {
			page, err := s.db.Query(ctx, &dynamodb.QueryInput{
				TableName:              aws.String(s.table),
				IndexName:              aws.String(inProgressIndex),
				KeyConditionExpression: aws.String("sweepShard = :shard AND createdAt < :cutoff"),
				ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{
					":shard":  stringAV(fmt.Sprintf("IN_PROGRESS#%02d", shard)),
					":cutoff": stringAV(cutoff.UTC().Format(TimeLayout)),
				},
				Limit:             aws.Int32(int32(limit - len(out))),
				ExclusiveStartKey: start,
			})
			if err != nil {
				return nil, fmt.Errorf("query in-progress shard %d: %w", shard, translate(err))
			}
			for _, item := range page.Items {
				pk, ok := item["pk"].(*ddbtypes.AttributeValueMemberS)
				if !ok {
					continue
				}
				t, err := s.getRecordByKey(ctx, pk.Value)
				if errors.Is(err, ErrNotFound) {
					continue
				}
				if err != nil {
					return nil, fmt.Errorf("read stale record: %w", err)
				}
				if t.Status == StatusInProgress {
					out = append(out, t)
				}
			}
			if page.LastEvaluatedKey == nil {
				break
			}
			start = page.LastEvaluatedKey
		}
	}
	return out, nil
}
