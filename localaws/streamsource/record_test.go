package streamsource

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

func TestAWSForms(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"1795929206.132175922", "2026-11-29T05:13:26.132"},
		{"1795929206.1", "2026-11-29T05:13:26.100"},
		{"1795929206", "2026-11-29T05:13:26.000"},
		{"2026-11-29T05:13:26.132", "2026-11-29T05:13:26.132"}, // DynamoDB Local's and AWS's own
	} {
		if got, err := AWSLabel(tt.in); err != nil || got != tt.want {
			t.Errorf("AWSLabel(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	if _, err := AWSLabel("latest"); err == nil {
		t.Error("AWSLabel accepted a label that is no time")
	}
	got, err := AWSStreamARN("arn:aws:dynamodb:dynoxide:000000000000:table/ttt/stream/1795929206.132175922", "eu-west-1", "123456789012")
	if want := "arn:aws:dynamodb:eu-west-1:123456789012:table/ttt/stream/2026-11-29T05:13:26.132"; err != nil || got != want {
		t.Errorf("AWSStreamARN = %q, %v; want %q", got, err, want)
	}
	for _, bad := range []string{"arn:aws:dynamodb:r:a:table/ttt", "arn:aws:sqs:r:a:q", "table/ttt/stream/1"} {
		if _, err := AWSStreamARN(bad, "r", "a"); err == nil {
			t.Errorf("AWSStreamARN(%q) accepted", bad)
		}
	}
	if got := AWSShardID("shardId-00000001-ttt"); !awsShardRe.MatchString(got) || got[:29] != "shardId-00000000000000000001-" || got != AWSShardID("shardId-00000001-ttt") {
		t.Errorf("AWSShardID = %q, want shardId-00000000000000000001-<8 hex>, the same every time", got)
	}
	if a, b := AWSShardID("shardId-00000001-ttt"), AWSShardID("shardId-00000001-uuu"); a == b {
		t.Errorf("two shards, one id %q", a)
	}
	if id := "shardId-00000001573689847184-864758bb"; AWSShardID(id) != id {
		t.Errorf("AWSShardID changed AWS's own id %q", id)
	}
	for in, want := range map[string]string{"1": "000000000000000000001", "123": "000000000000000000123",
		"800000000003126276362": "800000000003126276362", "x1": "x1"} {
		if got := AWSSequenceNumber(in); got != want {
			t.Errorf("AWSSequenceNumber(%q) = %q, want %q", in, got, want)
		}
	}
	if AWSSequenceNumber("9") >= AWSSequenceNumber("10") {
		t.Error("padded sequence numbers do not sort as numbers")
	}
}

// TestDeadLetterQueue: records are appended to <data dir>/dead-letter/<name>.jsonl, one line of JSON each, read
// back by a queue opened again and by ReadDeadLetterFile; a line a crash cut short is dropped; without a data
// folder they are kept in memory.
func TestDeadLetterQueue(t *testing.T) {
	dir := t.TempDir()
	q, err := OpenDeadLetterQueue(dir, "OutcomeRelayDeadLetterQueue")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "dead-letter", "OutcomeRelayDeadLetterQueue.jsonl"); q.Path() != want || DeadLetterPath(dir, q.Name()) != want {
		t.Fatalf("path %q, want %q", q.Path(), want)
	}
	r := FailureRecord{Version: "1.0", RequestContext: RequestContext{Condition: ConditionRetryAttemptsExhausted},
		DDBStreamBatchInfo: DDBStreamBatchInfo{StartSequenceNumber: "000000000000000000007", BatchSize: 1}}
	for range 2 {
		if err := q.Send(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.OpenFile(q.Path(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"requestContext":{"requ`); err != nil { // a crash mid-line
		t.Fatal(err)
	}
	f.Close()
	if rs, err := ReadDeadLetterFile(q.Path()); err != nil || len(rs) != 2 || rs[1] != r {
		t.Fatalf("ReadDeadLetterFile = %+v, %v; want the two records", rs, err)
	}
	again, err := OpenDeadLetterQueue(dir, "OutcomeRelayDeadLetterQueue")
	if err != nil {
		t.Fatal(err)
	}
	if err := again.Send(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if rs, err := ReadDeadLetterFile(q.Path()); err != nil || len(rs) != 3 || len(again.Records()) != 3 {
		t.Fatalf("after reopening: file %d records (%v), queue %d; want 3", len(rs), err, len(again.Records()))
	}
	mem, err := OpenDeadLetterQueue("", "Q")
	if err != nil || mem.Path() != "" {
		t.Fatalf("in memory: %v, %q", err, mem.Path())
	}
	if err := mem.Send(context.Background(), r); err != nil || len(mem.Records()) != 1 {
		t.Fatalf("in memory: %v, %d records", err, len(mem.Records()))
	}
	if _, err := OpenDeadLetterQueue(dir, "../escape"); err == nil {
		t.Error("a queue name with a path was accepted")
	}
}

// The filters see what they would see in the record's JSON: filterView is json.Unmarshal of json.Marshal, for
// records with every kind of attribute value, with and without images and a user identity.
func TestFilterViewIsTheRecordsJSON(t *testing.T) {
	item := map[string]types.AttributeValue{
		"pk":   &types.AttributeValueMemberS{Value: "TRANSFER#1"},
		"n":    &types.AttributeValueMemberN{Value: "12.50"},
		"b":    &types.AttributeValueMemberB{Value: []byte{0, 1, 250}},
		"ok":   &types.AttributeValueMemberBOOL{Value: true},
		"null": &types.AttributeValueMemberNULL{Value: true},
		"ss":   &types.AttributeValueMemberSS{Value: []string{"a", "b"}},
		"ns":   &types.AttributeValueMemberNS{Value: []string{"1", "2.5"}},
		"bs":   &types.AttributeValueMemberBS{Value: [][]byte{{1}, {2, 3}}},
		"l":    &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "x"}, &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}}}},
		"m":    &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"inner": &types.AttributeValueMemberN{Value: "-3"}}},
	}
	at := time.Unix(1795929206, 0)
	for name, rec := range map[string]types.Record{
		"insert": {EventName: types.OperationTypeInsert, Dynamodb: &types.StreamRecord{SequenceNumber: aws.String("7"),
			Keys: map[string]types.AttributeValue{"pk": item["pk"]}, NewImage: item, SizeBytes: aws.Int64(321),
			StreamViewType: types.StreamViewTypeNewAndOldImages, ApproximateCreationDateTime: &at}},
		"remove by TTL": {EventName: types.OperationTypeRemove, Dynamodb: &types.StreamRecord{SequenceNumber: aws.String("8"),
			Keys: map[string]types.AttributeValue{"pk": item["pk"]}, OldImage: item, StreamViewType: types.StreamViewTypeOldImage},
			UserIdentity: &types.Identity{Type: aws.String("Service"), PrincipalId: aws.String("dynamodb.amazonaws.com")}},
		"keys only": {EventName: types.OperationTypeModify, Dynamodb: &types.StreamRecord{SequenceNumber: aws.String("9")}},
	} {
		lr, err := normalize(rec, "eu-west-1", "arn:aws:dynamodb:eu-west-1:123456789012:table/ttt/stream/2026-11-29T05:13:26.132", "server-arn", "shard")
		if err != nil {
			t.Fatal(err)
		}
		body, err := json.Marshal(lr)
		if err != nil {
			t.Fatal(err)
		}
		var want map[string]any
		if err := json.Unmarshal(body, &want); err != nil {
			t.Fatal(err)
		}
		if got := lr.filterView(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: filterView\n %#v\nwant\n %#v", name, got, want)
		}
	}
}
