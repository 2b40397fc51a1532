package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/transferflow/orchestrator/internal/ledger"
	"github.com/transferflow/orchestrator/internal/syncio"
	"github.com/transferflow/orchestrator/localaws/ddbserver"
	stackproc "github.com/transferflow/orchestrator/localaws/stack"
)

// binary is the local stack, built once by TestMain.
var binary string

// root is the repository root (where template.yaml is).
var root string

// Every test of this package starts its own stacks (each on free ports, with its own data directory and its own
// Dynoxide) and shares nothing else but the binaries, so every test runs in parallel (t.Parallel). Most of a test's
// time is waiting (for a workflow's retries and backoffs, a fault's delay, a restart, schemathesis's time budget),
// not computing, so more of them run at once than go test's default -parallel (GOMAXPROCS): parallelPerCPU per
// CPU, unless -parallel is given.
const parallelPerCPU = 4

func TestMain(m *testing.M) {
	flag.Parse()
	parallelSet := false
	flag.Visit(func(f *flag.Flag) { parallelSet = parallelSet || f.Name == "test.parallel" })
	if !parallelSet {
		_ = flag.Set("test.parallel", strconv.Itoa(parallelPerCPU*runtime.GOMAXPROCS(0)))
	}
	if err := build(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// build builds the stack's binary, kept between runs (stackproc.KeptBinary): an unchanged one is not linked again.
func build() error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	root = filepath.Dir(filepath.Dir(wd)) // lab/e2e
	binary, err = stackproc.KeptBinary(context.Background(), root, "./cmd/local", "e2e")
	return err
}

// localCaller is the principal of the local gateway's unsigned requests, the owner of the seeded accounts.
const localCaller = "arn:aws:iam::000000000000:user/local"

// accounts are the accounts every stack is seeded with.
var accounts = []map[string]any{
	{"accountId": "acc-alice", "currency": "EUR", "balance": 100000, "owner": localCaller},
	{"accountId": "acc-bob", "currency": "EUR", "balance": 5000, "owner": localCaller},
	{"accountId": "acc-carol", "currency": "USD", "balance": 7000, "owner": localCaller},
	{"accountId": "acc-erin", "currency": "EUR", "balance": 0, "owner": localCaller},
}

// stack is a local stack running as its own process.
type stack struct {
	t        testing.TB
	API      string
	SFN      string
	DynamoDB string
	Events   string
	cmd      *exec.Cmd
	stdout   *stdoutBuffer
	stderr   *syncio.Buffer
	// exited is closed once the process has exited and waitErr holds what cmd.Wait returned. Only the waiting
	// goroutine touches cmd.ProcessState before that; readers go through exited, which orders them after it.
	exited  chan struct{}
	waitErr error
}

// stdoutBuffer keeps everything the stack prints on stdout and hands its ready line to ready, once.
type stdoutBuffer struct {
	syncio.Buffer
	ready chan string
	once  sync.Once
}

func (w *stdoutBuffer) Write(p []byte) (int, error) {
	n, err := w.Buffer.Write(p)
	for _, line := range strings.SplitAfter(w.String(), "\n") {
		if strings.HasPrefix(line, "ready ") && strings.HasSuffix(line, "\n") {
			w.once.Do(func() { w.ready <- strings.TrimSpace(line) })
		}
	}
	return n, err
}

// dynamoDBLocals holds each test's DynamoDB Local under TEST_DYNAMODB=dynamodb-local (*testing.T to
// *ddbserver.Server): the stacks a test starts share it, so that a restarted stack finds its data as it does in its
// --data-dir with Dynoxide.
var dynamoDBLocals sync.Map

// dynamoDBArgs returns the flags that point a stack of t at the test's DynamoDB Local, started on first use, or none
// with Dynoxide, which each stack starts itself.
func dynamoDBArgs(t testing.TB) []string {
	t.Helper()
	store, err := ddbserver.TestStore()
	if err != nil {
		t.Fatal(err)
	}
	if store != ddbserver.DynamoDBLocal {
		if _, err := ddbserver.BinaryPath(); err != nil {
			ddbserver.StartT(t) // skips, or fails under CI, with the reason
		}
		return nil
	}
	srv, ok := dynamoDBLocals.Load(t)
	if !ok {
		s := ddbserver.StartT(t) // stopped after the stacks: cleanups run last-registered first
		dynamoDBLocals.Store(t, s)
		t.Cleanup(func() { dynamoDBLocals.Delete(t) })
		srv = s
	}
	return []string{"--dynamodb-endpoint", srv.(*ddbserver.Server).URL}
}

// startStack runs the local stack on free ports with the given extra flags and waits for its ready line. The stack
// is stopped when the test ends. Under TEST_DYNAMODB=dynamodb-local it uses the test's DynamoDB Local through
// --dynamodb-endpoint instead of starting Dynoxide.
func startStack(t testing.TB, args ...string) *stack {
	t.Helper()
	return launchStack(t, append(dynamoDBArgs(t), args...))
}

// startStackWithDynoxide is startStack with the stack's own Dynoxide whatever TEST_DYNAMODB says: for the tests of
// how the stack supervises the Dynoxide it starts, which a stack given --dynamodb-endpoint does not have.
func startStackWithDynoxide(t *testing.T, args ...string) *stack {
	t.Helper()
	if _, err := ddbserver.BinaryPath(); err != nil {
		ddbserver.StartT(t) // skips, or fails under CI, with the reason
	}
	return launchStack(t, args)
}

// launchStack starts the stack with args after the base flags and waits for its ready line.
func launchStack(t testing.TB, args []string) *stack {
	t.Helper()
	seed := filepath.Join(t.TempDir(), "accounts.json")
	b, _ := json.Marshal(accounts)
	if err := os.WriteFile(seed, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// The IAM user operator is an operator, as make run makes it; every other caller is a client.
	base := []string{"--template", filepath.Join(root, "template.yaml"), "--seed", seed, "--operator", operatorCaller,
		"--api-addr", "127.0.0.1:0", "--sfn-addr", "127.0.0.1:0", "--dynamodb-addr", "127.0.0.1:0", "--events-addr", "127.0.0.1:0"}
	return runStack(t, "", append(base, args...))
}

// runStack starts the stack in dir (empty: the test's directory) with exactly args and waits for its ready line.
func runStack(t testing.TB, dir string, args []string) *stack {
	t.Helper()
	s := &stack{t: t, stdout: &stdoutBuffer{ready: make(chan string, 1)}, stderr: &syncio.Buffer{}, exited: make(chan struct{})}
	s.cmd = exec.Command(binary, args...)
	s.cmd.Dir = dir
	s.cmd.Stdout = s.stdout
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() { s.stop(syscall.SIGTERM) })

	select {
	case line := <-s.stdout.ready:
		for _, f := range strings.Fields(line)[1:] {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "api":
				s.API = v
			case "sfn":
				s.SFN = v
			case "dynamodb":
				s.DynamoDB = v
			case "events":
				s.Events = v
			}
		}
	case <-s.exited:
		t.Fatalf("local stack exited before ready: %v\n%s", s.waitErr, s.stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("local stack not ready after 30s\n%s", s.stderr)
	}
	return s
}

// stop signals the stack and waits for it to exit; it must stop within the 5 seconds docs/local-stack.md promises.
func (s *stack) stop(sig syscall.Signal) {
	select {
	case <-s.exited:
		return
	default:
	}
	_ = s.cmd.Process.Signal(sig)
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
		s.t.Errorf("local stack did not stop within 5 seconds of %v", sig)
	}
}

// condition says whether the stack is still running, and when it is not, how it ended and the end of its log: for
// a request that found no server, whose own error ("connection refused") does not say why.
func (s *stack) condition() string {
	select {
	case <-s.exited:
		return fmt.Sprintf("the stack has exited (%v); the end of its log:\n%s", s.waitErr, tail(s.stderr.String(), 4000))
	default:
		return "the stack is still running"
	}
}

// response is an HTTP answer with its decoded JSON body.
type response struct {
	Status  int
	Header  http.Header
	Body    map[string]any
	RawBody []byte
}

// do sends body, when not nil, as JSON.
func (s *stack) do(method, path string, body any, headers map[string]string) response {
	s.t.Helper()
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			s.t.Fatal(err)
		}
		h := map[string]string{"Content-Type": "application/json"}
		for k, v := range headers {
			h[k] = v
		}
		headers = h
	}
	return s.raw(method, path, b, headers)
}

// raw sends a request with exactly these headers and body bytes, as a client that builds its own requests would.
func (s *stack) raw(method, path string, body []byte, headers map[string]string) response {
	s.t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, s.API+path, r)
	if err != nil {
		s.t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return s.send(req)
}

// send sends req and reads the answer.
func (s *stack) send(req *http.Request) response {
	s.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v; %s", req.Method, req.URL.Path, err, s.condition())
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := response{Status: resp.StatusCode, Header: resp.Header, RawBody: raw}
	_ = json.Unmarshal(raw, &out.Body)
	return out
}

// executions lists the transfer workflow's executions through the stack's Step Functions API, with the real SDK.
func (s *stack) executions() []sfntypes.ExecutionListItem {
	s.t.Helper()
	client := sfn.New(sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String(s.SFN),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")})
	var out []sfntypes.ExecutionListItem
	p := sfn.NewListExecutionsPaginator(client, &sfn.ListExecutionsInput{StateMachineArn: aws.String(stateMachineArn)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			s.t.Fatalf("list executions: %v", err)
		}
		out = append(out, page.Executions...)
	}
	return out
}

// stateMachineArn is the transfer workflow's ARN on the local stack.
const stateMachineArn = "arn:aws:states:us-east-1:000000000000:stateMachine:TransferStateMachine"

func transferBody(from, to string, amount int64, currency string) map[string]any {
	return map[string]any{"sourceAccountId": from, "destinationAccountId": to, "amount": amount, "currency": currency}
}

// submit posts a transfer with an Idempotency-Key.
func (s *stack) submit(key string, body map[string]any) response {
	s.t.Helper()
	return s.do(http.MethodPost, "/transfers", body, map[string]string{"Idempotency-Key": key})
}

// waitTerminal polls the transfer, as the unsigned local caller, until it is COMPLETED or FAILED.
func (s *stack) waitTerminal(id string, within time.Duration) map[string]any {
	s.t.Helper()
	return s.waitTerminalAs(func() response { return s.do(http.MethodGet, "/transfers/"+id, nil, nil) }, id, within)
}

// waitTerminalAs polls the transfer with get until it is COMPLETED or FAILED.
func (s *stack) waitTerminalAs(get func() response, id string, within time.Duration) map[string]any {
	s.t.Helper()
	deadline := time.Now().Add(within)
	for {
		r := get()
		if r.Status == http.StatusOK && r.Body["status"] != "IN_PROGRESS" {
			return r.Body
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("transfer %s not terminal after %s: %s\n%s", id, within, r.RawBody, tail(s.stderr.String(), 4000))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// table is the stack's table, as the local stack names it: the template's logical id.
const table = "TransfersTable"

// store reads the stack's table directly, whoever owns what: how the tests see balances, owners and records
// without going through the API's authorization.
func (s *stack) store() *ledger.Store {
	return ledger.NewStore(ddbserver.NewClient(s.DynamoDB, nil), table)
}

// balance is the account's balance, read from the table.
func (s *stack) balance(account string) int64 {
	s.t.Helper()
	a, err := s.store().GetAccount(context.Background(), account)
	if err != nil {
		s.t.Fatalf("account %s: %v", account, err)
	}
	return a.Balance
}

// history reads the whole audit trail of a transfer: every page of events, and the ledger legs.
func (s *stack) history(id string) (events []map[string]any, legs map[string]map[string]any) {
	s.t.Helper()
	legs = map[string]map[string]any{}
	token := ""
	for {
		path := "/transfers/" + id + "/history?maxResults=7"
		if token != "" {
			path += "&nextToken=" + url.QueryEscape(token)
		}
		r := s.do(http.MethodGet, path, nil, nil)
		// A 503 is the API's "retry with the same request" (a dependency was slow or refused); a client retries it
		// after Retry-After, and so does this reader, saying what failed. Anything else is a failure.
		for attempt := 1; r.Status == http.StatusServiceUnavailable && attempt < 10; attempt++ {
			s.t.Logf("history %s: 503, retried after %ss; the stack logged: %s", id, r.Header.Get("Retry-After"),
				lastLine(s.stderr.String(), "dependency failed"))
			wait, _ := strconv.Atoi(r.Header.Get("Retry-After"))
			time.Sleep(time.Duration(max(wait, 1)) * time.Second)
			r = s.do(http.MethodGet, path, nil, nil)
		}
		if r.Status != http.StatusOK {
			s.t.Fatalf("history %s: %d %s\n%s", id, r.Status, r.RawBody, tail(s.stderr.String(), 4000))
		}
		for _, e := range r.Body["events"].([]any) {
			events = append(events, e.(map[string]any))
		}
		for _, l := range r.Body["ledger"].([]any) {
			leg := l.(map[string]any)
			legs[leg["leg"].(string)] = leg
		}
		token, _ = r.Body["nextToken"].(string)
		if token == "" {
			return events, legs
		}
	}
}

// lastLine returns the last line of s that contains substr, or "(none)".
func lastLine(s, substr string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], substr) {
			return lines[i]
		}
	}
	return "(none)"
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
