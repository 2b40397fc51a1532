package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/transferflow/orchestrator/internal/apigw"
	"github.com/transferflow/orchestrator/internal/ledger"
	"github.com/transferflow/orchestrator/localaws/ddbserver"
)

// reportLine is Lambda's REPORT line, as `local invoke` prints it on standard error.
var reportLine = regexp.MustCompile(`(?m)^REPORT RequestId: [0-9a-f-]{36}\tDuration: [0-9.]+ ms\tBilled Duration: [0-9]+ ms\t` +
	`Memory Size: [0-9]+ MB\tMax Memory Used: [0-9]+ MB\tInit Duration: [0-9.]+ ms$`)

// invoked is what one `local invoke` printed.
type invoked struct {
	stdout []byte
	stderr string
}

// invoke runs `local invoke function --event events/event` as a user would, with the env vars file envVars ("" for
// none); it must exit 0 and print a REPORT line without a Status (the function ran and answered).
func invoke(t *testing.T, envVars, function, event string) invoked {
	t.Helper()
	args := []string{"invoke", function, "--event", filepath.Join(root, "events", event), "--template", filepath.Join(root, "template.yaml")}
	if envVars != "" {
		args = append(args, "--env-vars", envVars)
	}
	cmd := exec.Command(binary, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("local invoke %s %s: %v\n%s", function, event, err, stderr.String())
	}
	if !reportLine.MatchString(stderr.String()) {
		t.Fatalf("local invoke %s %s: no REPORT line on stderr:\n%s", function, event, stderr.String())
	}
	return invoked{stdout: stdout.Bytes(), stderr: stderr.String()}
}

// proxyResponse decodes the orchestrator's answer.
func (inv invoked) proxyResponse(t *testing.T) events.APIGatewayProxyResponse {
	t.Helper()
	var r events.APIGatewayProxyResponse
	if err := json.Unmarshal(inv.stdout, &r); err != nil || r.StatusCode == 0 {
		t.Fatalf("not an API Gateway proxy response: %s (%v)\n%s", inv.stdout, err, inv.stderr)
	}
	return r
}

// body decodes a JSON response body.
func body(t *testing.T, r events.APIGatewayProxyResponse) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.Body), &m); err != nil {
		t.Fatalf("body %q: %v", r.Body, err)
	}
	return m
}

// localEnvVars is events/env.json pointed at s: only host:port of each endpoint is rewritten.
func localEnvVars(t *testing.T, s *stack) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "events", "env.json"))
	if err != nil {
		t.Fatal(err)
	}
	hostPort := func(u string) string { return strings.TrimPrefix(u, "http://") }
	out := strings.NewReplacer(
		"host.docker.internal:8000", hostPort(s.DynamoDB),
		"host.docker.internal:8083", hostPort(s.SFN),
		"host.docker.internal:3000", hostPort(s.API),
		"host.docker.internal:8084", hostPort(s.Events),
	).Replace(string(b))
	path := filepath.Join(t.TempDir(), "env.json")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// orphan reserves a transfer of the local caller created minutes ago whose workflow never started, as a crash of the
// orchestrator between its reservation and its StartExecution leaves one, for the reconciler's sweep to find.
func orphan(t *testing.T, s *stack, amount int64) string {
	t.Helper()
	var req events.APIGatewayProxyRequest
	req.RequestContext.Identity.UserArn = "arn:aws:iam::000000000000:user/local"
	scope, err := apigw.CallerScope(req)
	if err != nil {
		t.Fatal(err)
	}
	id, err := ledger.NewTransferID(ledger.KeyHash(scope, "e2e-orphan"), nil)
	if err != nil {
		t.Fatal(err)
	}
	created := time.Now().Add(-3 * time.Minute) // older than the template's ORPHAN_AFTER (2m)
	rec := ledger.NewTransferRecord(ledger.Transfer{
		TransferID: id, Scope: scope, IdempotencyKey: "e2e-orphan", SourceAccountID: "acc-alice", DestinationAccountID: "acc-bob",
		Amount: amount, Currency: "EUR", ExecutionArn: "arn:aws:states:us-east-1:000000000000:execution:TransferStateMachine:" + id,
	}, created, 168*time.Hour)
	store := ledger.NewStore(ddbserver.NewClient(s.DynamoDB, nil), "TransfersTable")
	if _, ok, err := store.Reserve(context.Background(), rec, created); err != nil || !ok {
		t.Fatalf("reserve the orphan: %v %v", ok, err)
	}
	return id
}

// TestInvokeExamples is `make invoke-examples`: a fresh stack seeded with events/local-transfers.json, then every
// event of events/ through `local invoke` with events/env.json, in the order docs/local-stack.md gives, each outcome checked.
func TestInvokeExamples(t *testing.T) {
	t.Parallel()
	// The stack's own sweep must not run during the test: the scheduled event's invocation is the one that sweeps.
	s := startStack(t, "--seed-transfers", filepath.Join(root, "events", "local-transfers.json"), "--sweep-interval", "1h")
	envVars := localEnvVars(t, s)
	const (
		completed = "tr_samlocalinvokecompleted222examplefixture22"
		timedOut  = "tr_samlocalinvoketimedout2222examplefixture22"
	)
	ran := map[string]bool{}
	run := func(function, event string) invoked {
		t.Helper()
		ran[event] = true
		return invoke(t, envVars, function, event)
	}
	leg := func(function, event string) map[string]any {
		t.Helper()
		var res map[string]any
		inv := run(function, event)
		if err := json.Unmarshal(inv.stdout, &res); err != nil || res["errorType"] != nil {
			t.Fatalf("%s: %s\n%s", event, inv.stdout, inv.stderr)
		}
		return res
	}

	// The orchestrator: the API's answers.
	created := run("OrchestratorFunction", "orchestrator-new-transfer.json").proxyResponse(t)
	if created.StatusCode != http.StatusAccepted {
		t.Fatalf("new transfer: %d %s", created.StatusCode, created.Body)
	}
	id := body(t, created)["transferId"].(string)
	s.waitCompleted("the new transfer's workflow", id)
	replay := run("OrchestratorFunction", "orchestrator-replay.json").proxyResponse(t)
	if replay.StatusCode != http.StatusOK || replay.Headers["Idempotent-Replayed"] != "true" || body(t, replay)["transferId"] != id {
		t.Errorf("replay: %d %v %s", replay.StatusCode, replay.Headers, replay.Body)
	}
	for event, code := range map[string]string{"orchestrator-bad-body.json": "VALIDATION_ERROR", "orchestrator-missing-key.json": "IDEMPOTENCY_KEY_MISSING"} {
		r := run("OrchestratorFunction", event).proxyResponse(t)
		if r.StatusCode != http.StatusBadRequest || r.Headers["Content-Type"] != "application/problem+json" || body(t, r)["code"] != code {
			t.Errorf("%s: %d %v %s", event, r.StatusCode, r.Headers, r.Body)
		}
	}
	got := run("OrchestratorFunction", "orchestrator-get-transfer.json").proxyResponse(t)
	if b := body(t, got); got.StatusCode != http.StatusOK || b["transferId"] != completed || b["status"] != "COMPLETED" {
		t.Errorf("get transfer: %d %s", got.StatusCode, got.Body)
	}

	// The legs, in order: debit.json before credit.json (same transfer); refund.json's transfer was seeded debited.
	// Seeded balances: source 10000 - 2000 - 3000 - 500 = 4500, destination 500.
	for _, step := range []struct {
		function, event, leg, account string
		balance                       int64
	}{
		{"DebitFunction", "debit.json", "DEBIT", "acc-fixture-source", 4500 - 1250},
		{"CreditFunction", "credit.json", "CREDIT", "acc-fixture-destination", 500 + 1250},
		{"CreditFunction", "refund.json", "REFUND", "acc-fixture-source", 4500 - 1250 + 2000},
	} {
		res := leg(step.function, step.event)
		if res["leg"] != step.leg || res["balanceAfter"] != nil || s.balance(step.account) != step.balance {
			t.Errorf("%s: %v; %s has %d, want %d", step.event, res, step.account, s.balance(step.account), step.balance)
		}
	}

	// The reconciler: the timed-out execution's transfer is refunded and settled FAILED.
	inv := run("TimeoutReconcilerFunction", "timeout-reconciler-execution-timed-out.json")
	if strings.TrimSpace(string(inv.stdout)) != "null" {
		t.Errorf("timed out: %s", inv.stdout)
	}
	tr := s.do(http.MethodGet, "/transfers/"+timedOut, nil, nil)
	failure, _ := tr.Body["failure"].(map[string]any)
	if tr.Body["status"] != "FAILED" || failure["code"] != "TIMED_OUT" || s.balance("acc-fixture-source") != 4500-1250+2000+3000 {
		t.Errorf("timed-out transfer after the event: %s; source %d", tr.RawBody, s.balance("acc-fixture-source"))
	}
	// The scheduled sweep re-drives a transfer whose workflow never started, which then completes.
	stuck := orphan(t, s, 700)
	inv = run("TimeoutReconcilerFunction", "timeout-reconciler-scheduled.json")
	if strings.TrimSpace(string(inv.stdout)) != "null" || !strings.Contains(inv.stderr, `"workflow re-driven"`) || !strings.Contains(inv.stderr, stuck) {
		t.Errorf("scheduled: %s\n%s", inv.stdout, inv.stderr)
	}
	if tr := s.waitTerminal(stuck, settle); tr["status"] != "COMPLETED" {
		t.Errorf("the re-driven transfer ended %v", tr)
	}

	// The outcome relay: the stream record of the fixture's settlement publishes its outcome event once more (the
	// stack's own mapping published it when the fixture was seeded).
	eventsOf := func(id string) []outcome {
		var out []outcome
		for _, ev := range s.outcomeEvents() {
			if ev.Detail["transferId"] == id {
				out = append(out, ev)
			}
		}
		return out
	}
	before := len(eventsOf(completed))
	inv = run("OutcomeRelayFunction", "outcome-relay-settled.json")
	var relayed struct {
		BatchItemFailures []any `json:"batchItemFailures"`
	}
	if err := json.Unmarshal(inv.stdout, &relayed); err != nil || len(relayed.BatchItemFailures) != 0 {
		t.Errorf("outcome relay: %s\n%s", inv.stdout, inv.stderr)
	}
	published := eventsOf(completed)
	if len(published) != before+1 || published[before].DetailType != "Transfer Completed" ||
		published[before].Detail["amount"] != float64(500) || published[before].Detail["completedAt"] != "2026-11-20T10:00:00.850Z" {
		t.Errorf("outcome events of %s: %+v, want one more Transfer Completed of 500, completed as the event's record says", completed, published)
	}

	// Every event of events/ was invoked.
	files, err := filepath.Glob(filepath.Join(root, "events", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		if !ran[name] && !slices.Contains([]string{"env.json", "local-accounts.json", "local-transfers.json"}, name) {
			t.Errorf("events/%s is not exercised by this test", name)
		}
	}
}

// TestInvokeWithoutEnvVars: without env.json, STATE_MACHINE_ARN is the logical id SAM gives an unresolvable !Ref (for
// the orchestrator, the state machine's alias TransferStateMachineAliaslive, which SAM generates); the orchestrator
// starts anyway and answers the invocation with a ConfigurationError naming the variable.
func TestInvokeWithoutEnvVars(t *testing.T) {
	t.Parallel()
	inv := invoke(t, "", "OrchestratorFunction", "orchestrator-new-transfer.json")
	var doc struct{ ErrorType, ErrorMessage string }
	if err := json.Unmarshal(inv.stdout, &doc); err != nil || doc.ErrorType != "ConfigurationError" ||
		!strings.Contains(doc.ErrorMessage, `STATE_MACHINE_ARN="TransferStateMachineAliaslive"`) {
		t.Errorf("stdout %s (%v)\n%s", inv.stdout, err, inv.stderr)
	}
}
