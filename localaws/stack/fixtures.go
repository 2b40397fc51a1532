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
	"github.com/transferflow/orchestrator/internal/transfer"
	"github.com/transferflow/orchestrator/localaws/sfnengine"
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
	// Execution, when set, is how the transfer's workflow ended before the stack started (a timed-out one, for the
	// reconciler's status change event): the stack's Step Functions gets that closed execution, under executionArn,
	// since the reconciler settles only what DescribeExecution reports.
	Execution *fixtureExecution `json:"execution,omitempty"`
}

// fixtureExecution is a fixture's closed execution: its status (FAILED, TIMED_OUT or ABORTED), error and cause.
type fixtureExecution struct {
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	Cause  string `json:"cause,omitempty"`
}

// localCallerScope is the scope of the local gateway's unsigned caller, the IAM user "local" (localaws/gateway), so
// that fixtures read as that caller's transfers with curl and the events' requestContext.identity.
func localCallerScope() (string, error) {
	var req events.APIGatewayProxyRequest
	req.RequestContext.Identity.UserArn = "arn:aws:iam::" + AccountID + ":user/local"
	return apigw.CallerScope(req)
}

// seedTransfers creates the accounts and transfers of a --seed-transfers file; accounts and transfers that exist
// are left alone, whatever has happened to them since. It returns the closed executions of the fixtures that have
// one, for importFixtureExecutions once the engine runs. An empty path seeds nothing.
//
// A fixture is not in the InProgress index (no sweepShard): it has no workflow, and the reconciler's sweep would
// otherwise start one for it (or settle it ORPHANED) behind the user's back. Only the events the user invokes
// change fixtures.
func seedTransfers(ctx context.Context, db *dynamodb.Client, table string, sd seeder, path string, now time.Time) ([]fixtureClosed, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("seed transfers: %w", err)
	}
	var f fixtureFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("seed transfers %s: %w", path, err)
	}
	store, led := ledger.NewStore(db, table), ledger.NewLedger(db, table)
	if err := sd.open(ctx, path, f.Accounts); err != nil {
		return nil, err
	}
	scope, err := localCallerScope()
	if err != nil {
		return nil, err
	}
	var closed []fixtureClosed
	for _, t := range f.Transfers {
		rec, err := seedTransfer(ctx, store, led, scope, t, now)
		if err != nil {
			return nil, fmt.Errorf("seed transfers %s: %s: %w", path, t.TransferID, err)
		}
		if t.Execution != nil {
			input, err := json.Marshal(transfer.NewExecutionInput(rec))
			if err != nil {
				return nil, err
			}
			closed = append(closed, fixtureClosed{arn: t.ExecutionArn, execution: sfnengine.ClosedExecution{Name: t.TransferID,
				Input: string(input), Status: t.Execution.Status, Error: t.Execution.Error, Cause: t.Execution.Cause}})
		}
	}
	return closed, nil
}

// fixtureClosed is a fixture's closed execution and the ARN the fixture gives it.
type fixtureClosed struct {
	arn       string
	execution sfnengine.ClosedExecution
}

// importFixtureExecutions gives the engine the fixtures' closed executions, on machine; one it has already (a stack
// restarted on its --data-dir) is left alone.
func importFixtureExecutions(ctx context.Context, eng *sfnengine.Engine, machine string, closed []fixtureClosed) error {
	for _, c := range closed {
		c.execution.StateMachineArn = machine
		rec, err := eng.ImportClosedExecution(ctx, c.execution)
		switch {
		case errors.Is(err, sfnengine.ErrExecutionAlreadyExists):
		case err != nil:
			return fmt.Errorf("seed transfers: %s's execution: %w", c.execution.Name, err)
		case rec.Arn != c.arn:
			return fmt.Errorf("seed transfers: %s's execution is %s, not the fixture's executionArn %s", c.execution.Name, rec.Arn, c.arn)
		}
	}
	return nil
}

// seedTransfer writes t and returns its record as written first (before its legs).
func seedTransfer(ctx context.Context, store *ledger.Store, led *ledger.Ledger, scope string, t fixtureTransfer, now time.Time) (ledger.Transfer, error) {
	if _, ok := ledger.RecordKey(t.TransferID); !ok {
		return ledger.Transfer{}, errors.New("not a transfer id (tr_ and 42 characters of a-z, 2-7)")
	}
	if !slices.Contains([]string{ledger.StatusInProgress, ledger.StatusCompleted, ledger.StatusFailed}, t.Status) {
		return ledger.Transfer{}, fmt.Errorf("status %q is not IN_PROGRESS, COMPLETED or FAILED", t.Status)
	}
	rec := ledger.NewTransferRecord(ledger.Transfer{
		TransferID: t.TransferID, Scope: scope, IdempotencyKey: t.IdempotencyKey,
		SourceAccountID: t.SourceAccountID, DestinationAccountID: t.DestinationAccountID,
		Amount: t.Amount, Currency: t.Currency, Reference: t.Reference, ExecutionArn: t.ExecutionArn,
	}, now, 0)
	rec.SweepShard = ""
	if _, created, err := store.Reserve(ctx, rec, now); err != nil || !created {
		return rec, err
	}
	for _, leg := range t.Legs {
		if _, _, err := led.ApplyLeg(ctx, rec.LegRequest(leg), now); err != nil {
			return rec, err
		}
	}
	if t.Status == ledger.StatusInProgress {
		return rec, nil
	}
	return rec, led.SettleTransfer(ctx, t.TransferID, t.Status, ledger.Failure{Code: t.FailureCode}, 0, now)
}
