package e2e

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/lab/docexample"
)

// recordHistories rewrites internal/transferclient/testdata/recorded_*.json from the transfers TestHistoryCommand
// makes: `go test ./lab/e2e -run TestHistoryCommand -record-histories`, then `go test ./internal/transferclient -update`
// for the golden timelines.
var recordHistories = flag.Bool("record-histories", false, "write the histories TestHistoryCommand makes to internal/transferclient/testdata")

// historyCase is a transfer made on a stack with faults, and the timeline transferctl history must show for it.
type historyCase struct {
	name     string // also the recording's name
	key      string
	body     map[string]any
	timeline string // a text expectation (docexample.MatchText)
}

// TestHistoryCommand runs transferctl history against stacks whose functions fail on purpose (--fault), and checks
// the one timeline it prints: states with their integrations and attempts, each failed attempt with the retry after
// it, the ledger legs at their time among the states, the transfer's acceptance and settlement.
func TestHistoryCommand(t *testing.T) {
	t.Parallel()
	stacks := []struct {
		name   string
		faults []string
		cases  []historyCase
	}{
		{"credit retried", []string{"--fault", "credit:error=TransientError:times=2"}, []historyCase{
			{"credit_retried", "history-retried", transferBody("acc-alice", "acc-bob", 1250, "EUR"), `
transfer   tr_…
execution  arn:aws:states:us-east-1:000000000000:execution:TransferStateMachine:tr_…
status     COMPLETED
TIME…STEP…TOOK…WHAT
…  transfer  …accepted
…  execution  …started
…  Debit  …lambda:invoke DebitFunction
…  ledger  …DEBIT acc-alice -1250 EUR
…  Credit  …lambda:invoke CreditFunction, 3 attempts
…  Credit  …TransientError, retry 1 after …s (injected fault)
…  Credit  …TransientError, retry 2 after …s (injected fault)
…  ledger  …CREDIT acc-bob +1250 EUR
…  transfer  …COMPLETED
…  execution  …succeeded
`},
			{"insufficient_funds", "history-refused", transferBody("acc-erin", "acc-bob", 500, "EUR"), `
status     FAILED INSUFFICIENT_FUNDS: the source account's balance does not cover the amount; no money moved (InsufficientFunds: …)
…  transfer  …accepted
…  execution  …started
…  Debit  …lambda:invoke DebitFunction
…  Debit  …InsufficientFunds, not retried (account acc-erin has insufficient funds for transfer tr_…)
…  InsufficientFunds  …pass
…  MarkFailed  …dynamodb:updateItem
…  transfer  …FAILED INSUFFICIENT_FUNDS
…  execution  …succeeded
(no ledger legs: no money moved)
`},
		}},
		{"credit refused, debit retried", []string{"--fault", "credit:error=CreditRejected:leg=CREDIT", "--fault", "debit:error=Lambda.ServiceException:times=1"}, []historyCase{
			{"credit_refunded", "history-refunded", transferBody("acc-alice", "acc-bob", 1250, "EUR"), `
status     FAILED CREDIT_FAILED_REFUNDED: the destination could not be credited; the source was refunded (CreditRejected: injected fault)
…  transfer  …accepted
…  execution  …started
…  Debit  …lambda:invoke DebitFunction, 2 attempts
…  Debit  …Lambda.ServiceException, retry 1 after … (injected fault)
…  ledger  …DEBIT acc-alice -1250 EUR
…  Credit  …lambda:invoke CreditFunction
…  Credit  …CreditRejected, not retried (injected fault)
…  Refund  …lambda:invoke CreditFunction
…  ledger  …REFUND acc-alice +1250 EUR
…  CreditFailedRefunded  …pass
…  MarkFailed  …dynamodb:updateItem
…  transfer  …FAILED CREDIT_FAILED_REFUNDED
…  execution  …succeeded
`},
		}},
		{"execution timed out, settled by the reconciler", []string{"--execution-timeout", "1s", "--fault", "credit:delay=2s"}, []historyCase{
			{"timed_out", "history-timed-out", transferBody("acc-alice", "acc-bob", 1250, "EUR"), `
status     FAILED TIMED_OUT: …
…  transfer  …accepted
…  execution  …started
…  Debit  …lambda:invoke DebitFunction
…  ledger  …DEBIT acc-alice -1250 EUR
…  Credit  …lambda:invoke CreditFunction
…  execution  …timed out…
…  ledger  …REFUND acc-alice +1250 EUR
…  transfer  …FAILED TIMED_OUT
`},
		}},
	}
	for _, st := range stacks {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel() // each has its own stack
			s := startStack(t, st.faults...)
			for _, tc := range st.cases {
				t.Run(tc.name, func(t *testing.T) {
					r := s.submit(tc.key, tc.body)
					if r.Status != http.StatusAccepted {
						t.Fatalf("submit: %d %s", r.Status, r.RawBody)
					}
					id := r.Body["transferId"].(string)
					s.waitTerminal(id, 30*time.Second)
					s.waitExecutionEnd(id, 30*time.Second) // the transfer settles a moment before its execution ends
					s.checkHistoryCommand(t, id, tc)
				})
			}
		})
	}
}

// checkHistoryCommand checks transferctl history's text, --relative and --output json for one transfer.
func (s *stack) checkHistoryCommand(t *testing.T, id string, tc historyCase) {
	t.Helper()
	res := s.transferctl("history", id)
	if res.code != 0 {
		t.Fatalf("transferctl history: exit %d\n%s", res.code, res.stderr)
	}
	if err := docexample.MatchText(tc.timeline, res.stdout); err != nil {
		t.Errorf("timeline: %v\n--- got\n%s--- want lines (in order)%s", err, res.stdout, tc.timeline)
	}

	// --relative: offsets from the transfer's acceptance, the absolute start in the header.
	rel := s.transferctl("history", "--relative", id)
	if err := docexample.MatchText("started    20…Z\n+0ms  …transfer  …accepted\n+…execution  …started\n", rel.stdout); rel.code != 0 || err != nil {
		t.Errorf("--relative: exit %d, %v\n%s", rel.code, err, rel.stdout)
	}

	// --output json: the API's JSON, unchanged (here the history has one page).
	api := s.do(http.MethodGet, "/transfers/"+id+"/history?maxResults=1000", nil, nil)
	if api.Status != http.StatusOK || api.Body["nextToken"] != nil {
		t.Fatalf("history: %d %s", api.Status, api.RawBody)
	}
	js := s.transferctl("history", id, "--output", "json")
	var got, want any
	if err := json.Unmarshal([]byte(js.stdout), &got); err != nil || js.code != 0 {
		t.Fatalf("--output json: exit %d, %v\n%s", js.code, err, js.stdout)
	}
	_ = json.Unmarshal(api.RawBody, &want)
	if g, w := canonical(t, got), canonical(t, want); g != w {
		t.Errorf("--output json differs from the API's answer:\n%s\n%s", g, w)
	}

	if *recordHistories {
		tr := s.do(http.MethodGet, "/transfers/"+id, nil, nil)
		rec := map[string]json.RawMessage{"transfer": tr.RawBody, "history": api.RawBody}
		b, err := json.MarshalIndent(rec, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(root, "internal", "transferclient", "testdata", "recorded_"+tc.name+".json")
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("recorded %s", path)
	}
}

// waitExecutionEnd polls the transfer's history until its last event ends the execution.
func (s *stack) waitExecutionEnd(id string, within time.Duration) {
	s.t.Helper()
	deadline := time.Now().Add(within)
	for {
		events, _ := s.history(id)
		if n := len(events); n > 0 {
			switch events[n-1]["type"] {
			case "ExecutionSucceeded", "ExecutionFailed", "ExecutionTimedOut", "ExecutionAborted":
				return
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the execution of %s has not ended after %s", id, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// canonical re-encodes a decoded JSON value with sorted keys.
func canonical(t *testing.T, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(buf.String())
}
