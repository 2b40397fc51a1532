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

	"github.com/transferflow/orchestrator/internal/ddblocal"
	"github.com/transferflow/orchestrator/internal/gateway"
	"github.com/transferflow/orchestrator/internal/lambdalocal"
	"github.com/transferflow/orchestrator/internal/ledger"
	"github.com/transferflow/orchestrator/internal/metrics"
	"github.com/transferflow/orchestrator/internal/transfer"
)

// These tests run transferctl against the real orchestrator handler on a real Dynoxide, behind the project's
// API Gateway stand-in (internal/gateway, through the in-process Lambda invoker), with a Step Functions stand-in that only answers StartExecution. They are skipped
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
	srv, tables := ddblocal.StartWithTablesT(t)
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
	o.Store = ledger.NewStore(s.db, s.table)
	o.SFN = sfn.NewFromConfig(cfg, func(o *sfn.Options) { o.BaseEndpoint = aws.String(sfnSrv.URL) })
	o.Now = s.clock.Now // the orchestrator's reservation window runs on the CLI's fake clock
	// Its metrics are encoded as on Lambda, but not onto the test binary's standard output.
	o.Metrics = metrics.New(io.Discard, c.MetricsNamespace)
	// The orchestrator behind the project's own API Gateway stand-in, invoked as the local stack invokes it.
	var n atomic.Int64
	newID := func() string { return fmt.Sprint("req-", n.Add(1)) }
	inv := lambdalocal.New("us-east-1", "123456789012", newID, slog.New(slog.DiscardHandler),
		lambdalocal.Function{Name: "Orchestrator", NewHandler: func() lambda.Handler { return lambda.NewHandler(o.Handle) }, Timeout: 10 * time.Second})
	gw, err := gateway.New([]gateway.Route{
		{Method: http.MethodPost, Resource: "/transfers", Function: "Orchestrator"},
		{Method: http.MethodGet, Resource: "/transfers/{transferId}", Function: "Orchestrator"},
	}, inv, gateway.Options{NewID: newID})
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
