package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/transferflow/orchestrator/localaws/ddbserver"
)

const settle = 30 * time.Second

// TestSuccessfulTransferAndReplay: a transfer completes, moves the money once, has a complete audit trail, and a
// replay after completion answers 200 with the same transfer.
func TestSuccessfulTransferAndReplay(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	r := s.submit("e2e-success", transferBody("acc-alice", "acc-bob", 1250, "EUR"))
	if r.Status != http.StatusAccepted || r.Header.Get("Location") == "" {
		t.Fatalf("submit: %d %s", r.Status, r.RawBody)
	}
	id := r.Body["transferId"].(string)
	tr := s.waitTerminal(id, settle)
	if tr["status"] != "COMPLETED" || tr["completedAt"] == nil {
		t.Fatalf("transfer = %v", tr)
	}
	if a, b := s.balance("acc-alice"), s.balance("acc-bob"); a != 100000-1250 || b != 5000+1250 {
		t.Errorf("balances alice %d bob %d", a, b)
	}
	events, legs := s.history(id)
	var types []string
	for _, e := range events {
		types = append(types, e["type"].(string))
	}
	if types[0] != "ExecutionStarted" || types[len(types)-1] != "ExecutionSucceeded" || !slices.Contains(types, "TaskSucceeded") {
		t.Errorf("history types = %v", types)
	}
	for i, e := range events {
		if int(e["id"].(float64)) != i+1 {
			t.Errorf("event %d has id %v", i, e["id"])
		}
	}
	if len(legs) != 2 || legs["DEBIT"] == nil || legs["CREDIT"] == nil {
		t.Errorf("ledger = %v", legs)
	}

	replay := s.submit("e2e-success", transferBody("acc-alice", "acc-bob", 1250, "EUR"))
	if replay.Status != http.StatusOK || replay.Header.Get("Idempotent-Replayed") != "true" || replay.Body["transferId"] != id ||
		replay.Body["status"] != "COMPLETED" {
		t.Errorf("replay: %d %v %s", replay.Status, replay.Header, replay.RawBody)
	}
	if a := s.balance("acc-alice"); a != 100000-1250 {
		t.Errorf("the replay moved money: alice %d", a)
	}
}

// TestBusinessFailures: refused transfers end FAILED with their code and leave balances as they were.
func TestBusinessFailures(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	tests := []struct {
		name     string
		body     map[string]any
		code     string
		wantLegs []string
		message  string // a part of the failure message
	}{
		{name: "insufficient funds", body: transferBody("acc-bob", "acc-alice", 5001, "EUR"), code: "INSUFFICIENT_FUNDS"},
		{name: "unknown source account", body: transferBody("acc-nobody", "acc-alice", 10, "EUR"), code: "ACCOUNT_NOT_FOUND"},
		{name: "currency mismatch at the source", body: transferBody("acc-carol", "acc-alice", 10, "EUR"), code: "CURRENCY_MISMATCH"},
		// A transfer that could never be credited is refused inside the debit's own transaction: no money moves,
		// not even a debit and its refund, and the message names the account.
		{name: "currency mismatch at the destination", body: transferBody("acc-carol", "acc-alice", 10, "USD"), code: "CURRENCY_MISMATCH",
			message: "account acc-alice does not hold USD"},
		{name: "unknown destination account", body: transferBody("acc-alice", "acc-nobody", 10, "EUR"), code: "ACCOUNT_NOT_FOUND",
			message: "account acc-nobody"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.submit(fmt.Sprintf("e2e-fail-%d", i), tt.body)
			if r.Status != http.StatusAccepted {
				t.Fatalf("submit: %d %s", r.Status, r.RawBody)
			}
			id := r.Body["transferId"].(string)
			tr := s.waitTerminal(id, settle)
			failure, _ := tr["failure"].(map[string]any)
			msg, _ := failure["message"].(string)
			if tr["status"] != "FAILED" || failure["code"] != tt.code || msg == "" || !strings.Contains(msg, tt.message) {
				t.Errorf("transfer = %v, want FAILED %s", tr, tt.code)
			}
			_, legs := s.history(id)
			var got []string
			for leg := range legs {
				got = append(got, leg)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.wantLegs) {
				t.Errorf("legs = %v, want %v", got, tt.wantLegs)
			}
		})
	}
	for acct, want := range map[string]int64{"acc-alice": 100000, "acc-bob": 5000, "acc-carol": 7000} {
		if got := s.balance(acct); got != want {
			t.Errorf("%s balance %d, want %d", acct, got, want)
		}
	}
}

// TestPermanentCreditFailureIsRefunded: a credit that fails for good (forced with --fault) ends refunded, with
// the balances restored.
func TestPermanentCreditFailureIsRefunded(t *testing.T) {
	t.Parallel()
	s := startStack(t, "--fault", "credit:error=CreditRejected:leg=CREDIT")
	id := s.submitAccepted("submit", "e2e-refund", transferBody("acc-alice", "acc-bob", 700, "EUR"))
	tr := s.waitTerminal(id, settle)
	if failure, _ := tr["failure"].(map[string]any); tr["status"] != "FAILED" || failure["code"] != "CREDIT_FAILED_REFUNDED" {
		t.Fatalf("transfer = %v", tr)
	}
	_, legs := s.history(id)
	if len(legs) != 2 || legs["DEBIT"] == nil || legs["REFUND"] == nil {
		t.Errorf("ledger = %v, want DEBIT and REFUND", legs)
	}
	if a, b := s.balance("acc-alice"), s.balance("acc-bob"); a != 100000 || b != 5000 {
		t.Errorf("balances alice %d bob %d, want them restored", a, b)
	}
}

// TestTransientLambdaErrorsAreRetried: Lambda service errors on the debit are retried with backoff and the
// transfer still completes once.
func TestTransientLambdaErrorsAreRetried(t *testing.T) {
	t.Parallel()
	s := startStack(t, "--fault", "debit:error=Lambda.ServiceException:times=2")
	id := s.submitAccepted("submit", "e2e-retry", transferBody("acc-alice", "acc-bob", 100, "EUR"))
	s.waitCompleted("transfer", id)
	events, _ := s.history(id)
	failed := 0
	for _, e := range events {
		if e["type"] == "TaskFailed" {
			failed++
		}
	}
	if failed != 2 {
		t.Errorf("TaskFailed events = %d, want the 2 injected", failed)
	}
	if a := s.balance("acc-alice"); a != 100000-100 {
		t.Errorf("alice %d: the retried debit must apply once", a)
	}
}

// TestConcurrentSubmissionsWithDuplicates: 100 concurrent submissions over 40 keys give 40 transfers, each
// terminal, and the money invariants hold.
func TestConcurrentSubmissionsWithDuplicates(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	// On DynamoDB Local the burst's reservations can outlast the orchestrator's 10 s timeout on a loaded machine
	// (docs/dynamodb.md, difference 7): API Gateway's answer is then 502, which a client retries with the same key,
	// as the API contract tells it to. Dynoxide answers in time, and there a 502 stays a failure.
	store, err := ddbserver.TestStore()
	if err != nil {
		t.Fatal(err)
	}
	retry502 := store == ddbserver.DynamoDBLocal
	const n, keys = 100, 40
	var wg sync.WaitGroup
	var mu sync.Mutex
	ids := map[string]bool{}
	statuses := map[int]int{}
	retried := 0
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			from, to := "acc-alice", "acc-bob"
			if i%keys%3 == 0 {
				from, to = "acc-bob", "acc-erin"
			}
			key, body := fmt.Sprintf("e2e-burst-%d", i%keys), transferBody(from, to, int64(10+i%keys), "EUR")
			r := s.submit(key, body)
			for tries := 1; retry502 && r.Status == http.StatusBadGateway && tries < 5; tries++ {
				mu.Lock()
				retried++
				mu.Unlock()
				time.Sleep(500 * time.Millisecond)
				r = s.submit(key, body)
			}
			mu.Lock()
			defer mu.Unlock()
			statuses[r.Status]++
			if id, ok := r.Body["transferId"].(string); ok {
				ids[id] = true
			}
		}()
	}
	wg.Wait()
	t.Logf("answers by status: %v (%d retries of a 502)", statuses, retried)
	for status := range statuses {
		if status != http.StatusAccepted && status != http.StatusOK && status != http.StatusConflict {
			t.Errorf("unexpected status %d", status)
		}
	}
	if len(ids) != keys {
		t.Fatalf("distinct transfers = %d, want %d", len(ids), keys)
	}
	checkInvariants(t, s, ids)
}

// checkInvariants waits for every transfer to be terminal and checks the money invariants through the API:
// conservation, no overdraft, and agreement of each status with its ledger legs.
func checkInvariants(t *testing.T, s *stack, ids map[string]bool) {
	t.Helper()
	for id := range ids {
		tr := s.waitTerminal(id, settle)
		_, legs := s.history(id)
		switch tr["status"] {
		case "COMPLETED":
			if legs["DEBIT"] == nil || legs["CREDIT"] == nil || legs["REFUND"] != nil {
				t.Errorf("%s COMPLETED with legs %v", id, keysOf(legs))
			}
		case "FAILED":
			if legs["CREDIT"] != nil || (legs["DEBIT"] == nil) != (legs["REFUND"] == nil) {
				t.Errorf("%s FAILED with legs %v", id, keysOf(legs))
			}
		}
	}
	// The seed's balances were funded from funding-EUR (the only account that may be negative): the EUR balances,
	// funding-EUR's included, sum to 0, and the customer accounts to their seeded sum.
	var total, want int64
	for _, a := range accounts {
		b := s.balance(a["accountId"].(string))
		if b < 0 {
			t.Errorf("%s overdrawn: %d", a["accountId"], b)
		}
		if a["currency"] == "EUR" {
			total += b
			want += int64(a["balance"].(int))
		}
	}
	if total != want {
		t.Errorf("EUR customer balances sum to %d, want %d", total, want)
	}
	if funding := s.balance("funding-EUR"); total+funding != 0 {
		t.Errorf("EUR balances, funding-EUR's (%d) included, sum to %d, want 0", funding, total+funding)
	}
}

func keysOf(m map[string]map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestRestartMidBatch stops the stack while a batch is in flight and starts it again on the same --data-dir:
// every transfer still reaches a terminal state and the money invariants hold.
func TestRestartMidBatch(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel() // each has its own stack
			dir := t.TempDir()
			// Each credit takes 3 s: the batch's last transfers are still in theirs when the check below reaches
			// them, even on a loaded machine where the submits and reads take a while.
			s := startStack(t, "--data-dir", dir, "--fault", "credit:delay=3s:leg=CREDIT")
			ids := map[string]bool{}
			for i := range 20 {
				time.Sleep(60 * time.Millisecond) // spread the batch over the credits' delay
				r := s.submit(fmt.Sprintf("e2e-restart-%d", i), transferBody("acc-alice", "acc-bob", int64(100+i), "EUR"))
				if r.Status != http.StatusAccepted {
					t.Fatalf("submit %d: %d %s", i, r.Status, r.RawBody)
				}
				ids[r.Body["transferId"].(string)] = true
			}
			time.Sleep(100 * time.Millisecond) // the first transfers completed, the last are inside their credit
			inFlight := 0
			for id := range ids {
				if r := s.do(http.MethodGet, "/transfers/"+id, nil, nil); r.Body["status"] == "IN_PROGRESS" {
					inFlight++
				}
			}
			t.Logf("in flight at the %v: %d of %d", sig, inFlight, len(ids))
			if inFlight == 0 {
				t.Fatal("nothing was in flight: the restart proves nothing")
			}
			s.stop(sig)

			s2 := startStack(t, "--data-dir", dir, "--sweep-interval", "200ms", "--orphan-after", "1s")
			checkInvariants(t, s2, ids)
		})
	}
}

// TestOrchestratorCrashAfterReserve: the API function dies after writing its reservation and before starting the
// workflow; the client sees 502. The sweep re-drives the start, the transfer completes, and the client's retry
// with the same key is a replay.
func TestOrchestratorCrashAfterReserve(t *testing.T) {
	t.Parallel()
	s := startStack(t, "--fault", "orchestrator:crash=after-reserve:times=1", "--sweep-interval", "200ms", "--orphan-after", "1s")
	body := transferBody("acc-alice", "acc-bob", 321, "EUR")
	if r := s.submit("e2e-crash", body); r.Status != http.StatusBadGateway {
		t.Fatalf("first submit: %d %s, want 502 from the crashed function", r.Status, r.RawBody)
	}
	deadline := time.Now().Add(settle)
	for {
		r := s.submit("e2e-crash", body)
		if r.Status == http.StatusOK && r.Body["status"] == "COMPLETED" {
			break
		}
		if r.Status != http.StatusAccepted && r.Status != http.StatusConflict {
			t.Fatalf("retry: %d %s", r.Status, r.RawBody)
		}
		if time.Now().After(deadline) {
			t.Fatalf("not completed after %s: %s", settle, r.RawBody)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if a := s.balance("acc-alice"); a != 100000-321 {
		t.Errorf("alice %d", a)
	}
}

// TestCreditCrashAfterCommit: the credit function dies right after its CREDIT committed, which also settled the
// record COMPLETED. The workflow sees the credit fail and tries the refund, which the ledger refuses
// (CreditAlreadyApplied): the transfer went through. CompleteCredited asks the credit function again, which answers
// from the ledger. The money moved once.
func TestCreditCrashAfterCommit(t *testing.T) {
	t.Parallel()
	s := startStack(t, "--fault", "credit:crash=after-credit:times=1")
	id := s.submitAccepted("submit", "e2e-credit-crash", transferBody("acc-alice", "acc-bob", 654, "EUR"))
	s.waitCompleted("transfer", id)
	events, legs := s.history(id)
	if legs["DEBIT"] == nil || legs["CREDIT"] == nil || legs["REFUND"] != nil {
		t.Errorf("ledger = %v, want DEBIT and CREDIT only", keysOf(legs))
	}
	var path []string
	for _, ev := range events {
		if ev["type"] == "TaskStateEntered" {
			details, _ := ev["stateEnteredEventDetails"].(map[string]any)
			name, _ := details["name"].(string)
			path = append(path, name)
		}
	}
	if want := []string{"Debit", "Credit", "Refund", "CompleteCredited"}; !slices.Equal(path, want) {
		t.Errorf("task states entered: %v, want %v", path, want)
	}
	if a, b := s.balance("acc-alice"), s.balance("acc-bob"); a != 100000-654 || b != 5000+654 {
		t.Errorf("balances alice %d bob %d, want the money moved once", a, b)
	}
	s.settledExecutions(settle)
	s.checkOutcome(s.eventsFor(1, settle), id)
}

// TestExecutionTimeoutIsReconciled: the workflow times out while the credit is still running; the reconciler
// refunds the lone debit and marks the transfer TIMED_OUT, and the late credit is fenced off.
func TestExecutionTimeoutIsReconciled(t *testing.T) {
	t.Parallel()
	s := startStack(t, "--execution-timeout", "1s", "--fault", "credit:delay=2s:leg=CREDIT")
	id := s.submitAccepted("submit", "e2e-timeout", transferBody("acc-alice", "acc-bob", 900, "EUR"))
	tr := s.waitTerminal(id, settle)
	failure, _ := tr["failure"].(map[string]any)
	if msg, _ := failure["message"].(string); tr["status"] != "FAILED" || failure["code"] != "TIMED_OUT" || !strings.Contains(msg, "timed out") {
		t.Fatalf("transfer = %v", tr)
	}
	t.Logf("failure message: %s", failure["message"])
	time.Sleep(2 * time.Second) // the late credit lands, and must be refused
	_, legs := s.history(id)
	if legs["CREDIT"] != nil || legs["DEBIT"] == nil || legs["REFUND"] == nil {
		t.Errorf("ledger = %v, want DEBIT and REFUND only", keysOf(legs))
	}
	if a, b := s.balance("acc-alice"), s.balance("acc-bob"); a != 100000 || b != 5000 {
		t.Errorf("balances alice %d bob %d, want them restored", a, b)
	}
}

// TestStepFunctionsAPIThroughTheSDK: the stack's Step Functions endpoint answers the real aws-sdk-go-v2 client.
func TestStepFunctionsAPIThroughTheSDK(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	r := s.submit("e2e-sdk", transferBody("acc-alice", "acc-bob", 5, "EUR"))
	id := r.Body["transferId"].(string)
	s.waitTerminal(id, settle)
	client := sfn.New(sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String(s.SFN),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")})
	ctx := context.Background()
	machines, err := client.ListStateMachines(ctx, &sfn.ListStateMachinesInput{})
	if err != nil || len(machines.StateMachines) != 1 || aws.ToString(machines.StateMachines[0].Name) != "TransferStateMachine" {
		t.Fatalf("state machines = %+v, %v", machines, err)
	}
	exec, err := client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(r.Body["executionArn"].(string))})
	if err != nil || exec.Status != "SUCCEEDED" || aws.ToString(exec.Name) != id {
		t.Fatalf("execution = %+v, %v", exec, err)
	}
}

// TestHealthz answers 200 once the stack is ready.
func TestHealthz(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	if r := s.do(http.MethodGet, "/healthz", nil, nil); r.Status != http.StatusOK {
		t.Fatalf("healthz: %d", r.Status)
	}
}

// TestHistoryPastTheCap runs the stack with --history-max-executions 1: once a second transfer's workflow has
// closed, the first one's execution is gone, and its audit trail shows the transfer's ledger legs without workflow
// events, as for a transfer whose workflow never started; the second one's trail is whole.
func TestHistoryPastTheCap(t *testing.T) {
	t.Parallel()
	s := startStack(t, "--history-max-executions", "1")
	var ids []string
	for _, key := range []string{"e2e-cap-1", "e2e-cap-2"} {
		ids = append(ids, s.submitAccepted("submit", key, transferBody("acc-alice", "acc-bob", 7, "EUR")))
		s.waitTerminal(ids[len(ids)-1], settle)
	}
	deadline := time.Now().Add(settle)
	for {
		execs := s.executions()
		if len(execs) == 1 && aws.ToString(execs[0].Name) == ids[1] && execs[0].Status == "SUCCEEDED" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("executions listed: %+v", execs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	events, legs := s.history(ids[0])
	if len(events) != 0 || len(legs) != 2 {
		t.Errorf("trail of the forgotten execution: %d events, legs %v", len(events), keysOf(legs))
	}
	if events, _ := s.history(ids[1]); len(events) == 0 || events[len(events)-1]["type"] != "ExecutionSucceeded" {
		t.Errorf("trail of the kept execution: %v", events)
	}
}

// TestStackKeepsTheTokensOnlyForDynoxide: on Dynoxide the stack keeps the TransactWriteItems idempotency tokens
// itself (localaws/txtokens, docs/dynamodb.md) and says so at start-up; on DynamoDB Local (TEST_DYNAMODB) it leaves
// them to the server. Either way a transfer completes and moves the money once.
func TestStackKeepsTheTokensOnlyForDynoxide(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	store, err := ddbserver.TestStore()
	if err != nil {
		t.Fatal(err)
	}
	keeps := strings.Contains(s.stderr.String(), "the stack keeps the TransactWriteItems idempotency tokens")
	if want := store == ddbserver.Dynoxide; keeps != want {
		t.Fatalf("on %s the stack keeps the tokens: %v, want %v\n%s", store, keeps, want, tail(s.stderr.String(), 2000))
	}
	s.waitCompleted("transfer", s.submitAccepted("submit", "e2e-tokens", transferBody("acc-alice", "acc-bob", 700, "EUR")))
	if a, b := s.balance("acc-alice"), s.balance("acc-bob"); a != 100000-700 || b != 5000+700 {
		t.Errorf("balances alice %d bob %d", a, b)
	}
}
