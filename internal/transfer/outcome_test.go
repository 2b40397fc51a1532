package transfer

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/transferflow/orchestrator/internal/ledger"
)

// publisher records PutEvents entries; while failEntries > 0 it fails each call's entries (and counts down), and
// callErr, when set, fails the call.
type publisher struct {
	mu          sync.Mutex
	entries     []ebtypes.PutEventsRequestEntry
	failEntries int
	callErr     error
}

func (p *publisher) PutEvents(_ context.Context, in *eventbridge.PutEventsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.callErr != nil {
		return nil, p.callErr
	}
	if p.failEntries > 0 {
		p.failEntries--
		return &eventbridge.PutEventsOutput{FailedEntryCount: 1, Entries: []ebtypes.PutEventsResultEntry{{ErrorCode: aws.String("InternalFailure")}}}, nil
	}
	p.entries = append(p.entries, in.Entries...)
	return &eventbridge.PutEventsOutput{Entries: []ebtypes.PutEventsResultEntry{{EventId: aws.String("e")}}}, nil
}

// newPublishingEnv is newReconcilerEnv with pub as the reconciler's EventBridge client, on the bus "transfers", and
// the accounts src (1000 EUR) and dst (0 EUR) open.
func newPublishingEnv(t *testing.T, pub *publisher) (*ledgerEnv, *Reconciler) {
	t.Helper()
	e, r, _ := newReconcilerEnv(t)
	r.Events, r.EventBusName = pub, "transfers"
	e.account(t, "src", "EUR", 1000)
	e.account(t, "dst", "EUR", 0)
	return e, r
}

// TestReconcilerPublishesItsSettlements: each settlement the reconciler makes publishes one outcome event on its bus,
// whose detail is the resource the API shows for the settled record; an entry EventBridge refuses is sent again; a
// publish that keeps failing fails the invocation (Lambda retries it), and the retry, finding the record settled,
// publishes.
func TestReconcilerPublishesItsSettlements(t *testing.T) {
	tests := []struct {
		name       string
		legs       []string
		status     string
		wantType   string
		wantStatus string
	}{
		{name: "timed out after a lone debit", legs: []string{"DEBIT"}, status: "TIMED_OUT", wantType: DetailTypeTransferFailed, wantStatus: "FAILED"},
		{name: "failed after both legs", legs: []string{"DEBIT", "CREDIT"}, status: "FAILED", wantType: DetailTypeTransferDone, wantStatus: "COMPLETED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pub := &publisher{failEntries: 1}
			e, r := newPublishingEnv(t, pub)
			id := e.transfer(t, "src", "dst", 300, "EUR")
			for _, leg := range tt.legs {
				e.leg(t, id, leg)
			}
			if err := r.Handle(context.Background(), statusEvent(t, e.record(t, id), tt.status, reconcilerMachine)); err != nil {
				t.Fatal(err)
			}
			if len(pub.entries) != 1 {
				t.Fatalf("%d events published, want 1 (the refused entry sent again)", len(pub.entries))
			}
			got := pub.entries[0]
			if aws.ToString(got.EventBusName) != "transfers" || aws.ToString(got.Source) != EventSource || aws.ToString(got.DetailType) != tt.wantType {
				t.Errorf("entry bus %q source %q type %q", aws.ToString(got.EventBusName), aws.ToString(got.Source), aws.ToString(got.DetailType))
			}
			var detail, want map[string]any
			api, _ := json.Marshal(NewResource(e.record(t, id)))
			if err := json.Unmarshal([]byte(aws.ToString(got.Detail)), &detail); err != nil {
				t.Fatal(err)
			}
			_ = json.Unmarshal(api, &want)
			if !reflect.DeepEqual(detail, want) || detail["status"] != tt.wantStatus {
				t.Errorf("detail %v\nwant the API's resource %v", detail, want)
			}
		})
	}

	t.Run("a publish that keeps failing fails the invocation; the retry publishes", func(t *testing.T) {
		pub := &publisher{failEntries: publishAttempts}
		e, r := newPublishingEnv(t, pub)
		id := e.transfer(t, "src", "dst", 300, "EUR")
		ev := statusEvent(t, e.record(t, id), "ABORTED", reconcilerMachine)
		if err := r.Handle(context.Background(), ev); !errors.Is(err, errEventNotPublished) {
			t.Fatalf("err = %v, want errEventNotPublished", err)
		}
		if rec := e.record(t, id); rec.Status != ledger.StatusFailed || rec.FailureCode != CodeAborted {
			t.Fatalf("record %s %s: the settlement must stand whatever the publish did", rec.Status, rec.FailureCode)
		}
		if err := r.Handle(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
		if len(pub.entries) != 1 || aws.ToString(pub.entries[0].DetailType) != DetailTypeTransferFailed {
			t.Fatalf("published %+v, want one Transfer Failed", pub.entries)
		}
	})

	t.Run("a settled transfer whose workflow failed to publish", func(t *testing.T) {
		pub := &publisher{}
		e, r := newPublishingEnv(t, pub)
		id := e.transfer(t, "src", "dst", 300, "EUR")
		e.leg(t, id, "DEBIT")
		e.leg(t, id, "CREDIT") // which settles the record COMPLETED
		if err := r.Handle(context.Background(), statusEvent(t, e.record(t, id), "FAILED", reconcilerMachine)); err != nil {
			t.Fatal(err)
		}
		if len(pub.entries) != 1 || aws.ToString(pub.entries[0].DetailType) != DetailTypeTransferDone {
			t.Fatalf("published %+v, want one Transfer Completed", pub.entries)
		}
		pub.callErr = errors.New("connection refused")
		if err := r.Handle(context.Background(), statusEvent(t, e.record(t, id), "FAILED", reconcilerMachine)); err == nil {
			t.Fatal("a publish that got no answer returned no error: the event would be lost")
		}
	})
}
