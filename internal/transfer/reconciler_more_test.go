package transfer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/transferflow/orchestrator/internal/ledger"
)

// TestStaleDebitIsSettledNeverOverwritten: a transfer whose workflow ended without settling it (its status event was
// lost) sits IN_PROGRESS with a DEBIT long past its retention. It carries no TTL attribute, so DynamoDB cannot delete
// it, and a new request with its key cannot take it over; the sweep settles it from the ledger (refunding the DEBIT),
// and only then does its retention start, long enough for the client to read the outcome.
func TestStaleDebitIsSettledNeverOverwritten(t *testing.T) {
	e, r, x := newReconcilerEnv(t)
	e.account(t, "src", "EUR", 1000)
	e.account(t, "dst", "EUR", 0)
	ttl := 24 * time.Hour
	key := ledger.KeyHash(e.scope, "stale-debit")
	newRec := func(at time.Time) ledger.Transfer {
		id, err := ledger.NewTransferID(key, nil)
		if err != nil {
			t.Fatal(err)
		}
		return ledger.NewTransferRecord(ledger.Transfer{TransferID: id, Scope: e.scope, RequestHash: "h",
			SourceAccountID: "src", DestinationAccountID: "dst", Amount: 300, Currency: "EUR",
			ExecutionArn: "arn:aws:states:us-east-1:123456789012:execution:TransferStateMachine:" + id}, at, ttl)
	}
	old := newRec(ledgerT0)
	if _, created, err := e.store.Reserve(context.Background(), old, ledgerT0); err != nil || !created {
		t.Fatalf("reserve: %v %v", created, err)
	}
	e.leg(t, old.TransferID, ledger.LegDebit)
	x.status[old.ExecutionArn] = sfntypes.ExecutionStatusTimedOut
	x.failure[old.ExecutionArn] = [2]string{"States.Timeout", "the execution ran past 300 seconds"}

	later := ledgerT0.Add(30 * 24 * time.Hour)
	existing, created, err := e.store.Reserve(context.Background(), newRec(later), later)
	if err != nil || created || existing.TransferID != old.TransferID {
		t.Fatalf("a new request a month later: created %v, existing %s, %v; want the stale transfer kept", created, existing.TransferID, err)
	}
	rec := e.record(t, old.TransferID)
	if rec.Status != ledger.StatusInProgress || rec.ExpiresAt != 0 || len(rec.Legs) != 1 {
		t.Fatalf("stale record = %+v, want IN_PROGRESS with its DEBIT and no TTL attribute", rec)
	}

	r.Now = func() time.Time { return later }
	if err := r.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec = e.record(t, old.TransferID)
	if rec.Status != ledger.StatusFailed || rec.FailureCode != CodeTimedOut || e.entries(t, old.TransferID)[ledger.LegRefund].Leg == "" {
		t.Fatalf("after the sweep: %s %s, legs %v; want FAILED TIMED_OUT with a REFUND", rec.Status, rec.FailureCode, rec.Legs)
	}
	if want := later.Add(ledger.MinRetention).Unix(); rec.ExpiresAt != want {
		t.Errorf("expiresAt = %d, want %d: readable for a day after the late settlement", rec.ExpiresAt, want)
	}
	if got, err := e.store.GetTransfer(context.Background(), e.scope, old.TransferID, later.Add(time.Hour)); err != nil || got.Status != ledger.StatusFailed {
		t.Errorf("GET after the settlement: %v %v", got.Status, err)
	}
	if src := e.accountNow(t, "src").Balance; src != 1000 {
		t.Errorf("source balance %d, want 1000 (refunded)", src)
	}
}

// TestReconcilerKeepsTheExecutionsError: a transfer settled because its execution failed, timed out or was stopped
// carries the execution's error and cause (from DescribeExecution, for a status change event as in the sweep), so
// its failure message says what happened.
func TestReconcilerKeepsTheExecutionsError(t *testing.T) {
	e, r, x := newReconcilerEnv(t)
	e.account(t, "src", "EUR", 1000)
	e.account(t, "dst", "EUR", 0)

	byEvent := e.transfer(t, "src", "dst", 10, "EUR")
	rec := e.record(t, byEvent)
	x.status[rec.ExecutionArn] = sfntypes.ExecutionStatusFailed
	x.failure[rec.ExecutionArn] = [2]string{"SettlementRejected", "The transfer record was already settled."}
	detail, _ := json.Marshal(map[string]any{"executionArn": rec.ExecutionArn, "stateMachineArn": reconcilerMachine,
		"name": byEvent, "status": "FAILED", "error": "SettlementRejected", "cause": "The transfer record was already settled."})
	if err := r.Handle(context.Background(), events.CloudWatchEvent{DetailType: DetailTypeStatusChange, Detail: detail}); err != nil {
		t.Fatal(err)
	}
	bySweep := e.transfer(t, "src", "dst", 10, "EUR")
	arn := e.record(t, bySweep).ExecutionArn
	x.status[arn] = sfntypes.ExecutionStatusAborted
	x.failure[arn] = [2]string{"Operator", "stopped during an incident"}
	r.Now = func() time.Time { return ledgerT0.Add(10 * time.Minute) }
	if err := r.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	orphan := e.transfer(t, "src", "dst", 10, "EUR")
	r.Now = func() time.Time { return ledgerT0.Add(2 * time.Hour) }
	if err := r.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		id, code, message string
	}{
		{byEvent, CodeWorkflowFailed, "(SettlementRejected: The transfer record was already settled.)"},
		{bySweep, CodeAborted, "(Operator: stopped during an incident)"},
		{orphan, CodeOrphaned, "(ExecutionNeverStarted: no execution existed 2h0m0s after the transfer was accepted)"},
	}
	for _, tt := range tests {
		res := NewResource(e.record(t, tt.id))
		if res.Failure == nil || res.Failure.Code != tt.code || !strings.HasSuffix(res.Failure.Message, tt.message) {
			t.Errorf("%s: failure = %+v, want %s ending %q", tt.id, res.Failure, tt.code, tt.message)
		}
	}
}

// staleInShards reserves, created at ledgerT0, counts[shard] transfers in each shard of the InProgress index.
func (e *ledgerEnv) staleInShards(t *testing.T, counts map[int]int) map[int][]string {
	t.Helper()
	ids := map[int][]string{}
	for i := 0; ; i++ {
		done := true
		for shard, n := range counts {
			done = done && len(ids[shard]) >= n
		}
		if done {
			return ids
		}
		id, err := ledger.NewTransferID(ledger.KeyHash("test", fmt.Sprintf("shard-key-%d", i)), nil)
		if err != nil {
			t.Fatal(err)
		}
		var shard int
		fmt.Sscanf(ledger.NewTransferRecord(ledger.Transfer{TransferID: id}, ledgerT0, 0).SweepShard, "IN_PROGRESS#%d", &shard)
		if len(ids[shard]) >= counts[shard] {
			continue
		}
		e.reserve(t, id, "src", "dst", 1, "EUR")
		ids[shard] = append(ids[shard], id)
	}
}

// TestSweepIsFair: a backlog in one shard of the InProgress index does not starve the others. With a limit of one
// transfer per shard, one sweep re-drives the oldest transfer of every shard, whichever it starts at.
func TestSweepIsFair(t *testing.T) {
	e, r, x := newReconcilerEnv(t)
	counts := map[int]int{}
	for shard := range ledger.SweepShards {
		counts[shard] = 1
	}
	counts[0] = 40 // a backlog where an unfair sweep would start and stay
	ids := e.staleInShards(t, counts)
	r.SweepLimit = ledger.SweepShards
	r.StartShard = func(int) int { return 0 }
	r.Now = func() time.Time { return ledgerT0.Add(5 * time.Minute) }
	if err := r.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(x.started) != ledger.SweepShards {
		t.Errorf("re-driven %d, want %d (one a shard)", len(x.started), ledger.SweepShards)
	}
	for shard := 1; shard < ledger.SweepShards; shard++ {
		if _, ok := x.started[ids[shard][0]]; !ok {
			t.Errorf("shard %d starved", shard)
		}
	}
	// What the limit leaves goes to the backlog.
	clear(x.started)
	r.SweepLimit = 100
	if err := r.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(x.started) != 40+ledger.SweepShards-1 {
		t.Errorf("with room to spare: re-driven %d, want all %d", len(x.started), 40+ledger.SweepShards-1)
	}
}

// TestSweepStopsBeforeItsDeadline: the sweep stops taking up transfers SweepMargin before the invocation's deadline,
// starting from a different shard each run, and logs what it left.
func TestSweepStopsBeforeItsDeadline(t *testing.T) {
	e, r, x := newReconcilerEnv(t)
	counts := map[int]int{}
	for shard := range ledger.SweepShards {
		counts[shard] = 2
	}
	ids := e.staleInShards(t, counts)
	var logs bytes.Buffer
	r.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	r.Now = func() time.Time { return ledgerT0.Add(5 * time.Minute) }
	r.SweepMargin = 5 * time.Second
	r.StartShard = func(int) int { return 5 }
	left := 8 // checks before the deadline comes within the margin
	r.Until = func(time.Time) time.Duration {
		left--
		if left < 0 {
			return time.Second
		}
		return time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if err := r.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if len(x.started) == 0 || len(x.started) >= 2*ledger.SweepShards {
		t.Fatalf("re-driven %d, want some but not all of %d", len(x.started), 2*ledger.SweepShards)
	}
	for id := range x.started {
		if !slices.Contains(ids[5], id) && !slices.Contains(ids[6], id) && !slices.Contains(ids[7], id) {
			t.Errorf("re-driven %s, not in the shards after the start shard 5", id)
		}
	}
	if !strings.Contains(logs.String(), `"msg":"sweep stopped before its deadline; the next run continues"`) ||
		!strings.Contains(logs.String(), `"shardsNotVisited"`) {
		t.Errorf("logs = %s", logs.String())
	}
}

// starterFunc adapts a function to executionStarter.
type starterFunc func(ctx context.Context, in *sfn.StartExecutionInput, optFns ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error)

func (f starterFunc) StartExecution(ctx context.Context, in *sfn.StartExecutionInput, optFns ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error) {
	return f(ctx, in, optFns...)
}

// TestLateRedriveSettlesIntoAKeptRecord: a transfer whose first start failed is re-driven by a duplicate long after
// its retention would have ended. The re-drive raises retainUntil to a day past itself, so the workflow's own
// settlement (the CREDIT, which settles the record in its transaction) leaves a record that is kept: the transfer can
// be read, and the client's next retry with the key is a replay, not a second transfer.
func TestLateRedriveSettlesIntoAKeptRecord(t *testing.T) {
	e := newAliceBobEnv(t, 1000, 0)
	now := ledgerT0
	starts := 0
	o := &Orchestrator{
		Store: e.store, StateMachineArn: reconcilerMachine, TTL: 7 * 24 * time.Hour,
		ReservationWindow: 10 * time.Second, StartTimeout: 5 * time.Second,
		Now: func() time.Time { return now }, Logger: discardLogger(),
		SFN: starterFunc(func(context.Context, *sfn.StartExecutionInput, ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error) {
			starts++
			if starts == 1 {
				return nil, &sfntypes.ExecutionLimitExceeded{Message: aws.String("limit")}
			}
			return &sfn.StartExecutionOutput{}, nil
		}),
	}
	post := func() (int, Resource) {
		t.Helper()
		resp, _ := o.Handle(context.Background(), events.APIGatewayProxyRequest{
			Resource: "/transfers", HTTPMethod: "POST",
			Headers: map[string]string{"Content-Type": "application/json", "Idempotency-Key": "late"},
			Body:    `{"sourceAccountId":"acc-alice","destinationAccountId":"acc-bob","amount":100,"currency":"EUR"}`,
		})
		var r Resource
		_ = json.Unmarshal([]byte(resp.Body), &r)
		return resp.StatusCode, r
	}
	if status, _ := post(); status != 503 {
		t.Fatalf("first request: %d, want 503 (the start failed)", status)
	}
	now = now.Add(8 * 24 * time.Hour) // past createdAt + IDEMPOTENCY_TTL
	status, res := post()
	if status != 202 || starts != 2 {
		t.Fatalf("duplicate 8 days later: %d after %d starts, want a 202 that re-drives", status, starts)
	}
	e.leg(t, res.TransferID, ledger.LegDebit)
	e.leg(t, res.TransferID, ledger.LegCredit)
	rec := e.record(t, res.TransferID)
	if rec.Status != ledger.StatusCompleted || rec.Expired(now.Add(23*time.Hour)) {
		t.Fatalf("settled record: %s, expiresAt %s; want COMPLETED and kept for a day", rec.Status, time.Unix(rec.ExpiresAt, 0).UTC())
	}
	now = now.Add(time.Hour)
	if status, again := post(); status != 200 || again.TransferID != res.TransferID {
		t.Errorf("the client's retry: %d %s, want a 200 replay of %s, not a second transfer", status, again.TransferID, res.TransferID)
	}
	if b := e.accountNow(t, "acc-bob").Balance; b != 100 {
		t.Errorf("bob %d, want 100: the money moved once", b)
	}
}
