package stack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/transferflow/orchestrator/internal/apigw"
	"github.com/transferflow/orchestrator/internal/ledger"
)

// fixtureFile is the --seed-transfers file (events/local-transfers.json): the accounts and transfers that the
// `sam local invoke` events of events/ reference, so that each of them succeeds against a fresh stack.
type fixtureFile struct {
	Accounts  []seedAccount     `json:"accounts"`
	Transfers []fixtureTransfer `json:"transfers"`
}

// fixtureTransfer is a transfer written as the orchestrator reserves one, then moved through the ledger's own code:
// its legs applied in order (DEBIT, CREDIT, REFUND), then, for a status other than IN_PROGRESS, settled.
type fixtureTransfer struct {
	TransferID           string   `json:"transferId"`
	IdempotencyKey       string   `json:"idempotencyKey"`
	SourceAccountID      string   `json:"sourceAccountId"`
	DestinationAccountID string   `json:"destinationAccountId"`
	Amount               int64    `json:"amount"`
	Currency             string   `json:"currency"`
	Reference            string   `json:"reference,omitempty"`
	ExecutionArn         string   `json:"executionArn"`
	Legs                 []string `json:"legs"`
	Status               string   `json:"status"`
	FailureCode          string   `json:"failureCode,omitempty"`
}

// localCallerScope is the scope of the local gateway's unsigned caller, the IAM user "local" (localaws/gateway), so
// that fixtures read as that caller's transfers with curl and the events' requestContext.identity.
func localCallerScope() (string, error) {
	var req events.APIGatewayProxyRequest
	req.RequestContext.Identity.UserArn = "arn:aws:iam::" + AccountID + ":user/local"
	return apigw.CallerScope(req)
}

// seedTransfers creates the accounts and transfers of a --seed-transfers file; accounts and transfers that exist
// are left alone, whatever has happened to them since. An empty path seeds nothing.
//
// A fixture is not in the InProgress index (no sweepShard): it has no workflow, and the reconciler's sweep would
// otherwise start one for it (or settle it ORPHANED) behind the user's back. Only the events the user invokes
// change fixtures.
func seedTransfers(ctx context.Context, db *dynamodb.Client, table string, sd seeder, path string, now time.Time) error {
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("seed transfers: %w", err)
	}
	var f fixtureFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return fmt.Errorf("seed transfers %s: %w", path, err)
	}
	store, led := ledger.NewStore(db, table), ledger.NewLedger(db, table)
	if err := sd.open(ctx, path, f.Accounts); err != nil {
		return err
	}
	scope, err := localCallerScope()
	if err != nil {
		return err
	}
	for _, t := range f.Transfers {
		if err := seedTransfer(ctx, store, led, scope, t, now); err != nil {
			return fmt.Errorf("seed transfers %s: %s: %w", path, t.TransferID, err)
		}
	}
	return nil
}

func seedTransfer(ctx context.Context, store *ledger.Store, led *ledger.Ledger, scope string, t fixtureTransfer, now time.Time) error {
	if _, ok := ledger.RecordKey(t.TransferID); !ok {
		return errors.New("not a transfer id (tr_ and 42 characters of a-z, 2-7)")
	}
	if !slices.Contains([]string{ledger.StatusInProgress, ledger.StatusCompleted, ledger.StatusFailed}, t.Status) {
		return fmt.Errorf("status %q is not IN_PROGRESS, COMPLETED or FAILED", t.Status)
	}
	rec := ledger.NewTransferRecord(ledger.Transfer{
		TransferID: t.TransferID, Scope: scope, IdempotencyKey: t.IdempotencyKey,
		SourceAccountID: t.SourceAccountID, DestinationAccountID: t.DestinationAccountID,
		Amount: t.Amount, Currency: t.Currency, Reference: t.Reference, ExecutionArn: t.ExecutionArn,
	}, now, 0)
	rec.SweepShard = ""
	if _, created, err := store.Reserve(ctx, rec, now); err != nil || !created {
		return err
	}
	for _, leg := range t.Legs {
		if _, _, err := led.ApplyLeg(ctx, rec.LegRequest(leg), now); err != nil {
			return err
		}
	}
	if t.Status == ledger.StatusInProgress {
		return nil
	}
	return led.SettleTransfer(ctx, t.TransferID, t.Status, ledger.Failure{Code: t.FailureCode}, 0, now)
}
