package transfer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/transferflow/orchestrator/internal/ledger"
)

// Detail types of the events the reconciler handles.
const (
	DetailTypeStatusChange = "Step Functions Execution Status Change"
	DetailTypeScheduled    = "Scheduled Event"
)

// Failure codes the reconciler settles with.
const (
	CodeTimedOut       = "TIMED_OUT"
	CodeAborted        = "ABORTED"
	CodeOrphaned       = "ORPHANED"
	CodeWorkflowFailed = "WORKFLOW_FAILED"
)

// settlementLedger applies legs and settles records against the ledger (*ledger.Ledger satisfies it).
type settlementLedger interface {
	ApplyLeg(ctx context.Context, req ledger.LegRequest, now time.Time) (ledger.Entry, bool, error)
	SettleTransfer(ctx context.Context, transferID, status, failureCode string, now time.Time) error
}

// recordFinder reads transfer records for the reconciler (*ledger.Store satisfies it).
type recordFinder interface {
	GetRecord(ctx context.Context, transferID string) (ledger.Transfer, error)
	StaleInProgress(ctx context.Context, cutoff time.Time, limit int) ([]ledger.Transfer, error)
	Entries(ctx context.Context, transferID string) ([]ledger.Entry, error)
}

// executionDriver looks executions up and (re)starts them (the Step Functions client satisfies it).
type executionDriver interface {
	DescribeExecution(ctx context.Context, in *sfn.DescribeExecutionInput, optFns ...func(*sfn.Options)) (*sfn.DescribeExecutionOutput, error)
	StartExecution(ctx context.Context, in *sfn.StartExecutionInput, optFns ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error)
}

// Reconciler is the timeout-reconciler function. On an execution status change to TIMED_OUT, ABORTED or FAILED it
// settles the transfer from the ledger; on its schedule it sweeps transfers stuck IN_PROGRESS. Handling an event
// twice is harmless: a settled record is never changed again.
type Reconciler struct {
	Ledger          settlementLedger
	Records         recordFinder
	SFN             executionDriver
	StateMachineArn string
	// OrphanAfter is how old an IN_PROGRESS transfer must be before the sweep looks at it.
	OrphanAfter time.Duration
	// GiveUpAfter is how old a transfer whose workflow never started may get before it is settled ORPHANED instead
	// of re-driven.
	GiveUpAfter time.Duration
	// SweepLimit bounds the transfers one sweep handles.
	SweepLimit int
	Now        func() time.Time
	Logger     *slog.Logger
}

// statusDetail is the detail of a Step Functions Execution Status Change event.
type statusDetail struct {
	ExecutionArn    string `json:"executionArn"`
	StateMachineArn string `json:"stateMachineArn"`
	Name            string `json:"name"`
	Status          string `json:"status"`
}

// Handle handles one EventBridge event. A returned error makes Lambda retry the event.
func (r *Reconciler) Handle(ctx context.Context, ev events.CloudWatchEvent) error {
	switch ev.DetailType {
	case DetailTypeStatusChange:
		var d statusDetail
		if err := json.Unmarshal(ev.Detail, &d); err != nil {
			r.Logger.WarnContext(ctx, "malformed status change ignored", "error", err.Error())
			return nil
		}
		return r.statusChanged(ctx, d)
	case DetailTypeScheduled:
		return r.Sweep(ctx)
	default:
		r.Logger.WarnContext(ctx, "event ignored", "detailType", ev.DetailType)
		return nil
	}
}

func (r *Reconciler) statusChanged(ctx context.Context, d statusDetail) error {
	code, ok := map[string]string{"TIMED_OUT": CodeTimedOut, "ABORTED": CodeAborted, "FAILED": CodeWorkflowFailed}[d.Status]
	if !ok || d.StateMachineArn != r.StateMachineArn {
		return nil
	}
	rec, err := r.Records.GetRecord(ctx, d.Name)
	if errors.Is(err, ledger.ErrNotFound) {
		r.Logger.WarnContext(ctx, "status change for an unknown transfer", "executionArn", d.ExecutionArn)
		return nil
	}
	if err != nil {
		return fmt.Errorf("status change of %s: %w", d.Name, err)
	}
	if rec.Status != ledger.StatusInProgress || rec.ExecutionArn != d.ExecutionArn {
		return nil
	}
	return r.settle(ctx, rec, code)
}

// Sweep finds transfers stuck IN_PROGRESS past OrphanAfter and re-drives or settles each: a workflow that never
// started is started again (or settled ORPHANED past GiveUpAfter, or when it cannot be started); a workflow that has
// ended without settling its record is settled from the ledger; a running one is left to finish or time out.
func (r *Reconciler) Sweep(ctx context.Context) error {
	now := r.Now()
	stale, err := r.Records.StaleInProgress(ctx, now.Add(-r.OrphanAfter), r.SweepLimit)
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	var errs []error
	for _, rec := range stale {
		if err := r.sweepOne(ctx, rec, now); err != nil {
			errs = append(errs, err)
		}
	}
	r.Logger.InfoContext(ctx, "sweep done", "stale", len(stale), "errors", len(errs))
	return errors.Join(errs...)
}

func (r *Reconciler) sweepOne(ctx context.Context, rec ledger.Transfer, now time.Time) error {
	log := r.Logger.With("transferId", rec.TransferID)
	out, err := r.SFN.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(rec.ExecutionArn)})
	var missing *sfntypes.ExecutionDoesNotExist
	switch {
	case errors.As(err, &missing):
		if now.Sub(rec.CreatedTime()) > r.GiveUpAfter {
			log.WarnContext(ctx, "workflow never started; giving up")
			return r.settle(ctx, rec, CodeOrphaned)
		}
		if err := r.restart(ctx, rec); err != nil {
			if permanentStartError(err) {
				log.WarnContext(ctx, "workflow cannot be started", "error", err.Error())
				return r.settle(ctx, rec, CodeOrphaned)
			}
			return fmt.Errorf("re-drive %s: %w", rec.TransferID, err)
		}
		log.InfoContext(ctx, "workflow re-driven")
		return nil
	case err != nil:
		return fmt.Errorf("describe %s: %w", rec.TransferID, err)
	}
	code := map[sfntypes.ExecutionStatus]string{
		sfntypes.ExecutionStatusTimedOut: CodeTimedOut,
		sfntypes.ExecutionStatusAborted:  CodeAborted,
		sfntypes.ExecutionStatusFailed:   CodeWorkflowFailed,
		// A workflow that succeeded without settling its record: the ledger decides.
		sfntypes.ExecutionStatusSucceeded: CodeWorkflowFailed,
	}[out.Status]
	if code == "" {
		return nil // still running (or pending redrive): its end will be reported
	}
	return r.settle(ctx, rec, code)
}

// restart starts the transfer's execution again under the same name and with the same input the orchestrator
// sends, so it is the same execution if one exists after all.
func (r *Reconciler) restart(ctx context.Context, rec ledger.Transfer) error {
	input, err := json.Marshal(NewExecutionInput(rec))
	if err != nil {
		return err
	}
	_, err = r.SFN.StartExecution(ctx, &sfn.StartExecutionInput{
		StateMachineArn: aws.String(r.StateMachineArn), Name: aws.String(rec.TransferID), Input: aws.String(string(input)),
	})
	var exists *sfntypes.ExecutionAlreadyExists
	if errors.As(err, &exists) {
		return nil
	}
	return err
}

func permanentStartError(err error) bool {
	var (
		noMachine *sfntypes.StateMachineDoesNotExist
		deleting  *sfntypes.StateMachineDeleting
		badInput  *sfntypes.InvalidExecutionInput
		badName   *sfntypes.InvalidName
		badArn    *sfntypes.InvalidArn
	)
	return errors.As(err, &noMachine) || errors.As(err, &deleting) || errors.As(err, &badInput) ||
		errors.As(err, &badName) || errors.As(err, &badArn)
}

// maxSettleRounds bounds how often settle re-reads the ledger after a leg landed concurrently.
const maxSettleRounds = 5

// settle brings the record to the status the ledger supports: COMPLETED when the CREDIT exists; otherwise FAILED
// with code, refunding a lone DEBIT first. A leg that lands concurrently (a late Lambda) makes the settlement's
// ledger check fail, and the ledger is read again. A record already settled is left as it is.
func (r *Reconciler) settle(ctx context.Context, rec ledger.Transfer, code string) error {
	log := r.Logger.With("transferId", rec.TransferID)
	for range maxSettleRounds {
		entries, err := r.Records.Entries(ctx, rec.TransferID)
		if err != nil {
			return fmt.Errorf("settle %s: %w", rec.TransferID, err)
		}
		legs := map[string]bool{}
		for _, e := range entries {
			legs[e.Leg] = true
		}
		now := r.Now()
		switch {
		case legs[ledger.LegCredit]:
			err = r.Ledger.SettleTransfer(ctx, rec.TransferID, ledger.StatusCompleted, "", now)
			if err == nil {
				log.InfoContext(ctx, "settled from the ledger", "status", ledger.StatusCompleted)
			}
		case legs[ledger.LegDebit] && !legs[ledger.LegRefund]:
			_, _, err = r.Ledger.ApplyLeg(ctx, ledger.LegRequest{
				TransferID: rec.TransferID, Leg: ledger.LegRefund, AccountID: rec.SourceAccountID,
				Amount: rec.Amount, Currency: rec.Currency, ExecutionArn: rec.ExecutionArn,
			}, now)
			if err == nil {
				log.InfoContext(ctx, "lone debit refunded")
				continue
			}
			if errors.Is(err, ledger.ErrCreditApplied) {
				continue // the CREDIT won the race: the transfer completed
			}
		default:
			err = r.Ledger.SettleTransfer(ctx, rec.TransferID, ledger.StatusFailed, code, now)
			if err == nil {
				log.InfoContext(ctx, "settled from the ledger", "status", ledger.StatusFailed, "failureCode", code)
			}
		}
		switch {
		case err == nil:
			return nil
		case errors.Is(err, ledger.ErrTransferNotInProgress):
			return nil // settled by the workflow or an earlier delivery of this event
		case errors.Is(err, ledger.ErrLedgerDisagrees):
			continue // a leg landed since the ledger was read
		default:
			return fmt.Errorf("settle %s: %w", rec.TransferID, err)
		}
	}
	return fmt.Errorf("settle %s: the ledger kept changing for %d rounds", rec.TransferID, maxSettleRounds)
}
