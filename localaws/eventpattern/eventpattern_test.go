package eventpattern

import (
	"encoding/json"
	"testing"
)

const statusChange = `{"version":"0","id":"1","detail-type":"Step Functions Execution Status Change","source":"aws.states",
"account":"000000000000","region":"us-east-1","resources":["arn:aws:states:us-east-1:000000000000:execution:M:e1"],
"detail":{"executionArn":"arn:aws:states:us-east-1:000000000000:execution:M:e1","stateMachineArn":"arn:aws:states:us-east-1:000000000000:stateMachine:M","name":"e1","status":"TIMED_OUT","startDate":1700000000000,"stopDate":null}}`

func TestMatch(t *testing.T) {
	tests := []struct {
		name    string
		pattern string
		want    bool
	}{
		{name: "source and detail-type", pattern: `{"source":["aws.states"],"detail-type":["Step Functions Execution Status Change"]}`, want: true},
		{name: "status in list", pattern: `{"detail":{"status":["FAILED","TIMED_OUT","ABORTED"]}}`, want: true},
		{name: "status not in list", pattern: `{"detail":{"status":["SUCCEEDED"]}}`, want: false},
		{name: "all fields must match", pattern: `{"source":["aws.states"],"detail":{"status":["SUCCEEDED"]}}`, want: false},
		{name: "state machine arn", pattern: `{"detail":{"stateMachineArn":["arn:aws:states:us-east-1:000000000000:stateMachine:M"]}}`, want: true},
		{name: "other state machine", pattern: `{"detail":{"stateMachineArn":["arn:aws:states:us-east-1:000000000000:stateMachine:N"]}}`, want: false},
		{name: "array field matches any element", pattern: `{"resources":[{"prefix":"arn:aws:states:us-east-1:000000000000:execution:M:"}]}`, want: true},
		{name: "missing field", pattern: `{"detail":{"error":["x"]}}`, want: false},
		{name: "exists false", pattern: `{"detail":{"error":[{"exists":false}]}}`, want: true},
		{name: "exists true on present null", pattern: `{"detail":{"stopDate":[{"exists":true}]}}`, want: true},
		{name: "null value", pattern: `{"detail":{"stopDate":[null]}}`, want: true},
		{name: "anything-but list", pattern: `{"detail":{"status":[{"anything-but":["RUNNING","SUCCEEDED"]}]}}`, want: true},
		{name: "anything-but value", pattern: `{"detail":{"status":[{"anything-but":"TIMED_OUT"}]}}`, want: false},
		{name: "anything-but prefix", pattern: `{"detail":{"status":[{"anything-but":{"prefix":"TIMED"}}]}}`, want: false},
		{name: "suffix", pattern: `{"detail":{"name":[{"suffix":"1"}]}}`, want: true},
		{name: "numeric", pattern: `{"detail":{"startDate":[{"numeric":[">",0,"<=",1700000000000]}]}}`, want: true},
		{name: "numeric out of range", pattern: `{"detail":{"startDate":[{"numeric":["<",5]}]}}`, want: false},
		{name: "object where scalar", pattern: `{"source":{"x":["y"]}}`, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p map[string]any
			if err := json.Unmarshal([]byte(tt.pattern), &p); err != nil {
				t.Fatal(err)
			}
			c, err := Compile(p)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.MatchJSON([]byte(statusChange))
			if err != nil || got != tt.want {
				t.Fatalf("match = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestCompileRefusesWhatItCannotMatch(t *testing.T) {
	for _, pattern := range []string{
		`{}`, `{"source":"aws.states"}`, `{"source":[]}`, `{"source":[{"wildcard":"a*"}]}`,
		`{"source":[{"prefix":1}]}`, `{"n":[{"numeric":[">"]}]}`, `{"n":[{"numeric":["~",1]}]}`, `{"s":[{"prefix":"a","suffix":"b"}]}`,
		// EventBridge refuses arrays and objects as match values; Match compared them with == and panicked.
		`{"a":[[1]]}`, `{"a":[{"anything-but":[{"b":1}]}]}`, `{"a":[{"anything-but":[[1]]}]}`,
	} {
		var p map[string]any
		if err := json.Unmarshal([]byte(pattern), &p); err != nil {
			t.Fatal(err)
		}
		if _, err := Compile(p); err == nil {
			t.Errorf("Compile(%s) accepted", pattern)
		}
	}
}

func TestPaths(t *testing.T) {
	var p map[string]any
	if err := json.Unmarshal([]byte(`{"source":["aws.states"],"detail":{"status":["FAILED"],"stateMachineArn":[{"prefix":"arn:"}],"error":[{"exists":false}]},"resources":["x"]}`), &p); err != nil {
		t.Fatal(err)
	}
	c, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(c.Paths())
	if want := `["detail.error","detail.stateMachineArn","detail.status","resources","source"]`; string(got) != want {
		t.Errorf("Paths() = %s, want %s", got, want)
	}
}

// TestLambdaFilterOnDynamoDBRecords: Lambda's event filtering of DynamoDB stream records shares EventBridge's
// syntax; the attribute values are objects ({"S": "…"}) whose type key holds the value, so anything-but sits in
// the array under that key. The pattern is the outcome relay's in template.yaml.
func TestLambdaFilterOnDynamoDBRecords(t *testing.T) {
	var p map[string]any
	pattern := `{"eventName":["MODIFY"],"dynamodb":{"NewImage":{"sk":{"S":["TRANSFER"]},"status":{"S":["COMPLETED","FAILED"]}},"OldImage":{"status":{"S":[{"anything-but":["COMPLETED","FAILED"]}]}}}}`
	if err := json.Unmarshal([]byte(pattern), &p); err != nil {
		t.Fatal(err)
	}
	c, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	record := func(name, oldStatus, newStatus, sk string) string {
		img := func(status string) string {
			if status == "" {
				return ""
			}
			return `{"pk":{"S":"TRANSFER#t1"},"sk":{"S":"` + sk + `"},"status":{"S":"` + status + `"},"amount":{"N":"100"}}`
		}
		d := `"Keys":{"pk":{"S":"TRANSFER#t1"},"sk":{"S":"` + sk + `"}}`
		if o := img(oldStatus); o != "" {
			d += `,"OldImage":` + o
		}
		if n := img(newStatus); n != "" {
			d += `,"NewImage":` + n
		}
		return `{"eventID":"0123456789abcdef0123456789abcdef","eventName":"` + name + `","eventVersion":"1.1","eventSource":"aws:dynamodb","awsRegion":"us-east-1","dynamodb":{` + d + `,"SequenceNumber":"000000000000000000001","SizeBytes":10,"StreamViewType":"NEW_AND_OLD_IMAGES"}}`
	}
	for _, tt := range []struct {
		name string
		rec  string
		want bool
	}{
		{"settled COMPLETED", record("MODIFY", "IN_PROGRESS", "COMPLETED", "TRANSFER"), true},
		{"settled FAILED", record("MODIFY", "RESERVED", "FAILED", "TRANSFER"), true},
		{"already settled (anything-but)", record("MODIFY", "COMPLETED", "COMPLETED", "TRANSFER"), false},
		{"FAILED to COMPLETED (anything-but)", record("MODIFY", "FAILED", "COMPLETED", "TRANSFER"), false},
		{"still in progress", record("MODIFY", "RESERVED", "IN_PROGRESS", "TRANSFER"), false},
		{"insert of a settled item: no OldImage", record("INSERT", "", "COMPLETED", "TRANSFER"), false},
		{"another item", record("MODIFY", "IN_PROGRESS", "COMPLETED", "LEG#DEBIT"), false},
		{"remove", record("REMOVE", "IN_PROGRESS", "", "TRANSFER"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.MatchJSON([]byte(tt.rec))
			if err != nil || got != tt.want {
				t.Errorf("match = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}
