package loadbench

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/internal/ledger"
	"github.com/transferflow/orchestrator/internal/transferclient"
	"github.com/transferflow/orchestrator/lab/ddbproxy"
)

func TestPollDelay(t *testing.T) {
	tests := []struct {
		name    string
		attempt int
		typical time.Duration
		spent   time.Duration
		want    time.Duration
	}{
		{name: "first poll at the typical time", attempt: 0, typical: 12 * time.Millisecond, want: 12 * time.Millisecond},
		{name: "counted from the POST", attempt: 0, typical: 12 * time.Millisecond, spent: 5 * time.Millisecond, want: 7 * time.Millisecond},
		{name: "soon after a POST slower than typical", attempt: 0, typical: 12 * time.Millisecond, spent: 30 * time.Millisecond, want: 2 * time.Millisecond},
		{name: "later polls ignore the time spent", attempt: 1, typical: 12 * time.Millisecond, spent: 5 * time.Millisecond, want: 5 * time.Millisecond},
		{name: "first poll not before 2 ms", attempt: 0, typical: 0, want: 2 * time.Millisecond},
		{name: "first poll not after 5 s", attempt: 0, typical: time.Minute, want: 5 * time.Second},
		{name: "then from 5 ms for a fast stack", attempt: 1, typical: 12 * time.Millisecond, want: 5 * time.Millisecond},
		{name: "half again each time", attempt: 3, typical: 80 * time.Millisecond, want: 22500 * time.Microsecond},
		{name: "capped at 100 ms for a fast stack", attempt: 30, typical: 12 * time.Millisecond, want: 100 * time.Millisecond},
		{name: "a slow stack starts at an eighth", attempt: 1, typical: 4 * time.Second, want: 500 * time.Millisecond},
		{name: "and is capped at half", attempt: 30, typical: 4 * time.Second, want: 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := pollDelay(tt.attempt, tt.typical, tt.spent); got != tt.want {
				t.Errorf("pollDelay(%d, %s, %s) = %s, want %s", tt.attempt, tt.typical, tt.spent, got, tt.want)
			}
		})
	}
}

func TestEndToEnd(t *testing.T) {
	tests := []struct {
		name   string
		t      transferclient.Transfer
		want   time.Duration
		wantOK bool
	}{
		{name: "completed", t: transferclient.Transfer{Status: "COMPLETED", CreatedAt: "2026-11-21T10:00:00.123Z", UpdatedAt: "2026-11-21T10:00:00.200Z", CompletedAt: "2026-11-21T10:00:00.135Z"},
			want: 12 * time.Millisecond, wantOK: true},
		{name: "failed has no completedAt", t: transferclient.Transfer{Status: "FAILED", CreatedAt: "2026-11-21T10:00:00.100Z", UpdatedAt: "2026-11-21T10:00:01.100Z"},
			want: time.Second, wantOK: true},
		{name: "in progress", t: transferclient.Transfer{Status: "IN_PROGRESS", CreatedAt: "2026-11-21T10:00:00.100Z", UpdatedAt: "2026-11-21T10:00:00.100Z"}},
		{name: "bad time", t: transferclient.Transfer{Status: "COMPLETED", CreatedAt: "yesterday", CompletedAt: "2026-11-21T10:00:00.100Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := endToEnd(tt.t)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("endToEnd = %s, %v; want %s, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestDistinctPairs(t *testing.T) {
	pick := distinctPairs([]string{"a", "b", "c", "d"})
	r := rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	for range 1000 {
		src, dst := pick(r)
		if src == dst {
			t.Fatalf("pair %s → %s", src, dst)
		}
		seen[src+dst] = true
	}
	if len(seen) != 12 {
		t.Errorf("%d distinct ordered pairs of 4 accounts, want all 12", len(seen))
	}
}

func TestKeysHaveOneLength(t *testing.T) {
	d := &driver{runID: "abc123"}
	a, b := d.key(keyKind("hot")), d.key("dirx")
	if len(a) != len(b) || !strings.HasPrefix(a, "bench-abc123-hotx-") {
		t.Errorf("keys %q and %q", a, b)
	}
	if err := transferclient.ValidateIdempotencyKey(a); err != nil {
		t.Error(err)
	}
}

func TestStateMachineArn(t *testing.T) {
	got, err := stateMachineArn("arn:aws:states:us-east-1:000000000000:execution:TransferStateMachine:tr_abc")
	if err != nil || got != "arn:aws:states:us-east-1:000000000000:stateMachine:TransferStateMachine" {
		t.Errorf("stateMachineArn = %q, %v", got, err)
	}
	if _, err := stateMachineArn("arn:aws:states:us-east-1:000000000000:stateMachine:X"); err == nil {
		t.Error("a state machine ARN was taken for an execution ARN")
	}
}

func TestTally(t *testing.T) {
	var tl tally
	tl.submitted(0, false)
	tl.submitted(2, false)
	tl.submitted(5, true)
	tl.submitted(0, false)
	tl.ended(transferclient.Transfer{Status: "COMPLETED"})
	tl.ended(transferclient.Transfer{Status: "FAILED", Failure: &transferclient.Failure{Code: "INSUFFICIENT_FUNDS"}})
	tl.ended(transferclient.Transfer{Status: "IN_PROGRESS"})
	o := tl.outcomes()
	want := Outcomes{Transfers: 4, Completed: 1, Failed: 1, NotTerminal: 1, Rejected: 1, POSTRetries: 7, FailureCodes: map[string]int{"INSUFFICIENT_FUNDS": 1}}
	if o.Transfers != want.Transfers || o.Completed != 1 || o.Failed != 1 || o.NotTerminal != 1 || o.Rejected != 1 || o.POSTRetries != 7 || o.FailureCodes["INSUFFICIENT_FUNDS"] != 1 {
		t.Errorf("outcomes = %+v, want %+v", o, want)
	}
	if o.Bad() != 3 || o.FailureRate() != 0.75 {
		t.Errorf("bad %d, rate %g", o.Bad(), o.FailureRate())
	}
}

// TestDirectTransfersReplaceEveryIdentifier: a template's requests become another transfer's: new id, record key,
// Idempotency-Key, accounts and transaction token, the rest unchanged.
func TestDirectTransfersReplaceEveryIdentifier(t *testing.T) {
	oldKey := "bench-abc123-attr-00000001"
	oldID, err := ledger.NewTransferID(ledger.KeyHash("scope", oldKey), nil)
	if err != nil {
		t.Fatal(err)
	}
	oldPK, _ := ledger.RecordKey(oldID)
	tpl := template{transferID: oldID, key: oldKey, source: "bench-a-000000", dest: "bench-a-000001", requests: []ddbproxy.Exchange{
		{Operation: "PutItem", Body: json.RawMessage(`{"Item":{"pk":{"S":"` + oldPK + `"},"transferId":{"S":"` + oldID + `"},"idempotencyKey":{"S":"` + oldKey + `"},"sourceAccountId":{"S":"bench-a-000000"}}}`)},
		{Operation: "TransactWriteItems", Body: json.RawMessage(`{"ClientRequestToken":"11111111-2222-3333-4444-555555555555","TransactItems":[{"Put":{"Item":{"pk":{"S":"LEDGER#` + oldID + `"},"accountId":{"S":"bench-a-000001"}}}}]}`)},
	}}
	d := &driver{runID: "abc123"}
	got, err := d.directTransfers(tpl, []string{"bench-d-000000", "bench-d-000001", "bench-d-000002", "bench-d-000003"}, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(got[0]) != 2 {
		t.Fatalf("got %d transfers", len(got))
	}
	for i, reqs := range got {
		all := string(reqs[0].body) + string(reqs[1].body)
		for _, old := range []string{oldID, oldPK, oldKey, "bench-a-", "11111111-2222"} {
			if strings.Contains(all, old) {
				t.Errorf("transfer %d still carries %q: %s", i, old, all)
			}
		}
		for _, acct := range []string{accountIDs("d", 4)[2*i], accountIDs("d", 4)[2*i+1]} {
			if !strings.Contains(all, acct) {
				t.Errorf("transfer %d lacks its account %s: %s", i, acct, all)
			}
		}
		if reqs[0].target != "DynamoDB_20120810.PutItem" || len(reqs[0].body) != len(tpl.requests[0].Body) {
			t.Errorf("transfer %d: target %s, body of %d bytes (template %d): identifiers must keep their length", i, reqs[0].target, len(reqs[0].body), len(tpl.requests[0].Body))
		}
	}
	if bytes.Equal(got[0][1].body, got[1][1].body) {
		t.Error("two transfers have the same transaction")
	}
	if _, err := d.directTransfers(tpl, []string{"x"}, 1, 0); err == nil {
		t.Error("too few accounts: no error")
	}
}

// TestDirectTransfersAddTheClientsPolls: 1.5 polls per transfer become one or two strongly consistent GetItem of
// each transfer's own record, 3 for 2 transfers.
func TestDirectTransfersAddTheClientsPolls(t *testing.T) {
	oldKey := "bench-abc123-attr-00000001"
	oldID, err := ledger.NewTransferID(ledger.KeyHash("scope", oldKey), nil)
	if err != nil {
		t.Fatal(err)
	}
	tpl := template{transferID: oldID, key: oldKey, source: "bench-a-000000", dest: "bench-a-000001", requests: []ddbproxy.Exchange{
		{Operation: "PutItem", Body: json.RawMessage(`{"TableName":"transfers","Item":{"transferId":{"S":"` + oldID + `"}}}`)},
	}}
	d := &driver{runID: "abc123"}
	got, err := d.directTransfers(tpl, []string{"bench-d-000000", "bench-d-000001", "bench-d-000002", "bench-d-000003"}, 2, 1.5)
	if err != nil {
		t.Fatal(err)
	}
	gets := 0
	for _, reqs := range got {
		var put struct {
			Item struct {
				TransferID struct{ S string } `json:"transferId"`
			}
		}
		if err := json.Unmarshal(reqs[0].body, &put); err != nil {
			t.Fatal(err)
		}
		pk, ok := ledger.RecordKey(put.Item.TransferID.S)
		if !ok || put.Item.TransferID.S == oldID {
			t.Fatalf("transfer id %q: not a new transfer id", put.Item.TransferID.S)
		}
		for _, r := range reqs[1:] {
			gets++
			want := `{"ConsistentRead":true,"Key":{"pk":{"S":"` + pk + `"},"sk":{"S":"TRANSFER"}},"TableName":"transfers"}`
			if r.target != "DynamoDB_20120810.GetItem" || string(r.body) != want {
				t.Errorf("poll = %s %s, want GetItem %s", r.target, r.body, want)
			}
		}
	}
	if gets != 3 {
		t.Errorf("GetItem = %d for 2 transfers at 1.5 polls each, want 3", gets)
	}
}

func TestDrained(t *testing.T) {
	start := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	final := []submitted{
		{due: start, t: transferclient.Transfer{Status: "COMPLETED", CreatedAt: "2026-11-21T10:00:00.010Z", CompletedAt: "2026-11-21T10:00:00.050Z"}},
		{due: start.Add(time.Second), t: transferclient.Transfer{Status: "FAILED", CreatedAt: "2026-11-21T10:00:01.000Z", UpdatedAt: "2026-11-21T10:00:02.000Z"}},
		{due: start, t: transferclient.Transfer{Status: "IN_PROGRESS", CreatedAt: "2026-11-21T10:00:00.000Z", UpdatedAt: "2026-11-21T10:00:09.000Z"}},
	}
	last, e2e := drained(final, start, false)
	if !last.Equal(start.Add(2*time.Second)) || e2e.N != 2 || e2e.Max != 1000 || e2e.P50 != 40 {
		t.Errorf("from createdAt: last %s, %+v", last, e2e)
	}
	if _, due := drained(final, start, true); due.N != 2 || due.P50 != 50 || due.Max != 1000 {
		t.Errorf("from due: %+v", due)
	}
	if last, none := drained(nil, start, true); !last.Equal(start) || none.N != 0 {
		t.Errorf("nothing: %s %+v", last, none)
	}
}
