package transfer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go"

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
	SettleTransfer(ctx context.Context, transferID, status string, failure ledger.Failure, expiresAt int64, now time.Time) error
}

// recordFinder reads transfer records for the reconciler (*ledger.Store satisfies it).
type recordFinder interface {
	GetRecord(ctx context.Context, transferID string) (ledger.Transfer, error)
	StaleInShard(ctx context.Context, shard int, cutoff time.Time, limit int, after *ledger.SweepCursor) ([]ledger.Transfer, *ledger.SweepCursor, error)
	Entries(ctx context.Context, transferID string) ([]ledger.Entry, error)
	ClaimRedrive(ctx context.Context, rec ledger.Transfer, now time.Time, window time.Duration) (bool, time.Time, error)
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
	// SweepMargin is how long before the invocation's deadline the sweep stops taking up transfers, so it ends
	// cleanly and says what it left instead of being cut off by the Lambda timeout.
	SweepMargin time.Duration
	// Until measures the time left to a deadline (time.Until when nil); StartShard picks the shard a sweep starts at
	// (rand.IntN when nil). Tests replace both.
	Until      func(time.Time) time.Duration
	StartShard func(n int) int
	Now        func() time.Time
	Logger     *slog.Logger
	// Metrics receives a record per invocation, per settlement and per re-drive (docs/metrics.md); nil writes none.
	Metrics metricsEmitter
}

// statusDetail is the detail of a Step Functions Execution Status Change event.
type statusDetail struct {
	ExecutionArn    string `json:"executionArn"`
	StateMachineArn string `json:"stateMachineArn"`
	Name            string `json:"name"`
	Status          string `json:"status"`
	// Error and Cause are the execution's, when it failed, timed out or was stopped with them (null otherwise).
	Error string `json:"error"`
	Cause string `json:"cause"`
}

// Handle handles one EventBridge event. A returned error makes Lambda retry the event.
func (r *Reconciler) Handle(ctx context.Context, ev events.CloudWatchEvent) error {
	switch ev.DetailType {
	case DetailTypeStatusChange:
		emit(ctx, r.Metrics, r.Logger, runRecord(TriggerStatusChange))
		var d statusDetail
		if err := json.Unmarshal(ev.Detail, &d); err != nil {
			r.Logger.WarnContext(ctx, "malformed status change ignored", "error", err.Error())
			return nil
		}
		return r.statusChanged(ctx, d)
	case DetailTypeScheduled:
		emit(ctx, r.Metrics, r.Logger, runRecord(TriggerSweep))
		return r.Sweep(ctx)
	default:
		r.Logger.WarnContext(ctx, "event ignored", "detailType", ev.DetailType)
		return nil
	}
}

// failureCodes are the codes the reconciler settles an execution's transfer with, by the execution's status.
var failureCodes = map[sfntypes.ExecutionStatus]string{
	sfntypes.ExecutionStatusTimedOut: CodeTimedOut,
	sfntypes.ExecutionStatusAborted:  CodeAborted,
	sfntypes.ExecutionStatusFailed:   CodeWorkflowFailed,
}

// statusChanged settles the transfer of an execution that timed out, was aborted or failed. The event only says
// which execution to look at: whoever may invoke the function could write one. What settles the transfer is the
// execution's own status and failure, from DescribeExecution. An execution it reports running (DescribeExecution is
// eventually consistent, and a redriven execution runs again) is left to the sweep, which settles an ended one
// within ORPHAN_AFTER and a sweep's interval: an error here would make Lambda retry the event, and every retry would
// count in the function's errors alarm, which also stops its gradual deployment.
func (r *Reconciler) statusChanged(ctx context.Context, d statusDetail) error {
	_, ok := failureCodes[sfntypes.ExecutionStatus(d.Status)]
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
	if rec.ExecutionArn != d.ExecutionArn {
		return nil
	}
	if rec.Status != ledger.StatusInProgress {
		// Settled by this execution before it failed, timed out or was stopped, or by an earlier delivery of this
		// event. The settling write published its outcome event through the table's stream (OutcomeRelay).
		return nil
	}
	out, err := r.SFN.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(d.ExecutionArn)})
	var missing *sfntypes.ExecutionDoesNotExist
	switch {
	case errors.As(err, &missing):
		r.Logger.WarnContext(ctx, "status change for an execution Step Functions does not have", "transferId", rec.TransferID,
			"executionArn", d.ExecutionArn)
		return nil
	case err != nil:
		return fmt.Errorf("status change of %s: describe the execution: %w", d.Name, err)
	}
	code, ok := failureCodes[out.Status]
	if !ok {
		// RUNNING or PENDING_REDRIVE: left to the sweep. SUCCEEDED: not the reconciler's either (the sweep settles a
		// workflow that succeeded without settling its record).
		r.Logger.WarnContext(ctx, "status change that the execution does not confirm", "transferId", rec.TransferID,
			"executionArn", d.ExecutionArn, "eventStatus", d.Status, "executionStatus", string(out.Status))
		return nil
	}
	return r.settle(ctx, rec, ledger.Failure{Code: code, Error: aws.ToString(out.Error), Cause: aws.ToString(out.Cause)}, TriggerStatusChange)
}

// Sweep finds transfers stuck IN_PROGRESS past OrphanAfter and re-drives or settles each: a workflow that never
// started is started again (or settled ORPHANED past GiveUpAfter, or when it cannot be started); a workflow that has
// ended without settling its record is settled from the ledger; a running one is left to finish or time out.
//
// It is fair: each of the InProgress index's shards gets an equal share of SweepLimit, visited from a different
// shard each run, and what is left of the limit then goes round the shards that have more, a share at a time from
// where each left off, so a backlog in one shard starves none of the others. It stops taking up transfers SweepMargin
// before the invocation's deadline and logs what it left for the next run.
func (r *Reconciler) Sweep(ctx context.Context) error {
	now := r.Now()
	cutoff := now.Add(-r.OrphanAfter)
	n := ledger.SweepShards
	share := max(1, (r.SweepLimit+n-1)/n)
	start := r.startShard(n)
	var (
		budget  = r.SweepLimit
		handled int
		visited int
		backlog []int // shards with more, in visiting order
		cursors = map[int]*ledger.SweepCursor{}
		errs    []error
		stopped bool
	)
	// take handles up to limit stale transfers of shard from after, and returns where it left off (nil: no more).
	take := func(shard, limit int, after *ledger.SweepCursor) *ledger.SweepCursor {
		stale, next, err := r.Records.StaleInShard(ctx, shard, cutoff, limit, after)
		if err != nil {
			errs = append(errs, fmt.Errorf("sweep shard %d: %w", shard, err))
			return nil
		}
		for _, rec := range stale {
			if stopped = r.nearDeadline(ctx); stopped {
				return nil
			}
			budget--
			handled++
			if err := r.sweepOne(ctx, rec, now); err != nil {
				errs = append(errs, err)
			}
		}
		return next
	}
	for i := 0; i < n && budget > 0 && !stopped; i++ {
		if stopped = r.nearDeadline(ctx); stopped {
			break
		}
		shard := (start + i) % n
		visited++
		if next := take(shard, min(share, budget), nil); next != nil {
			cursors[shard] = next
			backlog = append(backlog, shard)
		}
	}
	for len(backlog) > 0 && budget > 0 && !stopped {
		shard := backlog[0]
		backlog = backlog[1:]
		if stopped = r.nearDeadline(ctx); stopped {
			backlog = append(backlog, shard)
			break
		}
		if next := take(shard, min(share, budget), cursors[shard]); next != nil {
			cursors[shard] = next
			backlog = append(backlog, shard)
		}
	}
	left := []any{"handled", handled, "shardsNotVisited", n - visited, "shardsWithMore", len(backlog), "errors", len(errs)}
	switch {
	case stopped:
		r.Logger.WarnContext(ctx, "sweep stopped before its deadline; the next run continues", left...)
	case visited < n || len(backlog) > 0:
		r.Logger.InfoContext(ctx, "sweep reached its limit; the next run continues", left...)
	default:
		r.Logger.InfoContext(ctx, "sweep done", left...)
	}
	return errors.Join(errs...)
}

// nearDeadline reports whether the invocation has less than SweepMargin left.
func (r *Reconciler) nearDeadline(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		return false
	}
	until := time.Until
	if r.Until != nil {
		until = r.Until
	}
	return until(deadline) < r.SweepMargin
}

func (r *Reconciler) startShard(n int) int {
	if r.StartShard != nil {
		return r.StartShard(n) % n
	}
	return rand.IntN(n)
}

func (r *Reconciler) sweepOne(ctx context.Context, rec ledger.Transfer, now time.Time) error {
	log := r.Logger.With("transferId", rec.TransferID)
	out, err := r.SFN.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(rec.ExecutionArn)})
	var missing *sfntypes.ExecutionDoesNotExist
	switch {
	case errors.As(err, &missing):
		if age := now.Sub(rec.CreatedTime()); age > r.GiveUpAfter {
			log.WarnContext(ctx, "workflow never started; giving up")
			return r.settle(ctx, rec, ledger.Failure{Code: CodeOrphaned, Error: "ExecutionNeverStarted",
				Cause: fmt.Sprintf("no execution existed %s after the transfer was accepted", age.Round(time.Second))}, TriggerSweep)
		}
		started, err := r.restart(ctx, rec, now)
		if err != nil {
			var apiErr smithy.APIError
			if permanentStartError(err) && errors.As(err, &apiErr) {
				log.WarnContext(ctx, "workflow cannot be started", "error", err.Error())
				return r.settle(ctx, rec, ledger.Failure{Code: CodeOrphaned, Error: apiErr.ErrorCode(), Cause: apiErr.ErrorMessage()}, TriggerSweep)
			}
			return fmt.Errorf("re-drive %s: %w", rec.TransferID, err)
		}
		if started {
			log.InfoContext(ctx, "workflow re-driven")
			emit(ctx, r.Metrics, r.Logger, redriveRecord(rec))
		}
		return nil
	case err != nil:
		return fmt.Errorf("describe %s: %w", rec.TransferID, err)
	}
	code := failureCodes[out.Status]
	if out.Status == sfntypes.ExecutionStatusSucceeded {
		code = CodeWorkflowFailed // a workflow that succeeded without settling its record: the ledger decides
	}
	if code == "" {
		return nil // still running (or pending redrive): its end will be reported
	}
	failure := ledger.Failure{Code: code, Error: aws.ToString(out.Error), Cause: aws.ToString(out.Cause)}
	if out.Status == sfntypes.ExecutionStatusSucceeded {
		failure.Error, failure.Cause = "ExecutionSucceededUnsettled", "the execution succeeded without settling the transfer record"
	}
	return r.settle(ctx, rec, failure, TriggerSweep)
}

// restart starts the transfer's execution again under the same name and with the same input the orchestrator
// sends, so it is the same execution if one exists after all. It first claims the re-drive (ledger.ClaimRedrive),
// which keeps the record for a day past the start, so that the workflow's settlement does not expire it at once; a
// claim a client's duplicate made a moment ago means the start was just re-driven, and restart leaves it. It reports
// whether its own StartExecution started the workflow.
func (r *Reconciler) restart(ctx context.Context, rec ledger.Transfer, now time.Time) (bool, error) {
	claimed, _, err := r.Records.ClaimRedrive(ctx, rec, now, 0)
	if err != nil || !claimed {
		return false, err
	}
	input, err := json.Marshal(NewExecutionInput(rec))
	if err != nil {
		return false, err
	}
	_, err = r.SFN.StartExecution(ctx, &sfn.StartExecutionInput{
		StateMachineArn: aws.String(r.StateMachineArn), Name: aws.String(rec.TransferID), Input: aws.String(string(input)),
	})
	var exists *sfntypes.ExecutionAlreadyExists
	if errors.As(err, &exists) {
		return false, nil // it was started after all, by another call
	}
	return err == nil, err
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
// with failure, refunding a lone DEBIT first. A leg that lands concurrently (a late Lambda) makes the settlement's
// ledger check fail, and the ledger is read again. A record already settled is left as it is. A settlement writes a
// metrics record with its status, code and the trigger that led to it; its write is the record of the transfer's
// outcome event, which the table's stream carries to OutcomeRelay.
func (r *Reconciler) settle(ctx context.Context, rec ledger.Transfer, failure ledger.Failure, trigger string) error {
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
			err = r.Ledger.SettleTransfer(ctx, rec.TransferID, ledger.StatusCompleted, ledger.Failure{}, ledger.RetainAtLeast(rec, now), now)
			if err == nil {
				log.InfoContext(ctx, "settled from the ledger", "status", ledger.StatusCompleted)
				emit(ctx, r.Metrics, r.Logger, settlementRecord(rec.TransferID, ledger.StatusCompleted, "", trigger))
			}
		case legs[ledger.LegDebit] && !legs[ledger.LegRefund]:
			_, _, err = r.Ledger.ApplyLeg(ctx, rec.LegRequest(ledger.LegRefund), now)
			if err == nil {
				log.InfoContext(ctx, "lone debit refunded")
				continue
			}
			if errors.Is(err, ledger.ErrCreditApplied) {
				continue // the CREDIT won the race: the transfer completed
			}
		default:
			err = r.Ledger.SettleTransfer(ctx, rec.TransferID, ledger.StatusFailed, failure, ledger.RetainAtLeast(rec, now), now)
			if err == nil {
				log.InfoContext(ctx, "settled from the ledger", "status", ledger.StatusFailed, "failureCode", failure.Code)
				emit(ctx, r.Metrics, r.Logger, settlementRecord(rec.TransferID, ledger.StatusFailed, failure.Code, trigger))
			}
		}
		switch {
		case err == nil:
			return nil
		case errors.Is(err, ledger.ErrTransferNotInProgress):
			// Settled since it was read: by a late CREDIT, or by an earlier delivery of this event. That write
			// published the outcome event through the stream.
			return nil
		case errors.Is(err, ledger.ErrLedgerDisagrees):
			continue // a leg landed since the ledger was read
		default:
			return fmt.Errorf("settle %s: %w", rec.TransferID, err)
		}
	}
	return fmt.Errorf("settle %s: the ledger kept changing for %d rounds", rec.TransferID, maxSettleRounds)
}
