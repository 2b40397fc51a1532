package ddbproxy_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/transferflow/orchestrator/lab/ddbproxy"
	"github.com/transferflow/orchestrator/localaws/ddbserver"
)

// startProxy serves a proxy to upstream and returns its URL.
func startProxy(t *testing.T, upstream string, inject bool) (*ddbproxy.Proxy, string) {
	t.Helper()
	p, err := ddbproxy.New(ddbproxy.Options{Upstream: upstream, InjectCapacity: inject})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return p, srv.URL
}

// TestProxyForwardsAndCounts: requests reach the upstream with the capacity request added, answers come back
// unchanged, and the counts and the recording say what happened.
func TestProxyForwardsAndCounts(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, r.Header.Get("X-Amz-Target")+" "+string(b))
		mu.Unlock()
		w.Header().Set("X-Amz-Crc32", "123")
		switch r.Header.Get("X-Amz-Target") {
		case "DynamoDB_20120810.PutItem":
			_, _ = io.WriteString(w, `{"ConsumedCapacity":{"TableName":"t","CapacityUnits":2.0}}`)
		default:
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException","message":"no"}`)
		}
	}))
	defer upstream.Close()
	p, url := startProxy(t, upstream.URL, true)

	stop, err := p.Record()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Record(); !errors.Is(err, ddbproxy.ErrRecording) {
		t.Errorf("a second recording: %v, want ErrRecording", err)
	}
	post := func(op, body string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodPost, url+"/", strings.NewReader(body))
		req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, body := post("PutItem", `{"TableName":"t"}`)
	if resp.StatusCode != 200 || resp.Header.Get("X-Amz-Crc32") != "123" || !strings.Contains(body, `"CapacityUnits":2.0`) {
		t.Errorf("answer = %d %v %s, want the upstream's unchanged", resp.StatusCode, resp.Header, body)
	}
	resp, _ = post("UpdateItem", `{"TableName":"t"}`)
	if resp.StatusCode != 400 {
		t.Errorf("error answer status = %d, want 400", resp.StatusCode)
	}
	post("DescribeTable", `{"TableName":"t"}`)
	recorded := stop()

	if want := `DynamoDB_20120810.PutItem {"TableName":"t","ReturnConsumedCapacity":"TOTAL"}`; seen[0] != want {
		t.Errorf("upstream saw %s, want %s", seen[0], want)
	}
	if strings.Contains(seen[2], "ReturnConsumedCapacity") {
		t.Errorf("a control operation was changed: %s", seen[2])
	}
	c := p.Snapshot()
	if put := c["PutItem"]; put.Requests != 1 || put.WriteUnits != 2 {
		t.Errorf("PutItem counts = %+v", put)
	}
	if upd := c["UpdateItem"]; upd.Errors != 1 || upd.Estimated != 1 || upd.WriteUnits != 1 {
		t.Errorf("UpdateItem counts = %+v", upd)
	}
	if len(recorded) != 2 || recorded[0].Operation != "PutItem" || string(recorded[0].Body) != `{"TableName":"t"}` || recorded[1].Status != 400 {
		t.Errorf("recording = %+v, want the two data requests as sent by the client", recorded)
	}
	post("PutItem", `{}`)
	if len(recorded) != 2 {
		t.Error("the recording grew after stop")
	}
}

// TestStreamReadsPassUncounted: a DynamoDB Streams request reaches the upstream unchanged (no capacity request
// added) and its answer comes back, but it is neither counted nor recorded.
func TestStreamReadsPassUncounted(t *testing.T) {
	var seen string
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		seen = r.Header.Get("X-Amz-Target") + " " + string(b)
		_, _ = io.WriteString(w, `{"Records":[]}`)
	}))
	defer upstream.Close()
	p, url := startProxy(t, upstream.URL, true)
	stop, err := p.Record()
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, url+"/", strings.NewReader(`{"ShardIterator":"x"}`))
	req.Header.Set("X-Amz-Target", "DynamoDBStreams_20120810.GetRecords")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != `{"Records":[]}` || seen != `DynamoDBStreams_20120810.GetRecords {"ShardIterator":"x"}` {
		t.Errorf("answer %d %s; upstream saw %s", resp.StatusCode, b, seen)
	}
	if c := p.Snapshot(); len(c) != 0 {
		t.Errorf("counts %+v, want none", c)
	}
	if rec := stop(); len(rec) != 0 {
		t.Errorf("recorded %+v, want nothing", rec)
	}
}

func TestNewRejectsABadUpstream(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:8000", "ftp://x"} {
		if _, err := ddbproxy.New(ddbproxy.Options{Upstream: u}); err == nil {
			t.Errorf("New(%q): no error", u)
		}
	}
}

// TestProxyAgainstARealServer: the AWS SDK through the proxy to the real server (Dynoxide, or DynamoDB Local under
// TEST_DYNAMODB=dynamodb-local); both report ConsumedCapacity when asked, so the counts carry DynamoDB's units (1 KB
// writes, transactions at twice the units), except that DynamoDB Local reports 2 units for any transaction
// (docs/dynamodb.md).
func TestProxyAgainstARealServer(t *testing.T) {
	srv := ddbserver.StartT(t)
	p, url := startProxy(t, srv.URL, true)
	db := ddbserver.NewClient(url, nil)
	ctx := context.Background()
	table := aws.String("counted")
	if _, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            table,
		BillingMode:          ddbtypes.BillingModePayPerRequest,
		KeySchema:            []ddbtypes.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: ddbtypes.KeyTypeHash}},
		AttributeDefinitions: []ddbtypes.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: ddbtypes.ScalarAttributeTypeS}},
	}); err != nil {
		t.Fatal(err)
	}
	item := func(pk string) map[string]ddbtypes.AttributeValue {
		return map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: pk}}
	}
	before := p.Snapshot()
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: item("a")}); err != nil {
		t.Fatal(err)
	}
	_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: item("a"), ConditionExpression: aws.String("attribute_not_exists(pk)"),
		ReturnValuesOnConditionCheckFailure: ddbtypes.ReturnValuesOnConditionCheckFailureAllOld})
	var ccf *ddbtypes.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		t.Fatalf("conditional put: %v, want ConditionalCheckFailedException", err)
	}
	if _, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{
		{Put: &ddbtypes.Put{TableName: table, Item: item("b")}}, {Put: &ddbtypes.Put{TableName: table, Item: item("c")}},
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: item("a"), ConsistentRead: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	got := p.Snapshot().Sub(before)
	want := map[string][2]float64{"PutItem": {0, 2}, "TransactWriteItems": {0, 4}, "GetItem": {1, 0}}
	if srv.Store == ddbserver.DynamoDBLocal {
		want["TransactWriteItems"] = [2]float64{0, 2}
	}
	for op, units := range want {
		if c := got[op]; c.ReadUnits != units[0] || c.WriteUnits != units[1] || c.Unreported != 0 {
			b, _ := json.Marshal(c)
			t.Errorf("%s: %s, want read %g write %g", op, b, units[0], units[1])
		}
	}
	if got["PutItem"].Estimated != 1 {
		t.Errorf("the failed conditional put was not estimated: %+v", got["PutItem"])
	}
}
