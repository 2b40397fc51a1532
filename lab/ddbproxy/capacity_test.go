package ddbproxy

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestUsage(t *testing.T) {
	tests := []struct {
		name   string
		op     string
		status int
		body   string
		want   delta
	}{
		{name: "put reports one object", op: "PutItem", status: 200,
			body: `{"ConsumedCapacity":{"TableName":"t","CapacityUnits":1.0}}`, want: delta{write: 1}},
		{name: "eventually consistent get", op: "GetItem", status: 200,
			body: `{"Item":{},"ConsumedCapacity":{"TableName":"t","CapacityUnits":0.5}}`, want: delta{read: 0.5}},
		{name: "transaction reports a list with write units", op: "TransactWriteItems", status: 200,
			body: `{"ConsumedCapacity":[{"TableName":"t","CapacityUnits":4.0,"WriteCapacityUnits":4.0},{"TableName":"u","CapacityUnits":2,"WriteCapacityUnits":2}]}`,
			want: delta{write: 6}},
		{name: "explicit read and write units win over the kind", op: "UpdateItem", status: 200,
			body: `{"ConsumedCapacity":{"CapacityUnits":3,"ReadCapacityUnits":1,"WriteCapacityUnits":2}}`, want: delta{read: 1, write: 2}},
		{name: "no capacity in the answer", op: "Query", status: 200, body: `{"Items":[]}`, want: delta{unreported: true}},
		{name: "control operations consume nothing", op: "CreateTable", status: 200, body: `{}`, want: delta{}},
		{name: "failed conditional put is estimated from the old item", op: "PutItem", status: 400,
			body: `{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException","Item":{"pk":{"S":"` + string(make1500()) + `"}}}`,
			want: delta{write: 2, estimated: true, errType: "ConditionalCheckFailedException"}},
		{name: "failed conditional update without the old item is one unit", op: "UpdateItem", status: 400,
			body: `{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException"}`,
			want: delta{write: 1, estimated: true, errType: "ConditionalCheckFailedException"}},
		{name: "cancelled transaction is unreported", op: "TransactWriteItems", status: 400,
			body: `{"__type":"com.amazonaws.dynamodb.v20120810#TransactionCanceledException"}`,
			want: delta{unreported: true, errType: "TransactionCanceledException"}},
		{name: "throttling costs nothing", op: "GetItem", status: 400,
			body: `{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException"}`,
			want: delta{errType: "ProvisionedThroughputExceededException"}},
		{name: "error without a type names the status", op: "GetItem", status: 502, body: `bad gateway`,
			want: delta{errType: "HTTP 502"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := usage(tt.op, tt.status, []byte(tt.body)); got != tt.want {
				t.Errorf("usage = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// make1500 is 1,500 letters: with the name pk, an item of 1,502 bytes, two write units.
func make1500() []byte {
	b := make([]byte, 1500)
	for i := range b {
		b[i] = 'a'
	}
	return b
}

func TestItemSize(t *testing.T) {
	tests := []struct {
		name string
		item string
		want int
	}{
		{name: "string", item: `{"pk":{"S":"abc"}}`, want: 2 + 3},
		{name: "utf-8 bytes", item: `{"n":{"S":"é"}}`, want: 1 + 2},
		{name: "number: significant digits halved plus one", item: `{"a":{"N":"123.450"}}`, want: 1 + 4},
		{name: "zero", item: `{"a":{"N":"0"}}`, want: 1 + 1},
		{name: "bool and null", item: `{"b":{"BOOL":true},"c":{"NULL":true}}`, want: 2 + 2},
		{name: "binary", item: `{"b":{"B":"AAEC"}}`, want: 1 + 3},
		{name: "list: 3 plus 1 per element", item: `{"l":{"L":[{"S":"ab"},{"N":"7"}]}}`, want: 1 + 3 + (1 + 2) + (1 + 2)},
		{name: "map counts element names", item: `{"m":{"M":{"k":{"S":"v"}}}}`, want: 1 + 3 + 1 + 1 + 1},
		{name: "string set", item: `{"s":{"SS":["ab","c"]}}`, want: 1 + 3},
		{name: "number set", item: `{"s":{"NS":["10","12345"]}}`, want: 1 + 2 + 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var item map[string]json.RawMessage
			if err := json.Unmarshal([]byte(tt.item), &item); err != nil {
				t.Fatal(err)
			}
			got, err := ItemSize(item)
			if err != nil || got != tt.want {
				t.Errorf("ItemSize = %d, %v; want %d", got, err, tt.want)
			}
		})
	}
	if _, err := ItemSize(map[string]json.RawMessage{"x": json.RawMessage(`{"Q":"1"}`)}); err == nil {
		t.Error("an unknown attribute type: no error")
	}
}

func TestWithCapacity(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{name: "added", in: `{"TableName":"t"}`, want: `{"TableName":"t","ReturnConsumedCapacity":"TOTAL"}`},
		{name: "empty object", in: ` {} `, want: `{"ReturnConsumedCapacity":"TOTAL"}`},
		{name: "already asked", in: `{"ReturnConsumedCapacity":"INDEXES"}`, want: `{"ReturnConsumedCapacity":"INDEXES"}`},
		{name: "not an object", in: `[1]`, want: `[1]`},
		{name: "not JSON", in: `{oops}`, want: `{oops}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(withCapacity([]byte(tt.in))); got != tt.want {
				t.Errorf("withCapacity(%s) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestCountsArithmetic(t *testing.T) {
	var a OpCount
	a.add(delta{write: 1})
	a.add(delta{write: 1, estimated: true, errType: "ConditionalCheckFailedException"})
	before := Counts{"PutItem": {Requests: 1, WriteUnits: 1}}
	after := Counts{"PutItem": a, "GetItem": {Requests: 2, ReadUnits: 1}}

	got := after.Sub(before)
	want := Counts{
		"PutItem": {Requests: 1, WriteUnits: 1, Errors: 1, ErrorTypes: map[string]int64{"ConditionalCheckFailedException": 1}, Estimated: 1},
		"GetItem": {Requests: 2, ReadUnits: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Sub = %+v, want %+v", got, want)
	}
	if back := got.Add(before); !reflect.DeepEqual(back.Total(), after.Total()) {
		t.Errorf("Add(Sub) total = %+v, want %+v", back.Total(), after.Total())
	}
	if tot := after.Total(); tot.Requests != 4 || tot.WriteUnits != 2 || tot.ReadUnits != 1 || tot.Errors != 1 {
		t.Errorf("Total = %+v", tot)
	}
	if same := after.Sub(after); len(same) != 0 {
		t.Errorf("a snapshot minus itself = %+v, want nothing", same)
	}
	if d := (Counts{"CreateTable": {Requests: 1}, "GetItem": {Requests: 1}}).Data(); len(d) != 1 {
		t.Errorf("Data = %+v, want GetItem only", d)
	}
}
