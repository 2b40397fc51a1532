package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/transferflow/orchestrator/internal/ledger"
	"github.com/transferflow/orchestrator/localaws/stack"
)

// Flags of every start of the stack besides --data-dir and --seed: a sweep that settles or re-drives stuck
// transfers within a minute, and no bound on the closed executions kept, so that every execution can be counted.
var stackFlags = []string{"--sweep-interval", "5s", "--orphan-after", "30s", "--history-max-executions", "0"}

// Run carries out the campaign of cfg and returns its summary; the error is the harness's own failure (the stack
// would not start, the table could not be read), not a violation.
func Run(ctx context.Context, cfg Config) (Summary, error) {
	began := time.Now()
	var progressMu sync.Mutex // the restarter logs too
	progress := func(format string, args ...any) {
		if cfg.Progress != nil {
			progressMu.Lock()
			defer progressMu.Unlock()
			fmt.Fprintf(cfg.Progress, "chaos: %s  "+format+"\n", append([]any{time.Since(began).Round(time.Second)}, args...)...)
		}
	}
	plan := NewPlan(cfg.Seed, cfg.Transfers, cfg.Kills)
	work, err := os.MkdirTemp("", "chaos-")
	if err != nil {
		return Summary{}, fmt.Errorf("work directory: %w", err)
	}
	defer os.RemoveAll(work)
	bin := cfg.LocalBin
	if bin == "" {
		bin = filepath.Join(work, "local")
		progress("building ./cmd/local")
		if err := stack.BuildBinary(ctx, cfg.Dir, bin); err != nil {
			return Summary{}, err
		}
	}
	dataDir := cfg.DataDir
	if dataDir == "" {
		dataDir = filepath.Join(work, "data")
	}
	seedFile := filepath.Join(work, "accounts.json")
	if err := writeSeed(seedFile, plan.Accounts); err != nil {
		return Summary{}, err
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return Summary{}, fmt.Errorf("module directory: %w", err)
	}

	hc := &http.Client{Transport: newTransport()}
	rt := &router{hc: hc}
	st := &stackProc{
		base:   append([]string{"--data-dir", dataDir, "--seed", seedFile}, stackFlags...),
		epochs: plan.Epochs,
		kills:  plan.Kills,
		queue:  make(chan killReq, len(plan.Kills)+1),
		rt:     rt,
		log:    progress,
		opts:   stack.ProcessOptions{Binary: bin, Dir: dir, Stderr: cfg.StackLog},
	}
	progress("seed %d: %d transfers, %d clients, %d kills at accepted %v; epoch 0: %s", cfg.Seed, cfg.Transfers,
		cfg.Clients, len(plan.Kills), killCounts(plan.Kills), describe(plan.Epochs[0]))
	if err := st.start(ctx, 0); err != nil {
		return Summary{}, err
	}
	defer func() { _ = st.current().Close() }()

	restarted := make(chan error, 1)
	go func() { restarted <- st.restarter(ctx) }()
	d := newDriver(plan, rt, st.onAccepted)
	work1 := make(chan Transfer)
	var clients sync.WaitGroup
	for range cfg.Clients {
		clients.Go(func() {
			for t := range work1 {
				d.run(ctx, t)
			}
		})
	}
	step := max(len(plan.Transfers)/10, 1)
	for i, t := range plan.Transfers {
		if i > 0 && i%step == 0 {
			progress("%d transfers handed out, %d accepted", i, st.accepted.Load())
		}
		select {
		case work1 <- t:
		case <-ctx.Done():
		}
	}
	close(work1)
	clients.Wait()
	progress("clients done: %d accepted", st.accepted.Load())
	st.flushKills()
	if err := <-restarted; err != nil {
		return Summary{}, err
	}
	if err := ctx.Err(); err != nil {
		return Summary{}, err
	}

	p := st.current()
	db := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(p.Endpoints["dynamodb"]),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""), HTTPClient: hc})
	table, err := tableName(ctx, db)
	if err != nil {
		return Summary{}, err
	}
	progress("waiting for every transfer to end (at most %s)", cfg.Quiesce)
	snap, err := quiesce(ctx, db, table, cfg.Quiesce)
	if err != nil {
		return Summary{}, err
	}
	progress("quiet: %d transfers in the table, %d in progress; replaying every accepted key", len(snap.Transfers), snap.InProgress())
	replays := d.finalReplays(ctx, cfg.Clients)
	execs, err := listExecutions(ctx, sfn.New(sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String(p.SFN()),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""), HTTPClient: hc}))
	if err != nil {
		return Summary{}, err
	}
	// The table as the checks see it: read after the replays, which must not have changed it.
	if snap, err = ReadTable(ctx, db, table); err != nil {
		return Summary{}, err
	}
	logs := cloudwatchlogs.New(cloudwatchlogs.Options{Region: "us-east-1", BaseEndpoint: aws.String(p.Endpoints["events"]),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""), HTTPClient: hc})
	d.mu.Lock()
	ids := make([]string, 0, len(d.accepted))
	for _, named := range d.accepted {
		ids = append(ids, named...)
	}
	d.mu.Unlock()
	events, err := awaitOutcomeEvents(ctx, logs, snap, ids, cfg.Quiesce)
	if err != nil {
		return Summary{}, err
	}
	progress("outcome events: %d transfers with at least one", len(events))

	d.mu.Lock()
	accepted := make(map[string][]string, len(d.accepted))
	for k, v := range d.accepted {
		accepted[k] = v
	}
	violations := append(Check(snap, Expect{Opening: plan.Opening(), Accepted: accepted, Executions: execs, Replays: replays,
		Events: events}), d.anomalies...)
	s := Summary{Seed: cfg.Seed, Planned: cfg.Transfers, Accepted: len(d.accepted), Unanswered: d.unanswered,
		Unfinished: d.notTerminal, Retries: d.retries, Rounds: d.rounds, Executions: len(execs),
		Kills: st.killed, KillsAt202: st.at202, Downtime: st.down, Violations: violations,
		Outcomes: outcomes(snap), Faults: map[FaultKind]int{}, Actions: map[Action]int{}}
	d.mu.Unlock()
	for _, e := range plan.Epochs {
		for _, f := range e.Faults {
			s.Faults[f.Kind]++
		}
	}
	for _, t := range plan.Transfers {
		s.Actions[t.Action]++
	}
	s.Wall = time.Since(began)
	return s, nil
}

// newTransport is a connection pool for many concurrent requests to one host.
func newTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 512
	t.MaxIdleConnsPerHost = 256
	return t
}

func killCounts(ks []Kill) []int {
	out := make([]int, len(ks))
	for i, k := range ks {
		out[i] = k.AfterAccepted
	}
	return out
}

// writeSeed writes the stack's --seed file with the plan's accounts.
func writeSeed(path string, accounts []Account) error {
	out := make([]stack.SeedAccount, len(accounts))
	for i, a := range accounts {
		out[i] = stack.SeedAccount{AccountID: a.ID, Currency: a.Currency, Balance: a.Balance, Owner: roleOwner}
	}
	return stack.WriteSeed(path, out)
}

// tableName is the stack's one table.
func tableName(ctx context.Context, db *dynamodb.Client) (string, error) {
	out, err := db.ListTables(ctx, &dynamodb.ListTablesInput{})
	if err != nil {
		return "", fmt.Errorf("list tables: %w", err)
	}
	if len(out.TableNames) != 1 {
		return "", fmt.Errorf("list tables: %v, want the one table of docs/data-model.md", out.TableNames)
	}
	return out.TableNames[0], nil
}

// quiesce reads the table until no transfer is in progress, or until the limit, and returns the last read.
func quiesce(ctx context.Context, db *dynamodb.Client, table string, limit time.Duration) (Table, error) {
	deadline := time.Now().Add(limit)
	for {
		t, err := ReadTable(ctx, db, table)
		if err != nil {
			return Table{}, err
		}
		if t.InProgress() == 0 || !time.Now().Before(deadline) {
			return t, nil
		}
		if err := sleep(ctx, 2*time.Second); err != nil {
			return Table{}, err
		}
	}
}

// eventsLogGroup is the log group the local stack's bus delivers the outcome events to (the template's rule on
// transferflow.transfers, for the stack named local).
const eventsLogGroup = "/aws/events/local-transfers"

// outcomeEvents reads every outcome event the bus delivered to eventsLogGroup: the statuses seen for each transfer id.
func outcomeEvents(ctx context.Context, logs *cloudwatchlogs.Client) (map[string][]string, error) {
	out := map[string][]string{}
	p := cloudwatchlogs.NewFilterLogEventsPaginator(logs, &cloudwatchlogs.FilterLogEventsInput{LogGroupName: aws.String(eventsLogGroup)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("read the outcome events: %w", err)
		}
		for _, e := range page.Events {
			var ev struct {
				Detail struct {
					TransferID string `json:"transferId"`
					Status     string `json:"status"`
				} `json:"detail"`
			}
			if err := json.Unmarshal([]byte(aws.ToString(e.Message)), &ev); err != nil {
				return nil, fmt.Errorf("outcome event %.200s: %w", aws.ToString(e.Message), err)
			}
			out[ev.Detail.TransferID] = append(out[ev.Detail.TransferID], ev.Detail.Status)
		}
	}
	return out, nil
}

// awaitOutcomeEvents reads the outcome events until every one of ids that t shows settled has one, or until limit
// has passed (publication follows settlement: the workflow's publishing state and its retries, or the
// reconciler's republication, come after the record is settled), and returns the last read.
func awaitOutcomeEvents(ctx context.Context, logs *cloudwatchlogs.Client, t Table, ids []string, limit time.Duration) (map[string][]string, error) {
	status := map[string]string{}
	for _, r := range t.Transfers {
		status[r.TransferID] = r.Status
	}
	deadline := time.Now().Add(limit)
	for {
		events, err := outcomeEvents(ctx, logs)
		if err != nil {
			return nil, err
		}
		missing := false
		for _, id := range ids {
			if st := status[id]; (st == ledger.StatusCompleted || st == ledger.StatusFailed) && !slices.Contains(events[id], st) {
				missing = true
				break
			}
		}
		if !missing || !time.Now().Before(deadline) {
			return events, nil
		}
		if err := sleep(ctx, 2*time.Second); err != nil {
			return nil, err
		}
	}
}

// listExecutions lists every execution of every state machine.
func listExecutions(ctx context.Context, c *sfn.Client) ([]Execution, error) {
	out := []Execution{}
	sms, err := c.ListStateMachines(ctx, &sfn.ListStateMachinesInput{})
	if err != nil {
		return nil, fmt.Errorf("list state machines: %w", err)
	}
	for _, sm := range sms.StateMachines {
		p := sfn.NewListExecutionsPaginator(c, &sfn.ListExecutionsInput{StateMachineArn: sm.StateMachineArn, MaxResults: 1000})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("list executions of %s: %w", aws.ToString(sm.StateMachineArn), err)
			}
			for _, x := range page.Executions {
				out = append(out, Execution{Name: aws.ToString(x.Name), Status: string(x.Status)})
			}
		}
	}
	return out, nil
}

// finalReplays replays every accepted key once more after the last restart, and pairs the answer with the first
// replay after the transfer ended; a key without one (its client stopped waiting) is replayed twice.
func (d *driver) finalReplays(ctx context.Context, workers int) []ReplayPair {
	byKey := map[string]Transfer{}
	for _, t := range d.plan.Transfers {
		byKey[d.plan.Key(t.Index)] = t
	}
	d.mu.Lock()
	keys := sortedKeys(d.accepted)
	d.mu.Unlock()
	pairs := make([]ReplayPair, len(keys))
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				key := keys[i]
				req := request(byKey[key])
				d.mu.Lock()
				first, ok := d.firstReplay[key]
				d.mu.Unlock()
				if !ok {
					if first, ok = d.replay(ctx, key, req); !ok {
						continue
					}
				}
				if later, ok := d.replay(ctx, key, req); ok {
					pairs[i] = ReplayPair{Key: key, First: first, Later: later}
				}
			}
		})
	}
	for i := range keys {
		next <- i
	}
	close(next)
	wg.Wait()
	out := pairs[:0]
	for _, p := range pairs {
		if p.Key != "" {
			out = append(out, p)
		}
	}
	return out
}

// outcomes counts the transfers by status, and failed ones by code.
func outcomes(t Table) map[string]int {
	out := map[string]int{}
	for _, r := range t.Transfers {
		k := r.Status
		if r.Status == ledger.StatusFailed {
			k += " " + r.FailureCode
		}
		out[k]++
	}
	return out
}

// Summary is a campaign's outcome.
type Summary struct {
	Seed uint64
	// Planned transfers; Accepted keys answered 2xx; Unanswered keys that never got an answer; Unfinished transfers
	// whose client stopped waiting for their end.
	Planned, Accepted, Unanswered, Unfinished int
	// Outcomes counts the table's transfers by status (and failure code).
	Outcomes map[string]int
	// Kills, of which KillsAt202 at the moment a 202 arrived; Downtime is the time from each kill to the stack's
	// next ready line, summed.
	Kills, KillsAt202 int
	Downtime          time.Duration
	// Faults counts the epochs each kind was on in; Actions the transfers by client action.
	Faults  map[FaultKind]int
	Actions map[Action]int
	// Retries counts transferclient's retries by cause (HTTP status or transport); Rounds the client's own
	// resubmissions after those ran out.
	Retries map[string]int
	Rounds  int
	// Executions is how many executions the stack has at the end.
	Executions int
	Wall       time.Duration
	Violations []Violation
}

// FaultCount is how many faults were turned on, over all epochs.
func (s Summary) FaultCount() int {
	n := 0
	for _, c := range s.Faults {
		n += c
	}
	return n
}

// Line is the campaign's last line.
func (s Summary) Line() string {
	return fmt.Sprintf("chaos: %d transfers, %d kills, %d faults, %d violations (seed %d)",
		s.Planned, s.Kills, s.FaultCount(), len(s.Violations), s.Seed)
}

// Write prints the summary table, each violation, and the last line.
func (s Summary) Write(w io.Writer) {
	row := func(k string, v any) { fmt.Fprintf(w, "  %-34s %v\n", k, v) }
	fmt.Fprintf(w, "chaos campaign, seed %d\n", s.Seed)
	row("transfers planned", s.Planned)
	row("keys accepted (2xx)", s.Accepted)
	row("keys never answered", s.Unanswered)
	row("transfers the client stopped awaiting", s.Unfinished)
	for _, k := range sortedKeys(s.Outcomes) {
		row("outcome "+k, s.Outcomes[k])
	}
	row("executions", s.Executions)
	row("kill -9", fmt.Sprintf("%d (%d at a 202), down %s in all", s.Kills, s.KillsAt202, s.Downtime.Round(time.Millisecond)))
	for _, k := range FaultKinds {
		row("fault "+string(k)+" (epochs)", s.Faults[k])
	}
	for _, a := range Actions {
		row("client "+string(a), s.Actions[a])
	}
	causes := sortedKeys(s.Retries)
	for _, c := range causes {
		row("retries after "+c, s.Retries[c])
	}
	row("client resubmissions", s.Rounds)
	row("wall time", s.Wall.Round(time.Second))
	row("violations", len(s.Violations))
	byCheck := map[string]int{}
	for _, v := range s.Violations {
		byCheck[v.Check]++
	}
	checks := make([]string, 0, len(byCheck))
	for c := range byCheck {
		checks = append(checks, c)
	}
	sort.Strings(checks)
	for _, c := range checks {
		row("  violations "+c, byCheck[c])
	}
	for _, v := range s.Violations {
		fmt.Fprintln(w, "violation:", v)
	}
	fmt.Fprintln(w, s.Line())
}

// Main runs a campaign configured from getenv, prints the seed first, the summary and the last line, and returns
// the exit status: 0 without violations, 1 with any, 2 when the campaign itself failed. The stack's logs go to
// CHAOS_STACK_LOG (default chaos-<seed>.log in the temporary directory).
func Main(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer) int {
	cfg, err := LoadConfig(getenv)
	if err != nil {
		fmt.Fprintln(stderr, "chaos:", err)
		return 2
	}
	fmt.Fprintf(stdout, "chaos: seed %d (replay with CHAOS_SEED=%d)\n", cfg.Seed, cfg.Seed)
	cfg.Progress = stdout
	path := getenv("CHAOS_STACK_LOG")
	if path == "" {
		path = filepath.Join(os.TempDir(), fmt.Sprintf("chaos-%d.log", cfg.Seed))
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(stderr, "chaos:", err)
		return 2
	}
	defer f.Close()
	cfg.StackLog = f
	fmt.Fprintf(stdout, "chaos: the stack's logs go to %s\n", path)
	s, err := Run(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "chaos: %v (seed %d)\n", err, cfg.Seed)
		return 2
	}
	s.Write(stdout)
	if len(s.Violations) > 0 {
		return 1
	}
	return 0
}
