package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/transferflow/orchestrator/internal/clocktest"
)

// reply is one scripted answer of the fake API.
type reply struct {
	status     int
	body       string
	retryAfter string
	replayed   bool
}

// seen is one request the fake API received.
type seen struct {
	method, path string
	header       http.Header
	body         []byte
}

// fakeAPI answers "METHOD /path" with its scripted replies in order, repeating the last; unknown routes are 404.
type fakeAPI struct {
	mu     sync.Mutex
	routes map[string][]reply
	served map[string]int
	reqs   []seen
}

func newFakeAPI(routes map[string][]reply) *fakeAPI {
	return &fakeAPI{routes: routes, served: map[string]int{}}
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	route := r.Method + " " + r.URL.Path
	f.mu.Lock()
	f.reqs = append(f.reqs, seen{r.Method, r.URL.Path, r.Header.Clone(), body})
	replies, ok := f.routes[route]
	var rep reply
	if ok {
		rep = replies[min(f.served[route], len(replies)-1)]
		f.served[route]++
	}
	f.mu.Unlock()
	if !ok {
		rep = reply{status: 404, body: problem(404, "NOT_FOUND", "no route")}
	}
	w.Header().Set("Content-Type", "application/json")
	if rep.retryAfter != "" {
		w.Header().Set("Retry-After", rep.retryAfter)
	}
	if rep.replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	if rep.status/100 == 3 {
		w.Header().Set("Location", r.URL.Path) // a redirect loop, if anyone followed it
	}
	w.WriteHeader(rep.status)
	io.WriteString(w, rep.body)
}

func (f *fakeAPI) requests() []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seen(nil), f.reqs...)
}

func transferBody(id, status string) string {
	s := `{"transferId":"` + id + `","status":"` + status + `","sourceAccountId":"acc-alice","destinationAccountId":"acc-bob","amount":1250,"currency":"EUR",` +
		`"executionArn":"arn:aws:states:eu-west-1:123456789012:execution:sm:` + id + `","createdAt":"2026-11-21T10:00:00.123Z","updatedAt":"2026-11-21T10:00:00.123Z"`
	if status == "FAILED" {
		s += `,"completedAt":"2026-11-21T10:00:01.000Z","failure":{"code":"INSUFFICIENT_FUNDS","message":"the source account's balance does not cover the amount"}`
	}
	return s + `,"links":{"self":"/transfers/` + id + `","history":"/transfers/` + id + `/history"}}`
}

func problem(status int, code, detail string) string {
	return `{"type":"/problems/x","title":"` + http.StatusText(status) + `","status":` + strconv.Itoa(status) + `,"detail":"` + detail + `","code":"` + code + `"}`
}

// harness runs transferctl against a fake API with a fake clock, fixed keys and static AWS credentials.
type harness struct {
	t              *testing.T
	api            *fakeAPI
	srv            *httptest.Server
	env            map[string]string
	deps           deps
	clock          *clocktest.Clock
	stdout, stderr bytes.Buffer
	awsRegions     []string // the region argument of each loadAWS call
	configRegion   string   // what the "AWS config" says when no region is forced
}

const (
	testAccessKey = "AKIDEXAMPLE"
	testSecret    = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
)

func newHarness(t *testing.T, routes map[string][]reply) *harness {
	t.Helper()
	h := &harness{t: t, api: newFakeAPI(routes), clock: clocktest.New(time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)), configRegion: "us-east-2"}
	h.srv = httptest.NewServer(h.api)
	t.Cleanup(h.srv.Close)
	h.env = map[string]string{"TRANSFERCTL_ENDPOINT": h.srv.URL}
	h.deps = deps{
		http: h.srv.Client(),
		loadAWS: func(_ context.Context, region string) (aws.Config, error) {
			h.awsRegions = append(h.awsRegions, region)
			if region == "" {
				region = h.configRegion
			}
			return aws.Config{Region: region, Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
				return aws.Credentials{AccessKeyID: testAccessKey, SecretAccessKey: testSecret}, nil
			})}, nil
		},
		now:    h.clock.Now,
		sleep:  h.clock.Sleep,
		jitter: func() float64 { return 0.5 },
		newKey: func() string { return "GENERATEDKEY0001" },
	}
	return h
}

func (h *harness) run(args ...string) int {
	h.t.Helper()
	h.stdout.Reset()
	h.stderr.Reset()
	return runWith(context.Background(), args, &h.stdout, &h.stderr, func(k string) string { return h.env[k] }, h.deps)
}

var submitArgs = []string{"submit", "--from", "acc-alice", "--to", "acc-bob", "--amount", "1250", "--currency", "EUR"}

func args(base []string, more ...string) []string {
	return append(append([]string(nil), base...), more...)
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string // in stderr
	}{
		{"no command", nil, nil, "usage:"},
		{"unknown command", []string{"transfer"}, nil, `unknown command "transfer"`},
		{"unknown flag", []string{"get", "tr_1", "--colour"}, nil, "flag provided but not defined: -colour"},
		{"submit without --from", []string{"submit", "--to", "acc-bob", "--amount", "1", "--currency", "EUR"}, nil, "--from"},
		{"decimal amount", args(submitArgs[:5], "--amount", "12.50", "--currency", "EUR"), nil, "decimals are refused"},
		{"decimal comma", args(submitArgs[:5], "--amount", "12,50", "--currency", "EUR"), nil, "decimals are refused"},
		{"zero amount", args(submitArgs[:5], "--amount", "0", "--currency", "EUR"), nil, "must be 1 to 100000000000"},
		{"amount above 10^11", args(submitArgs[:5], "--amount", "100000000001", "--currency", "EUR"), nil, "must be 1 to"},
		{"negative amount", args(submitArgs[:5], "--amount", "-5", "--currency", "EUR"), nil, "positive integer"},
		{"exponent amount", args(submitArgs[:5], "--amount", "1e3", "--currency", "EUR"), nil, "positive integer"},
		{"missing amount", args(submitArgs[:5], "--currency", "EUR"), nil, "--amount is required"},
		{"same accounts", []string{"submit", "--from", "acc-a", "--to", "acc-a", "--amount", "1", "--currency", "EUR"}, nil, "must differ"},
		{"lower-case currency", args(submitArgs[:7], "--currency", "eur"), nil, "three upper-case letters"},
		{"long reference", args(submitArgs, "--reference", strings.Repeat("r", 141)), nil, "at most 140"},
		{"control character in reference", args(submitArgs, "--reference", "a\nb"), nil, "control characters"},
		{"C1 next line in reference", args(submitArgs, "--reference", "a\u0085b"), nil, "control characters"},
		{"line separator in reference", args(submitArgs, "--reference", "a\u2028b"), nil, "line separators"},
		{"paragraph separator in reference", args(submitArgs, "--reference", "a\u2029b"), nil, "line separators"},
		{"bidi override in reference", args(submitArgs, "--reference", "inv \u202e811"), nil, "bidirectional controls"},
		{"bidi isolate in reference", args(submitArgs, "--reference", "\u2066x\u2069"), nil, "bidirectional controls"},
		{"bidi mark in reference", args(submitArgs, "--reference", "x\u200f1"), nil, "bidirectional controls"},
		{"key with a space", args(submitArgs, "--idempotency-key", "a b"), nil, "not printable ASCII"},
		{"positional argument to submit", args(submitArgs, "extra"), nil, "submit takes no arguments"},
		{"get without id", []string{"get"}, nil, "one TRANSFER_ID"},
		{"get with two ids", []string{"get", "tr_1", "tr_2"}, nil, "one TRANSFER_ID"},
		{"history without id", []string{"history"}, nil, "one TRANSFER_ID"},
		{"accounts without id", []string{"accounts"}, nil, "one or more ACCOUNT_IDs"},
		{"bad account id", []string{"accounts", "acc/x"}, nil, `account id "acc/x"`},
		{"bad output", []string{"--output", "yaml", "get", "tr_1"}, nil, "want text or json"},
		{"bad sign", []string{"get", "tr_1", "--sign=maybe"}, nil, "want auto, true or false"},
		{"zero timeout", []string{"get", "tr_1", "--timeout", "0s"}, nil, "--timeout must be positive"},
		{"max-attempts 0", []string{"get", "tr_1", "--max-attempts", "0"}, nil, "--max-attempts must be 1 to 20"},
		{"plain http off loopback", []string{"get", "tr_1", "--endpoint", "http://api.example.com"}, nil, "plain http is allowed only to loopback"},
		{"endpoint from env is checked too", []string{"get", "tr_1"}, map[string]string{"TRANSFERCTL_ENDPOINT": "ftp://x"}, "want http(s)://"},
		{"endpoint with a query", []string{"get", "tr_1", "--endpoint", "https://x.example.com/?a=1"}, nil, "want http(s)://"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			for k, v := range tc.env {
				h.env[k] = v
			}
			h.wantUsageError(tc.args, tc.want)
		})
	}
}

// wantUsageError runs transferctl with args and checks a usage error: exit 2, want in stderr, nothing on stdout and
// nothing sent.
func (h *harness) wantUsageError(args []string, want string) {
	h.t.Helper()
	if code := h.run(args...); code != exitUsage {
		h.t.Errorf("exit = %d, want %d (usage); stderr:\n%s", code, exitUsage, h.stderr.String())
	}
	if !strings.Contains(h.stderr.String(), want) {
		h.t.Errorf("stderr does not contain %q:\n%s", want, h.stderr.String())
	}
	if h.stdout.Len() != 0 {
		h.t.Errorf("stdout is not empty: %s", h.stdout.String())
	}
	if n := len(h.api.requests()); n != 0 {
		h.t.Errorf("%d requests sent", n)
	}
}

func TestSigningWithoutARegionIsAUsageError(t *testing.T) {
	h := newHarness(t, nil)
	h.configRegion = "" // no AWS_REGION, no region in the shared config
	if code := h.run("get", "tr_1", "--endpoint", "https://payments.example.com"); code != exitUsage || !strings.Contains(h.stderr.String(), "cannot tell which region") {
		t.Errorf("exit %d, stderr %q", code, h.stderr.String())
	}
	if n := len(h.api.requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

func TestRedirectsAreNotFollowed(t *testing.T) {
	h := newHarness(t, map[string][]reply{"POST /transfers": {{status: http.StatusTemporaryRedirect, body: `{}`}}})
	h.deps.http = &http.Client{CheckRedirect: defaultDeps().http.CheckRedirect}
	if code := h.run(submitArgs...); code != exitError {
		t.Errorf("exit = %d, want %d; stderr:\n%s", code, exitError, h.stderr.String())
	}
	if n := len(h.api.requests()); n != 1 {
		t.Errorf("requests = %d, want 1", n)
	}
}

func TestHelpExitsZero(t *testing.T) {
	for _, a := range [][]string{{"help"}, {"--help"}, {"-h"}, {"submit", "-h"}, {"get", "--help"}} {
		h := newHarness(t, nil)
		if code := h.run(a...); code != exitOK || !strings.Contains(h.stderr.String(), "exit codes:") {
			t.Errorf("%v: exit %d, stderr %q", a, code, h.stderr.String())
		}
	}
}

func TestExitCodes(t *testing.T) {
	inProgress := reply{status: 202, body: transferBody("tr_1", "IN_PROGRESS")}
	tests := []struct {
		name       string
		routes     map[string][]reply
		args       []string
		want       int
		wantStdout string // substring
		wantStderr string // substring
		wantReqs   int
	}{
		{"submit accepted", map[string][]reply{"POST /transfers": {inProgress}}, submitArgs, exitOK, "IN_PROGRESS", "accepted: transfer tr_1", 1},
		{"submit replay of a FAILED transfer", map[string][]reply{"POST /transfers": {{status: 200, body: transferBody("tr_1", "FAILED"), replayed: true}}}, submitArgs, exitTransferFailed, "INSUFFICIENT_FUNDS", "replayed", 1},
		{"submit rejected: key reused", map[string][]reply{"POST /transfers": {{status: 422, body: problem(422, "IDEMPOTENCY_KEY_REUSED", "another payload")}}}, submitArgs, exitRejected, "", "no transfer was made", 1},
		{"submit rejected: validation", map[string][]reply{"POST /transfers": {{status: 400, body: `{"status":400,"code":"VALIDATION_ERROR","detail":"invalid","errors":[{"field":"currency","message":"unknown"}]}`}}}, submitArgs, exitRejected, "", "currency: unknown", 1},
		{"submit unavailable after retries", map[string][]reply{"POST /transfers": {{status: 503, body: problem(503, "SERVICE_UNAVAILABLE", "down"), retryAfter: "1"}}}, submitArgs, exitUnavailable, "", "--idempotency-key GENERATEDKEY0001 to find out", 6},
		{"submit in progress elsewhere, then done", map[string][]reply{"POST /transfers": {{status: 409, body: problem(409, "REQUEST_IN_PROGRESS", "wait"), retryAfter: "2"}, {status: 200, body: transferBody("tr_1", "COMPLETED"), replayed: true}}}, submitArgs, exitOK, "COMPLETED", "attempt 1 failed", 2},
		{"submit --wait until COMPLETED", map[string][]reply{"POST /transfers": {inProgress}, "GET /transfers/tr_1": {{status: 200, body: transferBody("tr_1", "IN_PROGRESS")}, {status: 200, body: transferBody("tr_1", "COMPLETED")}}}, args(submitArgs, "--wait"), exitOK, "COMPLETED", "", 3},
		{"submit --wait until FAILED", map[string][]reply{"POST /transfers": {inProgress}, "GET /transfers/tr_1": {{status: 200, body: transferBody("tr_1", "FAILED")}}}, args(submitArgs, "--wait"), exitTransferFailed, "FAILED", "", 2},
		{"submit --wait times out", map[string][]reply{"POST /transfers": {inProgress}, "GET /transfers/tr_1": {{status: 200, body: transferBody("tr_1", "IN_PROGRESS")}}}, args(submitArgs, "--wait", "--timeout", "3s"), exitWaitTimeout, "IN_PROGRESS", "still IN_PROGRESS after 3s", 6},
		{"get COMPLETED", map[string][]reply{"GET /transfers/tr_1": {{status: 200, body: transferBody("tr_1", "COMPLETED")}}}, []string{"get", "tr_1"}, exitOK, "COMPLETED", "", 1},
		{"get FAILED", map[string][]reply{"GET /transfers/tr_1": {{status: 200, body: transferBody("tr_1", "FAILED")}}}, []string{"get", "tr_1"}, exitTransferFailed, "INSUFFICIENT_FUNDS", "", 1},
		{"get not found", nil, []string{"get", "tr_404"}, exitNotFound, "", "404", 1},
		{"get 500 forever", map[string][]reply{"GET /transfers/tr_1": {{status: 500, body: problem(500, "INTERNAL_ERROR", "x")}}}, []string{"get", "tr_1", "--max-attempts", "2"}, exitUnavailable, "", "gave up after 2 attempts", 2},
		{"gateway 403 for an unknown path", map[string][]reply{"GET /transfers/tr_1": {{status: 403, body: `{"message":"Missing Authentication Token"}`}}}, []string{"get", "tr_1"}, exitRejected, "", "hint: API Gateway refused the request", 1},
		{"gateway 403 as a problem", map[string][]reply{"GET /transfers/tr_1": {{status: 403, body: problem(403, "MISSING_AUTHENTICATION_TOKEN", "Missing Authentication Token")}}}, []string{"get", "tr_1"}, exitRejected, "", "hint: API Gateway refused the request", 1},
		{"get answered with garbage", map[string][]reply{"GET /transfers/tr_1": {{status: 200, body: `<html>`}}}, []string{"get", "tr_1"}, exitError, "", "decode transfer", 1},
		{"history", map[string][]reply{"GET /transfers/tr_1/history": {{status: 200, body: `{"transferId":"tr_1","executionArn":"arn:x","events":[{"id":1,"previousEventId":0,"timestamp":1795255200.123,"type":"ExecutionStarted","executionStartedEventDetails":{}}],"ledger":[]}`}}, "GET /transfers/tr_1": {{status: 200, body: transferBody("tr_1", "FAILED")}}}, []string{"history", "tr_1"}, exitOK, "FAILED INSUFFICIENT_FUNDS\n", "", 2},
		{"history of a FAILED transfer: the status in the header, exit 0", map[string][]reply{"GET /transfers/tr_1/history": {{status: 200, body: `{"transferId":"tr_1","executionArn":"arn:x","events":[],"ledger":[]}`}}, "GET /transfers/tr_1": {{status: 200, body: transferBody("tr_1", "FAILED")}}}, []string{"history", "tr_1"}, exitOK, "status     FAILED INSUFFICIENT_FUNDS", "", 2},
		{"history --output json: the API's JSON, no transfer read", map[string][]reply{"GET /transfers/tr_1/history": {{status: 200, body: `{"transferId":"tr_1","executionArn":"arn:x","events":[],"ledger":[]}`}}}, []string{"history", "tr_1", "--output", "json"}, exitOK, `"events": []`, "", 1},
		{"accounts: one found, one not", map[string][]reply{"GET /accounts/acc-alice": {{status: 200, body: `{"accountId":"acc-alice","balance":8750,"currency":"EUR","version":3}`}}}, []string{"accounts", "acc-alice", "acc-nobody"}, exitNotFound, "acc-alice  8750", "acc-nobody", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.routes)
			code := h.run(tc.args...)
			if code != tc.want {
				t.Errorf("exit = %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.want, h.stdout.String(), h.stderr.String())
			}
			if !strings.Contains(h.stdout.String(), tc.wantStdout) {
				t.Errorf("stdout does not contain %q:\n%s", tc.wantStdout, h.stdout.String())
			}
			if !strings.Contains(h.stderr.String(), tc.wantStderr) {
				t.Errorf("stderr does not contain %q:\n%s", tc.wantStderr, h.stderr.String())
			}
			if n := len(h.api.requests()); n != tc.wantReqs {
				t.Errorf("requests = %d, want %d", n, tc.wantReqs)
			}
		})
	}
}

func TestSubmitKey(t *testing.T) {
	tests := []struct {
		name       string
		extra      []string
		wantKey    string // as the header carries it
		wantStderr bool   // the key is printed
	}{
		{"generated and printed", nil, `"GENERATEDKEY0001"`, true},
		{"given: used, not printed", []string{"--idempotency-key", "order-118"}, `"order-118"`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, map[string][]reply{"POST /transfers": {{status: 503, body: problem(503, "SERVICE_UNAVAILABLE", "x")}, {status: 202, body: transferBody("tr_1", "IN_PROGRESS")}}})
			if code := h.run(args(submitArgs, tc.extra...)...); code != exitOK {
				t.Fatalf("exit %d: %s", code, h.stderr.String())
			}
			reqs := h.api.requests()
			if len(reqs) != 2 {
				t.Fatalf("requests = %d", len(reqs))
			}
			for i, r := range reqs {
				if got := r.header.Get("Idempotency-Key"); got != tc.wantKey {
					t.Errorf("attempt %d: Idempotency-Key %s, want %s", i+1, got, tc.wantKey)
				}
			}
			if printed := strings.Contains(h.stderr.String(), "idempotency key: GENERATEDKEY0001"); printed != tc.wantStderr {
				t.Errorf("key printed = %v, want %v:\n%s", printed, tc.wantStderr, h.stderr.String())
			}
			var body map[string]any
			if err := json.Unmarshal(reqs[0].body, &body); err != nil || body["amount"] != float64(1250) || body["currency"] != "EUR" {
				t.Errorf("body = %s (%v)", reqs[0].body, err)
			}
		})
	}
}

func TestOutputJSON(t *testing.T) {
	routes := map[string][]reply{
		"GET /transfers/tr_1":     {{status: 200, body: transferBody("tr_1", "COMPLETED")}},
		"GET /accounts/acc-alice": {{status: 200, body: `{"accountId":"acc-alice","balance":8750,"currency":"EUR","version":3}`}},
	}
	tests := []struct {
		name string
		args []string
	}{
		{"global flag first", []string{"--output", "json", "get", "tr_1"}},
		{"global flag after the id", []string{"get", "tr_1", "--output=json"}},
		{"accounts", []string{"accounts", "acc-alice", "--output", "json"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, routes)
			if code := h.run(tc.args...); code != exitOK {
				t.Fatalf("exit %d: %s", code, h.stderr.String())
			}
			var v any
			if err := json.Unmarshal(h.stdout.Bytes(), &v); err != nil {
				t.Fatalf("stdout is not JSON: %v\n%s", err, h.stdout.String())
			}
			if strings.Contains(h.stderr.String(), "{") {
				t.Errorf("JSON on stderr: %s", h.stderr.String())
			}
		})
	}
}

func TestEndpointSelection(t *testing.T) {
	h := newHarness(t, map[string][]reply{"GET /stage/transfers/tr_1": {{status: 200, body: transferBody("tr_1", "COMPLETED")}}})
	h.env["TRANSFERCTL_ENDPOINT"] = "http://127.0.0.1:1" // nothing listens there; --endpoint wins
	if code := h.run("get", "tr_1", "--endpoint", h.srv.URL+"/stage"); code != exitOK {
		t.Fatalf("exit %d: %s", code, h.stderr.String())
	}
	if g := defaultGlobals(func(string) string { return "" }); g.endpoint != "http://127.0.0.1:3000" {
		t.Errorf("default endpoint = %s", g.endpoint)
	}
}

// routeTo makes every connection of the client go to srv, whatever the URL's host, and trusts srv's certificate
// under the name example.com; so an https://….execute-api….amazonaws.com endpoint reaches the test server.
func routeTo(srv *httptest.Server) *http.Client {
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
		},
		TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "example.com"},
	}}
}

func TestSigning(t *testing.T) {
	tests := []struct {
		name       string
		endpoint   string // "" is the loopback test server
		flags      []string
		wantScope  string // "" means unsigned
		wantRegion string // what loadAWS was asked for
		wantPath   string
	}{
		{"loopback, auto: unsigned", "", nil, "", "-", "/transfers/tr_1"},
		{"loopback, --sign: signed for the configured region", "", []string{"--sign"}, "/us-east-2/execute-api/aws4_request", "", "/transfers/tr_1"},
		{"loopback, --sign=true --region", "", []string{"--sign=true", "--region", "eu-central-1"}, "/eu-central-1/execute-api/aws4_request", "eu-central-1", "/transfers/tr_1"},
		{"loopback, --sign true (a separate value)", "", []string{"--sign", "true"}, "/us-east-2/execute-api/aws4_request", "", "/transfers/tr_1"},
		{"loopback, --sign true --operator", "", []string{"--sign", "true", "--operator"}, "/us-east-2/execute-api/aws4_request", "", "/operator/transfers/tr_1"},
		{"execute-api host, auto: signed for the host's region", "https://abc123.execute-api.eu-west-1.amazonaws.com/Prod", nil, "/eu-west-1/execute-api/aws4_request", "eu-west-1", "/Prod/transfers/tr_1"},
		{"custom domain, auto: signed for the configured region", "https://payments.example.com", nil, "/us-east-2/execute-api/aws4_request", "", "/transfers/tr_1"},
		{"execute-api host, --sign=false: unsigned", "https://abc123.execute-api.eu-west-1.amazonaws.com/Prod", []string{"--sign=false"}, "", "-", "/Prod/transfers/tr_1"},
		{"execute-api host, --sign false: unsigned", "https://abc123.execute-api.eu-west-1.amazonaws.com/Prod", []string{"--sign", "false"}, "", "-", "/Prod/transfers/tr_1"},
		{"execute-api host, --operator: under the stage", "https://abc123.execute-api.eu-west-1.amazonaws.com/v1", []string{"--operator"}, "/eu-west-1/execute-api/aws4_request", "eu-west-1", "/v1/operator/transfers/tr_1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			api := newFakeAPI(map[string][]reply{"GET " + tc.wantPath: {{status: 200, body: transferBody("tr_1", "COMPLETED")}}})
			h := newHarness(t, nil)
			h.api = api
			endpoint := tc.endpoint
			if endpoint == "" {
				srv := httptest.NewServer(api)
				t.Cleanup(srv.Close)
				endpoint, h.deps.http = srv.URL, srv.Client()
			} else {
				srv := httptest.NewTLSServer(api)
				t.Cleanup(srv.Close)
				h.deps.http = routeTo(srv)
			}
			code := h.run(append([]string{"get", "tr_1", "--endpoint", endpoint}, tc.flags...)...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, h.stderr.String())
			}
			reqs := api.requests()
			if len(reqs) != 1 || reqs[0].path != tc.wantPath {
				t.Fatalf("requests = %+v", reqs)
			}
			auth, date := reqs[0].header.Get("Authorization"), reqs[0].header.Get("X-Amz-Date")
			if tc.wantScope == "" {
				if auth != "" || date != "" || len(h.awsRegions) != 0 {
					t.Errorf("unsigned request carries Authorization %q, X-Amz-Date %q; AWS config loaded %d times", auth, date, len(h.awsRegions))
				}
				return
			}
			wantPrefix := "AWS4-HMAC-SHA256 Credential=" + testAccessKey + "/20261121" + tc.wantScope + ", SignedHeaders="
			if !strings.HasPrefix(auth, wantPrefix) || date != "20261121T100000Z" {
				t.Errorf("Authorization = %q, X-Amz-Date = %q; want prefix %q and 20261121T100000Z", auth, date, wantPrefix)
			}
			if len(h.awsRegions) != 1 || h.awsRegions[0] != tc.wantRegion {
				t.Errorf("loadAWS regions = %q, want [%q]", h.awsRegions, tc.wantRegion)
			}
			if out := h.stdout.String() + h.stderr.String(); strings.Contains(out, testSecret) || strings.Contains(out, testAccessKey) {
				t.Errorf("credentials printed:\n%s", out)
			}
		})
	}
}

func TestInterruptedExits130(t *testing.T) {
	h := newHarness(t, map[string][]reply{"POST /transfers": {{status: 503, body: problem(503, "SERVICE_UNAVAILABLE", "x"), retryAfter: "1"}}})
	ctx, cancel := context.WithCancel(context.Background())
	h.deps.sleep = func(context.Context, time.Duration) error { cancel(); return context.Canceled }
	code := runWith(ctx, submitArgs, &h.stdout, &h.stderr, func(k string) string { return h.env[k] }, h.deps)
	if code != exitInterrupted {
		t.Errorf("exit = %d, want %d; stderr:\n%s", code, exitInterrupted, h.stderr.String())
	}
}

func TestParseArgs(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"flags around positionals", []string{"a", "--wait", "b"}, []string{"a", "b"}},
		{"after --, everything is positional", []string{"--wait", "--", "--not-a-flag"}, []string{"--not-a-flag"}},
		{"none", []string{"--wait"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := newTestFlagSet()
			got, err := parseArgs(fs, tc.in)
			if err != nil || strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("parseArgs(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

// TestSubmitToAStoppedStack: when every attempt is refused at connect (nothing listens), the request was never
// sent, and transferctl says so instead of "the transfer may have been accepted".
func TestSubmitToAStoppedStack(t *testing.T) {
	h := newHarness(t, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	code := h.run("submit", "--from", "acc-a", "--to", "acc-b", "--amount", "5", "--currency", "EUR",
		"--idempotency-key", "k1", "--max-attempts", "2", "--endpoint", closed)
	stderr := h.stderr.String()
	if code != exitUnavailable || !strings.Contains(stderr, "nothing was sent: no transfer was made") || strings.Contains(stderr, "may have been") {
		t.Errorf("exit %d, stderr:\n%s\nwant %d and that nothing was sent", code, stderr, exitUnavailable)
	}
	if want := "hint: nothing answered at " + closed + ": is the local stack running? (make run starts it"; !strings.Contains(stderr, want) ||
		!strings.HasPrefix(lastLine(stderr), want) {
		t.Errorf("stderr:\n%s\nwant the hint %q, last", stderr, want)
	}
	// Several requests that reach nothing get the hint once.
	h = newHarness(t, nil)
	if code := h.run("accounts", "get", "acc-a", "acc-b", "--max-attempts", "1", "--endpoint", closed); code != exitUnavailable ||
		strings.Count(h.stderr.String(), "hint: nothing answered") != 1 {
		t.Errorf("accounts get of two: exit %d, stderr:\n%s\nwant %d and the hint once", code, h.stderr.String(), exitUnavailable)
	}
	// A read says the same, and a remote endpoint gets the hint to check it, not the local stack's.
	h = newHarness(t, nil)
	if code := h.run("history", "tr_1", "--max-attempts", "1", "--endpoint", closed); code != exitUnavailable || !strings.Contains(h.stderr.String(), "is the local stack running?") {
		t.Errorf("history: exit %d, stderr:\n%s\nwant %d and the hint", code, h.stderr.String(), exitUnavailable)
	}
	h = newHarness(t, nil)
	h.deps.http = &http.Client{Transport: &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED} // as a remote host that refuses
	}}}
	remote := "https://api.example.com/v1"
	if code := h.run("get", "tr_1", "--max-attempts", "1", "--endpoint", remote); code != exitUnavailable ||
		!strings.Contains(h.stderr.String(), "hint: nothing answered at "+remote+"; check --endpoint") || strings.Contains(h.stderr.String(), "local stack") {
		t.Errorf("get from %s: exit %d, stderr:\n%s\nwant %d and the hint to check --endpoint", remote, code, h.stderr.String(), exitUnavailable)
	}
}

// lastLine is the last line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}
