package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/transferflow/orchestrator/internal/ledger"
	"github.com/transferflow/orchestrator/localaws/ddbserver"
)

// operatorCaller is the principal the authorization tests' stacks name with --operator.
const operatorCaller = "arn:aws:iam::000000000000:user/operator"

// caller is one principal of the authorization tests, as the local gateway tells principals apart: an unsigned
// request is the IAM user local; a request signed with access key K is the IAM user K; temporary credentials (an
// ASIA key and a session token naming a role) are a session of that role. A role caller gets a new session on every
// request, as a client that refreshes its credentials does.
type caller struct {
	name string
	// scope is the caller scope the API gives it: the owner of the accounts it opens.
	scope string
	// user is the access key id of an IAM user; role the role of an assumed-role caller; neither: unsigned.
	user, role string
	sessions   *atomic.Int64
}

// userCaller is the IAM user name of the local account.
func userCaller(name string) caller {
	return caller{name: name, scope: "iam:arn:aws:iam::000000000000:user/" + name, user: name}
}

// roleCaller assumes role, a new session per request.
func roleCaller(name, role string) caller {
	return caller{name: name, scope: "iam:arn:aws:sts::000000000000:assumed-role/" + role, role: role, sessions: &atomic.Int64{}}
}

// unsignedCaller is the local gateway's unsigned caller, the IAM user local, which owns the seeded accounts.
var unsignedCaller = caller{name: "unsigned", scope: "iam:" + localCaller}

// send sends a request as c; body, when not nil, is JSON.
func (c caller) send(s *stack, method, path string, body any, headers map[string]string) response {
	s.t.Helper()
	h := map[string]string{}
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			s.t.Fatal(err)
		}
		h["Content-Type"] = "application/json"
	}
	for k, v := range headers {
		h[k] = v
	}
	switch {
	case c.user != "":
		return s.signed(aws.Credentials{AccessKeyID: c.user, SecretAccessKey: "secret-" + c.user}, method, path, b, h)
	case c.role != "":
		key := fmt.Sprintf("ASIA%016d", c.sessions.Add(1))
		return s.signed(aws.Credentials{AccessKeyID: key, SecretAccessKey: "secret-" + key, SessionToken: c.role}, method, path, b, h)
	}
	return s.raw(method, path, b, h)
}

// tableItems scans the stack's table: every item, as DynamoDB holds it, keyed by pk and sk.
func (s *stack) tableItems(t testing.TB) map[string]map[string]ddbtypes.AttributeValue {
	t.Helper()
	db := ddbserver.NewClient(s.DynamoDB, nil)
	items := map[string]map[string]ddbtypes.AttributeValue{}
	var start map[string]ddbtypes.AttributeValue
	for {
		out, err := db.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(table), ExclusiveStartKey: start, ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatalf("scan: %v", err)
		}
		for _, it := range out.Items {
			var key struct{ PK, SK string }
			_ = attributevalue.UnmarshalMap(map[string]ddbtypes.AttributeValue{"PK": it["pk"], "SK": it["sk"]}, &key)
			items[key.PK+"|"+key.SK] = it
		}
		if start = out.LastEvaluatedKey; len(start) == 0 {
			return items
		}
	}
}

// tableAccounts is every account in the table, by id.
func (s *stack) tableAccounts(t testing.TB) map[string]ledger.Account {
	return tableItemsOf(t, s, "ACCOUNT", func(a ledger.Account) string { return a.AccountID })
}

// tableRecords is every transfer record in the table, by transfer id.
func (s *stack) tableRecords(t testing.TB) map[string]ledger.Transfer {
	return tableItemsOf(t, s, "TRANSFER", func(r ledger.Transfer) string { return r.TransferID })
}

// tableItemsOf decodes every item of the table whose sort key is sk, keyed by id.
func tableItemsOf[T any](t testing.TB, s *stack, sk string, id func(T) string) map[string]T {
	t.Helper()
	out := map[string]T{}
	for _, it := range s.tableItems(t) {
		if v, ok := it["sk"].(*ddbtypes.AttributeValueMemberS); !ok || v.Value != sk {
			continue
		}
		var x T
		if err := attributevalue.UnmarshalMap(it, &x); err != nil {
			t.Fatal(err)
		}
		out[id(x)] = x
	}
	return out
}
