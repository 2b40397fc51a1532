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

// TestWorkflowSettlementIsFencedByTheLedger runs the workflow's own MarkCompleted and MarkFailed updates (read from
// transfer.asl.json) against records in every ledger state: a status the ledger does not support is refused, so a
// record can never say FAILED beside a lone DEBIT, nor COMPLETED without a CREDIT.
func TestWorkflowSettlementIsFencedByTheLedger(t *testing.T) {
	e := newLedgerEnv(t)
	e.account(t, "src", "EUR", 1000)
	e.account(t, "dst", "EUR", 0)
	markCompleted, markFailed := loadASLUpdate(t, "MarkCompleted"), loadASLUpdate(t, "MarkFailed")
	for _, u := range []aslUpdate{markCompleted, markFailed} {
		if got := u.ExpressionAttributeValues[":keepForever"]["N"]; got != strconv.FormatInt(ledger.KeepForever, 10) {
			t.Errorf("the ASL keeps records forever until %q, ledger.KeepForever is %d", got, ledger.KeepForever)
		}
	}

	tests := []struct {
		name          string
		legs          []string
		wantLegs      []string
		completedOK   bool
		failedAllowed bool
	}{
		{name: "no leg", legs: nil, completedOK: false, failedAllowed: true},
		{name: "lone DEBIT", legs: []string{"DEBIT"}, wantLegs: []string{"DEBIT"}, completedOK: false, failedAllowed: false},
		{name: "DEBIT and CREDIT", legs: []string{"DEBIT", "CREDIT"}, wantLegs: []string{"CREDIT", "DEBIT"}, completedOK: true, failedAllowed: false},
		{name: "DEBIT and REFUND", legs: []string{"DEBIT", "REFUND"}, wantLegs: []string{"DEBIT", "REFUND"}, completedOK: false, failedAllowed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, settle := range []struct {
				u  aslUpdate
				ok bool
			}{{markCompleted, tt.completedOK}, {markFailed, tt.failedAllowed}} {
				id := e.transfer(t, "src", "dst", 10, "EUR")
				for _, leg := range tt.legs {
					e.leg(t, id, leg)
				}
				got := slices.Sorted(slices.Values(e.record(t, id).Legs))
				if !reflect.DeepEqual(got, tt.wantLegs) {
					t.Fatalf("record legs = %v, want %v", got, tt.wantLegs)
				}
				err := e.runASLUpdate(t, settle.u, id)
				var ccf *ddbtypes.ConditionalCheckFailedException
				switch {
				case settle.ok && err != nil:
					t.Errorf("%s refused: %v", settle.u.UpdateExpression, err)
				case !settle.ok && !errors.As(err, &ccf):
					t.Errorf("%s: err = %v, want ConditionalCheckFailedException", settle.u.UpdateExpression, err)
				case settle.ok:
					// A settlement starts the record's retention: the TTL attribute appears only now.
					if rec := e.record(t, id); rec.ExpiresAt == 0 || rec.ExpiresAt != rec.RetainUntil {
						t.Errorf("%s: expiresAt %d, retainUntil %d; want them equal", settle.u.UpdateExpression, rec.ExpiresAt, rec.RetainUntil)
					}
				}
			}
		})
	}
}
