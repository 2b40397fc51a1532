package transfer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/transferflow/orchestrator/internal/ledger"
)

const reconcilerMachine = "arn:aws:states:us-east-1:123456789012:stateMachine:TransferStateMachine"

// executions is a small in-memory stand-in for Step Functions' DescribeExecution and StartExecution.
type executions struct {
	mu       sync.Mutex
	status   map[string]sfntypes.ExecutionStatus // by execution ARN
	failure  map[string][2]string                // by execution ARN: the execution's error and cause
	started  map[string]string                   // name → input
	startErr error
}

func (x *executions) DescribeExecution(_ context.Context, in *sfn.DescribeExecutionInput, _ ...func(*sfn.Options)) (*sfn.DescribeExecutionOutput, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	st, ok := x.status[aws.ToString(in.ExecutionArn)]
	if !ok {
		return nil, &sfntypes.ExecutionDoesNotExist{Message: aws.String("Execution Does Not Exist")}
	}
	out := &sfn.DescribeExecutionOutput{Status: st}
	if f, ok := x.failure[aws.ToString(in.ExecutionArn)]; ok {
		out.Error, out.Cause = aws.String(f[0]), aws.String(f[1])
	}
	return out, nil
}

func (x *executions) StartExecution(_ context.Context, in *sfn.StartExecutionInput, _ ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.startErr != nil {
		return nil, x.startErr
	}
	x.started[aws.ToString(in.Name)] = aws.ToString(in.Input)
	return &sfn.StartExecutionOutput{}, nil
}

func newReconcilerEnv(t *testing.T) (*ledgerEnv, *Reconciler, *executions) {
	t.Helper()
	e := newLedgerEnv(t)
	x := &executions{status: map[string]sfntypes.ExecutionStatus{}, failure: map[string][2]string{}, started: map[string]string{}}
	r := &Reconciler{
		Ledger: e.ledger, Records: e.store, SFN: x, StateMachineArn: reconcilerMachine,
		OrphanAfter: 2 * time.Minute, GiveUpAfter: time.Hour, SweepLimit: 100,
		Now: e.now, Logger: discardLogger(), Metrics: e.emitter(),
	}
	return e, r, x
}

// newReconcilerTransfer is newReconcilerEnv with a transfer of 300 from src (1000) to dst (0) reserved, no leg yet.
func newReconcilerTransfer(t *testing.T) (*ledgerEnv, *Reconciler, *executions, string) {
	t.Helper()
	e, r, x := newReconcilerEnv(t)
	e.account(t, "src", "EUR", 1000)
	e.account(t, "dst", "EUR", 0)
	return e, r, x, e.transfer(t, "src", "dst", 300, "EUR")
}

// statusEvent is the status change event of rec's execution ending with status (TIMED_OUT, ABORTED, FAILED,
// SUCCEEDED) on machine, and Step Functions' record of that end, which the reconciler reads before it acts.
func (x *executions) statusEvent(t *testing.T, rec ledger.Transfer, status, machine string) events.CloudWatchEvent {
	t.Helper()
	x.mu.Lock()
	x.status[rec.ExecutionArn] = sfntypes.ExecutionStatus(status)
	x.mu.Unlock()
	detail, err := json.Marshal(map[string]any{
		"executionArn": rec.ExecutionArn, "stateMachineArn": machine, "name": rec.TransferID, "status": status,
	})
	if err != nil {
		t.Fatal(err)
	}
	return events.CloudWatchEvent{DetailType: DetailTypeStatusChange, Source: "aws.states", Detail: detail}
}

func TestReconcilerSettlesFromTheLedger(t *testing.T) {
	tests := []struct {
		name       string
		legs       []string
		status     string
		machine    string
		wantStatus string
		wantCode   string
		wantLegs   []string
	}{
		{name: "timed out after a lone debit: refunded", legs: []string{"DEBIT"}, status: "TIMED_OUT",
			wantStatus: "FAILED", wantCode: CodeTimedOut, wantLegs: []string{"DEBIT", "REFUND"}},
		{name: "aborted before any leg", status: "ABORTED", wantStatus: "FAILED", wantCode: CodeAborted},
		{name: "failed after both legs: the truth is completed", legs: []string{"DEBIT", "CREDIT"}, status: "FAILED",
			wantStatus: "COMPLETED", wantLegs: []string{"CREDIT", "DEBIT"}},
		{name: "failed after a refund", legs: []string{"DEBIT", "REFUND"}, status: "FAILED",
			wantStatus: "FAILED", wantCode: CodeWorkflowFailed, wantLegs: []string{"DEBIT", "REFUND"}},
		{name: "succeeded executions are not the reconciler's", legs: []string{"DEBIT"}, status: "SUCCEEDED",
			wantStatus: "IN_PROGRESS", wantLegs: []string{"DEBIT"}},
		{name: "another state machine's execution", legs: []string{"DEBIT"}, status: "TIMED_OUT",
			machine: "arn:aws:states:us-east-1:123456789012:stateMachine:Other", wantStatus: "IN_PROGRESS", wantLegs: []string{"DEBIT"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, r, x, id := newReconcilerTransfer(t)
			for _, leg := range tt.legs {
				e.leg(t, id, leg)
			}
			machine := tt.machine
			if machine == "" {
				machine = reconcilerMachine
			}
			ev := x.statusEvent(t, e.record(t, id), tt.status, machine)
			for range 2 { // the same event twice is harmless
				if err := r.Handle(context.Background(), ev); err != nil {
					t.Fatal(err)
				}
			}
			rec := e.record(t, id)
			if rec.Status != tt.wantStatus || rec.FailureCode != tt.wantCode {
				t.Errorf("record %s %q, want %s %q", rec.Status, rec.FailureCode, tt.wantStatus, tt.wantCode)
			}
			var legs []string
			for leg := range e.entries(t, id) {
				legs = append(legs, leg)
			}
			if fmt.Sprint(slices.Sorted(slices.Values(legs))) != fmt.Sprint(tt.wantLegs) {
				t.Errorf("legs = %v, want %v", slices.Sorted(slices.Values(legs)), tt.wantLegs)
			}
			// Settled transfers conserve money; an untouched one still has its DEBIT in flight.
			wantBalances := map[string][2]int64{"COMPLETED": {700, 300}, "FAILED": {1000, 0}, "IN_PROGRESS": {700, 0}}[tt.wantStatus]
			if got := [2]int64{e.accountNow(t, "src").Balance, e.accountNow(t, "dst").Balance}; got != wantBalances {
				t.Errorf("balances %v, want %v", got, wantBalances)
			}
		})
	}
}

// TestReconcilerRacesALateCredit settles timed-out transfers while their CREDIT arrives late from a Lambda the
// workflow gave up on: each transfer must end COMPLETED with its CREDIT or FAILED with a REFUND, never both.
func TestReconcilerRacesALateCredit(t *testing.T) {
	e, r, x := newReconcilerEnv(t)
	const n = 30
	e.account(t, "src", "EUR", 100*n)
	e.account(t, "dst", "EUR", 0)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = e.transfer(t, "src", "dst", 100, "EUR")
		e.leg(t, ids[i], "DEBIT")
	}
	var wg sync.WaitGroup
	for _, id := range ids {
		rec := e.record(t, id)
		ev := x.statusEvent(t, rec, "TIMED_OUT", reconcilerMachine)
		wg.Add(2)
		go func() {
			defer wg.Done()
			if err := r.Handle(context.Background(), ev); err != nil {
				t.Error(err)
			}
		}()
		go func() {
			defer wg.Done()
			_, err := e.invoke(context.Background(), legInput(rec, "CREDIT"))
			var fenced *TransferNotInProgress
			var refunded *RefundAlreadyApplied
			if err != nil && !errors.As(err, &fenced) && !errors.As(err, &refunded) && !isInvokeErrorNamed(err, "TransferNotInProgress", "RefundAlreadyApplied") {
				t.Errorf("late credit: %v", err)
			}
		}()
	}
	wg.Wait()
	completed := 0
	for _, id := range ids {
		rec, legs := e.record(t, id), e.entries(t, id)
		switch {
		case rec.Status == "COMPLETED" && legs["CREDIT"].Leg != "" && legs["REFUND"].Leg == "":
			completed++
		case rec.Status == "FAILED" && legs["REFUND"].Leg != "" && legs["CREDIT"].Leg == "" && rec.FailureCode == CodeTimedOut:
		default:
			t.Errorf("%s: status %s with legs %v", id, rec.Status, legs)
		}
	}
	src, dst := e.accountNow(t, "src").Balance, e.accountNow(t, "dst").Balance
	if src+dst != 100*n || dst != int64(100*completed) {
		t.Errorf("balances %d + %d with %d completed", src, dst, completed)
	}
	t.Logf("%d of %d late credits won", completed, n)
}

// lateCreditRecords is the reconciler's record finder with a settling CREDIT that lands, for the transfer late, right
// after the reconciler has read the ledger (the first Entries call) and before it settles.
type lateCreditRecords struct {
	recordFinder
	e    *ledgerEnv
	late string
	t    *testing.T
	once sync.Once
}

func (l *lateCreditRecords) Entries(ctx context.Context, transferID string) ([]ledger.Entry, error) {
	entries, err := l.recordFinder.Entries(ctx, transferID)
	if transferID == l.late {
		l.once.Do(func() {
			if _, err := l.e.invoke(ctx, legInput(l.e.record(l.t, transferID), ledger.LegCredit)); err != nil {
				l.t.Errorf("late CREDIT: %v", err)
			}
		})
	}
	return entries, err
}

// TestLateSettlingCreditStands: an execution timed out with its CREDIT still running; the reconciler reads the
// lone DEBIT, then the late CREDIT commits and settles the record COMPLETED itself. The reconciler's refund is refused
// (the credit won) and its settlement finds the record settled, which it leaves: the CREDIT's settling write is the
// record of the outcome event, which the table's stream publishes (TestRelayPublishesSettlements).
func TestLateSettlingCreditStands(t *testing.T) {
	e, r, x := newReconcilerEnv(t)
	e.account(t, "src", "EUR", 1000)
	e.account(t, "dst", "EUR", 0)
	id := e.transfer(t, "src", "dst", 250, "EUR")
	e.leg(t, id, ledger.LegDebit)
	r.Records = &lateCreditRecords{recordFinder: r.Records, e: e, late: id, t: t}
	if err := r.Handle(context.Background(), x.statusEvent(t, e.record(t, id), "TIMED_OUT", reconcilerMachine)); err != nil {
		t.Fatal(err)
	}
	if rec := e.record(t, id); rec.Status != ledger.StatusCompleted {
		t.Fatalf("record %s, want COMPLETED by the late CREDIT", rec.Status)
	}
	if b := e.accountNow(t, "dst").Balance; b != 250 {
		t.Errorf("dst %d, want 250: credited once, never refunded", b)
	}
}

// isInvokeErrorNamed reports whether err, as returned through the Lambda handler adapter, names one of the types.
func isInvokeErrorNamed(err error, names ...string) bool {
	b, _ := json.Marshal(err)
	var v struct{ ErrorType string }
	_ = json.Unmarshal(b, &v)
	for _, n := range names {
		if v.ErrorType == n {
			return true
		}
	}
	return false
}

func TestSweep(t *testing.T) {
	e, r, x := newReconcilerEnv(t)
	e.account(t, "src", "EUR", 1000)
	e.account(t, "dst", "EUR", 0)
	orphan := e.transfer(t, "src", "dst", 10, "EUR")  // no execution yet: re-driven
	ended := e.transfer(t, "src", "dst", 20, "EUR")   // execution timed out, event lost: settled
	running := e.transfer(t, "src", "dst", 30, "EUR") // still running: left alone
	e.leg(t, ended, "DEBIT")
	x.status[e.record(t, ended).ExecutionArn] = sfntypes.ExecutionStatusTimedOut
	x.status[e.record(t, running).ExecutionArn] = sfntypes.ExecutionStatusRunning

	// Young transfers are not swept.
	if err := r.Handle(context.Background(), events.CloudWatchEvent{DetailType: DetailTypeScheduled}); err != nil {
		t.Fatal(err)
	}
	if len(x.started) != 0 || e.record(t, ended).Status != "IN_PROGRESS" {
		t.Fatal("the sweep touched transfers younger than OrphanAfter")
	}

	r.Now = func() time.Time { return ledgerT0.Add(5 * time.Minute) }
	if err := r.Handle(context.Background(), events.CloudWatchEvent{DetailType: DetailTypeScheduled}); err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(NewExecutionInput(e.record(t, orphan)))
	if got := x.started[orphan]; got != string(want) {
		t.Errorf("re-driven input = %s, want the orchestrator's %s", got, want)
	}
	if rec := e.record(t, ended); rec.Status != "FAILED" || rec.FailureCode != CodeTimedOut {
		t.Errorf("ended transfer: %s %s", rec.Status, rec.FailureCode)
	}
	if rec := e.record(t, running); rec.Status != "IN_PROGRESS" {
		t.Errorf("running transfer settled: %s", rec.Status)
	}

	// Past the give-up horizon, a workflow that never started is settled ORPHANED.
	r.Now = func() time.Time { return ledgerT0.Add(2 * time.Hour) }
	delete(x.started, orphan)
	if err := r.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if rec := e.record(t, orphan); rec.Status != "FAILED" || rec.FailureCode != CodeOrphaned {
		t.Errorf("orphan: %s %s", rec.Status, rec.FailureCode)
	}
	if len(x.started) != 0 {
		t.Errorf("an orphan past the horizon was re-driven")
	}
}

func TestSweepSettlesWhatCannotStart(t *testing.T) {
	e, r, x := newReconcilerEnv(t)
	e.account(t, "src", "EUR", 1000)
	e.account(t, "dst", "EUR", 0)
	id := e.transfer(t, "src", "dst", 10, "EUR")
	x.startErr = &sfntypes.StateMachineDoesNotExist{Message: aws.String("State Machine Does Not Exist")}
	r.Now = func() time.Time { return ledgerT0.Add(5 * time.Minute) }
	if err := r.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if rec := e.record(t, id); rec.Status != "FAILED" || rec.FailureCode != CodeOrphaned {
		t.Errorf("record: %s %s", rec.Status, rec.FailureCode)
	}
	// A transient start failure is reported, so the next sweep tries again.
	id2 := e.transfer(t, "src", "dst", 10, "EUR")
	x.startErr = &sfntypes.ExecutionLimitExceeded{Message: aws.String("limit")}
	if err := r.Sweep(context.Background()); err == nil {
		t.Error("a transient start failure was swallowed")
	}
	if rec := e.record(t, id2); rec.Status != "IN_PROGRESS" {
		t.Errorf("record settled after a transient failure: %s", rec.Status)
	}
}

// TestReconcilerTakesTheExecutionsWord: a status change event only says which execution to look at, since whoever
// may invoke the reconciler could write one. A transfer is settled by what DescribeExecution reports: an event for an
// execution still running (or pending a redrive), for one that succeeded, or for one Step Functions does not have,
// changes nothing and is no error (the sweep settles the transfer once its execution has ended); one whose
// execution ended otherwise than it says is settled as the execution ended.
func TestReconcilerTakesTheExecutionsWord(t *testing.T) {
	tests := []struct {
		name       string
		execution  sfntypes.ExecutionStatus // "": Step Functions has no such execution
		failure    [2]string
		wantStatus string
		wantCode   string
		wantError  string
	}{
		{name: "running", execution: sfntypes.ExecutionStatusRunning, wantStatus: "IN_PROGRESS"},
		{name: "pending redrive", execution: sfntypes.ExecutionStatusPendingRedrive, wantStatus: "IN_PROGRESS"},
		{name: "succeeded", execution: sfntypes.ExecutionStatusSucceeded, wantStatus: "IN_PROGRESS"},
		{name: "unknown to Step Functions", wantStatus: "IN_PROGRESS"},
		{name: "timed out, not aborted", execution: sfntypes.ExecutionStatusTimedOut, failure: [2]string{"States.Timeout", "real"},
			wantStatus: "FAILED", wantCode: CodeTimedOut, wantError: "States.Timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, r, x, id := newReconcilerTransfer(t)
			e.leg(t, id, ledger.LegDebit)
			rec := e.record(t, id)
			detail, err := json.Marshal(map[string]any{"executionArn": rec.ExecutionArn, "stateMachineArn": reconcilerMachine,
				"name": id, "status": "ABORTED", "error": "Forged", "cause": "by whoever invoked the function"})
			if err != nil {
				t.Fatal(err)
			}
			if tt.execution != "" {
				x.status[rec.ExecutionArn] = tt.execution
				x.failure[rec.ExecutionArn] = tt.failure
			}
			if err := r.Handle(context.Background(), events.CloudWatchEvent{DetailType: DetailTypeStatusChange, Source: "aws.states", Detail: detail}); err != nil {
				t.Fatalf("Handle: %v", err)
			}
			got := e.record(t, id)
			if got.Status != tt.wantStatus || got.FailureCode != tt.wantCode || (got.FailureError == "") != (tt.wantError == "") ||
				!strings.Contains(got.FailureError, tt.wantError) || strings.Contains(got.FailureError, "Forged") {
				t.Errorf("record %s %q %q, want %s %q %q", got.Status, got.FailureCode, got.FailureError, tt.wantStatus, tt.wantCode, tt.wantError)
			}
			wantLegs := map[string]int{"IN_PROGRESS": 1, "FAILED": 2}[tt.wantStatus] // the DEBIT, and its REFUND once settled
			if legs := e.entries(t, id); len(legs) != wantLegs {
				t.Errorf("legs %v, want %d", legs, wantLegs)
			}
			if tt.execution != sfntypes.ExecutionStatusRunning {
				return
			}
			// Once the execution has ended, the sweep settles what the event could not.
			x.status[rec.ExecutionArn] = sfntypes.ExecutionStatusTimedOut
			r.Now = func() time.Time { return ledgerT0.Add(10 * time.Minute) }
			if err := r.Sweep(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := e.record(t, id); got.Status != "FAILED" || got.FailureCode != CodeTimedOut {
				t.Errorf("after the sweep: %s %q, want FAILED %s", got.Status, got.FailureCode, CodeTimedOut)
			}
		})
	}
}
