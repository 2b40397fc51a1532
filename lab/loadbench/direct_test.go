package loadbench

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/transferflow/orchestrator/localaws/ddbserver"
)

// TestDirectTimesEveryRequest: the store test against a real Dynoxide counts every request, times each one (the
// summary's count is the requests', its percentiles in order and not zero), counts the refused ones by their error
// type, and measures the server's CPU when it is a process of this run.
func TestDirectTimesEveryRequest(t *testing.T) {
	srv := ddbserver.StartT(t)
	hc := &http.Client{}
	create := directRequest{target: "DynamoDB_20120810.CreateTable", body: []byte(`{"TableName":"direct-test","BillingMode":"PAY_PER_REQUEST",` +
		`"AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}]}`)}
	if c := direct(context.Background(), hc, srv.URL, [][]directRequest{{create}}, 1); len(c.Errors) > 0 {
		t.Fatalf("create table: %v", c.Errors)
	}
	// Each transfer's worth: a put of a new item, then the same put on the condition that the item does not exist,
	// which the server refuses.
	var transfers [][]directRequest
	for i := range 60 {
		put := fmt.Sprintf(`{"TableName":"direct-test","Item":{"pk":{"S":"item-%d"},"n":{"N":"%d"}}`, i, i)
		transfers = append(transfers, []directRequest{
			{target: "DynamoDB_20120810.PutItem", body: []byte(put + `}`)},
			{target: "DynamoDB_20120810.PutItem", body: []byte(put + `,"ConditionExpression":"attribute_not_exists(pk)"}`)},
		})
	}
	st := &storeTest{storePID: srv.PID()}
	before := st.storeCPU()
	for _, c := range []int{1, 4} {
		cell := direct(context.Background(), hc, srv.URL, transfers, c)
		if cell.Concurrency != c || cell.Transfers != 60 || cell.Requests != 120 {
			t.Errorf("c=%d: %d transfers, %d requests; want 60 and 120", c, cell.Transfers, cell.Requests)
		}
		if got := cell.Errors["ConditionalCheckFailedException"]; got != 60 || len(cell.Errors) != 1 {
			t.Errorf("c=%d: errors %v; want 60 ConditionalCheckFailedException", c, cell.Errors)
		}
		l := cell.Request
		if l.N != 120 || l.P50 <= 0 || l.P50 > l.P99 || l.P99 > cell.RequestP999Ms || cell.RequestP999Ms > l.Max {
			t.Errorf("c=%d: request times %+v, p99.9 %v: want 120 of them, 0 < p50 <= p99 <= p99.9 <= max", c, l, cell.RequestP999Ms)
		}
	}
	if after := st.storeCPU(); before < 0 || after < before {
		t.Errorf("the server's CPU: %v before, %v after; want readings that do not go back", before, after)
	}
	if (&storeTest{}).storeCPU() != -1 {
		t.Error("a server that is not ours: want -1")
	}
}
