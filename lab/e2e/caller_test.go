package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// signed sends a request signed with SigV4 by the AWS SDK's own signer, as a client with these credentials would.
func (s *stack) signed(creds aws.Credentials, method, path string, body []byte, headers map[string]string) response {
	s.t.Helper()
	req, err := http.NewRequest(method, s.API+path, strings.NewReader(string(body)))
	if err != nil {
		s.t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), "execute-api", "us-east-1", time.Now()); err != nil {
		s.t.Fatal(err)
	}
	return s.send(req)
}

// TestAssumedRoleRetryFromANewSession: a client on an assumed role opens its own account, submits a transfer out of
// it, gets fresh credentials (a new session, as after a cold start or a new `aws sts assume-role`) and retries with
// the same Idempotency-Key: the retry is a replay of the same transfer and one execution runs. Another role with the
// same key is another caller: a new transfer, which cannot spend the first role's account.
func TestAssumedRoleRetryFromANewSession(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	// Temporary credentials: an ASIA key and a session token; locally the token names the role (docs/local-stack.md).
	session := func(key, role string) aws.Credentials {
		return aws.Credentials{AccessKeyID: key, SecretAccessKey: "secret-" + key, SessionToken: role}
	}
	jsonHeaders := func(key string) map[string]string {
		return map[string]string{"Content-Type": "application/json", "Idempotency-Key": key}
	}
	open := s.signed(session("ASIAOPENINGSESSION01", "payments-batch"), http.MethodPost, "/accounts",
		[]byte(`{"accountId":"acc-payroll","currency":"EUR"}`), jsonHeaders("open-payroll"))
	if open.Status != http.StatusCreated {
		t.Fatalf("the role opens acc-payroll: %d %s", open.Status, open.RawBody)
	}
	s.waitCompleted("funding acc-payroll", s.submitAccepted("funding acc-payroll", "fund-payroll", transferBody("acc-alice", "acc-payroll", 2000, "EUR")))

	body, _ := json.Marshal(transferBody("acc-payroll", "acc-bob", 777, "EUR"))
	post := func(creds aws.Credentials) response {
		return s.signed(creds, http.MethodPost, "/transfers", body, jsonHeaders("payroll-2026-11"))
	}
	first := post(session("ASIAFIRSTSESSION0001", "payments-batch"))
	if first.Status != http.StatusAccepted {
		t.Fatalf("first session: %d %s", first.Status, first.RawBody)
	}
	id := first.Body["transferId"].(string)
	wait := func(creds aws.Credentials, id string) map[string]any {
		t.Helper()
		return s.waitTerminalAs(func() response { return s.signed(creds, http.MethodGet, "/transfers/"+id, nil, nil) }, id, settle)
	}
	if tr := wait(session("ASIAFIRSTSESSION0001", "payments-batch"), id); tr["status"] != "COMPLETED" {
		t.Fatalf("the role's transfer out of its own account: %v", tr)
	}

	retry := post(session("ASIASECONDSESSION002", "payments-batch"))
	if retry.Status != http.StatusOK || retry.Header.Get("Idempotent-Replayed") != "true" || retry.Body["transferId"] != id {
		t.Fatalf("retry from a new session of the same role: %d %v %s, want a 200 replay of %s", retry.Status, retry.Header, retry.RawBody, id)
	}
	if r := s.signed(session("ASIATHIRDSESSION0003", "payments-batch"), http.MethodGet, "/transfers/"+id, nil, nil); r.Status != http.StatusOK {
		t.Errorf("GET from a third session: %d %s", r.Status, r.RawBody)
	}

	other := post(session("ASIAOTHERROLE0000004", "refunds-batch"))
	if other.Status != http.StatusAccepted || other.Body["transferId"] == id {
		t.Fatalf("another role with the same key: %d %s, want a new transfer", other.Status, other.RawBody)
	}
	if r := s.signed(session("ASIAOTHERROLE0000005", "refunds-batch"), http.MethodGet, "/transfers/"+id, nil, nil); r.Status != http.StatusNotFound {
		t.Errorf("another role reading the first role's transfer: %d, want 404", r.Status)
	}
	tr := wait(session("ASIAOTHERROLE0000004", "refunds-batch"), other.Body["transferId"].(string))
	if failure, _ := tr["failure"].(map[string]any); tr["status"] != "FAILED" || failure["code"] != "ACCOUNT_NOT_FOUND" {
		t.Errorf("another role spending acc-payroll: %v, want FAILED ACCOUNT_NOT_FOUND", tr)
	}

	names := map[string]bool{}
	for _, e := range s.executions() {
		names[aws.ToString(e.Name)] = true
	}
	if len(names) != 3 || !names[id] {
		t.Errorf("executions = %v, want the funding's, the role's transfer's and the other role's", names)
	}
	if a := s.balance("acc-payroll"); a != 2000-777 {
		t.Errorf("acc-payroll %d, want one transfer of 777 out of 2000", a)
	}
}
