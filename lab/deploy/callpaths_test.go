package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/transferflow/orchestrator/internal/ledger"
	"github.com/transferflow/orchestrator/internal/metrics"
	"github.com/transferflow/orchestrator/internal/streamtest"
	"github.com/transferflow/orchestrator/internal/transfer"
	"github.com/transferflow/orchestrator/localaws/ddbserver"
	"github.com/transferflow/orchestrator/localaws/eventbus"
	"github.com/transferflow/orchestrator/localaws/sfnengine"
	"github.com/transferflow/orchestrator/localaws/stepfunctions"
)

// Where the local Step Functions API puts its ARNs.
const (
	callRegion  = "us-east-1"
	callAccount = "123456789012"
)

// holdDefinition is the state machine the paths start: it waits on a clock that never moves, so an execution stays
// RUNNING until a path stops it. The workflow's own tasks run with the state machine's role, not a function's, so
// they are not run here.
const holdDefinition = `{"StartAt":"Hold","States":{"Hold":{"Type":"Wait","Seconds":3600,"End":true}}}`

// serviceEndpoints gives each service's endpoint, by SDK service id, through aws.Config.ConfigSources: the way the
// SDK applies AWS_ENDPOINT_URL_DYNAMODB and AWS_ENDPOINT_URL_SFN, without touching the process environment.
type serviceEndpoints map[string]string

// GetServiceBaseEndpoint implements the SDK's service base endpoint provider.
func (s serviceEndpoints) GetServiceBaseEndpoint(_ context.Context, sdkID string) (string, bool, error) {
	url, ok := s[sdkID]
	return url, ok, nil
}

// callEnv is what one function's paths run against: the template's tables in Dynoxide and the local Step Functions
// API, with a recorder for the function's SDK calls. Setup goes through its own clients, which are not recorded.
type callEnv struct {
	rec        *recorder
	endpoints  serviceEndpoints
	table      string
	machineID  string
	machineArn string
	// startArn is the ARN the orchestrator starts executions with, as the template configures it: the state machine's
	// alias when its STATE_MACHINE_ARN names one (AutoPublishAlias), machineArn otherwise.
	startArn string
	bus      string // the event bus's name, its logical id as the local stack names it
	t0       time.Time

	store  *ledger.Store
	ledger *ledger.Ledger
	sfn    *sfn.Client
	clock  *sfnengine.ManualClock // the engine's
	keys   int
}

func newCallEnv(t *testing.T, tmpl *Template) *callEnv {
	t.Helper()
	machines := tmpl.OfType("AWS::StepFunctions::StateMachine")
	if len(machines) != 1 {
		t.Fatalf("state machines %v: the paths start executions of exactly one", machines)
	}
	if os.Getenv("AWS_ENDPOINT_URL") != "" {
		t.Fatalf("AWS_ENDPOINT_URL is set: the SDK would ignore the local endpoints this test gives it")
	}
	srv, tables := ddbserver.StartWithTablesT(t)
	if len(tables) != 1 {
		t.Fatalf("tables %v: the functions use exactly one", tables)
	}
	t0 := time.Now().UTC().Truncate(time.Second)
	clock := sfnengine.NewManualClock(t0)
	api := stepfunctions.RunT(t, stepfunctions.WithEngineOptions(sfnengine.Options{Clock: clock, Region: callRegion, AccountID: callAccount}))
	buses := tmpl.OfType("AWS::Events::EventBus")
	if len(buses) != 1 {
		t.Fatalf("event buses %v: the functions publish to exactly one", buses)
	}
	bus, err := eventbus.New(eventbus.Options{Region: callRegion, AccountID: callAccount, Buses: buses, NewID: sfnengine.NewUUID})
	if err != nil {
		t.Fatal(err)
	}
	busSrv := httptest.NewServer(bus)
	t.Cleanup(busSrv.Close)
	e := &callEnv{
		endpoints:  serviceEndpoints{"DynamoDB": srv.URL, "SFN": api.URL(), "EventBridge": busSrv.URL},
		bus:        buses[0],
		machineID:  machines[0],
		machineArn: fmt.Sprintf("arn:aws:states:%s:%s:stateMachine:%s", callRegion, callAccount, machines[0]),
		startArn:   fmt.Sprintf("arn:aws:states:%s:%s:stateMachine:%s", callRegion, callAccount, machines[0]),
		t0:         t0,
		clock:      clock,
		sfn:        api.Client(),
	}
	// The orchestrator starts executions through the alias the template gives it, if any (AutoPublishAlias).
	start := dig(tmpl.Resources["OrchestratorFunction"].Properties, "Environment", "Variables", "STATE_MACHINE_ARN")
	if a := tmpl.Resources[ref(start)]; a.Type == "AWS::StepFunctions::StateMachineAlias" {
		name, _ := a.Properties["Name"].(string)
		e.startArn += ":" + name
	}
	names := resourceNames{tables: map[string]string{}, machines: map[string]string{e.machineArn: e.machineID},
		buses: map[string]string{e.bus: e.bus}, hashKeys: map[string]string{}}
	for id, name := range tables {
		e.table = name
		names.tables[name] = id
		if names.hashKeys[name] = tmpl.PartitionKey(id); names.hashKeys[name] == "" {
			t.Fatalf("table %s: no partition key in the template", id)
		}
	}
	e.rec = &recorder{names: names}
	db := ddbserver.NewClient(srv.URL, nil)
	e.store, e.ledger = ledger.NewStore(db, e.table), ledger.NewLedger(db, e.table)
	return e
}

// config is the aws.Config a function is wired from: both endpoints, and the recorder on every client.
func (e *callEnv) config() aws.Config {
	return aws.Config{
		Region:        callRegion,
		Credentials:   credentials.NewStaticCredentialsProvider("local", "local", ""),
		ConfigSources: []any{e.endpoints},
		APIOptions:    []func(*middleware.Stack) error{e.rec.apiOption},
	}
}

// getenv is the functions' environment. The orchestrator keys its hashes and checks legacy records, as a stack
// upgraded from one without the secret does, so its paths include the legacy check's ConditionCheckItem.
func (e *callEnv) getenv(name string) string {
	return map[string]string{"TABLE_NAME": e.table, "STATE_MACHINE_ARN": e.machineArn, "EVENT_BUS_NAME": e.bus,
		"IDEMPOTENCY_KEY_SECRET": "callpaths-test-idempotency-key-secret-0123456789",
		"LEGACY_KEY_HASH_UNTIL":  e.t0.Add(time.Hour).Format(time.RFC3339)}[name]
}

// createMachine creates the template's state machine, under the ARN the functions were configured with, and the alias
// the orchestrator starts executions with (a version of it) when the template gives it one.
func (e *callEnv) createMachine(t *testing.T) {
	t.Helper()
	out, err := e.sfn.CreateStateMachine(context.Background(), &sfn.CreateStateMachineInput{
		Name: aws.String(e.machineID), Definition: aws.String(holdDefinition),
		RoleArn: aws.String("arn:aws:iam::" + callAccount + ":role/" + e.machineID + "Role"),
	})
	if err != nil {
		t.Fatalf("create state machine: %v", err)
	}
	if got := aws.ToString(out.StateMachineArn); got != e.machineArn {
		t.Fatalf("state machine ARN %s, want %s", got, e.machineArn)
	}
	if e.startArn == e.machineArn {
		return
	}
	v, err := e.sfn.PublishStateMachineVersion(context.Background(), &sfn.PublishStateMachineVersionInput{StateMachineArn: out.StateMachineArn})
	if err != nil {
		t.Fatalf("publish a version: %v", err)
	}
	_, alias, _ := strings.Cut(strings.TrimPrefix(e.startArn, e.machineArn), ":")
	if _, err := e.sfn.CreateStateMachineAlias(context.Background(), &sfn.CreateStateMachineAliasInput{Name: aws.String(alias),
		RoutingConfiguration: []sfntypes.RoutingConfigurationListItem{{StateMachineVersionArn: v.StateMachineVersionArn, Weight: 100}}}); err != nil {
		t.Fatalf("create alias %s: %v", alias, err)
	}
}

// endExecution runs rec's execution on the state machine until it ends with status, as the reconciler's status
// change paths need it (the reconciler settles what DescribeExecution reports): FAILED through a Fail state,
// TIMED_OUT through the machine's TimeoutSeconds (the engine's clock moved past it once the execution waits on it),
// ABORTED by StopExecution. The machine is the hold again after.
func (e *callEnv) endExecution(t *testing.T, rec ledger.Transfer, status sfntypes.ExecutionStatus) {
	t.Helper()
	ctx := context.Background()
	definition := map[sfntypes.ExecutionStatus]string{
		sfntypes.ExecutionStatusFailed:   `{"StartAt":"F","States":{"F":{"Type":"Fail","Error":"States.TaskFailed","Cause":"the call paths' failure"}}}`,
		sfntypes.ExecutionStatusTimedOut: `{"TimeoutSeconds":1,"StartAt":"Hold","States":{"Hold":{"Type":"Wait","Seconds":3600,"End":true}}}`,
		sfntypes.ExecutionStatusAborted:  holdDefinition,
	}[status]
	update := func(def string) {
		t.Helper()
		if _, err := e.sfn.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(e.machineArn), Definition: aws.String(def)}); err != nil {
			t.Fatalf("update the state machine: %v", err)
		}
	}
	update(definition)
	defer update(holdDefinition)
	waiting, _ := e.clock.Waiters()
	if _, err := e.sfn.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(e.machineArn),
		Name: aws.String(rec.TransferID), Input: aws.String("{}")}); err != nil {
		t.Fatal(err)
	}
	if status == sfntypes.ExecutionStatusTimedOut {
		e.clock.MustAwaitWaiters(t, waiting+2) // the execution's timeout and its Wait
		e.clock.Advance(2 * time.Second)
	}
	if status == sfntypes.ExecutionStatusAborted {
		if _, err := e.sfn.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: aws.String(rec.ExecutionArn)}); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		out, err := e.sfn.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(rec.ExecutionArn)})
		if err != nil {
			t.Fatal(err)
		}
		if out.Status == status {
			return
		}
		if out.Status != sfntypes.ExecutionStatusRunning || time.Now().After(deadline) {
			t.Fatalf("execution %s: %s, want %s", rec.ExecutionArn, out.Status, status)
		}
	}
}

// account opens id for the caller "setup", whose transfers env.transfer reserves.
func (e *callEnv) account(t *testing.T, id string, balance int64) {
	t.Helper()
	e.ownedAccount(t, "setup", id, balance)
}

// ownedAccount opens id for owner, a caller scope.
func (e *callEnv) ownedAccount(t *testing.T, owner, id string, balance int64) {
	t.Helper()
	if _, err := e.store.CreateOwnedAccount(context.Background(), owner, id, "EUR", balance, e.t0); err != nil {
		t.Fatalf("create account %s: %v", id, err)
	}
}

// operatorTransfer is transfer for one an operator submitted (POST /operator/transfers).
func (e *callEnv) operatorTransfer(t *testing.T, src, dst string, amount int64, at time.Time) ledger.Transfer {
	t.Helper()
	return e.reserve(t, "operator", true, src, dst, amount, at)
}

// transfer reserves an IN_PROGRESS transfer created at, as the orchestrator does, without starting its workflow.
func (e *callEnv) transfer(t *testing.T, src, dst string, amount int64, at time.Time) ledger.Transfer {
	t.Helper()
	return e.reserve(t, "setup", false, src, dst, amount, at)
}

// reserve reserves a transfer of scope's (an operator's when operator).
func (e *callEnv) reserve(t *testing.T, scope string, operator bool, src, dst string, amount int64, at time.Time) ledger.Transfer {
	t.Helper()
	e.keys++
	id, err := ledger.NewTransferID(ledger.KeyHash(scope, fmt.Sprint(e.keys)), nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := ledger.NewTransferRecord(ledger.Transfer{TransferID: id, Scope: scope, SourceAccountID: src, Operator: operator,
		DestinationAccountID: dst, Amount: amount, Currency: "EUR", ExecutionArn: transfer.ExecutionArn(e.machineArn, id)}, at, 0)
	if _, created, err := e.store.Reserve(context.Background(), rec, at); err != nil || !created {
		t.Fatalf("reserve %s: created %v, %v", id, created, err)
	}
	return rec
}

// legInput is the task input the workflow sends for leg of rec.
func legInput(rec ledger.Transfer, leg string) transfer.LegInput {
	r := rec.LegRequest(leg)
	in := transfer.LegInput{Leg: r.Leg, TransferID: r.TransferID, AccountID: r.AccountID, Amount: r.Amount,
		Currency: r.Currency, ExecutionArn: r.ExecutionArn, DestinationAccountID: r.DestinationAccountID}
	switch {
	case r.Operator:
		in.Authority = transfer.AuthorityOperator
	case r.Owner != "":
		in.Authority = transfer.OwnerAuthority(r.Owner)
	}
	return in
}

// applyLeg applies leg of rec as the function for it would, outside the function under test.
func (e *callEnv) applyLeg(t *testing.T, rec ledger.Transfer, leg string) {
	t.Helper()
	_, _, err := e.ledger.ApplyLeg(context.Background(), rec.LegRequest(leg), e.t0)
	if err != nil {
		t.Fatalf("%s %s: %v", leg, rec.TransferID, err)
	}
}

// settle settles rec as the workflow would.
func (e *callEnv) settle(t *testing.T, rec ledger.Transfer, status string) {
	t.Helper()
	err := e.ledger.SettleTransfer(context.Background(), rec.TransferID, status, ledger.Failure{Code: "SETUP"}, 0, e.t0)
	if err != nil {
		t.Fatalf("settle %s %s: %v", rec.TransferID, status, err)
	}
}

// wantRecord checks the status and failure code of the record of id.
func (e *callEnv) wantRecord(t *testing.T, path, id, status, code string) {
	t.Helper()
	rec, err := e.store.GetRecord(context.Background(), id)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if rec.Status != status || rec.FailureCode != code {
		t.Fatalf("%s: record %s %q, want %s %q", path, rec.Status, rec.FailureCode, status, code)
	}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// quietMetrics stands in for a function's metrics, which Lambda would read from standard output.
func quietMetrics() *metrics.Emitter {
	return metrics.New(io.Discard, transfer.DefaultMetricsNamespace)
}

// caller is the IAM principal the API's requests come from (the API authorizes with AWS_IAM).
const caller = "arn:aws:iam::123456789012:user/alice"

func apiRequest(method, resource string, params map[string]string) events.APIGatewayProxyRequest {
	path := resource
	for k, v := range params {
		path = strings.Replace(path, "{"+k+"}", v, 1)
	}
	req := events.APIGatewayProxyRequest{Resource: resource, Path: path, HTTPMethod: method, PathParameters: params,
		Headers: map[string]string{}}
	req.RequestContext.Identity.UserArn = caller
	return req
}

func postTransfer(key, body string) events.APIGatewayProxyRequest {
	req := apiRequest(http.MethodPost, "/transfers", nil)
	req.Headers["Content-Type"] = "application/json"
	if key != "" {
		req.Headers["Idempotency-Key"] = key
	}
	req.Body = body
	return req
}

func postAccount(key, body string) events.APIGatewayProxyRequest {
	req := postTransfer(key, body)
	req.Resource, req.Path = "/accounts", "/accounts"
	return req
}

// orchestratorPaths runs the API function through every answer it gives, the stalled transfer's re-drive included.
func orchestratorPaths(t *testing.T, env *callEnv, cfg aws.Config) {
	// Started through the alias when the template says so (startArn); the reconciler keeps the state machine's ARN.
	getenv := func(k string) string {
		if k == "STATE_MACHINE_ARN" {
			return env.startArn
		}
		return env.getenv(k)
	}
	c, err := transfer.LoadConfig(getenv)
	if err != nil {
		t.Fatal(err)
	}
	o := transfer.NewOrchestratorHandler(cfg, c, discard())
	o.Metrics = quietMetrics()
	now := env.t0
	o.Now = func() time.Time { return now }
	do := func(path string, req events.APIGatewayProxyRequest, want int) events.APIGatewayProxyResponse {
		t.Helper()
		resp, err := o.Handle(withPath(context.Background(), path), req)
		if err != nil || resp.StatusCode != want {
			t.Fatalf("%s: status %d (%v), want %d: %s", path, resp.StatusCode, err, want, resp.Body)
		}
		return resp
	}
	env.ownedAccount(t, "iam:"+caller, "acc-alice", 10000)
	env.ownedAccount(t, "iam:"+caller, "acc-bob", 0)
	const body = `{"sourceAccountId":"acc-alice","destinationAccountId":"acc-bob","amount":1250,"currency":"EUR"}`

	// The state machine does not exist yet, so the first start fails: the transfer stays reserved, stalled.
	do("POST a transfer whose workflow cannot start: 503", postTransfer("key-1", body), http.StatusServiceUnavailable)
	now = now.Add(c.ReservationWindow + time.Second)
	do("POST it again past the window, the re-drive cannot start either: 503, claim released",
		postTransfer("key-1", body), http.StatusServiceUnavailable)
	env.createMachine(t)
	resp := do("POST it again, the stalled transfer's start re-driven: 202", postTransfer("key-1", body), http.StatusAccepted)
	if resp.Headers["Retry-After"] == "" {
		t.Fatalf("re-drive answered without Retry-After: %v", resp.Headers)
	}
	do("POST it again while the re-drive's claim stands: 202", postTransfer("key-1", body), http.StatusAccepted)

	resp = do("POST a new transfer: 202", postTransfer("key-2", body), http.StatusAccepted)
	id := strings.TrimPrefix(resp.Headers["Location"], "/transfers/")
	do("POST the same key within the window: 409", postTransfer("key-2", body), http.StatusConflict)
	do("POST the same key with another body: 422", postTransfer("key-2", strings.Replace(body, "1250", "1251", 1)),
		http.StatusUnprocessableEntity)
	do("POST without an Idempotency-Key: 400", postTransfer("", body), http.StatusBadRequest)
	do("POST an invalid body: 400", postTransfer("key-3", `{"amount":-1}`), http.StatusBadRequest)

	unknown, err := ledger.NewTransferID(ledger.KeyHash("nobody", "nothing"), nil)
	if err != nil {
		t.Fatal(err)
	}
	do("GET the transfer: 200", apiRequest(http.MethodGet, "/transfers/{transferId}", map[string]string{"transferId": id}), http.StatusOK)
	do("GET an unknown transfer: 404", apiRequest(http.MethodGet, "/transfers/{transferId}", map[string]string{"transferId": unknown}),
		http.StatusNotFound)
	do("GET the transfer's history: 200", apiRequest(http.MethodGet, "/transfers/{transferId}/history", map[string]string{"transferId": id}),
		http.StatusOK)
	do("GET an account: 200", apiRequest(http.MethodGet, "/accounts/{accountId}", map[string]string{"accountId": "acc-alice"}), http.StatusOK)
	do("GET an unknown account: 404", apiRequest(http.MethodGet, "/accounts/{accountId}", map[string]string{"accountId": "acc-nobody"}),
		http.StatusNotFound)
	do("an unknown route: 404", apiRequest(http.MethodGet, "/nothing", nil), http.StatusNotFound)

	const accountBody = `{"accountId":"acc-carol","currency":"EUR"}`
	do("POST an account: 201", postAccount("acct-key-1", accountBody), http.StatusCreated)
	do("POST it again: 200 replay", postAccount("acct-key-1", accountBody), http.StatusOK)
	do("POST the key with another body: 422", postAccount("acct-key-1", `{"accountId":"acc-dora","currency":"EUR"}`),
		http.StatusUnprocessableEntity)
	do("POST the account with another key and currency: 409", postAccount("acct-key-2", `{"accountId":"acc-carol","currency":"USD"}`),
		http.StatusConflict)
	do("POST an account without an id: 201", postAccount("acct-key-3", `{"currency":"EUR"}`), http.StatusCreated)
	do("POST an invalid account body: 400", postAccount("acct-key-4", `{"currency":"eur"}`), http.StatusBadRequest)
	do("POST a funding account on the client route: 403", postAccount("acct-key-5", `{"currency":"EUR","kind":"funding"}`), http.StatusForbidden)
	operatorAccount := postAccount("acct-key-6", `{"accountId":"funding-op","currency":"EUR","kind":"funding","floor":-100}`)
	operatorAccount.Resource, operatorAccount.Path = "/operator/accounts", "/operator/accounts"
	do("POST a funding account on the operator route: 201", operatorAccount, http.StatusCreated)
	do("GET any account on the operator route: 200",
		apiRequest(http.MethodGet, "/operator/accounts/{accountId}", map[string]string{"accountId": "funding-op"}), http.StatusOK)
	env.account(t, "acc-unowned-later", 0)
	if _, err := env.store.AssignOwner(context.Background(), "acc-unowned-later", "", now); err == nil {
		t.Fatal("AssignOwner without an owner succeeded")
	}
	legacy := apiRequest(http.MethodPut, "/operator/accounts/{accountId}/owner", map[string]string{"accountId": "acc-legacy"})
	legacy.Headers["Content-Type"], legacy.Body = "application/json", `{"owner":"`+caller+`"}`
	if _, err := env.store.CreateAccount(context.Background(), "acc-legacy", "EUR", 0, now); err != nil {
		t.Fatal(err)
	}
	do("PUT an owner on an account without one: 200", legacy, http.StatusOK)
	do("PUT another owner: 409", func() events.APIGatewayProxyRequest {
		r := legacy
		r.Body = `{"owner":"arn:aws:iam::123456789012:user/mallory"}`
		return r
	}(), http.StatusConflict)

	// The workflow's legs and settlement, as the state machine runs them, then the client's retry.
	rec, err := env.store.GetRecord(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	env.applyLeg(t, rec, ledger.LegDebit)
	env.applyLeg(t, rec, ledger.LegCredit)
	env.settle(t, rec, ledger.StatusCompleted)
	resp = do("POST the settled transfer's key again: 200 replay", postTransfer("key-2", body), http.StatusOK)
	if resp.Headers["Idempotent-Replayed"] != "true" {
		t.Fatalf("replay without Idempotent-Replayed: %v", resp.Headers)
	}

	listing := apiRequest(http.MethodGet, "/accounts/{accountId}/transfers", map[string]string{"accountId": "acc-alice"})
	listing.QueryStringParameters = map[string]string{"limit": "1"}
	resp = do("GET an account's transfers: 200", listing, http.StatusOK)
	var page struct {
		NextToken string `json:"nextToken"`
	}
	if err := json.Unmarshal([]byte(resp.Body), &page); err != nil || page.NextToken == "" {
		t.Fatalf("a page of one entry without a nextToken (%v): %s", err, resp.Body)
	}
	listing.QueryStringParameters = map[string]string{"limit": "1", "nextToken": page.NextToken}
	do("GET the next page of an account's transfers, its cursor's entry read: 200", listing, http.StatusOK)
	do("GET the credited account's transfers, the DEBIT entry read for the counterparty: 200",
		apiRequest(http.MethodGet, "/accounts/{accountId}/transfers", map[string]string{"accountId": "acc-bob"}), http.StatusOK)
	do("GET an unknown account's transfers: 404",
		apiRequest(http.MethodGet, "/accounts/{accountId}/transfers", map[string]string{"accountId": "acc-nobody"}), http.StatusNotFound)
}

// legConfig is the debit and credit functions' configuration; it also opens the accounts their paths move money
// between, acc-src (1000) and acc-dst (0).
func (e *callEnv) legConfig(t *testing.T) transfer.LedgerConfig {
	t.Helper()
	lc, err := transfer.LoadLedgerConfig(e.getenv)
	if err != nil {
		t.Fatal(err)
	}
	e.account(t, "acc-src", 1000)
	e.account(t, "acc-dst", 0)
	return lc
}

// legPath is one invocation of a leg function and the outcome it must have: want nil for a leg applied, or a
// pointer to the workflow error type it must return.
type legPath struct {
	name string
	in   transfer.LegInput
	want any
}

// runLegPaths invokes handle for each path in order and checks its outcome.
func runLegPaths(t *testing.T, handle func(context.Context, transfer.LegInput) (transfer.LegResult, error), paths []legPath) {
	t.Helper()
	for _, p := range paths {
		_, err := handle(withPath(context.Background(), p.name), p.in)
		switch {
		case p.want == nil && err != nil:
			t.Fatalf("%s: %v", p.name, err)
		case p.want != nil && !errors.As(err, p.want):
			t.Fatalf("%s: error %v, want a %T", p.name, err, p.want)
		}
	}
}

// debitPaths runs the debit function through each way a DEBIT ends.
func debitPaths(t *testing.T, env *callEnv, cfg aws.Config) {
	d := transfer.NewDebitHandler(cfg, env.legConfig(t), discard())
	d.Metrics = quietMetrics()
	debited := env.transfer(t, "acc-src", "acc-dst", 300, env.t0)
	tooLarge := env.transfer(t, "acc-src", "acc-dst", 5000, env.t0)
	noDestination := env.transfer(t, "acc-src", "acc-ghost", 100, env.t0)
	older := env.transfer(t, "acc-src", "acc-dst", 100, env.t0)
	settled := env.transfer(t, "acc-src", "acc-dst", 100, env.t0)
	env.settle(t, settled, ledger.StatusFailed)
	olderDebit := legInput(older, ledger.LegDebit)
	olderDebit.DestinationAccountID = "" // as the definition before the destination check sends it
	if _, err := env.store.CreateAccountOfKind(context.Background(), "funding-EUR", "EUR", ledger.KindFunding, 0, env.t0); err != nil {
		t.Fatal(err)
	}
	funded := env.operatorTransfer(t, "funding-EUR", "acc-dst", 100, env.t0)
	operatorOwned := env.operatorTransfer(t, "acc-src", "acc-dst", 100, env.t0)
	// A transfer whose record is gone: the refusal carries no image of it, so the record is read.
	id, err := ledger.NewTransferID(ledger.KeyHash("setup", "no-record"), nil)
	if err != nil {
		t.Fatal(err)
	}
	noRecord := ledger.NewTransferRecord(ledger.Transfer{TransferID: id, Scope: "setup", SourceAccountID: "acc-src",
		DestinationAccountID: "acc-dst", Amount: 100, Currency: "EUR", ExecutionArn: transfer.ExecutionArn(env.machineArn, id)}, env.t0, 0)
	runLegPaths(t, d.Handle, []legPath{
		{name: "DEBIT applied", in: legInput(debited, ledger.LegDebit)},
		{name: "DEBIT replayed", in: legInput(debited, ledger.LegDebit)},
		{name: "DEBIT with insufficient funds", in: legInput(tooLarge, ledger.LegDebit), want: new(*transfer.InsufficientFunds)},
		{name: "DEBIT to a missing destination", in: legInput(noDestination, ledger.LegDebit), want: new(*transfer.AccountNotFound)},
		{name: "DEBIT without a destination, from an older definition", in: olderDebit},
		{name: "DEBIT by an operator, out of a funding account (reads its floor)", in: legInput(funded, ledger.LegDebit)},
		{name: "DEBIT by an operator, out of an owned account (refused after the read)", in: legInput(operatorOwned, ledger.LegDebit),
			want: new(*transfer.AccountNotFound)},
		{name: "DEBIT of a settled transfer (fenced)", in: legInput(settled, ledger.LegDebit), want: new(*transfer.TransferNotInProgress)},
		{name: "DEBIT of a transfer without a record (fenced)", in: legInput(noRecord, ledger.LegDebit), want: new(*transfer.TransferNotInProgress)},
	})
}

// creditPaths runs the credit function through each way a CREDIT or REFUND ends.
func creditPaths(t *testing.T, env *callEnv, cfg aws.Config) {
	c := transfer.NewCreditHandler(cfg, env.legConfig(t), discard())
	c.Metrics = quietMetrics()
	credited := env.transfer(t, "acc-src", "acc-dst", 300, env.t0)
	refunded := env.transfer(t, "acc-src", "acc-dst", 200, env.t0)
	notDebited := env.transfer(t, "acc-src", "acc-dst", 100, env.t0)
	settled := env.transfer(t, "acc-src", "acc-dst", 100, env.t0)
	// A transfer to an account that does not exist, debited by an execution of the definition before the DEBIT's
	// destination check: its CREDIT is refused, and that refusal reads the account (the cancellation's image of a
	// missing item is empty).
	ghost := env.transfer(t, "acc-src", "acc-ghost", 100, env.t0)
	olderDebit := ghost.LegRequest(ledger.LegDebit)
	olderDebit.DestinationAccountID = ""
	if _, _, err := env.ledger.ApplyLeg(context.Background(), olderDebit, env.t0); err != nil {
		t.Fatal(err)
	}
	// The current definition's CREDIT settles the record in its own transaction; replayed after an older
	// definition's CREDIT (no settle) left the record IN_PROGRESS, it settles it with ledger.SettleTransfer, whose
	// transaction checks the CREDIT entry (dynamodb:ConditionCheckItem).
	settling := env.transfer(t, "acc-src", "acc-dst", 100, env.t0)
	olderCredit := env.transfer(t, "acc-src", "acc-dst", 100, env.t0)
	withSettle := func(in transfer.LegInput) transfer.LegInput { in.Settle = true; return in }
	env.applyLeg(t, credited, ledger.LegDebit)
	env.applyLeg(t, refunded, ledger.LegDebit)
	env.applyLeg(t, settling, ledger.LegDebit)
	env.applyLeg(t, olderCredit, ledger.LegDebit)
	env.applyLeg(t, olderCredit, ledger.LegCredit)
	env.settle(t, settled, ledger.StatusFailed)
	runLegPaths(t, c.Handle, []legPath{
		{name: "CREDIT that settles the transfer", in: withSettle(legInput(settling, ledger.LegCredit))},
		{name: "CREDIT that settles, replayed: reads when it was settled", in: withSettle(legInput(settling, ledger.LegCredit))},
		{name: "CREDIT that settles, replayed after an older definition's CREDIT: settles the record", in: withSettle(legInput(olderCredit, ledger.LegCredit))},
		{name: "CREDIT to a missing account", in: legInput(ghost, ledger.LegCredit), want: new(*transfer.AccountNotFound)},
		{name: "CREDIT applied", in: legInput(credited, ledger.LegCredit)},
		{name: "CREDIT replayed", in: legInput(credited, ledger.LegCredit)},
		{name: "REFUND after a CREDIT", in: legInput(credited, ledger.LegRefund), want: new(*transfer.CreditAlreadyApplied)},
		{name: "REFUND applied", in: legInput(refunded, ledger.LegRefund)},
		{name: "REFUND replayed", in: legInput(refunded, ledger.LegRefund)},
		{name: "CREDIT after a REFUND", in: legInput(refunded, ledger.LegCredit), want: new(*transfer.RefundAlreadyApplied)},
		{name: "CREDIT without a DEBIT", in: legInput(notDebited, ledger.LegCredit), want: new(*transfer.DebitNotApplied)},
		{name: "CREDIT of a settled transfer (fenced)", in: legInput(settled, ledger.LegCredit), want: new(*transfer.TransferNotInProgress)},
	})
}

// reconcilerPaths runs the timeout reconciler on the status changes it settles and on sweeps that re-drive, settle
// and leave transfers.
// relayPaths publishes the outcome events of a batch of stream records: a completed and a failed settlement, and a
// write that settles nothing.
func relayPaths(t *testing.T, env *callEnv, cfg aws.Config) {
	c, err := transfer.LoadRelayConfig(env.getenv)
	if err != nil {
		t.Fatal(err)
	}
	r := transfer.NewOutcomeRelayHandler(cfg, c, discard())
	env.account(t, "acc-src", 1000)
	env.account(t, "acc-dst", 0)
	var batch events.DynamoDBEvent
	for i, status := range []string{ledger.StatusCompleted, ledger.StatusFailed, ""} {
		rec := env.transfer(t, "acc-src", "acc-dst", 100, env.t0)
		after := rec
		if status != "" {
			if status == ledger.StatusCompleted {
				env.applyLeg(t, rec, ledger.LegDebit)
				env.applyLeg(t, rec, ledger.LegCredit)
			}
			env.settle(t, rec, status)
			if after, err = env.store.GetRecord(context.Background(), rec.TransferID); err != nil {
				t.Fatal(err)
			}
		}
		sr, err := streamtest.Record(fmt.Sprintf("1%020d", i), []string{"pk", "sk"}, rec, after)
		if err != nil {
			t.Fatal(err)
		}
		batch.Records = append(batch.Records, sr)
	}
	const path = "stream batch of two settlements and a write that settles nothing: two outcome events published"
	resp, err := r.Handle(withPath(context.Background(), path), batch)
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("%s: %+v, %v", path, resp, err)
	}
}

func reconcilerPaths(t *testing.T, env *callEnv, cfg aws.Config) {
	rc, err := transfer.LoadReconcilerConfig(env.getenv)
	if err != nil {
		t.Fatal(err)
	}
	r := transfer.NewReconcilerHandler(cfg, rc, discard())
	r.Metrics = quietMetrics()
	now := env.t0.Add(time.Minute)
	r.Now = func() time.Time { return now }
	handle := func(path string, ev events.CloudWatchEvent) {
		t.Helper()
		if err := r.Handle(withPath(context.Background(), path), ev); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	env.createMachine(t)
	env.account(t, "acc-src", 1000)
	env.account(t, "acc-dst", 0)

	for _, st := range []struct{ status, code string }{
		{"TIMED_OUT", transfer.CodeTimedOut}, {"FAILED", transfer.CodeWorkflowFailed}, {"ABORTED", transfer.CodeAborted},
	} {
		rec := env.transfer(t, "acc-src", "acc-dst", 100, env.t0)
		env.applyLeg(t, rec, ledger.LegDebit)
		env.endExecution(t, rec, sfntypes.ExecutionStatus(st.status))
		detail := fmt.Sprintf(`{"executionArn":%q,"stateMachineArn":%q,"name":%q,"status":%q}`,
			rec.ExecutionArn, env.machineArn, rec.TransferID, st.status)
		path := st.status + " execution of a transfer debited, not credited: refunded and settled"
		handle(path, events.CloudWatchEvent{DetailType: transfer.DetailTypeStatusChange, Source: "aws.states", Detail: []byte(detail)})
		env.wantRecord(t, path, rec.TransferID, ledger.StatusFailed, st.code)
	}

	// A workflow that settled its transfer and then failed (stopped, timed out): the record is left as it is.
	settled := env.transfer(t, "acc-src", "acc-dst", 100, env.t0)
	env.settle(t, settled, ledger.StatusFailed)
	detail := fmt.Sprintf(`{"executionArn":%q,"stateMachineArn":%q,"name":%q,"status":"FAILED","error":"States.Runtime"}`,
		settled.ExecutionArn, env.machineArn, settled.TransferID)
	handle("FAILED execution of a settled transfer: left as it is",
		events.CloudWatchEvent{DetailType: transfer.DetailTypeStatusChange, Source: "aws.states", Detail: []byte(detail)})

	sweep := events.CloudWatchEvent{DetailType: transfer.DetailTypeScheduled, Source: "aws.events"}
	orphan := env.transfer(t, "acc-src", "acc-dst", 100, env.t0)
	now = env.t0.Add(rc.GiveUpAfter + time.Hour)
	path := "sweep: a workflow that never started, past giving up: settled ORPHANED"
	handle(path, sweep)
	env.wantRecord(t, path, orphan.TransferID, ledger.StatusFailed, transfer.CodeOrphaned)

	aborted := env.transfer(t, "acc-src", "acc-dst", 100, now)
	if _, err := env.sfn.StartExecution(context.Background(), &sfn.StartExecutionInput{
		StateMachineArn: aws.String(env.machineArn), Name: aws.String(aborted.TransferID), Input: aws.String("{}"),
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.sfn.StopExecution(context.Background(), &sfn.StopExecutionInput{ExecutionArn: aws.String(aborted.ExecutionArn)}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(rc.OrphanAfter + time.Minute)
	path = "sweep: a workflow that ended without settling: settled from the ledger"
	handle(path, sweep)
	env.wantRecord(t, path, aborted.TransferID, ledger.StatusFailed, transfer.CodeAborted)

	stalled := env.transfer(t, "acc-src", "acc-dst", 100, now)
	now = now.Add(rc.OrphanAfter + time.Minute)
	path = "sweep: a workflow that never started: re-driven"
	handle(path, sweep)
	env.wantRecord(t, path, stalled.TransferID, ledger.StatusInProgress, "")
	out, err := env.sfn.DescribeExecution(context.Background(), &sfn.DescribeExecutionInput{ExecutionArn: aws.String(stalled.ExecutionArn)})
	if err != nil || out.Status != "RUNNING" {
		t.Fatalf("%s: execution %v, %v; want it RUNNING", path, out, err)
	}

	now = now.Add(time.Minute)
	path = "sweep: a running workflow left to finish"
	handle(path, sweep)
	env.wantRecord(t, path, stalled.TransferID, ledger.StatusInProgress, "")
	entries, err := env.store.Entries(context.Background(), stalled.TransferID)
	if err != nil || len(entries) != 0 {
		t.Fatalf("%s: ledger entries %v, %v; want none", path, entries, err)
	}
}
