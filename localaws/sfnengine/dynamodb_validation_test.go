package sfnengine_test

import (
	"strings"
	"testing"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// TestDynamoDBValidationIsTheService: a dynamodb:* request the SDK would refuse on the client (a required parameter
// null) goes to DynamoDB, and the task fails with the service's ValidationException in the Java SDK's format, as
// AWS records: DynamoDB.AmazonDynamoDBException, "1 validation error detected: Value null at 'item' failed to
// satisfy constraint: Member must not be null (Service: AmazonDynamoDBv2; Status Code: 400; …)".
func TestDynamoDBValidationIsTheService(t *testing.T) {
	eng := newEngine(t, sfnengine.Options{DynamoDB: startDynamo(t)})
	for _, tc := range []struct{ name, resource, param, member string }{
		{"putItem without an item", "putItem", "Item", "item"},
		{"getItem without a key", "getItem", "Key", "key"},
		{"deleteItem without a key", "deleteItem", "Key", "key"},
		{"updateItem without a key", "updateItem", "Key", "key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def := `{"StartAt":"P","States":{"P":{"Type":"Task","Resource":"arn:aws:states:::dynamodb:` + tc.resource + `",
			  "Parameters":{"TableName":"t","` + tc.param + `.$":"$.v"},"End":true}}}`
			rec := run(t, eng, def, `{"v":null}`)
			want := "1 validation error detected: Value null at '" + tc.member + "' failed to satisfy constraint: Member must not be null " +
				"(Service: AmazonDynamoDBv2; Status Code: 400; Error Code: ValidationException; Request ID: "
			if rec.Status != sfnengine.StatusFailed || deref(rec.Error) != "DynamoDB.AmazonDynamoDBException" || !strings.HasPrefix(deref(rec.Cause), want) {
				t.Fatalf("%s %s %q\nwant FAILED DynamoDB.AmazonDynamoDBException %q…", rec.Status, deref(rec.Error), deref(rec.Cause), want)
			}
		})
	}
}
