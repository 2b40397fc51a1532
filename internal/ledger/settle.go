package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ErrLedgerDisagrees reports a settlement the ledger does not support: COMPLETED without a CREDIT, or FAILED with a
// DEBIT that has no REFUND. The record is unchanged; the caller refunds (or completes) first.
var ErrLedgerDisagrees = errors.New("ledger: the ledger does not agree with this settlement")

// SettleTransfer moves an IN_PROGRESS transfer record to COMPLETED or FAILED (with failureCode and, when known, the
// failureError that decided it: see Transfer.FailureError), in one transaction
// that also checks the ledger, so the status always agrees with the legs: COMPLETED needs the CREDIT (which itself
// needs the DEBIT); FAILED needs no DEBIT, or a REFUND (which excludes a CREDIT). Once the record has left
// IN_PROGRESS, no leg can be written for it, so the agreement holds for good.
//
// FAILED is tried as "no DEBIT" first and, if a DEBIT exists, as "REFUND exists"; each attempt is atomic. Like the
// workflow's own settlement, it starts the record's retention: it sets expiresAt (the TTL attribute) to expiresAt,
// or, when that is 0, to the record's retainUntil. The errors wrap ErrTransferNotInProgress (already settled, gone or
// reused), ErrLedgerDisagrees, or ErrUnavailable.
func (l *Ledger) SettleTransfer(ctx context.Context, transferID, status string, failure Failure, expiresAt int64, now time.Time) error {
	what := "settle " + transferID
	recordPK, ok := RecordKey(transferID)
	if !ok {
		return fmt.Errorf("%s: %w", what, ErrInvalidLeg)
	}
	switch status {
	case StatusCompleted:
		return l.settle(ctx, transferID, recordPK, status, Failure{}, expiresAt, now, LegCredit, true)
	case StatusFailed:
		if failure.Code == "" {
			return fmt.Errorf("%s: a failure code is required", what)
		}
		err := l.settle(ctx, transferID, recordPK, status, failure, expiresAt, now, LegDebit, false)
		if !errors.Is(err, ErrLedgerDisagrees) {
			return err
		}
		return l.settle(ctx, transferID, recordPK, status, failure, expiresAt, now, LegRefund, true)
	default:
		return fmt.Errorf("%s: status %q is not COMPLETED or FAILED", what, status)
	}
}

// Failure is why a transfer FAILED: its failure code, and the error that decided it as Step Functions reports errors
// (both optional beyond the code).
type Failure struct {
	Code  string
	Error string
	Cause string
}

// settle writes the record's terminal status if the entry of leg exists (exists true) or does not (false). The
// record's TTL starts now: expiresAt, or the retainUntil reserved with the record when expiresAt is 0 (a record
// without one, written before retainUntil existed, is kept forever), as the workflow's own settlement does.
func (l *Ledger) settle(ctx context.Context, transferID, recordPK, status string, failure Failure, expiresAt int64, now time.Time, leg string, exists bool) error {
	ts := now.UTC().Format(TimeLayout)
	set := "SET #status = :status, updatedAt = :now, completedAt = :now, expiresAt = if_not_exists(retainUntil, :keepForever)"
	values := map[string]ddbtypes.AttributeValue{
		":inProgress":  stringAV(StatusInProgress),
		":transferId":  stringAV(transferID),
		":status":      stringAV(status),
		":now":         stringAV(ts),
		":keepForever": numberAV(KeepForever),
	}
	if expiresAt != 0 {
		set = "SET #status = :status, updatedAt = :now, completedAt = :now, expiresAt = :expiresAt"
		delete(values, ":keepForever")
		values[":expiresAt"] = numberAV(expiresAt)
	}
	if failure.Code != "" {
		set += ", failureCode = :code"
		values[":code"] = stringAV(failure.Code)
		if failure.Error != "" {
			set += ", failureError = :error"
			values[":error"] = stringAV(failure.JSON())
		}
	}
	update := set + " REMOVE sweepShard"
	legCond := "attribute_not_exists(pk)"
	if exists {
		legCond = "attribute_exists(pk)"
	}
	table := aws.String(l.table)
	_, err := l.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{
		{Update: &ddbtypes.Update{
			TableName:                           table,
			Key:                                 recordKey(recordPK),
			UpdateExpression:                    aws.String(update),
			ConditionExpression:                 aws.String("#status = :inProgress AND transferId = :transferId"),
			ExpressionAttributeNames:            map[string]string{"#status": "status"},
			ExpressionAttributeValues:           values,
			ReturnValuesOnConditionCheckFailure: ddbtypes.ReturnValuesOnConditionCheckFailureAllOld,
		}},
		{ConditionCheck: &ddbtypes.ConditionCheck{
			TableName:           table,
			Key:                 entryKey(transferID, leg),
			ConditionExpression: aws.String(legCond),
		}},
	}})
	if err == nil {
		return nil
	}
	what := "settle " + transferID
	var tce *ddbtypes.TransactionCanceledException
	if !errors.As(err, &tce) {
		return fmt.Errorf("%s: %w", what, translate(err))
	}
	reasons := tce.CancellationReasons
	failed := func(i int) bool { return i < len(reasons) && aws.ToString(reasons[i].Code) == codeConditionFailed }
	switch {
	case failed(0):
		t, found, err := decodeRecordImage(reasons[0].Item)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return fmt.Errorf("%s: %w", what, recordOutcome(LegRequest{TransferID: transferID}, t, found))
	case failed(1):
		return fmt.Errorf("%s %s: %w", what, status, ErrLedgerDisagrees)
	}
	return fmt.Errorf("%s: transaction cancelled: %w", what, ErrUnavailable)
}

// JSON renders the failure's error and cause as the workflow stores a caught error: {"Error": …, "Cause": …}, the
// form of Transfer.FailureError.
func (f Failure) JSON() string {
	b, _ := json.Marshal(struct {
		Error string `json:"Error"`
		Cause string `json:"Cause,omitempty"`
	}{f.Error, f.Cause})
	return string(b)
}

// Completion is when the transfer was settled COMPLETED, for a CREDIT with Settle that was replayed (its entry was
// already written, so the transaction that settles the record committed before, or an older definition's CREDIT
// left the record to a separate settlement): it reads the record (strongly consistent) and returns its completedAt.
// A record still IN_PROGRESS with its CREDIT written is settled COMPLETED now, as SettleTransfer does. The errors wrap
// ErrTransferNotInProgress (the record is gone, reused, or not COMPLETED) or ErrUnavailable.
func (l *Ledger) Completion(ctx context.Context, transferID string, now time.Time) (string, error) {
	what := "completion of " + transferID
	for range 2 {
		t, err := getRecord(ctx, l.db, l.table, transferID)
		if errors.Is(err, ErrNotFound) {
			return "", fmt.Errorf("%s: no transfer record: %w", what, ErrTransferNotInProgress)
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", what, err)
		}
		switch t.Status {
		case StatusCompleted:
			return t.CompletedAt, nil
		case StatusInProgress:
			err := l.SettleTransfer(ctx, transferID, StatusCompleted, Failure{}, 0, now)
			if err == nil {
				return now.UTC().Format(TimeLayout), nil
			}
			if !errors.Is(err, ErrTransferNotInProgress) {
				return "", err
			}
			// Settled meanwhile by someone else: read what they wrote.
		default:
			return "", fmt.Errorf("%s: transfer is %s: %w", what, t.Status, ErrTransferNotInProgress)
		}
	}
	return "", fmt.Errorf("%s: the record keeps changing: %w", what, ErrUnavailable)
}
