package loadbench

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/transferflow/orchestrator/internal/transferclient"
)

// Limits of the waits for transfers.
const (
	// transferDeadline bounds a closed-loop client's wait for one transfer.
	transferDeadline = 60 * time.Second
	// settleDeadline bounds the wait for a backlog (burst, open loop) to drain.
	settleDeadline = 10 * time.Minute
	// settleWorkers read the transfers of a drained backlog.
	settleWorkers = 32
)

// currency is the currency of every bench account and transfer.
const currency = "EUR"

// driver drives the transfer API of one running stack.
type driver struct {
	api   *transferclient.Client
	sfn   *sfn.Client
	runID string
	keys  atomic.Int64
	mem   *memoryWatch
	cpu   cpuClock
}

// key returns a new Idempotency-Key of the given four-letter kind; all keys of a run have the same length.
func (d *driver) key(kind string) string {
	return fmt.Sprintf("bench-%s-%s-%08d", d.runID, kind, d.keys.Add(1))
}

// keyKind is the four-letter key kind of a pass name: its first four letters, padded with x.
func keyKind(pass string) string {
	return (pass + "xxxx")[:4]
}

// pairFn picks a source and a destination account.
type pairFn func(r *rand.Rand) (src, dst string)

// distinctPairs picks two different accounts of accounts at random.
func distinctPairs(accounts []string) pairFn {
	return func(r *rand.Rand) (string, string) {
		i := r.IntN(len(accounts))
		j := r.IntN(len(accounts) - 1)
		if j >= i {
			j++
		}
		return accounts[i], accounts[j]
	}
}

// request is a transfer request between src and dst of a small amount.
func request(r *rand.Rand, src, dst string) transferclient.SubmitRequest {
	return transferclient.SubmitRequest{SourceAccountID: src, DestinationAccountID: dst, Amount: 1 + r.Int64N(99), Currency: currency}
}

// newEWMA returns an average that starts at a transfer's time on an idle stack.
func newEWMA() *ewma { return &ewma{v: 10 * time.Millisecond} }

// ewma is an exponentially weighted moving average of durations, safe for concurrent use.
type ewma struct {
	mu sync.Mutex
	v  time.Duration
}

func (e *ewma) get() time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.v
}

func (e *ewma) observe(d time.Duration) {
	e.mu.Lock()
	e.v = e.v*7/8 + d/8
	e.mu.Unlock()
}

// pollDelay is how long a client waits before its attempt-th poll (0 for the first) of a transfer that usually
// takes typical from the client's POST to its terminal status, spent of which have already passed (the POST's own
// time, for the first poll): the first poll comes at about the typical time counted from the POST (within 2 ms and
// 5 s of now), later ones back off from an eighth of it (at least 5 ms) by half again each time, up to half of it (at
// least 100 ms). A client thus polls about once or twice per transfer when the stack is steady, whatever its speed,
// and no fixed interval decides the latency it sees.
func pollDelay(attempt int, typical, spent time.Duration) time.Duration {
	if attempt == 0 {
		return min(max(typical-spent, 2*time.Millisecond), 5*time.Second)
	}
	d := time.Duration(float64(typical/8) * math.Pow(1.5, float64(attempt-1)))
	return min(max(d, 5*time.Millisecond), max(typical/2, 100*time.Millisecond))
}

// endToEnd is the transfer's own time from creation to its terminal status: completedAt, or updatedAt when it has
// none (a FAILED transfer), minus createdAt.
func endToEnd(t transferclient.Transfer) (time.Duration, bool) {
	created, err := time.Parse(time.RFC3339Nano, t.CreatedAt)
	if err != nil {
		return 0, false
	}
	end, ok := endedAt(t)
	if !ok {
		return 0, false
	}
	return end.Sub(created), true
}

// endedAt is when a terminal transfer reached its status.
func endedAt(t transferclient.Transfer) (time.Time, bool) {
	s := t.CompletedAt
	if s == "" {
		s = t.UpdatedAt
	}
	end, err := time.Parse(time.RFC3339Nano, s)
	return end, err == nil && t.Terminal()
}

// tally counts transfers' outcomes, safe for concurrent use.
type tally struct {
	mu sync.Mutex
	o  Outcomes
}

func (t *tally) submitted(retries int, rejected bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.o.Transfers++
	t.o.POSTRetries += retries
	if rejected {
		t.o.Rejected++
	}
}

// ended records an accepted transfer as the bench last saw it.
func (t *tally) ended(tr transferclient.Transfer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch tr.Status {
	case transferclient.StatusCompleted:
		t.o.Completed++
	case transferclient.StatusFailed:
		t.o.Failed++
		if t.o.FailureCodes == nil {
			t.o.FailureCodes = map[string]int{}
		}
		code := "UNKNOWN"
		if tr.Failure != nil {
			code = tr.Failure.Code
		}
		t.o.FailureCodes[code]++
	default:
		t.o.NotTerminal++
	}
}

func (t *tally) outcomes() Outcomes {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.o
}

// submit POSTs one transfer with key and returns the answer, the time it took (retries included) and the retries.
func (d *driver) submit(ctx context.Context, key string, req transferclient.SubmitRequest) (transferclient.Transfer, time.Duration, int, error) {
	start := time.Now()
	res, err := d.api.Submit(ctx, key, req)
	return res.Transfer, time.Since(start), max(res.Attempts-1, 0), err
}

// waitTerminal polls the transfer until it is terminal or the deadline passes, and returns it as last seen and the
// number of polls. typical is how long such a transfer usually takes from its POST, spent how much of it has passed.
func (d *driver) waitTerminal(ctx context.Context, t transferclient.Transfer, typical, spent time.Duration, deadline time.Time) (transferclient.Transfer, int, error) {
	polls := 0
	for attempt := 0; !t.Terminal(); attempt++ {
		wait := pollDelay(attempt, typical, spent)
		if time.Now().Add(wait).After(deadline) {
			return t, polls, transferclient.ErrWaitTimeout
		}
		select {
		case <-ctx.Done():
			return t, polls, ctx.Err()
		case <-time.After(wait):
		}
		polls++
		got, err := d.api.Get(ctx, t.TransferID)
		if err != nil {
			continue // a temporary failure; the client already retried, the deadline bounds the rest
		}
		t = got
	}
	return t, polls, nil
}

// closedLoop runs one closed-loop cell: cell.Concurrency clients, each submitting a transfer and polling it until
// it is terminal before the next, until cell.Transfers are done. typical is the pass's running estimate of a
// transfer's time, which paces the polls and which the cell updates. It returns the cell and the execution ARNs of
// the accepted transfers in submission order.
func (d *driver) closedLoop(ctx context.Context, pass string, accounts []string, pick pairFn, cell Cell, typical *ewma, seed uint64) (ClosedCell, []string) {
	var (
		next        atomic.Int64
		polls       atomic.Int64
		t           tally
		post, e2e   durations
		arns        = make([]string, cell.Transfers)
		wg          sync.WaitGroup
		start       = time.Now()
		lastEndedMu sync.Mutex
		lastEnded   time.Time
		cpuBefore   = d.cpu.read()
	)
	for w := range cell.Concurrency {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(seed, uint64(w)))
			for {
				i := int(next.Add(1) - 1)
				if i >= cell.Transfers || ctx.Err() != nil {
					return
				}
				src, dst := pick(r)
				began := time.Now()
				tr, took, retries, err := d.submit(ctx, d.key(keyKind(pass)), request(r, src, dst))
				t.submitted(retries, err != nil)
				if err != nil {
					continue
				}
				post.add(took)
				arns[i] = tr.ExecutionArn
				tr, n, _ := d.waitTerminal(ctx, tr, typical.get(), time.Since(began), time.Now().Add(transferDeadline))
				polls.Add(int64(n))
				t.ended(tr)
				d.mem.finished(1)
				if end, ok := endedAt(tr); ok {
					typical.observe(end.Sub(began)) // the stack's time, not when the poll happened to see it
					if e, ok := endToEnd(tr); ok {
						e2e.add(e)
					}
				}
				lastEndedMu.Lock()
				lastEnded = time.Now()
				lastEndedMu.Unlock()
			}
		})
	}
	wg.Wait()
	cpuAfter := d.cpu.read()
	elapsed := max(lastEnded.Sub(start), 0)
	o := t.outcomes()
	c := ClosedCell{
		Pass: pass, Accounts: len(accounts), Concurrency: cell.Concurrency, Outcomes: o,
		Seconds: elapsed.Seconds(), CompletedPerSec: perSecond(o.Completed, elapsed), FailureRate: o.FailureRate(),
		POST: post.summary(), EndToEnd: e2e.summary(), CPU: perTransfer(cpuBefore, cpuAfter, o.Completed),
	}
	if accepted := o.Transfers - o.Rejected; accepted > 0 {
		c.PollsPerTransfer = float64(polls.Load()) / float64(accepted)
	}
	return c, compact(arns)
}

// compact drops the empty strings of ss.
func compact(ss []string) []string {
	out := ss[:0:0]
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// submitted is an accepted transfer of a run that does not wait: the answer, and when it was due.
type submitted struct {
	t   transferclient.Transfer
	due time.Time
}

// burst submits n transfers from clients clients without waiting for them, over accounts, then waits until the
// backlog has drained and reads every transfer.
func (d *driver) burst(ctx context.Context, accounts []string, n, clients int, seed uint64) (Burst, error) {
	var (
		next  atomic.Int64
		t     tally
		post  durations
		mu    sync.Mutex
		items []submitted
		wg    sync.WaitGroup
		pick  = distinctPairs(accounts)
		start = time.Now()
	)
	for w := range clients {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(seed, uint64(w)))
			for int(next.Add(1)) <= n && ctx.Err() == nil {
				src, dst := pick(r)
				due := time.Now()
				tr, took, retries, err := d.submit(ctx, d.key("brst"), request(r, src, dst))
				t.submitted(retries, err != nil)
				if err != nil {
					continue
				}
				post.add(took)
				mu.Lock()
				items = append(items, submitted{t: tr, due: due})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	b := Burst{Clients: clients, Accounts: len(accounts), SubmitSeconds: time.Since(start).Seconds(), POST: post.summary()}
	final, err := d.settle(ctx, items, &t)
	if err != nil {
		return b, err
	}
	last, e2e := drained(final, start, false)
	b.Outcomes = t.outcomes()
	b.DrainSeconds = last.Sub(start).Seconds()
	b.CompletedPerSec = perSecond(b.Completed, last.Sub(start))
	b.EndToEnd = e2e
	return b, nil
}

// openLoop offers rate transfers per second for dur on a fixed schedule, whatever the stack's answers, then waits
// for the backlog. Latencies run from each request's scheduled time.
func (d *driver) openLoop(ctx context.Context, accounts []string, rate float64, dur time.Duration, seed uint64) (OpenLoop, error) {
	n := max(10, int(rate*dur.Seconds()))
	interval := time.Duration(float64(time.Second) / rate)
	var (
		t        tally
		post     durations
		mu       sync.Mutex
		items    []submitted
		wg       sync.WaitGroup
		inFlight atomic.Int64
		peak     atomic.Int64
		pick     = distinctPairs(accounts)
		r        = rand.New(rand.NewPCG(seed, 0))
		start    = time.Now().Add(20 * time.Millisecond)
	)
	for i := range n {
		due := start.Add(time.Duration(i) * interval)
		if wait := time.Until(due); wait > 0 {
			select {
			case <-ctx.Done():
				return OpenLoop{}, ctx.Err()
			case <-time.After(wait):
			}
		}
		src, dst := pick(r)
		req := request(r, src, dst)
		wg.Go(func() {
			now := inFlight.Add(1)
			for p := peak.Load(); now > p && !peak.CompareAndSwap(p, now); p = peak.Load() {
			}
			tr, _, retries, err := d.submit(ctx, d.key("open"), req)
			inFlight.Add(-1)
			t.submitted(retries, err != nil)
			if err != nil {
				return
			}
			post.add(time.Since(due))
			mu.Lock()
			items = append(items, submitted{t: tr, due: due})
			mu.Unlock()
		})
	}
	wg.Wait()
	o := OpenLoop{OfferedPerSec: rate, POST: post.summary(), InFlightMax: int(peak.Load())}
	final, err := d.settle(ctx, items, &t)
	if err != nil {
		return o, err
	}
	last, e2e := drained(final, start, true)
	o.Outcomes = t.outcomes()
	o.CompletedPerSec = perSecond(o.Completed, last.Sub(start))
	o.EndToEnd = e2e
	return o, nil
}

// drained returns when the last of the terminal transfers of final ended (start if none did) and their end-to-end
// latencies: from each one's createdAt, or with fromDue from the time its POST was due.
func drained(final []submitted, start time.Time, fromDue bool) (time.Time, Latency) {
	var e2e []time.Duration
	last := start
	for _, s := range final {
		end, ok := endedAt(s.t)
		if !ok {
			continue
		}
		last = later(last, end)
		switch e, ok := endToEnd(s.t); {
		case fromDue:
			e2e = append(e2e, end.Sub(s.due))
		case ok:
			e2e = append(e2e, e)
		}
	}
	return last, Summarize(e2e)
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// settle waits until the executions of items have ended, then reads every transfer (polling the few that are not
// terminal yet) and records its outcome in t.
func (d *driver) settle(ctx context.Context, items []submitted, t *tally) ([]submitted, error) {
	deadline := time.Now().Add(settleDeadline)
	arns := make([]string, 0, len(items))
	for _, s := range items {
		arns = append(arns, s.t.ExecutionArn)
	}
	if err := d.awaitExecutions(ctx, arns, deadline); err != nil {
		return nil, err
	}
	out := make([]submitted, len(items))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(settleWorkers, len(items)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(items) {
					return
				}
				s := items[i]
				if got, err := d.api.Get(ctx, s.t.TransferID); err == nil {
					s.t = got
				}
				s.t, _, _ = d.waitTerminal(ctx, s.t, 0, 0, time.Now().Add(transferDeadline))
				t.ended(s.t)
				out[i] = s
			}
		})
	}
	wg.Wait()
	d.mem.finished(len(items))
	return out, ctx.Err()
}

// awaitExecutions waits until none of arns is RUNNING, listing the state machine's running executions every
// 100 ms (the list costs the stack no DynamoDB request, unlike polling each transfer).
func (d *driver) awaitExecutions(ctx context.Context, arns []string, deadline time.Time) error {
	if len(arns) == 0 {
		return nil
	}
	ours := make(map[string]bool, len(arns))
	for _, a := range arns {
		ours[a] = true
	}
	sm, err := stateMachineArn(arns[0])
	if err != nil {
		return err
	}
	for {
		running := 0
		p := sfn.NewListExecutionsPaginator(d.sfn, &sfn.ListExecutionsInput{
			StateMachineArn: aws.String(sm), StatusFilter: sfntypes.ExecutionStatusRunning, MaxResults: 1000,
		})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				return fmt.Errorf("list running executions: %w", err)
			}
			for _, e := range page.Executions {
				if ours[aws.ToString(e.ExecutionArn)] {
					running++
				}
			}
		}
		if running == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d executions still running after %s", running, len(arns), settleDeadline)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stateMachineArn is the state machine of an execution ARN:
// arn:aws:states:REGION:ACCOUNT:execution:MACHINE:NAME belongs to arn:aws:states:REGION:ACCOUNT:stateMachine:MACHINE.
func stateMachineArn(executionArn string) (string, error) {
	parts := strings.Split(executionArn, ":")
	if len(parts) != 8 || parts[5] != "execution" {
		return "", fmt.Errorf("%q is not an execution ARN", executionArn)
	}
	parts[5] = "stateMachine"
	return strings.Join(parts[:7], ":"), nil
}
