package transfer_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"reflect"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/transferflow/orchestrator/internal/ledger"
	"github.com/transferflow/orchestrator/internal/transfer"
)

func (h *harness) getPath(resource, path string, params, query map[string]string) events.APIGatewayProxyResponse {
	h.t.Helper()
	return h.do(events.APIGatewayProxyRequest{Resource: resource, Path: path, HTTPMethod: http.MethodGet,
		PathParameters: params, QueryStringParameters: query})
}

// TestHistoryIsStepFunctionsShapedAndPaged: the events come back exactly as Step Functions sent them on the wire
// (after the round trip through the SDK's types), paged with nextToken, with the transfer's ledger legs.
func TestHistoryIsStepFunctionsShapedAndPaged(t *testing.T) {
	h := newHarness(t)
	var tr transfer.Resource
	decode(t, h.post("history-1", aliceToBob), &tr)
	store := ledger.NewStore(h.db, h.table)
	for _, id := range []string{"acc-alice", "acc-bob"} {
		if _, err := store.CreateOwnedAccount(context.Background(), "anonymous", id, "EUR", 5000, h.clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := ledger.NewLedger(h.db, h.table).ApplyLeg(context.Background(), ledger.LegRequest{
		TransferID: tr.TransferID, Leg: ledger.LegDebit, AccountID: "acc-alice", DestinationAccountID: "acc-bob",
		Amount: 1250, Currency: "EUR", ExecutionArn: tr.ExecutionArn, Owner: "anonymous",
	}, h.clock.Now()); err != nil {
		t.Fatal(err)
	}

	params := map[string]string{"transferId": tr.TransferID}
	var page1, page2 transfer.History
	resp := h.getPath("/transfers/{transferId}/history", "/transfers/"+tr.TransferID+"/history", params, map[string]string{"maxResults": "5"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d body %s", resp.StatusCode, resp.Body)
	}
	decode(t, resp, &page1)
	if page1.NextToken != "page-2" || page1.TransferID != tr.TransferID || page1.ExecutionArn != tr.ExecutionArn {
		t.Errorf("page 1 = %+v", page1)
	}
	if len(page1.Ledger) != 1 || page1.Ledger[0].Leg != "DEBIT" || page1.Ledger[0].Amount != 1250 || page1.Ledger[0].BalanceAfter != nil {
		t.Errorf("ledger = %+v", page1.Ledger)
	}
	wantEvents(t, page1.Events, "testdata/history-page1.json")

	resp = h.getPath("/transfers/{transferId}/history", "", params, map[string]string{"nextToken": page1.NextToken})
	decode(t, resp, &page2)
	if page2.NextToken != "" {
		t.Errorf("last page has nextToken %q", page2.NextToken)
	}
	wantEvents(t, page2.Events, "testdata/history-page2.json")

	wantProblem(t, h.getPath("/transfers/{transferId}/history", "", params, map[string]string{"maxResults": "0"}), 400, "VALIDATION_ERROR")
	wantProblem(t, h.getPath("/transfers/{transferId}/history", "", params, map[string]string{"nextToken": "forged"}), 400, "VALIDATION_ERROR")
	wantProblem(t, h.getPath("/transfers/{transferId}/history", "", map[string]string{"transferId": "tr_nope"}, nil), 404, "TRANSFER_NOT_FOUND")
}

func wantEvents(t *testing.T, got []map[string]any, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var want struct{ Events []map[string]any }
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want.Events) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want.Events)
		t.Errorf("events differ from the wire:\n got %s\nwant %s", g, w)
	}
}

// TestHistoryOfAnOrphanHasNoEvents: a transfer whose workflow never started has an audit trail with no events.
func TestHistoryOfAnOrphanHasNoEvents(t *testing.T) {
	h := newHarness(t, withoutRetries)
	h.sfn.setFault(func(int64) sfnFault { return sfnDrop })
	wantProblem(t, h.post("orphan", aliceToBob), http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE")
	recs := h.records()
	if len(recs) != 1 {
		t.Fatalf("records = %d, want the reservation", len(recs))
	}
	resp := h.getPath("/transfers/{transferId}/history", "", map[string]string{"transferId": recs[0].TransferID}, nil)
	var hist transfer.History
	decode(t, resp, &hist)
	if resp.StatusCode != http.StatusOK || hist.Events == nil || len(hist.Events) != 0 || len(hist.Ledger) != 0 {
		t.Errorf("status %d history %+v", resp.StatusCode, hist)
	}
}

func TestAccount(t *testing.T) {
	h := newHarness(t)
	if _, err := ledger.NewStore(h.db, h.table).CreateOwnedAccount(context.Background(), "anonymous", "acc-carol", "GBP", 990, h.clock.Now()); err != nil {
		t.Fatal(err)
	}
	resp := h.getPath("/accounts/{accountId}", "/accounts/acc-carol", map[string]string{"accountId": "acc-carol"}, nil)
	var a transfer.AccountView
	decode(t, resp, &a)
	if resp.StatusCode != 200 || a != (transfer.AccountView{AccountID: "acc-carol", Kind: "customer", Balance: 990, Currency: "GBP", Version: 1,
		CreatedAt: "2026-11-21T10:00:00.123Z", UpdatedAt: "2026-11-21T10:00:00.123Z",
		Links: transfer.AccountLinks{Self: "/accounts/acc-carol", Transfers: "/accounts/acc-carol/transfers"}}) {
		t.Errorf("status %d account %+v", resp.StatusCode, a)
	}
	wantProblem(t, h.getPath("/accounts/{accountId}", "", map[string]string{"accountId": "acc-nobody"}, nil), 404, "ACCOUNT_NOT_FOUND")
	wantProblem(t, h.getPath("/accounts/{accountId}", "", map[string]string{"accountId": "bad/id"}, nil), 404, "ACCOUNT_NOT_FOUND")
}
