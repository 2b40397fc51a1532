package transfer

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/transferflow/orchestrator/internal/ledger"
)

// aslUpdate is the part of a dynamodb:updateItem task's Parameters this test runs.
type aslUpdate struct {
	ConditionExpression       string
	UpdateExpression          string
	ExpressionAttributeNames  map[string]string
	ExpressionAttributeValues map[string]map[string]string
}

func loadASLUpdate(t *testing.T, state string) aslUpdate {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "statemachine", "transfer.asl.json"))
	if err != nil {
		t.Fatal(err)
	}
	var def struct {
		States map[string]struct{ Parameters aslUpdate }
	}
	if err := json.Unmarshal(b, &def); err != nil {
		t.Fatal(err)
	}
	u := def.States[state].Parameters
	if u.ConditionExpression == "" {
		t.Fatalf("state %s has no ConditionExpression", state)
	}
	return u
}

// runASLUpdate executes the state's UpdateItem as the workflow would for transfer id, filling the `.$` values the
// workflow takes from its input and context.
func (e *ledgerEnv) runASLUpdate(t *testing.T, u aslUpdate, id string) error {
	t.Helper()
	pk, _ := ledger.RecordKey(id)
	values := map[string]ddbtypes.AttributeValue{}
	for k, v := range u.ExpressionAttributeValues {
		switch {
		case v["S"] != "":
			values[k] = &ddbtypes.AttributeValueMemberS{Value: v["S"]}
		case v["N"] != "":
			values[k] = &ddbtypes.AttributeValueMemberN{Value: v["N"]}
		case v["S.$"] == "$.transferId":
			values[k] = &ddbtypes.AttributeValueMemberS{Value: id}
		case v["S.$"] != "":
			values[k] = &ddbtypes.AttributeValueMemberS{Value: "value-of " + v["S.$"]}
		}
	}
	_, err := e.db.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
		TableName: aws.String(e.table),
		Key: map[string]ddbtypes.AttributeValue{
			"pk": &ddbtypes.AttributeValueMemberS{Value: pk}, "sk": &ddbtypes.AttributeValueMemberS{Value: "TRANSFER"},
		},
		ConditionExpression:       aws.String(u.ConditionExpression),
		UpdateExpression:          aws.String(u.UpdateExpression),
		ExpressionAttributeNames:  u.ExpressionAttributeNames,
		ExpressionAttributeValues: values,
	})
	return err
}

// TestWorkflowSettlementIsFencedByTheLedger checks both of the workflow's settlements against records in every
// ledger state: COMPLETED is written only by the CREDIT's own transaction (the Credit state's settle), so a record
// is COMPLETED exactly when its CREDIT exists; the MarkFailed update (read from transfer.asl.json) is refused where
// the ledger does not support FAILED, so a record can never say FAILED beside a lone DEBIT or a CREDIT. (The CREDITs
// before MarkFailed are an older definition's, which do not settle, so that the update's own condition is what
// refuses it.)
func TestWorkflowSettlementIsFencedByTheLedger(t *testing.T) {
	e := newLedgerEnv(t)
	e.account(t, "src", "EUR", 1000)
	e.account(t, "dst", "EUR", 0)
	markFailed := loadASLUpdate(t, "MarkFailed")
	if got := markFailed.ExpressionAttributeValues[":keepForever"]["N"]; got != strconv.FormatInt(ledger.KeepForever, 10) {
		t.Errorf("the ASL keeps records forever until %q, ledger.KeepForever is %d", got, ledger.KeepForever)
	}

	tests := []struct {
		name          string
		legs          []string
		wantLegs      []string
		completed     bool
		failedAllowed bool
	}{
		{name: "no leg", legs: nil, completed: false, failedAllowed: true},
		{name: "lone DEBIT", legs: []string{"DEBIT"}, wantLegs: []string{"DEBIT"}, completed: false, failedAllowed: false},
		{name: "DEBIT and CREDIT", legs: []string{"DEBIT", "CREDIT"}, wantLegs: []string{"CREDIT", "DEBIT"}, completed: true, failedAllowed: false},
		{name: "DEBIT and REFUND", legs: []string{"DEBIT", "REFUND"}, wantLegs: []string{"DEBIT", "REFUND"}, completed: false, failedAllowed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The legs as the workflow applies them: the CREDIT settles.
			id := e.transfer(t, "src", "dst", 10, "EUR")
			for _, leg := range tt.legs {
				e.leg(t, id, leg)
			}
			rec := e.record(t, id)
			if got := slices.Sorted(slices.Values(rec.Legs)); !reflect.DeepEqual(got, tt.wantLegs) {
				t.Fatalf("record legs = %v, want %v", got, tt.wantLegs)
			}
			switch {
			case tt.completed:
				// The settlement starts the record's retention: the TTL attribute appears only now.
				credit := e.entries(t, id)[ledger.LegCredit]
				if rec.Status != ledger.StatusCompleted || rec.CompletedAt != credit.CreatedAt || rec.UpdatedAt != credit.CreatedAt ||
					rec.ExpiresAt == 0 || rec.ExpiresAt != rec.RetainUntil || rec.SweepShard != "" {
					t.Errorf("after the CREDIT: %s, completedAt %q updatedAt %q (CREDIT at %q), expiresAt %d retainUntil %d, sweepShard %q; want COMPLETED at the CREDIT's time, retained, out of the index",
						rec.Status, rec.CompletedAt, rec.UpdatedAt, credit.CreatedAt, rec.ExpiresAt, rec.RetainUntil, rec.SweepShard)
				}
			case rec.Status != ledger.StatusInProgress || rec.ExpiresAt != 0:
				t.Errorf("without a CREDIT: %s, expiresAt %d; want IN_PROGRESS, not yet expiring", rec.Status, rec.ExpiresAt)
			}

			id = e.transfer(t, "src", "dst", 10, "EUR")
			for _, leg := range tt.legs {
				if leg == ledger.LegCredit {
					e.olderCredit(t, id)
					continue
				}
				e.leg(t, id, leg)
			}
			err := e.runASLUpdate(t, markFailed, id)
			var ccf *ddbtypes.ConditionalCheckFailedException
			switch {
			case tt.failedAllowed && err != nil:
				t.Errorf("MarkFailed refused: %v", err)
			case !tt.failedAllowed && !errors.As(err, &ccf):
				t.Errorf("MarkFailed: err = %v, want ConditionalCheckFailedException", err)
			case tt.failedAllowed:
				if rec := e.record(t, id); rec.ExpiresAt == 0 || rec.ExpiresAt != rec.RetainUntil {
					t.Errorf("MarkFailed: expiresAt %d, retainUntil %d; want them equal", rec.ExpiresAt, rec.RetainUntil)
				}
			}
		})
	}
}
