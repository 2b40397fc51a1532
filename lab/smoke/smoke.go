// Package smoke checks a running deployment of the transfer API, the local stack or a deployed AWS stack, with the
// same requests: it opens two accounts of its own, funds one through an operator, moves money between them, replays
// the Idempotency-Key, waits for COMPLETED, reads the history and the listings, checks that another caller is
// refused, and finds the outcome event in the stack's events log group. Each check prints one line, `ok <check>` or
// `FAIL <check>: <why>` (docs/deploy.md#smoke-test). cmd/smoke is its command.
package smoke

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"

	"github.com/transferflow/orchestrator/internal/transferclient"
)

// AccountPrefix begins the id of every account a run opens; the accounts remain, as the ledger keeps everything.
const AccountPrefix = "smoke-"

// FundingAccountPrefix begins the id of the funding account the runs share, one per currency: the operator opens it
// once (an open of an account already open as asked is answered as it is) and pays each run's source account from it.
const FundingAccountPrefix = "smoke-funding-"

// The amounts a run moves, in minor units: the funding of the source account, and the transfer to the destination.
const (
	fundAmount     = 10000
	transferAmount = 2500
)

// LogFilterer reads a CloudWatch Logs log group; *cloudwatchlogs.Client satisfies it, for AWS and for the local
// stack's events address.
type LogFilterer interface {
	FilterLogEvents(ctx context.Context, in *cloudwatchlogs.FilterLogEventsInput, optFns ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.FilterLogEventsOutput, error)
}

// Config is what a run talks to.
type Config struct {
	// Client is the client identity the run's accounts and transfer belong to.
	Client *transferclient.Client
	// Operator is an identity with the operator routes (its Operator field set): it funds the source account.
	Operator *transferclient.Client
	// Other is a second identity, which must not see Client's transfer.
	Other *transferclient.Client
	// OtherStatus is the status Other's read of the transfer must get: 404 for another client (the API does not
	// reveal that the transfer exists), 403 for an unsigned request to a deployed API (API Gateway refuses it).
	OtherStatus int
	// Logs reads LogGroup, the log group the stack's rule writes the outcome events to.
	Logs     LogFilterer
	LogGroup string
	// Currency is the currency of the run's accounts (default EUR).
	Currency string
	// RunID names the run's accounts and keys; empty: a fresh one (NewRunID).
	RunID string
	// Timeout bounds the wait for the transfers to settle and for the outcome event (default 60 s each).
	Timeout time.Duration
	// Out receives one line per check.
	Out io.Writer
}

// Result is the outcome of a run.
type Result struct {
	RunID string
	// Failed names the checks that failed, in order.
	Failed []string
	// Passed names the checks that passed, in order.
	Passed []string
}

// OK reports whether every check passed.
func (r Result) OK() bool { return len(r.Failed) == 0 && len(r.Passed) > 0 }

// NewRunID returns a run id: the UTC time to the second and 8 random characters, lower case, so that account ids
// sort by run and never collide.
func NewRunID(now time.Time) string {
	return now.UTC().Format("20060102t150405") + "-" + strings.ToLower(rand.Text()[:8])
}

// The checks, in the order they run; their names are what the lines print.
const (
	CheckOpenAccounts    = "open accounts"
	CheckFundSource      = "fund source account (operator)"
	CheckSubmit          = "submit transfer"
	CheckReplay          = "replay Idempotency-Key"
	CheckCompleted       = "transfer COMPLETED"
	CheckReplayTerminal  = "replay once settled"
	CheckBalances        = "balances"
	CheckHistory         = "history"
	CheckListing         = "account listings"
	CheckOtherCaller     = "other caller refused"
	CheckFundingRefused  = "client cannot open a funding account"
	CheckOutcomeEvent    = "outcome event in log group"
	checkPrerequisiteMsg = "not run: "
)

// run is one smoke run's state.
type run struct {
	cfg      Config
	res      Result
	src, dst string
	key      string
	transfer transferclient.Transfer
}

// Run runs every check against cfg and returns which passed and which failed. A check whose prerequisite failed is
// reported failed too, saying which; the others still run.
func Run(ctx context.Context, cfg Config) Result {
	if cfg.Currency == "" {
		cfg.Currency = "EUR"
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.RunID == "" {
		cfg.RunID = NewRunID(time.Now())
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	r := &run{cfg: cfg, res: Result{RunID: cfg.RunID}}
	base := AccountPrefix + cfg.RunID
	r.src, r.dst, r.key = base+"-src", base+"-dst", base+"-transfer"
	fmt.Fprintf(cfg.Out, "smoke run %s: accounts %s and %s\n", cfg.RunID, r.src, r.dst)

	opened := r.check(ctx, CheckOpenAccounts, "", r.openAccounts)
	r.check(ctx, CheckFundSource, fail(opened, CheckOpenAccounts), r.fundSource)
	submitted := r.check(ctx, CheckSubmit, fail(opened, CheckOpenAccounts), r.submit)
	after := fail(submitted, CheckSubmit)
	r.check(ctx, CheckReplay, after, r.replay)
	completed := r.check(ctx, CheckCompleted, after, r.completed)
	settled := r.transfer.Terminal()
	r.check(ctx, CheckReplayTerminal, after, r.replayTerminal)
	r.check(ctx, CheckBalances, fail(completed, CheckCompleted), r.balances)
	r.check(ctx, CheckHistory, fail(completed, CheckCompleted), r.history)
	r.check(ctx, CheckListing, fail(completed, CheckCompleted), r.listing)
	r.check(ctx, CheckOtherCaller, after, r.otherCaller)
	r.check(ctx, CheckFundingRefused, "", r.fundingRefused)
	r.check(ctx, CheckOutcomeEvent, fail(settled, CheckCompleted), r.outcomeEvent)
	return r.res
}

// fail returns the name of a prerequisite that did not pass, or "".
func fail(passed bool, name string) string {
	if passed {
		return ""
	}
	return name
}

// check runs one check and prints its line; it reports whether the check passed. A non-empty missing names the
// prerequisite that failed: the check is not run and fails.
func (r *run) check(ctx context.Context, name, missing string, f func(context.Context) error) bool {
	var err error
	if missing != "" {
		err = errors.New(checkPrerequisiteMsg + missing + " failed")
	} else {
		err = f(ctx)
	}
	if err != nil {
		fmt.Fprintf(r.cfg.Out, "FAIL %s: %s\n", name, transferclient.Clean(err.Error()))
		r.res.Failed = append(r.res.Failed, name)
		return false
	}
	fmt.Fprintf(r.cfg.Out, "ok %s\n", name)
	r.res.Passed = append(r.res.Passed, name)
	return true
}

// openAccounts opens the run's two customer accounts as the client: 201 each, balance 0.
func (r *run) openAccounts(ctx context.Context) error {
	for _, id := range []string{r.src, r.dst} {
		res, err := r.cfg.Client.OpenAccount(ctx, id+"-open", transferclient.OpenAccountRequest{AccountID: id, Currency: r.cfg.Currency})
		if err != nil {
			return err
		}
		if res.Status != http.StatusCreated || res.Account.AccountID != id || res.Account.Balance != 0 {
			return fmt.Errorf("open %s: status %d, account %s with balance %d; want 201, %s, 0", id, res.Status,
				res.Account.AccountID, res.Account.Balance, id)
		}
	}
	return nil
}

// fundSource opens (or finds) the shared funding account as the operator and pays the source account from it.
func (r *run) fundSource(ctx context.Context) error {
	funding := FundingAccountPrefix + r.cfg.Currency
	if _, err := r.cfg.Operator.OpenAccount(ctx, funding+"-open", transferclient.OpenAccountRequest{
		AccountID: funding, Currency: r.cfg.Currency, Kind: transferclient.KindFunding}); err != nil {
		return operatorRefused(err)
	}
	res, err := r.cfg.Operator.Submit(ctx, r.key+"-fund", transferclient.SubmitRequest{SourceAccountID: funding,
		DestinationAccountID: r.src, Amount: fundAmount, Currency: r.cfg.Currency, Reference: "smoke " + r.cfg.RunID + " funding"})
	if err != nil {
		return operatorRefused(err)
	}
	t, err := r.cfg.Operator.Wait(ctx, res.Transfer.TransferID, time.Now().Add(r.cfg.Timeout))
	if err != nil {
		return fmt.Errorf("funding transfer %s: %w", res.Transfer.TransferID, err)
	}
	return wantCompleted(t)
}

// operatorRefused says, of an operator route refused by an explicit deny, what to change: the API's resource
// policy names the operators (OperatorPrincipalArns; locally, the stack's --operator), which a stack deployed
// before that parameter existed does not until a deploy gives it.
func operatorRefused(err error) error {
	var apiErr *transferclient.APIError
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusForbidden && strings.HasSuffix(apiErr.Detail, "with an explicit deny") {
		return fmt.Errorf("%w; the API's resource policy refuses this principal the operator routes: name it in the stack's "+
			"OperatorPrincipalArns (locally, --operator)", err)
	}
	return err
}

// wantCompleted is nil for a COMPLETED transfer and says how it ended otherwise.
func wantCompleted(t transferclient.Transfer) error {
	if t.Status == transferclient.StatusCompleted {
		return nil
	}
	why := ""
	if t.Failure != nil {
		why = fmt.Sprintf(" (%s: %s)", t.Failure.Code, t.Failure.Message)
	}
	return fmt.Errorf("transfer %s is %s%s", t.TransferID, t.Status, why)
}

// request is the run's transfer.
func (r *run) request() transferclient.SubmitRequest {
	return transferclient.SubmitRequest{SourceAccountID: r.src, DestinationAccountID: r.dst, Amount: transferAmount,
		Currency: r.cfg.Currency, Reference: "smoke " + r.cfg.RunID}
}

// submit sends the transfer: 202, IN_PROGRESS or already settled, as asked.
func (r *run) submit(ctx context.Context) error {
	res, err := r.cfg.Client.Submit(ctx, r.key, r.request())
	if err != nil {
		return err
	}
	t := res.Transfer
	if res.Replayed || (res.Status != http.StatusAccepted && res.Status != http.StatusOK) || t.TransferID == "" {
		return fmt.Errorf("status %d, replayed %v, transfer %q; want 202 (or 200), a new transfer", res.Status, res.Replayed, t.TransferID)
	}
	if t.SourceAccountID != r.src || t.DestinationAccountID != r.dst || t.Amount != transferAmount || t.Currency != r.cfg.Currency {
		return fmt.Errorf("answer %s -> %s %d %s is not the request", t.SourceAccountID, t.DestinationAccountID, t.Amount, t.Currency)
	}
	r.transfer = t
	return nil
}

// replay sends the same request with the same key: the answer is the same transfer, marked Idempotent-Replayed.
func (r *run) replay(ctx context.Context) error {
	res, err := r.cfg.Client.Submit(ctx, r.key, r.request())
	if err != nil {
		return err
	}
	if !res.Replayed {
		return fmt.Errorf("status %d without Idempotent-Replayed: true", res.Status)
	}
	return sameTransfer(r.transfer, res.Transfer, res.Transfer.Status != r.transfer.Status)
}

// sameTransfer compares the fields a replay must repeat; the status and update times may have moved on when
// settled is true.
func sameTransfer(want, got transferclient.Transfer, settled bool) error {
	want.Raw, got.Raw = nil, nil
	if settled {
		want.Status, want.UpdatedAt, want.CompletedAt, want.Failure = got.Status, got.UpdatedAt, got.CompletedAt, got.Failure
	}
	if !reflect.DeepEqual(want, got) {
		return fmt.Errorf("replay answered %+v, want %+v", got, want)
	}
	return nil
}

// completed waits for the transfer to settle: it must be COMPLETED.
func (r *run) completed(ctx context.Context) error {
	t, err := r.cfg.Client.Wait(ctx, r.transfer.TransferID, time.Now().Add(r.cfg.Timeout))
	if err != nil {
		return err
	}
	if t.Terminal() {
		r.transfer = t
	}
	return wantCompleted(t)
}

// replayTerminal replays the key once the transfer settled: 200 and the transfer exactly as GET answers it.
func (r *run) replayTerminal(ctx context.Context) error {
	res, err := r.cfg.Client.Submit(ctx, r.key, r.request())
	if err != nil {
		return err
	}
	got, err := r.cfg.Client.Get(ctx, r.transfer.TransferID)
	if err != nil {
		return err
	}
	if !got.Terminal() {
		return fmt.Errorf("transfer %s still %s", got.TransferID, got.Status)
	}
	if res.Status != http.StatusOK || !res.Replayed {
		return fmt.Errorf("status %d, replayed %v; want 200, Idempotent-Replayed: true", res.Status, res.Replayed)
	}
	if !jsonEqual(res.Transfer.Raw, got.Raw) {
		return fmt.Errorf("replay answered %s, GET %s", res.Transfer.Raw, got.Raw)
	}
	return nil
}

// jsonEqual compares two JSON documents by value.
func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// balances reads both accounts as their owner: the source keeps the funding less the transfer, the destination has
// the transfer.
func (r *run) balances(ctx context.Context) error {
	for id, want := range map[string]int64{r.src: fundAmount - transferAmount, r.dst: transferAmount} {
		a, err := r.cfg.Client.Account(ctx, id)
		if err != nil {
			return err
		}
		if a.Balance != want {
			return fmt.Errorf("%s has balance %d, want %d", id, a.Balance, want)
		}
	}
	return nil
}

// history reads GET /transfers/{id}/history: events in order from ExecutionStarted to ExecutionSucceeded, and the
// DEBIT and CREDIT legs.
func (r *run) history(ctx context.Context) error {
	h, err := r.cfg.Client.History(ctx, r.transfer.TransferID)
	if err != nil {
		return err
	}
	if h.TransferID != r.transfer.TransferID || len(h.Events) < 2 {
		return fmt.Errorf("history of %q with %d events", h.TransferID, len(h.Events))
	}
	for i := 1; i < len(h.Events); i++ {
		prev, e := h.Events[i-1], h.Events[i]
		if e.ID <= prev.ID || e.Timestamp.Before(prev.Timestamp) {
			return fmt.Errorf("event %d (%s) comes after event %d (%s)", e.ID, e.Type, prev.ID, prev.Type)
		}
	}
	if first, last := h.Events[0].Type, h.Events[len(h.Events)-1].Type; first != "ExecutionStarted" || last != "ExecutionSucceeded" {
		return fmt.Errorf("events run from %s to %s, want ExecutionStarted to ExecutionSucceeded", first, last)
	}
	legs := map[string]transferclient.LedgerLeg{}
	for _, l := range h.Ledger {
		legs[l.Leg] = l
	}
	if d, c := legs["DEBIT"], legs["CREDIT"]; len(h.Ledger) != 2 || d.AccountID != r.src || c.AccountID != r.dst ||
		abs(d.Amount) != transferAmount || abs(c.Amount) != transferAmount {
		return fmt.Errorf("ledger %+v, want a DEBIT of %s and a CREDIT of %s, %d each", h.Ledger, r.src, r.dst, transferAmount)
	}
	return nil
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// listing reads GET /accounts/{id}/transfers of both accounts: the transfer is on each, out of one and into the other.
func (r *run) listing(ctx context.Context) error {
	for id, want := range map[string]struct {
		leg    string
		amount int64
	}{r.src: {"DEBIT", -transferAmount}, r.dst: {"CREDIT", transferAmount}} {
		l, err := r.cfg.Client.AllAccountTransfers(ctx, id, 0)
		if err != nil {
			return err
		}
		found := false
		for _, e := range l.Transfers {
			if e.TransferID == r.transfer.TransferID {
				if e.Leg != want.leg || e.Amount != want.amount || e.Status != transferclient.StatusCompleted {
					return fmt.Errorf("%s lists %s as %s %d %s, want %s %d COMPLETED", id, e.TransferID, e.Leg, e.Amount, e.Status, want.leg, want.amount)
				}
				found = true
			}
		}
		if !found {
			return fmt.Errorf("%s does not list %s (%d entries)", id, r.transfer.TransferID, len(l.Transfers))
		}
	}
	return nil
}

// otherCaller reads the transfer and the source account as the other identity: both must be refused with
// OtherStatus.
func (r *run) otherCaller(ctx context.Context) error {
	want := r.cfg.OtherStatus
	if want == 0 {
		want = http.StatusNotFound
	}
	_, err := r.cfg.Other.Get(ctx, r.transfer.TransferID)
	if err := wantStatus(err, want, "GET /transfers/"+r.transfer.TransferID); err != nil {
		return err
	}
	_, err = r.cfg.Other.Account(ctx, r.src)
	return wantStatus(err, want, "GET /accounts/"+r.src)
}

// wantStatus is nil when err is the API's answer with status want.
func wantStatus(err error, want int, what string) error {
	var apiErr *transferclient.APIError
	if errors.As(err, &apiErr) && apiErr.Status == want {
		return nil
	}
	if err == nil {
		return fmt.Errorf("%s answered, want %d", what, want)
	}
	return fmt.Errorf("%s: %v, want %d", what, err, want)
}

// fundingRefused asks the client route for a funding account: 403 OPERATOR_REQUIRED, whoever the caller is.
func (r *run) fundingRefused(ctx context.Context) error {
	id := AccountPrefix + r.cfg.RunID + "-funding"
	_, err := r.cfg.Client.OpenAccount(ctx, id+"-open", transferclient.OpenAccountRequest{AccountID: id,
		Currency: r.cfg.Currency, Kind: transferclient.KindFunding})
	var apiErr *transferclient.APIError
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusForbidden && apiErr.Code == "OPERATOR_REQUIRED" {
		return nil
	}
	if err == nil {
		return errors.New("POST /accounts with kind funding was accepted, want 403 OPERATOR_REQUIRED")
	}
	return fmt.Errorf("POST /accounts with kind funding: %v, want 403 OPERATOR_REQUIRED", err)
}

// outcomeEvent polls the events log group for the settled transfer's outcome event, as the stack's rule wrote it:
// Transfer Completed or Transfer Failed, with the transfer's status.
func (r *run) outcomeEvent(ctx context.Context) error {
	if r.cfg.Logs == nil || r.cfg.LogGroup == "" {
		return errors.New("no events log group to read")
	}
	start := time.Now().Add(-15 * time.Minute).UnixMilli()
	deadline := time.Now().Add(r.cfg.Timeout)
	for {
		ev, err := r.findEvent(ctx, start)
		if err != nil {
			return err
		}
		if ev != nil {
			want := "Transfer Completed"
			if r.transfer.Status == transferclient.StatusFailed {
				want = "Transfer Failed"
			}
			if ev.DetailType != want || ev.Source != "transferflow.transfers" || ev.Detail.Status != r.transfer.Status {
				return fmt.Errorf("event %q from %q with status %s, want %s from transferflow.transfers with %s", ev.DetailType,
					ev.Source, ev.Detail.Status, want, r.transfer.Status)
			}
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no event of %s in %s after %s", r.transfer.TransferID, r.cfg.LogGroup, r.cfg.Timeout)
		}
		if err := transferclient.Sleep(ctx, time.Second); err != nil {
			return err
		}
	}
}

// outcome is an outcome event as the rule writes it to the log group.
type outcome struct {
	DetailType string                  `json:"detail-type"`
	Source     string                  `json:"source"`
	Detail     transferclient.Transfer `json:"detail"`
}

// findEvent reads the log group from start (every page) and returns the run's transfer's event, or nil.
func (r *run) findEvent(ctx context.Context, start int64) (*outcome, error) {
	var token *string
	for {
		out, err := r.cfg.Logs.FilterLogEvents(ctx, &cloudwatchlogs.FilterLogEventsInput{LogGroupName: aws.String(r.cfg.LogGroup),
			StartTime: aws.Int64(start), NextToken: token,
			FilterPattern: aws.String(`"` + r.transfer.TransferID + `"`)})
		if err != nil {
			return nil, fmt.Errorf("read log group %s: %w", r.cfg.LogGroup, err)
		}
		for _, e := range out.Events {
			var ev outcome
			if json.Unmarshal([]byte(aws.ToString(e.Message)), &ev) == nil && ev.Detail.TransferID == r.transfer.TransferID {
				return &ev, nil
			}
		}
		if out.NextToken == nil || *out.NextToken == "" {
			return nil, nil
		}
		token = out.NextToken
	}
}
