package ddbserver_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/logging"

	"github.com/transferflow/orchestrator/localaws/ddbserver"
)

// TestServerDifferences pins, for the server the helpers start, each behaviour in which Dynoxide and DynamoDB Local
// answer differently (docs/dynamodb.md lists them with what the code does about each): `make test` checks
// Dynoxide's side, `make test-ddblocal` DynamoDB Local's. A server that changes shows up here first.
func TestServerDifferences(t *testing.T) {
	srv, tables := ddbserver.StartWithTablesT(t)
	table := aws.String(tables["TransfersTable"])
	local := srv.Store == ddbserver.DynamoDBLocal
	ctx := context.Background()
	wire := &recordingTransport{}
	var logged bytes.Buffer
	db := dynamodb.NewFromConfig(aws.Config{
		Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
		HTTPClient: &http.Client{Transport: wire}, Logger: logging.NewStandardLogger(&logged),
	}, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(srv.URL) })
	key := func(pk string) map[string]ddbtypes.AttributeValue {
		return map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: pk}, "sk": &ddbtypes.AttributeValueMemberS{Value: "x"}}
	}

	t.Run("GET / is a health check on Dynoxide only", func(t *testing.T) {
		resp, err := http.Get(srv.URL + "/")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		want := http.StatusOK
		if local {
			want = http.StatusBadRequest // MissingAuthenticationToken: StartDynamoDBLocal polls ListTables instead
		}
		if resp.StatusCode != want {
			t.Errorf("GET / = %d %s, want %d", resp.StatusCode, b, want)
		}
	})

	t.Run("x-amz-crc32 on every answer from Dynoxide, on successes only from DynamoDB Local", func(t *testing.T) {
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: key("a")}); err != nil {
			t.Fatal(err)
		}
		logged.Reset()
		_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: key("a"), ConditionExpression: aws.String("attribute_not_exists(pk)")})
		var ccf *ddbtypes.ConditionalCheckFailedException
		if !errors.As(err, &ccf) {
			t.Fatalf("conditional put: %v, want ConditionalCheckFailedException", err)
		}
		ok, failed := wire.crc32[0], wire.crc32[len(wire.crc32)-1]
		if !ok || failed == local {
			t.Errorf("x-amz-crc32 on the success %v, on the error %v; want true, %v", ok, failed, !local)
		}
		// The SDK's DynamoDB client checks the CRC32 of every answer, taking a missing header for 0, and logs the
		// mismatch as a warning when it closes the body; the error itself is decoded as usual.
		warned := strings.Contains(logged.String(), "response did not match expected checksum, 0,")
		if warned != local {
			t.Errorf("SDK log after the error: %q; want the checksum warning: %v", logged.String(), local)
		}
	})

	t.Run("transaction capacity: 2 units per item on Dynoxide, 2 units in all on DynamoDB Local", func(t *testing.T) {
		var got []string
		for _, n := range []int{1, 2, 4} {
			items := make([]ddbtypes.TransactWriteItem, n)
			for i := range items {
				items[i] = ddbtypes.TransactWriteItem{Put: &ddbtypes.Put{TableName: table, Item: key(fmt.Sprintf("t%d-%d", n, i))}}
			}
			out, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items, ReturnConsumedCapacity: ddbtypes.ReturnConsumedCapacityTotal})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range out.ConsumedCapacity {
				got = append(got, fmt.Sprintf("%g/%g", aws.ToFloat64(c.CapacityUnits), aws.ToFloat64(c.WriteCapacityUnits)))
			}
		}
		want := "[2/2 4/4 8/8]" // units/write units of 1, 2 and 4 items
		if local {
			want = "[2/0 2/0 2/0]" // and no WriteCapacityUnits
		}
		if fmt.Sprint(got) != want {
			t.Errorf("capacity of transactions of 1, 2, 4 puts = %v, want %s", got, want)
		}
	})

	t.Run("the missing table's message", func(t *testing.T) {
		_, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("NoSuchTable"), Key: key("a")})
		var rnf *ddbtypes.ResourceNotFoundException
		if !errors.As(err, &rnf) {
			t.Fatalf("GetItem on a missing table: %v, want ResourceNotFoundException", err)
		}
		want := "Requested resource not found"
		if local {
			want = "Cannot do operations on a non-existent table"
		}
		if rnf.ErrorMessage() != want {
			t.Errorf("message %q, want %q", rnf.ErrorMessage(), want)
		}
	})

	t.Run("one database whatever the credentials and region", func(t *testing.T) {
		// DynamoDB Local keeps a database per access key and region unless started with -sharedDb, as
		// StartDynamoDBLocal does, so that it serves every client the way Dynoxide does.
		other := dynamodb.NewFromConfig(aws.Config{Region: "eu-west-1", Credentials: credentials.NewStaticCredentialsProvider("other", "other", "")},
			func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(srv.URL) })
		if _, err := other.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: table}); err != nil {
			t.Errorf("another key in another region: %v", err)
		}
	})
}

// recordingTransport notes whether each answer carried x-amz-crc32.
type recordingTransport struct{ crc32 []bool }

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		r.crc32 = append(r.crc32, resp.Header.Get("X-Amz-Crc32") != "")
	}
	return resp, err
}
