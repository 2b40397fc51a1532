package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/transferflow/orchestrator/internal/ledger"
	"github.com/transferflow/orchestrator/internal/metrics"
	"github.com/transferflow/orchestrator/internal/transfer"
	"github.com/transferflow/orchestrator/localaws/ddbserver"
	"github.com/transferflow/orchestrator/localaws/gateway"
	"github.com/transferflow/orchestrator/localaws/lambdahost"
)

// These tests run transferctl against the real orchestrator handler on a real Dynoxide, behind the project's
// API Gateway stand-in (localaws/gateway, through the in-process Lambda invoker), with a Step Functions stand-in that only answers StartExecution. They are skipped
// without the Dynoxide binary (`make test` installs it).

// startExecutions counts StartExecution calls by execution name, with Standard-workflow naming rules.
type startExecutions struct {
	mu    sync.Mutex
	names map[string]int
}

func (s *startExecutions) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var in struct{ StateMachineArn, Name string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || r.Header.Get("X-Amz-Target") != "AWSStepFunctions.StartExecution" {
		http.Error(w, "only StartExecution", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.names[in.Name]++
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	fmt.Fprintf(w, `{"executionArn":%q,"startDate":%d}`, transfer.ExecutionArn(in.StateMachineArn, in.Name), time.Now().Unix())
}

// dropper serves requests with the real API gateway, except that after handling the next POST it closes the
// connection instead of answering: the client never learns the outcome.
type dropper struct {
	gw       http.Handler
	dropNext atomic.Bool
}

func (d *dropper) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !d.dropNext.CompareAndSwap(true, false) {
		d.gw.ServeHTTP(w, r)
		return
	}
	d.gw.ServeHTTP(httptest.NewRecorder(), r)
	if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
		conn.Close()
	}
}

type stack struct {
	*harness
	gw    *dropper
	sfn   *startExecutions
	db    *dynamodb.Client
	table string
}

func startStack(t *testing.T) *stack {
	t.Helper()
	srv, tables := ddbserver.StartWithTablesT(t)
	s := &stack{harness: newHarness(t, nil), sfn: &startExecutions{names: map[string]int{}}, table: tables["TransfersTable"]}
	sfnSrv := httptest.NewServer(s.sfn)
	t.Cleanup(sfnSrv.Close)
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}
	s.db = dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(srv.URL) })
	env := map[string]string{"TABLE_NAME": s.table, "STATE_MACHINE_ARN": "arn:aws:states:us-east-1:123456789012:stateMachine:Transfer"}
	c, err := transfer.LoadConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	o := transfer.NewOrchestratorHandler(cfg, c, slog.New(slog.NewTextHandler(io.Discard, nil)))
	store := ledger.NewStore(s.db, s.table)
	o.Store, o.Accounts, o.Openings, o.Activity, o.Legs, o.Owners = store, store, store, store, store, store
	o.SFN = sfn.NewFromConfig(cfg, func(o *sfn.Options) { o.BaseEndpoint = aws.String(sfnSrv.URL) })
	o.Now = s.clock.Now // the orchestrator's reservation window runs on the CLI's fake clock
	// Its metrics are encoded as on Lambda, but not onto the test binary's standard output.
	o.Metrics = metrics.New(io.Discard, c.MetricsNamespace)
	// The orchestrator behind the project's own API Gateway stand-in, invoked as the local stack invokes it.
	var n atomic.Int64
	newID := func() string { return fmt.Sprint("req-", n.Add(1)) }
	inv := lambdahost.New("us-east-1", "123456789012", newID, slog.New(slog.DiscardHandler),
		lambdahost.Function{Name: "Orchestrator", NewHandler: func() lambda.Handler { return lambda.NewHandler(o.Handle) }, Timeout: 10 * time.Second})
	var routes []gateway.Route
	for _, r := range []gateway.Route{
		{Method: http.MethodPost, Resource: "/transfers"},
		{Method: http.MethodGet, Resource: "/transfers/{transferId}"},
		{Method: http.MethodPost, Resource: "/accounts"},
		{Method: http.MethodGet, Resource: "/accounts/{accountId}"},
		{Method: http.MethodGet, Resource: "/accounts/{accountId}/transfers"},
	} {
		// Each client route, and its operator twin.
		routes = append(routes, gateway.Route{Method: r.Method, Resource: r.Resource, Function: "Orchestrator"},
			gateway.Route{Method: r.Method, Resource: "/operator" + r.Resource, Function: "Orchestrator"})
	}
	routes = append(routes, gateway.Route{Method: http.MethodPut, Resource: "/operator/accounts/{accountId}/owner", Function: "Orchestrator"})
	gw, err := gateway.New(routes, inv, gateway.Options{NewID: newID})
	if err != nil {
		t.Fatal(err)
	}
	s.gw = &dropper{gw: gw}
	api := httptest.NewServer(s.gw)
	t.Cleanup(api.Close)
	s.env["TRANSFERCTL_ENDPOINT"] = api.URL
	s.deps.http = api.Client()
	return s
}

func (s *stack) items() int {
	s.t.Helper()
	out, err := s.db.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(s.table), Select: "COUNT"})
	if err != nil {
		s.t.Fatal(err)
	}
	return int(out.Count)
}

func (s *stack) starts() map[string]int {
	s.sfn.mu.Lock()
	defer s.sfn.mu.Unlock()
	m := map[string]int{}
	for k, v := range s.sfn.names {
		m[k] = v
	}
	return m
}

func TestAgainstTheOrchestrator(t *testing.T) {
	s := startStack(t)

	// A lost reply: the orchestrator reserves the key and starts the execution, but the answer never arrives. The
	// CLI retries with the same key, meets 409 REQUEST_IN_PROGRESS, waits its Retry-After, and gets the replay.
	s.gw.dropNext.Store(true)
	submit := args(submitArgs, "--idempotency-key", "e2e-key-1", "--output", "json", "--reference", "invoice 2026-118")
	if code := s.run(submit...); code != exitOK {
		t.Fatalf("submit: exit %d\n%s", code, s.stderr.String())
	}
	var tr struct{ TransferID, Status string }
	if err := json.Unmarshal(s.stdout.Bytes(), &tr); err != nil || tr.Status != "IN_PROGRESS" {
		t.Fatalf("stdout %s (%v)", s.stdout.String(), err)
	}
	for _, want := range []string{"REQUEST_IN_PROGRESS", "replayed: this key already made transfer " + tr.TransferID} {
		if !strings.Contains(s.stderr.String(), want) {
			t.Errorf("stderr does not mention %q:\n%s", want, s.stderr.String())
		}
	}
	if n := s.items(); n != 1 {
		t.Errorf("items = %d, want 1 transfer record", n)
	}
	if got := s.starts(); len(got) != 1 || got[tr.TransferID] == 0 {
		t.Errorf("StartExecution calls = %v, want only %s", got, tr.TransferID)
	}

	// The same command again is a replay of the same transfer.
	if code := s.run(submit...); code != exitOK || !strings.Contains(s.stdout.String(), tr.TransferID) {
		t.Errorf("resubmit: exit %d, stdout %s", code, s.stdout.String())
	}

	// The same key with another amount is refused, and nothing is written.
	other := []string{"submit", "--from", "acc-alice", "--to", "acc-bob", "--amount", "1251", "--currency", "EUR", "--idempotency-key", "e2e-key-1"}
	if code := s.run(other...); code != exitRejected || !strings.Contains(s.stderr.String(), "IDEMPOTENCY_KEY_REUSED") {
		t.Errorf("key reuse: exit %d, stderr %s", code, s.stderr.String())
	}

	// A key with characters that need escaping in the structured-field form reaches the orchestrator intact: a
	// second run with it is a replay, not a second transfer.
	odd := args(submitArgs, "--idempotency-key", `odd"key\1`, "--output", "json")
	if code := s.run(odd...); code != exitOK {
		t.Fatalf("odd key: exit %d\n%s", code, s.stderr.String())
	}
	first := s.stdout.String()
	if code := s.run(odd...); code != exitOK || s.stdout.String() != first {
		t.Errorf("odd key replay: exit %d, stdout %s, want %s", code, s.stdout.String(), first)
	}
	if n := s.items(); n != 2 {
		t.Errorf("items = %d, want 2 transfer records", n)
	}

	if code := s.run("get", tr.TransferID); code != exitOK || !strings.Contains(s.stdout.String(), "IN_PROGRESS") {
		t.Errorf("get: exit %d, stdout %s, stderr %s", code, s.stdout.String(), s.stderr.String())
	}
	if code := s.run("get", "tr_doesnotexist"); code != exitNotFound || !strings.Contains(s.stderr.String(), "TRANSFER_NOT_FOUND") {
		t.Errorf("get unknown: exit %d, stderr %s", code, s.stderr.String())
	}
}

// settle applies a transfer's DEBIT and CREDIT and completes it, as the workflow would.
func (s *stack) settle(id string) {
	s.t.Helper()
	ctx := context.Background()
	rec, err := ledger.NewStore(s.db, s.table).GetRecord(ctx, id)
	if err != nil {
		s.t.Fatal(err)
	}
	l := ledger.NewLedger(s.db, s.table)
	for _, leg := range []string{ledger.LegDebit, ledger.LegCredit} {
		if _, _, err := l.ApplyLeg(ctx, rec.LegRequest(leg), s.clock.Now()); err != nil {
			s.t.Fatalf("%s of %s: %v", leg, id, err)
		}
	}
	if err := l.SettleTransfer(ctx, id, ledger.StatusCompleted, ledger.Failure{}, 0, s.clock.Now()); err != nil {
		s.t.Fatal(err)
	}
}

// TestAccountsAgainstTheOrchestrator: accounts create (generated key printed first, replay, 409), accounts get and
// its alias, a funding account an operator opens funding a client's account, and the listing through accounts
// transfers and transfers list. The client is unsigned (the gateway's user/local); the operator signs (--sign, the
// harness's access key) and uses --operator.
func TestAccountsAgainstTheOrchestrator(t *testing.T) {
	s := startStack(t)
	operator := []string{"--operator", "--sign"}
	create := func(more ...string) (int, map[string]any) {
		t.Helper()
		code := s.run(append([]string{"accounts", "create", "--output", "json"}, more...)...)
		var a map[string]any
		if code == exitOK {
			if err := json.Unmarshal(s.stdout.Bytes(), &a); err != nil {
				t.Fatalf("stdout %s: %v", s.stdout.String(), err)
			}
		}
		return code, a
	}
	if code, _ := create("--currency", "EUR", "--id", "funding-main", "--kind", "funding"); code != exitRejected ||
		!strings.Contains(s.stderr.String(), "OPERATOR_REQUIRED") || !strings.Contains(s.stderr.String(), "run it with --operator") {
		t.Errorf("a client's funding account: exit %d\n%s", code, s.stderr.String())
	}
	code, a := create(args(operator, "--currency", "EUR", "--id", "funding-main", "--kind", "funding", "--floor", "-1000000")...)
	if code != exitOK || a["kind"] != "funding" || a["balance"] != 0.0 || a["floor"] != -1000000.0 || a["owner"] != nil {
		t.Fatalf("create funding: exit %d %v\n%s", code, a, s.stderr.String())
	}
	if !strings.HasPrefix(s.stderr.String(), "idempotency key: GENERATEDKEY0001") || !strings.Contains(s.stderr.String(), "opened: account funding-main") {
		t.Errorf("stderr does not start with the generated key and say opened:\n%s", s.stderr.String())
	}
	for _, id := range []string{"acc-erin", "acc-frank"} {
		if code, _ := create("--currency", "EUR", "--id", id, "--idempotency-key", "open-"+id); code != exitOK {
			t.Fatalf("create %s: exit %d\n%s", id, code, s.stderr.String())
		}
	}
	if code, a := create("--currency", "EUR", "--id", "acc-erin", "--idempotency-key", "open-acc-erin"); code != exitOK || a["accountId"] != "acc-erin" ||
		!strings.Contains(s.stderr.String(), "replayed: this key already opened account acc-erin") {
		t.Errorf("replay: exit %d %v\n%s", code, a, s.stderr.String())
	}
	if code, _ := create("--currency", "USD", "--id", "acc-erin", "--idempotency-key", "other"); code != exitRejected ||
		!strings.Contains(s.stderr.String(), "ACCOUNT_EXISTS") || !strings.Contains(s.stderr.String(), "no account was opened") {
		t.Errorf("409: exit %d\n%s", code, s.stderr.String())
	}
	if code, _ := create("--currency", "eur"); code != exitUsage {
		t.Errorf("bad currency: exit %d, want usage", code)
	}

	// The operator funds acc-erin from the funding account, then the client moves money from acc-erin to acc-frank.
	for i, tr := range [][]string{{"funding-main", "acc-erin", "5000"}, {"acc-erin", "acc-frank", "1250"}} {
		cmd := []string{"submit", "--from", tr[0], "--to", tr[1], "--amount", tr[2], "--currency", "EUR", "--idempotency-key", fmt.Sprint("fund-", i), "--output", "json"}
		if i == 0 {
			cmd = args(operator, cmd...)
		}
		if code := s.run(cmd...); code != exitOK {
			t.Fatalf("submit %v: exit %d\n%s", tr, code, s.stderr.String())
		}
		var res struct{ TransferID string }
		if err := json.Unmarshal(s.stdout.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		_ = s.clock.Sleep(context.Background(), time.Second) // the next transfer is a second newer
		s.settle(res.TransferID)
	}

	// The operator sees every account, with its floor and owner; the client only its own.
	if code := s.run(args(operator, "accounts", "get", "funding-main", "acc-erin", "acc-frank")...); code != exitOK {
		t.Fatalf("accounts get: exit %d\n%s", code, s.stderr.String())
	}
	for _, want := range []string{"FLOOR     OWNER", "funding-main  -5000", "Z  -1000000  -\n",
		"acc-erin      3750", "acc-frank     1250", "-         iam:arn:aws:iam::000000000000:user/local"} {
		if !strings.Contains(s.stdout.String(), want) {
			t.Errorf("accounts get --operator does not show %q:\n%s", want, s.stdout.String())
		}
	}
	if code := s.run("accounts", "get", "acc-erin", "acc-frank"); code != exitOK || strings.Contains(s.stdout.String(), "OWNER") {
		t.Fatalf("accounts get: exit %d\n%s%s", code, s.stdout.String(), s.stderr.String())
	}
	clientOut := s.stdout.String()
	if code := s.run("accounts", "acc-erin", "acc-frank"); code != exitOK || s.stdout.String() != clientOut {
		t.Errorf("accounts ID... (the alias): exit %d\n%s", code, s.stdout.String())
	}
	if code := s.run("accounts", "get", "funding-main"); code != exitNotFound || !strings.Contains(s.stderr.String(), "ACCOUNT_NOT_FOUND") {
		t.Errorf("a client reading the funding account: exit %d\n%s", code, s.stderr.String())
	}

	// An account the operator opens without owner is nobody's until the operator assigns one; then it is its owner's.
	if code, a := create(args(operator, "--currency", "EUR", "--id", "acc-gus", "--idempotency-key", "open-gus")...); code != exitOK || a["owner"] != nil {
		t.Fatalf("create without owner: exit %d %v\n%s", code, a, s.stderr.String())
	}
	if code := s.run("accounts", "get", "acc-gus"); code != exitNotFound {
		t.Errorf("a client reading an account without owner: exit %d", code)
	}
	const local = "arn:aws:iam::000000000000:user/local"
	for range 2 { // the same assignment again answers the same
		if code := s.run(args(operator, "accounts", "assign-owner", "acc-gus", "--owner", local)...); code != exitOK ||
			!strings.Contains(s.stdout.String(), "iam:"+local) {
			t.Fatalf("assign-owner: exit %d\n%s%s", code, s.stdout.String(), s.stderr.String())
		}
	}
	if code := s.run("accounts", "get", "acc-gus"); code != exitOK || !strings.Contains(s.stdout.String(), "acc-gus") {
		t.Errorf("the owner reading its account: exit %d\n%s", code, s.stderr.String())
	}
	for _, tc := range []struct{ account, code string }{{"acc-gus", "ACCOUNT_HAS_OWNER"}, {"funding-main", "FUNDING_ACCOUNT"}} {
		if code := s.run(args(operator, "accounts", "assign-owner", tc.account, "--owner", "arn:aws:iam::000000000000:user/ivy")...); code != exitRejected ||
			!strings.Contains(s.stderr.String(), tc.code) {
			t.Errorf("assign-owner %s: exit %d, want %d and %s\n%s", tc.account, code, exitRejected, tc.code, s.stderr.String())
		}
	}
	if code := s.run(args(operator, "accounts", "assign-owner", "acc-nobody", "--owner", local)...); code != exitNotFound {
		t.Errorf("assign-owner of an unknown account: exit %d\n%s", code, s.stderr.String())
	}
	// An account opened for an owner is the owner's at once.
	if code, a := create(args(operator, "--currency", "EUR", "--id", "acc-hal", "--owner", local, "--idempotency-key", "open-hal")...); code != exitOK || a["owner"] != "iam:"+local {
		t.Fatalf("create with an owner: exit %d %v\n%s", code, a, s.stderr.String())
	}
	if code := s.run("accounts", "get", "acc-hal"); code != exitOK {
		t.Errorf("the owner reading its account: exit %d\n%s", code, s.stderr.String())
	}

	// The listing, newest first, through both commands.
	if code := s.run("accounts", "transfers", "acc-erin", "--output", "json"); code != exitOK {
		t.Fatalf("accounts transfers: exit %d\n%s", code, s.stderr.String())
	}
	var page struct {
		Transfers []struct {
			Leg                   string
			Amount                int64
			CounterpartyAccountID string
			Status                string
		}
	}
	if err := json.Unmarshal(s.stdout.Bytes(), &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Transfers) != 2 || page.Transfers[0].Leg != "DEBIT" || page.Transfers[0].Amount != -1250 ||
		page.Transfers[0].CounterpartyAccountID != "acc-frank" || page.Transfers[1].Amount != 5000 ||
		page.Transfers[1].CounterpartyAccountID != "funding-main" || page.Transfers[1].Status != "COMPLETED" {
		t.Errorf("acc-erin's transfers: %+v", page.Transfers)
	}
	if code := s.run("transfers", "list", "--account", "acc-erin", "--limit", "1", "--all"); code != exitOK {
		t.Fatalf("transfers list: exit %d\n%s", code, s.stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(s.stdout.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "-1250") || !strings.Contains(lines[2], "+5000") || !strings.Contains(lines[2], "funding-main") {
		t.Errorf("transfers list --all, a page of 1 at a time:\n%s", s.stdout.String())
	}
	if code := s.run("transfers", "list", "--account", "acc-erin", "--limit", "1"); code != exitOK ||
		!strings.Contains(s.stderr.String(), "more transfers follow") {
		t.Errorf("one page of 1: exit %d\n%s", code, s.stderr.String())
	}
	if code := s.run("accounts", "transfers", "acc-nobody"); code != exitNotFound {
		t.Errorf("unknown account: exit %d", code)
	}
	for _, bad := range [][]string{{"transfers"}, {"transfers", "list"}, {"transfers", "list", "--account", "a/b"},
		{"accounts", "transfers"}, {"accounts", "transfers", "acc-erin", "--limit", "51"}, {"accounts", "create", "--currency", "EUR", "--kind", "savings"}} {
		if code := s.run(bad...); code != exitUsage {
			t.Errorf("%v: exit %d, want usage", bad, code)
		}
	}
}
