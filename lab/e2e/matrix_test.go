package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// matrixRow is one row of docs/security.md's authorization matrix: it runs the row's request and checks its answer.
// Rows run in order, each seeing what the rows before it did.
type matrixRow struct {
	id string
	// forbidden rows must change nothing in the table but, at most, the caller's own transfer record and legs-free
	// idempotency items (a transfer accepted and then FAILED with no leg writes its own record).
	forbidden bool
	run       func(t *testing.T, m *matrix)
}

// matrix is the state the rows share: the stack, its callers, and the transfers the rows submitted.
type matrix struct {
	s                                        *stack
	alice, bob, operator, unsigned, outsider caller
	t1                                       string
	// missingAccount, missingListing and missingTransfer are what a caller gets for an account, a listing or a
	// transfer that does not exist: what another owner's must get, word for word.
	missingAccount, missingListing, missingTransfer response
}

// TestAuthorizationMatrix drives every row of docs/security.md's authorization matrix against bin/local, as a
// separate process, with the callers the page names: two clients (an IAM user, and an assumed role whose session
// changes on every request), an operator, the unsigned caller, a malformed signature and another account's role. Every
// allowed row succeeds; every forbidden row answers as documented and changes nothing in the table but, at most, the
// forbidden caller's own transfer record (scanned before and after).
func TestAuthorizationMatrix(t *testing.T) {
	t.Parallel()
	s := startStack(t, "--operator", operatorCaller)
	outsider := roleCaller("outsider", "arn:aws:iam::111122223333:role/outsider")
	outsider.scope = "iam:arn:aws:sts::111122223333:assumed-role/outsider"
	m := &matrix{s: s, alice: userCaller("alice"), bob: roleCaller("bob", "bob-app"), operator: userCaller("operator"),
		unsigned: unsignedCaller, outsider: outsider}
	m.missingAccount = m.bob.send(s, http.MethodGet, "/accounts/acc-none", nil, nil)
	m.missingListing = m.bob.send(s, http.MethodGet, "/accounts/acc-none/transfers", nil, nil)
	m.missingTransfer = m.bob.send(s, http.MethodGet, "/transfers/tr_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", nil, nil)
	// acc-legacy was written before owners: no owner, a balance the operator funds below (O5 funds acc-alice-1).
	if _, err := s.store().CreateAccount(context.Background(), "acc-legacy", "EUR", 0, time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, row := range matrixRows() {
		t.Run(row.id, func(t *testing.T) {
			before := s.tableItems(t)
			row.run(t, m)
			if !row.forbidden {
				return
			}
			after := s.tableItems(t)
			for k, v := range before {
				w, ok := after[k]
				if !ok || !sameItem(v, w) {
					t.Errorf("forbidden row %s changed %s", row.id, k)
				}
			}
			for k, it := range after {
				if _, ok := before[k]; ok {
					continue
				}
				// A forbidden transfer is accepted and settles FAILED: its own record, and nothing else (no leg).
				if !strings.HasPrefix(k, "TRANSFER#") || !failedWithoutLegs(t, it) {
					t.Errorf("forbidden row %s wrote %s", row.id, k)
				}
			}
		})
	}
}

// TestAuthorizationMatrixIsDocumented: the matrix rows of docs/security.md and the rows TestAuthorizationMatrix runs
// are the same, so no row is documented without a test or tested without being documented.
func TestAuthorizationMatrixIsDocumented(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(root, "docs", "security.md"))
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, m := range regexp.MustCompile(`(?m)^\| ([A-Z][0-9]+) \|`).FindAllSubmatch(b, -1) {
		documented = append(documented, string(m[1]))
	}
	var tested []string
	for _, r := range matrixRows() {
		tested = append(tested, r.id)
	}
	if !slices.Equal(documented, tested) {
		t.Errorf("docs/security.md's matrix rows %v, TestAuthorizationMatrix's %v: want the same, in order", documented, tested)
	}
}

func matrixRows() []matrixRow {
	return []matrixRow{
		{id: "A1", run: func(t *testing.T, m *matrix) {
			m.open(t, m.alice, "acc-alice-1", http.StatusCreated)
			m.open(t, m.bob, "acc-bob-1", http.StatusCreated)
			if owner := m.s.owner(t, "acc-alice-1"); owner != m.alice.scope {
				t.Errorf("acc-alice-1's owner %q, want alice's scope", owner)
			}
		}},
		{id: "A2", run: func(t *testing.T, m *matrix) {
			m.want(t, m.alice.send(m.s, http.MethodGet, "/accounts/acc-alice-1", nil, nil), http.StatusOK, "")
		}},
		{id: "A3", forbidden: true, run: func(t *testing.T, m *matrix) {
			m.asMissing(t, m.bob.send(m.s, http.MethodGet, "/accounts/acc-alice-1", nil, nil), m.missingAccount)
		}},
		{id: "A4", forbidden: true, run: func(t *testing.T, m *matrix) {
			m.asMissing(t, m.bob.send(m.s, http.MethodGet, "/accounts/acc-alice-1/transfers", nil, nil), m.missingListing)
		}},
		{id: "A5", forbidden: true, run: func(t *testing.T, m *matrix) {
			m.asMissing(t, m.unsigned.send(m.s, http.MethodGet, "/accounts/acc-alice-1", nil, nil), m.missingAccount)
		}},
		{id: "A6", forbidden: true, run: func(t *testing.T, m *matrix) {
			r := m.open(t, m.bob, "acc-alice-1", http.StatusConflict)
			m.want(t, r, http.StatusConflict, "ACCOUNT_EXISTS")
			if bytes.Contains(r.RawBody, []byte("balance")) || bytes.Contains(r.RawBody, []byte(m.alice.scope)) {
				t.Errorf("the conflict shows the account: %s", r.RawBody)
			}
		}},
		{id: "A7", forbidden: true, run: func(t *testing.T, m *matrix) {
			r := m.alice.send(m.s, http.MethodPost, "/accounts", map[string]any{"accountId": "funding-alice", "currency": "EUR", "kind": "funding"},
				map[string]string{"Idempotency-Key": "a7"})
			m.want(t, r, http.StatusForbidden, "OPERATOR_REQUIRED")
		}},
		{id: "A8", forbidden: true, run: func(t *testing.T, m *matrix) {
			r := m.alice.send(m.s, http.MethodPost, "/accounts", map[string]any{"currency": "EUR", "owner": operatorCaller, "floor": -5},
				map[string]string{"Idempotency-Key": "a8"})
			m.want(t, r, http.StatusBadRequest, "VALIDATION_ERROR")
			if !bytes.Contains(r.RawBody, []byte(`"field":"owner"`)) || !bytes.Contains(r.RawBody, []byte(`"field":"floor"`)) {
				t.Errorf("errors do not name owner and floor: %s", r.RawBody)
			}
		}},
		{id: "T1", run: func(t *testing.T, m *matrix) {
			// O5 funds acc-alice-1 later; until then it has nothing, so the operator funds it here first.
			m.settled(t, m.operator, "/operator/transfers", "t1-fund", "funding-EUR", "acc-alice-1", 5000, "COMPLETED", "")
			m.t1 = m.settled(t, m.alice, "/transfers", "t1", "acc-alice-1", "acc-bob-1", 1000, "COMPLETED", "")
		}},
		{id: "T2", forbidden: true, run: func(t *testing.T, m *matrix) {
			stolen := m.settled(t, m.bob, "/transfers", "t2", "acc-alice-1", "acc-bob-1", 10, "FAILED", "ACCOUNT_NOT_FOUND")
			missing := m.settled(t, m.bob, "/transfers", "t2-missing", "acc-none", "acc-bob-1", 10, "FAILED", "ACCOUNT_NOT_FOUND")
			if got, want := m.failureMessage(t, m.bob, stolen, "acc-alice-1"), m.failureMessage(t, m.bob, missing, "acc-none"); got != want {
				t.Errorf("failure of a transfer out of another's account %q, out of a missing one %q: want the same", got, want)
			}
		}},
		{id: "T3", forbidden: true, run: func(t *testing.T, m *matrix) {
			m.settled(t, m.bob, "/transfers", "t3", "funding-EUR", "acc-bob-1", 10, "FAILED", "ACCOUNT_NOT_FOUND")
		}},
		{id: "T4", forbidden: true, run: func(t *testing.T, m *matrix) {
			m.settled(t, m.bob, "/transfers", "t4", "acc-legacy", "acc-bob-1", 10, "FAILED", "ACCOUNT_NOT_FOUND")
		}},
		{id: "T5", forbidden: true, run: func(t *testing.T, m *matrix) {
			m.asMissing(t, m.bob.send(m.s, http.MethodGet, "/transfers/"+m.t1, nil, nil), m.missingTransfer)
		}},
		{id: "T6", forbidden: true, run: func(t *testing.T, m *matrix) {
			r := m.bob.send(m.s, http.MethodGet, "/transfers/"+m.t1+"/history", nil, nil)
			m.asMissing(t, r, m.bob.send(m.s, http.MethodGet, "/transfers/tr_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/history", nil, nil))
		}},
		{id: "T7", run: func(t *testing.T, m *matrix) {
			r := m.bob.send(m.s, http.MethodGet, "/accounts/acc-bob-1/transfers", nil, nil)
			m.want(t, r, http.StatusOK, "")
			if !bytes.Contains(r.RawBody, []byte(m.t1)) || bytes.Contains(r.RawBody, []byte("balance")) || bytes.Contains(r.RawBody, []byte(m.alice.scope)) {
				t.Errorf("bob's listing: %s, want T1's CREDIT without acc-alice-1's balance or owner", r.RawBody)
			}
		}},
		{id: "T8", forbidden: true, run: func(t *testing.T, m *matrix) {
			r := m.alice.send(m.s, http.MethodPost, "/transfers", transferBody("acc-alice-1", "acc-bob-1", 1_000_000_001, "EUR"),
				map[string]string{"Idempotency-Key": "t8"})
			m.want(t, r, http.StatusBadRequest, "VALIDATION_ERROR")
			if !bytes.Contains(r.RawBody, []byte(`"field":"amount"`)) {
				t.Errorf("errors do not name amount: %s", r.RawBody)
			}
		}},
		{id: "T9", run: func(t *testing.T, m *matrix) {
			first := m.settled(t, m.bob, "/transfers", "t9", "acc-bob-1", "acc-alice-1", 100, "COMPLETED", "")
			r := m.bob.send(m.s, http.MethodPost, "/transfers", transferBody("acc-bob-1", "acc-alice-1", 100, "EUR"),
				map[string]string{"Idempotency-Key": "t9"})
			if r.Status != http.StatusOK || r.Header.Get("Idempotent-Replayed") != "true" || r.Body["transferId"] != first {
				t.Errorf("bob's retry from a new session: %d %s, want a replay of %s", r.Status, r.RawBody, first)
			}
		}},
		{id: "O1", forbidden: true, run: func(t *testing.T, m *matrix) {
			m.denied(t, m.alice.send(m.s, http.MethodPost, "/operator/accounts", map[string]any{"accountId": "funding-x", "currency": "EUR", "kind": "funding"},
				map[string]string{"Idempotency-Key": "o1"}), true)
		}},
		{id: "O2", forbidden: true, run: func(t *testing.T, m *matrix) {
			m.denied(t, m.alice.send(m.s, http.MethodPost, "/operator/transfers", transferBody("funding-EUR", "acc-alice-1", 10, "EUR"),
				map[string]string{"Idempotency-Key": "o2"}), true)
		}},
		{id: "O3", forbidden: true, run: func(t *testing.T, m *matrix) {
			m.denied(t, m.bob.send(m.s, http.MethodGet, "/operator/accounts/acc-alice-1", nil, nil), true)
		}},
		{id: "O4", run: func(t *testing.T, m *matrix) {
			r := m.operator.send(m.s, http.MethodPost, "/operator/accounts",
				map[string]any{"accountId": "funding-small", "currency": "EUR", "kind": "funding", "floor": -10000},
				map[string]string{"Idempotency-Key": "o4"})
			m.want(t, r, http.StatusCreated, "")
			if r.Body["floor"] != -10000.0 || r.Body["owner"] != nil {
				t.Errorf("funding account: %s, want floor -10000 and no owner", r.RawBody)
			}
		}},
		{id: "O5", run: func(t *testing.T, m *matrix) {
			m.settled(t, m.operator, "/operator/transfers", "o5", "funding-small", "acc-alice-1", 9000, "COMPLETED", "")
			m.settled(t, m.operator, "/operator/transfers", "o5-legacy", "funding-EUR", "acc-legacy", 700, "COMPLETED", "")
		}},
		{id: "O6", forbidden: true, run: func(t *testing.T, m *matrix) {
			m.settled(t, m.operator, "/operator/transfers", "o6", "acc-alice-1", "acc-bob-1", 10, "FAILED", "ACCOUNT_NOT_FOUND")
		}},
		{id: "O7", forbidden: true, run: func(t *testing.T, m *matrix) {
			// funding-small is at -9000 with a floor of -10000: 1001 more would cross it.
			m.settled(t, m.operator, "/operator/transfers", "o7", "funding-small", "acc-alice-1", 1001, "FAILED", "INSUFFICIENT_FUNDS")
		}},
		{id: "O8", run: func(t *testing.T, m *matrix) {
			r := m.operator.send(m.s, http.MethodGet, "/operator/accounts/acc-alice-1", nil, nil)
			m.want(t, r, http.StatusOK, "")
			if r.Body["owner"] != m.alice.scope {
				t.Errorf("operator's view: %s, want owner %s", r.RawBody, m.alice.scope)
			}
		}},
		{id: "O9", run: func(t *testing.T, m *matrix) {
			m.want(t, m.bob.send(m.s, http.MethodGet, "/accounts/acc-legacy", nil, nil), http.StatusNotFound, "ACCOUNT_NOT_FOUND")
			r := m.operator.send(m.s, http.MethodPut, "/operator/accounts/acc-legacy/owner",
				map[string]any{"owner": "arn:aws:sts::000000000000:assumed-role/bob-app/any-session"}, nil)
			m.want(t, r, http.StatusOK, "")
			if r := m.bob.send(m.s, http.MethodGet, "/accounts/acc-legacy", nil, nil); r.Status != http.StatusOK || r.Body["balance"] != 700.0 {
				t.Errorf("bob reads acc-legacy once his: %d %s", r.Status, r.RawBody)
			}
		}},
		{id: "O10", forbidden: true, run: func(t *testing.T, m *matrix) {
			r := m.operator.send(m.s, http.MethodPut, "/operator/accounts/acc-legacy/owner", map[string]any{"owner": "arn:aws:iam::000000000000:user/alice"}, nil)
			m.want(t, r, http.StatusConflict, "ACCOUNT_HAS_OWNER")
		}},
		{id: "O11", run: func(t *testing.T, m *matrix) {
			r := m.operator.send(m.s, http.MethodGet, "/operator/transfers/"+m.t1, nil, nil)
			m.want(t, r, http.StatusOK, "")
			if r.Body["transferId"] != m.t1 {
				t.Errorf("operator reads T1: %s", r.RawBody)
			}
		}},
		{id: "G1", forbidden: true, run: func(t *testing.T, m *matrix) {
			r := m.s.raw(http.MethodGet, "/accounts/acc-alice-1", nil, map[string]string{
				"Authorization": "AWS4-HMAC-SHA256 Credential=alice/20261128/us-east-1/execute-api/aws4_request, SignedHeaders=host, Signature=not-hex",
				"X-Amz-Date":    "20261128T000000Z"})
			if r.Status != http.StatusForbidden || r.Header.Get("Content-Type") != "application/problem+json" {
				t.Errorf("a malformed signature: %d %s, want API Gateway's 403", r.Status, r.RawBody)
			}
		}},
		{id: "G2", forbidden: true, run: func(t *testing.T, m *matrix) {
			m.denied(t, m.outsider.send(m.s, http.MethodGet, "/accounts/acc-alice-1", nil, nil), true)
		}},
		{id: "G3", forbidden: true, run: func(t *testing.T, m *matrix) {
			m.want(t, m.alice.send(m.s, http.MethodGet, "/accounts/acc-alice-1/owner", nil, nil), http.StatusForbidden, "MISSING_AUTHENTICATION_TOKEN")
		}},
	}
}

// open opens id for c and checks the status.
func (m *matrix) open(t *testing.T, c caller, id string, want int) response {
	t.Helper()
	r := c.send(m.s, http.MethodPost, "/accounts", map[string]any{"accountId": id, "currency": "EUR"},
		map[string]string{"Idempotency-Key": "open-" + c.name + "-" + id})
	if r.Status != want {
		t.Fatalf("%s opens %s: %d %s, want %d", c.name, id, r.Status, r.RawBody, want)
	}
	return r
}

// want checks an answer's status and, when code is not empty, its problem code.
func (m *matrix) want(t *testing.T, r response, status int, code string) {
	t.Helper()
	if r.Status != status || code != "" && r.Body["code"] != code {
		t.Errorf("answer %d %s, want %d %s", r.Status, r.RawBody, status, code)
	}
}

// asMissing checks that r is word for word the answer for something that does not exist.
func (m *matrix) asMissing(t *testing.T, r, missing response) {
	t.Helper()
	if r.Status != missing.Status || !bytes.Equal(r.RawBody, missing.RawBody) {
		t.Errorf("answer %d %s, want what a missing one gets: %d %s", r.Status, r.RawBody, missing.Status, missing.RawBody)
	}
}

// denied checks API Gateway's ACCESS_DENIED, its message ending "with an explicit deny" when explicit.
func (m *matrix) denied(t *testing.T, r response, explicit bool) {
	t.Helper()
	m.want(t, r, http.StatusForbidden, "ACCESS_DENIED")
	if detail, _ := r.Body["detail"].(string); strings.HasSuffix(detail, "with an explicit deny") != explicit {
		t.Errorf("detail %q, want explicit deny %v", detail, explicit)
	}
}

// settled submits a transfer as c on route (the client's or the operator's), waits for it and checks its status and
// failure code; it returns the transfer id.
func (m *matrix) settled(t *testing.T, c caller, route, key, src, dst string, amount int64, status, code string) string {
	t.Helper()
	r := c.send(m.s, http.MethodPost, route, transferBody(src, dst, amount, "EUR"), map[string]string{"Idempotency-Key": key})
	if r.Status != http.StatusAccepted && r.Status != http.StatusOK {
		t.Fatalf("%s submits %s -> %s: %d %s", c.name, src, dst, r.Status, r.RawBody)
	}
	id := r.Body["transferId"].(string)
	tr := m.s.waitTerminalAs(func() response { return c.send(m.s, http.MethodGet, route+"/"+id, nil, nil) }, id, settle)
	failure, _ := tr["failure"].(map[string]any)
	if tr["status"] != status || code != "" && failure["code"] != code {
		t.Errorf("%s's transfer %s -> %s: %v, want %s %s", c.name, src, dst, tr, status, code)
	}
	return id
}

// failureMessage is the transfer's failure message with the account id and transfer id taken out, so that two
// failures can be compared.
func (m *matrix) failureMessage(t *testing.T, c caller, id, account string) string {
	t.Helper()
	r := c.send(m.s, http.MethodGet, "/transfers/"+id, nil, nil)
	msg, _ := r.Body["failure"].(map[string]any)["message"].(string)
	return strings.NewReplacer(account, "ACCOUNT", id, "ID").Replace(msg)
}

// sameItem compares two items as DynamoDB holds them.
func sameItem(a, b map[string]ddbtypes.AttributeValue) bool {
	var x, y map[string]any
	if attributevalue.UnmarshalMap(a, &x) != nil || attributevalue.UnmarshalMap(b, &y) != nil {
		return false
	}
	bx, _ := json.Marshal(x)
	by, _ := json.Marshal(y)
	return bytes.Equal(bx, by)
}

// failedWithoutLegs reports whether a transfer record item is FAILED with no ledger leg.
func failedWithoutLegs(t *testing.T, item map[string]ddbtypes.AttributeValue) bool {
	var r struct {
		SK     string   `dynamodbav:"sk"`
		Status string   `dynamodbav:"status"`
		Legs   []string `dynamodbav:"legs,stringset"`
	}
	if err := attributevalue.UnmarshalMap(item, &r); err != nil {
		t.Fatal(err)
	}
	return r.SK != "TRANSFER" || r.Status == "FAILED" && len(r.Legs) == 0
}
