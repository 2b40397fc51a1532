package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/transferflow/orchestrator/internal/transferclient"
)

// pageSize is how many rows a listing page shows.
const pageSize = 25

// lookups bounds the transfer reads one listing page makes at once.
const lookups = 8

// balanceWalk bounds how many of an account's newer entries are read to work out a leg's balances.
const balanceWalk = 200

// errorPage is the error template's data.
type errorPage struct {
	Title   string
	Status  int
	Message string
}

// transferRow is a row of the transfers listing.
type transferRow struct {
	TransferID, Started, WorkflowStatus string
	// Transfer is the record as the API shows it; nil when it could not be read (Missing says why).
	Transfer *transferclient.Transfer
	Missing  string
}

// transfersPage is the transfers listing's data.
type transfersPage struct {
	Rows                       []transferRow
	Status, Workflow, From, To string
	Next                       string
	First                      bool
	Note, StateMachineArn      string
	Statuses, WorkflowStatuses []string
	Operator                   bool
}

var (
	transferStatuses = []string{transferclient.StatusInProgress, transferclient.StatusCompleted, transferclient.StatusFailed}
	workflowStatuses = []string{"RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"}
	accountIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
)

// transfers lists the transfer workflow's executions, newest first (each execution's name is its transfer id), with
// each one's transfer as the API shows it to the caller.
func (s *Server) transfers(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if a := strings.TrimSpace(q.Get("account")); a != "" {
		http.Redirect(w, r, "/accounts/"+url.PathEscape(a), http.StatusFound)
		return
	}
	data := transfersPage{Status: q.Get("status"), Workflow: q.Get("workflow"), From: q.Get("from"), To: q.Get("to"),
		First: q.Get("next") == "", Statuses: transferStatuses, WorkflowStatuses: workflowStatuses, Operator: s.operator}
	from, errFrom := parseWhen(data.From)
	to, errTo := parseWhen(data.To)
	if err := errors.Join(errFrom, errTo); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		s.render(w, r, "error", errorPage{Title: "Transfers", Status: http.StatusBadRequest, Message: err.Error()})
		return
	}
	if data.Status != "" && !contains(transferStatuses, data.Status) || data.Workflow != "" && !contains(workflowStatuses, data.Workflow) {
		w.WriteHeader(http.StatusBadRequest)
		s.render(w, r, "error", errorPage{Title: "Transfers", Status: http.StatusBadRequest, Message: "unknown status filter"})
		return
	}
	arn, err := s.stateMachine(r.Context())
	if err != nil {
		data.Note = "Transfers are listed from the workflow's executions, which needs Step Functions read access (" + err.Error() + "). Open an account to list the transfers that touched it."
		s.render(w, r, "transfers", data)
		return
	}
	data.StateMachineArn = arn
	in := &sfn.ListExecutionsInput{StateMachineArn: &arn, MaxResults: pageSize}
	if data.Workflow != "" {
		in.StatusFilter = types.ExecutionStatus(data.Workflow)
	}
	if n := q.Get("next"); n != "" {
		in.NextToken = &n
	}
	out, err := s.sfn.ListExecutions(r.Context(), in)
	if err != nil {
		s.fail(w, r, "Transfers", err)
		return
	}
	var items []types.ExecutionListItem
	for _, e := range out.Executions {
		started := aws.ToTime(e.StartDate)
		if !to.IsZero() && started.After(to) {
			continue
		}
		if !from.IsZero() && started.Before(from) {
			out.NextToken = nil // newest first: everything after this is older still
			break
		}
		items = append(items, e)
	}
	rows := make([]transferRow, len(items))
	var wg sync.WaitGroup
	sem := make(chan struct{}, lookups)
	for i, e := range items {
		rows[i] = transferRow{TransferID: aws.ToString(e.Name), Started: stamp(aws.ToTime(e.StartDate)), WorkflowStatus: string(e.Status)}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			t, err := s.settled.get(r.Context(), s.api, rows[i].TransferID)
			if err != nil {
				rows[i].Missing = describe(err)
				return
			}
			rows[i].Transfer = &t
		})
	}
	wg.Wait()
	for _, row := range rows {
		if data.Status != "" && (row.Transfer == nil || row.Transfer.Status != data.Status) {
			continue
		}
		data.Rows = append(data.Rows, row)
	}
	if out.NextToken != nil {
		v := url.Values{"next": {*out.NextToken}}
		for _, k := range []string{"status", "workflow", "from", "to"} {
			if q.Get(k) != "" {
				v.Set(k, q.Get(k))
			}
		}
		data.Next = "/transfers?" + v.Encode()
	}
	s.render(w, r, "transfers", data)
}

// stateMachine is the transfer workflow's ARN: the configured one, else found once by name.
func (s *Server) stateMachine(ctx context.Context) (string, error) {
	if s.sfn == nil {
		return "", errors.New("no Step Functions client")
	}
	s.smMu.Lock()
	defer s.smMu.Unlock()
	if s.smArn != "" {
		return s.smArn, nil
	}
	p := sfn.NewListStateMachinesPaginator(s.sfn, &sfn.ListStateMachinesInput{})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return "", err
		}
		for _, m := range out.StateMachines {
			if strings.Contains(aws.ToString(m.Name), "Transfer") {
				s.smArn = aws.ToString(m.StateMachineArn)
				return s.smArn, nil
			}
		}
	}
	return "", errors.New("no state machine whose name contains Transfer")
}

// parseWhen reads a time filter: RFC 3339, or the browser's datetime-local form (UTC).
func parseWhen(v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("time %q: want 2026-11-29T10:00 (UTC) or RFC 3339", v)
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// stamp is a time as the pages show it: UTC, milliseconds.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05.000")
}

// eventRow is a row of an execution's event timeline.
type eventRow struct {
	event
	// At is the time since the execution started; Took how long the step took: a state from entered to exited,
	// anything else since the event before it.
	At, Took string
}

// legRow is a ledger leg with the account's balance before and after it, when the caller may read the account.
type legRow struct {
	transferclient.LedgerLeg
	Signed        int64
	Before, After int64
	HasBalances   bool
	BalanceNote   string
}

// outcome is the transfer's outcome event as the outcome relay publishes it.
type outcome struct {
	DetailType string
	JSON       string
}

// transferPage is the transfer page's data.
type transferPage struct {
	T          transferclient.Transfer
	Live       bool
	Drawing    template.HTML
	DrawNote   string
	Path       path
	Timeline   []transferclient.TimelineEntry
	Events     []eventRow
	Legs       []legRow
	Outcome    *outcome
	ConsoleURL string
	Operator   bool
}

var transferIDPattern = regexp.MustCompile(`^tr_[a-z2-7]{42}$`)

// transfer shows one transfer: its record, the workflow drawn with the path taken, the timeline, the legs with
// balances, and the outcome event.
func (s *Server) transfer(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	ctx := r.Context()
	t, err := s.api.Get(ctx, id)
	if err != nil {
		s.fail(w, r, "Transfer "+id, err)
		return
	}
	h, err := s.api.History(ctx, id)
	if err != nil {
		s.fail(w, r, "Transfer "+id, err)
		return
	}
	evs := fromAPI(h.Events)
	data := transferPage{T: t, Live: !t.Terminal() || running(evs), Path: walk(evs), Timeline: transferclient.Timeline(h, &t),
		Events: eventRows(evs), ConsoleURL: awsConsoleURL(t.ExecutionArn), Operator: s.operator}
	data.Drawing, data.DrawNote = s.drawing(ctx, t.ExecutionArn, data.Path)
	data.Legs = s.legRows(ctx, t.TransferID, h.Ledger)
	if t.Terminal() {
		dt := "Transfer Completed"
		if t.Status == transferclient.StatusFailed {
			dt = "Transfer Failed"
		}
		data.Outcome = &outcome{DetailType: dt, JSON: indent(t.Raw)}
	}
	s.render(w, r, "transfer", data)
}

// running reports whether the execution has started and not ended.
func running(evs []event) bool {
	if len(evs) == 0 {
		return false
	}
	last := evs[len(evs)-1].Type
	return !(strings.HasPrefix(last, "Execution") && last != "ExecutionStarted" && last != "ExecutionRedriven")
}

// eventRows adds each event's time since the start and how long its step took.
func eventRows(evs []event) []eventRow {
	rows := make([]eventRow, len(evs))
	entered := map[string]time.Time{}
	for i, e := range evs {
		rows[i].event = e
		if i == 0 {
			rows[i].At = transferclient.FormatDuration(0)
			continue
		}
		rows[i].At = transferclient.FormatDuration(e.Time.Sub(evs[0].Time))
		switch {
		case strings.HasSuffix(e.Type, "StateEntered"):
			entered[e.State] = e.Time
			rows[i].Took = transferclient.FormatDuration(e.Time.Sub(evs[i-1].Time))
		case strings.HasSuffix(e.Type, "StateExited"):
			if at, ok := entered[e.State]; ok {
				rows[i].Took = transferclient.FormatDuration(e.Time.Sub(at))
			}
		default:
			rows[i].Took = transferclient.FormatDuration(e.Time.Sub(evs[i-1].Time))
		}
	}
	return rows
}

// legRows adds the balances before and after each leg, where the caller may read the leg's account.
func (s *Server) legRows(ctx context.Context, transferID string, legs []transferclient.LedgerLeg) []legRow {
	legs = slices.Clone(legs)
	slices.SortStableFunc(legs, func(a, b transferclient.LedgerLeg) int { return strings.Compare(a.CreatedAt, b.CreatedAt) })
	rows := make([]legRow, len(legs))
	for i, l := range legs {
		rows[i].LedgerLeg = l
		rows[i].Signed = l.Amount
		if l.Leg == "DEBIT" {
			rows[i].Signed = -l.Amount
		}
		before, after, err := s.balances(ctx, l.AccountID, transferID, l.Leg)
		if err != nil {
			rows[i].BalanceNote = err.Error()
			continue
		}
		rows[i].Before, rows[i].After, rows[i].HasBalances = before, after, true
	}
	return rows
}

// errNotReadable says the caller may not read the account (the API answers as for one that does not exist).
var errNotReadable = errors.New("not shown: the account is not yours")

// balances works out an account's balance before and after one of its legs: from its balance now, back through the
// entries newer than the leg (at most balanceWalk). The account is read again after the walk; a write in between
// (its version moved) makes it walk again, once.
func (s *Server) balances(ctx context.Context, accountID, transferID, leg string) (before, after int64, err error) {
	for range 2 {
		a, err := s.api.Account(ctx, accountID)
		if err != nil {
			var apiErr *transferclient.APIError
			if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound {
				return 0, 0, errNotReadable
			}
			return 0, 0, err
		}
		balance, seen, token, found := a.Balance, 0, "", false
	walk:
		for seen < balanceWalk {
			page, err := s.api.AccountTransfers(ctx, accountID, 50, token)
			if err != nil {
				return 0, 0, err
			}
			for _, e := range page.Transfers {
				seen++
				if e.TransferID == transferID && e.Leg == leg {
					after, before, found = balance, balance-e.Amount, true
					break walk
				}
				balance -= e.Amount
			}
			if page.NextToken == "" {
				break
			}
			token = page.NextToken
		}
		again, err := s.api.Account(ctx, accountID)
		if err != nil {
			return 0, 0, err
		}
		if again.Version != a.Version {
			continue
		}
		if !found {
			return 0, 0, fmt.Errorf("not shown: more than %d newer entries on the account", balanceWalk)
		}
		return before, after, nil
	}
	return 0, 0, errors.New("not shown: the account kept changing")
}

// awsConsoleURL links an execution to the Step Functions console when its ARN is a real region's.
func awsConsoleURL(arn string) string {
	parts := strings.Split(arn, ":")
	if len(parts) < 8 || parts[0] != "arn" || parts[2] != "states" || parts[5] != "execution" {
		return ""
	}
	region, account := parts[3], parts[4]
	if account == "000000000000" || account == "123456789012" || !regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-\d$`).MatchString(region) {
		return "" // the local stack's account, or a made-up region
	}
	host := "console.aws.amazon.com"
	switch parts[1] {
	case "aws-cn":
		host = "console.amazonaws.cn"
	case "aws-us-gov":
		host = "console.amazonaws-us-gov.com"
	case "aws":
	default:
		return ""
	}
	return "https://" + region + "." + host + "/states/home?region=" + region + "#/v2/executions/details/" + url.PathEscape(arn)
}

// indent is JSON text made readable, its keys in their order; text that is not JSON stays as it is.
func indent(b []byte) string {
	var out bytes.Buffer
	if json.Indent(&out, b, "", "  ") != nil {
		return string(b)
	}
	return out.String()
}

// accountLookup sends the account form's id to the account's page.
func (s *Server) accountLookup(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimSpace(r.URL.Query().Get("id"))
	if id == "" {
		s.render(w, r, "accounts", nil)
		return
	}
	http.Redirect(w, r, "/accounts/"+url.PathEscape(id), http.StatusFound)
}

// accountPage is the account page's data.
type accountPage struct {
	A        transferclient.Account
	Entries  []accountEntry
	Next     string
	First    bool
	Operator bool
}

// accountEntry is a row of the account's transfers; BalanceAfter is known on the first page (from the balance now).
type accountEntry struct {
	transferclient.AccountTransfer
	BalanceAfter    int64
	HasBalanceAfter bool
}

// account shows an account: its balance and the transfers that touched it, newest first, paged.
func (s *Server) account(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !accountIDPattern.MatchString(id) {
		w.WriteHeader(http.StatusBadRequest)
		s.render(w, r, "error", errorPage{Title: "Account", Status: http.StatusBadRequest, Message: "an account id is 1 to 64 characters of A-Z a-z 0-9 _ -"})
		return
	}
	ctx := r.Context()
	a, err := s.api.Account(ctx, id)
	if err != nil {
		s.fail(w, r, "Account "+id, err)
		return
	}
	next := r.URL.Query().Get("next")
	page, err := s.api.AccountTransfers(ctx, id, pageSize, next)
	if err != nil {
		s.fail(w, r, "Account "+id, err)
		return
	}
	data := accountPage{A: a, First: next == "", Operator: s.operator}
	balance := a.Balance
	for _, e := range page.Transfers {
		data.Entries = append(data.Entries, accountEntry{AccountTransfer: e, BalanceAfter: balance, HasBalanceAfter: data.First})
		balance -= e.Amount
	}
	if page.NextToken != "" {
		data.Next = "/accounts/" + url.PathEscape(id) + "?" + url.Values{"next": {page.NextToken}}.Encode()
	}
	s.render(w, r, "account", data)
}

// executionsPage is the executions listing's data: the state machines, and one's executions.
type executionsPage struct {
	Machines        []types.StateMachineListItem
	StateMachineArn string
	Status          string
	Statuses        []string
	Executions      []types.ExecutionListItem
	Next            string
	First           bool
	Note            string
}

// executions lists the state machines the Step Functions API holds and, for the one chosen, its executions.
func (s *Server) executions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	data := executionsPage{StateMachineArn: q.Get("stateMachine"), Status: q.Get("status"), Statuses: workflowStatuses, First: q.Get("next") == ""}
	if s.sfn == nil {
		data.Note = "No Step Functions client."
		s.render(w, r, "executions", data)
		return
	}
	ctx := r.Context()
	p := sfn.NewListStateMachinesPaginator(s.sfn, &sfn.ListStateMachinesInput{})
	for p.HasMorePages() && len(data.Machines) < 1000 {
		out, err := p.NextPage(ctx)
		if err != nil {
			s.fail(w, r, "Executions", err)
			return
		}
		data.Machines = append(data.Machines, out.StateMachines...)
	}
	if data.StateMachineArn == "" && len(data.Machines) > 0 {
		data.StateMachineArn = aws.ToString(data.Machines[0].StateMachineArn)
	}
	if data.StateMachineArn != "" {
		if data.Status != "" && !contains(workflowStatuses, data.Status) {
			w.WriteHeader(http.StatusBadRequest)
			s.render(w, r, "error", errorPage{Title: "Executions", Status: http.StatusBadRequest, Message: "unknown status filter"})
			return
		}
		in := &sfn.ListExecutionsInput{StateMachineArn: aws.String(data.StateMachineArn), MaxResults: pageSize}
		if data.Status != "" {
			in.StatusFilter = types.ExecutionStatus(data.Status)
		}
		if n := q.Get("next"); n != "" {
			in.NextToken = &n
		}
		out, err := s.sfn.ListExecutions(ctx, in)
		if err != nil {
			s.fail(w, r, "Executions", err)
			return
		}
		data.Executions = out.Executions
		if out.NextToken != nil {
			v := url.Values{"stateMachine": {data.StateMachineArn}, "next": {*out.NextToken}}
			if data.Status != "" {
				v.Set("status", data.Status)
			}
			data.Next = "/executions?" + v.Encode()
		}
	}
	s.render(w, r, "executions", data)
}

// executionPage is an execution's page data.
type executionPage struct {
	E          *sfn.DescribeExecutionOutput
	Live       bool
	Drawing    template.HTML
	DrawNote   string
	Path       path
	Events     []eventRow
	ConsoleURL string
	TransferID string
}

// execution shows any execution: its drawing with the path, and its events.
func (s *Server) execution(w http.ResponseWriter, r *http.Request) {
	arn := r.URL.Query().Get("arn")
	if s.sfn == nil || arn == "" {
		w.WriteHeader(http.StatusBadRequest)
		s.render(w, r, "error", errorPage{Title: "Execution", Status: http.StatusBadRequest, Message: "name an execution: /execution?arn=…"})
		return
	}
	ctx := r.Context()
	d, err := s.sfn.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: &arn})
	if err != nil {
		s.fail(w, r, "Execution", err)
		return
	}
	var hist []types.HistoryEvent
	p := sfn.NewGetExecutionHistoryPaginator(s.sfn, &sfn.GetExecutionHistoryInput{ExecutionArn: &arn, MaxResults: 1000})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			s.fail(w, r, "Execution", err)
			return
		}
		hist = append(hist, out.Events...)
	}
	evs := fromSFN(hist)
	data := executionPage{E: d, Live: d.Status == types.ExecutionStatusRunning, Path: walk(evs), Events: eventRows(evs), ConsoleURL: awsConsoleURL(arn)}
	if name := aws.ToString(d.Name); transferIDPattern.MatchString(name) {
		data.TransferID = name
	}
	data.Drawing, data.DrawNote = s.drawing(ctx, arn, data.Path)
	s.render(w, r, "execution", data)
}

// maxSettled bounds the settled transfers a console keeps: about 1 KB each.
const maxSettled = 10_000

// settledCache keeps the transfers the listing has read that are COMPLETED or FAILED: a terminal status never
// changes, so a listing that refreshes every two seconds reads again only the transfers still in progress and the
// new ones, not every row each time. When full it starts again empty.
type settledCache struct {
	mu sync.Mutex
	m  map[string]transferclient.Transfer
}

// get returns the transfer from the cache, or reads it and keeps it if it has settled.
func (c *settledCache) get(ctx context.Context, api transferAPI, id string) (transferclient.Transfer, error) {
	c.mu.Lock()
	t, ok := c.m[id]
	c.mu.Unlock()
	if ok {
		return t, nil
	}
	t, err := api.Get(ctx, id)
	if err != nil || !t.Terminal() {
		return t, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxSettled {
		c.m = map[string]transferclient.Transfer{}
	}
	c.m[id] = t
	return t, nil
}
