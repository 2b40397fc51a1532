package transfer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/transferflow/orchestrator/internal/ledger"
	"github.com/transferflow/orchestrator/internal/streamtest"
)

// publisher records PutEvents calls; it refuses the entries whose transferId is in refuse (once each), and fails the
// call while callErr is set.
type publisher struct {
	mu      sync.Mutex
	calls   int
	entries []ebtypes.PutEventsRequestEntry
	refuse  map[string]bool
	callErr error
}

func (p *publisher) PutEvents(_ context.Context, in *eventbridge.PutEventsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	if p.callErr != nil {
		return nil, p.callErr
	}
	out := &eventbridge.PutEventsOutput{}
	for _, e := range in.Entries {
		var d struct{ TransferID string }
		_ = json.Unmarshal([]byte(aws.ToString(e.Detail)), &d)
		if p.refuse[d.TransferID] {
			delete(p.refuse, d.TransferID)
			out.FailedEntryCount++
			out.Entries = append(out.Entries, ebtypes.PutEventsResultEntry{ErrorCode: aws.String("InternalFailure")})
			continue
		}
		p.entries = append(p.entries, e)
		out.Entries = append(out.Entries, ebtypes.PutEventsResultEntry{EventId: aws.String("e")})
	}
	return out, nil
}

// settledRecord is a transfer record as the workflow or the reconciler leaves it.
func settledRecord(id, status string) ledger.Transfer {
	t := ledger.Transfer{PK: "TRANSFER#" + id, SK: ledger.SortKeyTransfer, TransferID: id, Scope: "arn:aws:iam::000000000000:user/local",
		Status: status, SourceAccountID: "acc-a", DestinationAccountID: "acc-b", Amount: 1250, Currency: "EUR",
		ExecutionArn: "arn:aws:states:us-east-1:000000000000:execution:TransferStateMachine:" + id,
		CreatedAt:    "2026-11-29T10:00:00.000Z", UpdatedAt: "2026-11-29T10:00:01.250Z", CompletedAt: "2026-11-29T10:00:01.250Z",
		Legs: []string{"DEBIT"}, RetainUntil: 1795000000, ExpiresAt: 1795000000}
	if status == ledger.StatusFailed {
		t.FailureCode = "CREDIT_FAILED_REFUNDED"
		t.FailureError = `{"Error":"AccountClosed","Cause":"{\"errorMessage\":\"account acc-b is closed\",\"errorType\":\"AccountClosed\"}"}`
		t.Legs = []string{"DEBIT", "REFUND"}
	} else {
		t.Legs = []string{"DEBIT", "CREDIT"}
	}
	return t
}

// streamRecord is the stream record of a write from old to new; a zero old is an INSERT.
func streamRecord(t *testing.T, seq string, old, new ledger.Transfer) events.DynamoDBEventRecord {
	t.Helper()
	var before any
	if old.TransferID != "" {
		before = old
	}
	rec, err := streamtest.Record(seq, []string{"pk", "sk"}, before, new)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func newRelay(pub *publisher) (*OutcomeRelay, *bytes.Buffer) {
	var logs bytes.Buffer
	return &OutcomeRelay{Events: pub, EventBusName: "transfers", Logger: slog.New(slog.NewJSONHandler(&logs, nil))}, &logs
}

// TestRelayPublishesSettlements: a settlement's stream record publishes one event on the bus whose detail is what
// GET /transfers/{id} answers for the record (a failure's message included), with the detail type of its status and
// the execution as resource.
func TestRelayPublishesSettlements(t *testing.T) {
	for _, status := range []string{ledger.StatusCompleted, ledger.StatusFailed} {
		t.Run(status, func(t *testing.T) {
			pub := &publisher{}
			r, _ := newRelay(pub)
			settled := settledRecord("tr_1", status)
			before := settled
			before.Status, before.CompletedAt, before.FailureCode, before.FailureError = ledger.StatusInProgress, "", "", ""
			resp, err := r.Handle(context.Background(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{streamRecord(t, "100000000000000000001", before, settled)}})
			if err != nil || len(resp.BatchItemFailures) != 0 {
				t.Fatalf("resp %+v, err %v", resp, err)
			}
			if len(pub.entries) != 1 {
				t.Fatalf("%d events published, want 1", len(pub.entries))
			}
			want, _ := OutcomeEntry(NewResource(settled), "transfers")
			got := pub.entries[0]
			if aws.ToString(got.DetailType) != aws.ToString(want.DetailType) || aws.ToString(got.Source) != EventSource ||
				aws.ToString(got.EventBusName) != "transfers" || !reflect.DeepEqual(got.Resources, []string{settled.ExecutionArn}) {
				t.Errorf("entry %+v, want %+v", got, want)
			}
			if aws.ToString(got.Detail) != aws.ToString(want.Detail) {
				t.Errorf("detail %s\nwant the API's resource %s", aws.ToString(got.Detail), aws.ToString(want.Detail))
			}
			if status == ledger.StatusFailed && !strings.Contains(aws.ToString(got.Detail), "(AccountClosed: account acc-b is closed)") {
				t.Errorf("failure message without the function's errorMessage: %s", aws.ToString(got.Detail))
			}
		})
	}
}

// TestRelayPublishesOnlySettlements: the writes that do not settle a transfer publish nothing, even if the mapping's
// filter let them through: the reservation (INSERT), a leg added while IN_PROGRESS, a write to a settled record, an
// account item, and a record seeded already settled (an opening balance).
func TestRelayPublishesOnlySettlements(t *testing.T) {
	inProgress := settledRecord("tr_1", ledger.StatusInProgress)
	inProgress.CompletedAt = ""
	completed := settledRecord("tr_1", ledger.StatusCompleted)
	account := completed
	account.SK = "ACCOUNT"
	pub := &publisher{}
	r, _ := newRelay(pub)
	resp, err := r.Handle(context.Background(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		streamRecord(t, "1", ledger.Transfer{}, inProgress),
		streamRecord(t, "2", inProgress, inProgress),
		streamRecord(t, "3", completed, completed),
		streamRecord(t, "4", inProgress, account),
		streamRecord(t, "5", ledger.Transfer{}, completed),
	}})
	if err != nil || len(resp.BatchItemFailures) != 0 || pub.calls != 0 {
		t.Fatalf("resp %+v, err %v, %d PutEvents calls; want nothing published", resp, err, pub.calls)
	}
}

// TestRelayReportsWhatWasNotPublished: an entry EventBridge refuses is reported as a batch item failure (Lambda
// retries from it), the others are published; a call that fails reports every record from its chunk on; batches
// go ten entries a call.
func TestRelayReportsWhatWasNotPublished(t *testing.T) {
	var recs []events.DynamoDBEventRecord
	for i := range 23 {
		id := fmt.Sprintf("tr_%02d", i)
		settled := settledRecord(id, ledger.StatusCompleted)
		before := settled
		before.Status = ledger.StatusInProgress
		recs = append(recs, streamRecord(t, fmt.Sprintf("1%020d", i), before, settled))
	}
	t.Run("refused entries", func(t *testing.T) {
		pub := &publisher{refuse: map[string]bool{"tr_03": true, "tr_17": true}}
		r, _ := newRelay(pub)
		resp, err := r.Handle(context.Background(), events.DynamoDBEvent{Records: recs})
		if err != nil {
			t.Fatal(err)
		}
		want := []events.DynamoDBBatchItemFailure{{ItemIdentifier: recs[3].Change.SequenceNumber}, {ItemIdentifier: recs[17].Change.SequenceNumber}}
		if !reflect.DeepEqual(resp.BatchItemFailures, want) {
			t.Errorf("failures %+v, want %+v", resp.BatchItemFailures, want)
		}
		if pub.calls != 3 || len(pub.entries) != 21 {
			t.Errorf("%d calls, %d events; want 3 calls (10+10+3), 21 events", pub.calls, len(pub.entries))
		}
	})
	t.Run("failed call", func(t *testing.T) {
		pub := &publisher{callErr: errors.New("connection reset")}
		r, logs := newRelay(pub)
		resp, err := r.Handle(context.Background(), events.DynamoDBEvent{Records: recs})
		if err != nil || len(resp.BatchItemFailures) != len(recs) || resp.BatchItemFailures[0].ItemIdentifier != recs[0].Change.SequenceNumber {
			t.Fatalf("resp %+v, err %v; want every record reported", resp, err)
		}
		if !strings.Contains(logs.String(), "connection reset") {
			t.Errorf("log does not name the error: %s", logs.String())
		}
	})
}

// TestRelaySkipsAnUnreadableRecord: a settled record whose image cannot be decoded is logged and skipped rather than
// reported, so it does not block the records behind it; the log names the record, never its image.
func TestRelaySkipsAnUnreadableRecord(t *testing.T) {
	settled := settledRecord("tr_bad", ledger.StatusCompleted)
	before := settled
	before.Status = ledger.StatusInProgress
	rec := streamRecord(t, "7", before, settled)
	rec.Change.NewImage["amount"] = events.NewStringAttribute("twelve")
	good := settledRecord("tr_good", ledger.StatusCompleted)
	goodBefore := good
	goodBefore.Status = ledger.StatusInProgress
	pub := &publisher{}
	r, logs := newRelay(pub)
	resp, err := r.Handle(context.Background(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{rec, streamRecord(t, "8", goodBefore, good)}})
	if err != nil || len(resp.BatchItemFailures) != 0 || len(pub.entries) != 1 {
		t.Fatalf("resp %+v, err %v, %d events; want the good record published", resp, err, len(pub.entries))
	}
	if !strings.Contains(logs.String(), "stream record not relayed") || strings.Contains(logs.String(), "twelve") {
		t.Errorf("log: %s", logs.String())
	}
}
