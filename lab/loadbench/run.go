package loadbench

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/transferflow/orchestrator/internal/transferclient"
	"github.com/transferflow/orchestrator/lab/ddbproxy"
	"github.com/transferflow/orchestrator/localaws/ddbserver"
	"github.com/transferflow/orchestrator/localaws/samtemplate"
	"github.com/transferflow/orchestrator/localaws/stack"
)

// Pass names of the closed-loop runs.
const (
	passMany   = "many"
	passHot    = "hot"
	passMemory = "memory"
)

// memorySamples is how many RSS samples the memory run takes along the way.
const memorySamples = 5

// run is one bench run in progress.
type run struct {
	cfg      Config
	res      Result
	tmp      string
	hc       *http.Client
	runID    string
	accounts accountSets
}

func (r *run) progress(format string, args ...any) {
	if r.cfg.Progress != nil {
		elapsed := time.Since(r.res.StartedAt).Seconds()
		fmt.Fprintf(r.cfg.Progress, "bench: [%5.1fs] %s\n", elapsed, fmt.Sprintf(format, args...))
	}
}

func (r *run) note(format string, args ...any) {
	r.res.Notes = append(r.res.Notes, fmt.Sprintf(format, args...))
}

// Run measures the local stack as cfg says. The stacks and the DynamoDB server it starts are stopped before it
// returns. An error means the harness failed; a target the stack misses is a Verdict, not an error.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	r := &run{cfg: cfg, accounts: newAccountSets(cfg.Scale, cfg.wants("store")), hc: newHTTPClient()}
	r.res = Result{Schema: SchemaVersion, StartedAt: time.Now().UTC(), Scale: cfg.Scale}
	var err error
	if r.runID, err = newRunID(); err != nil {
		return nil, err
	}
	if r.tmp, err = os.MkdirTemp("", "bench-"); err != nil {
		return nil, fmt.Errorf("temp dir: %w", err)
	}
	defer os.RemoveAll(r.tmp)
	if err := r.run(ctx); err != nil {
		return nil, err
	}
	r.res.Seconds = time.Since(r.res.StartedAt).Seconds()
	r.res.Verdicts = Verdicts(r.res)
	return &r.res, nil
}

func (r *run) run(ctx context.Context) error {
	localDir, err := filepath.Abs(r.cfg.LocalDir)
	if err != nil {
		return err
	}
	bin := r.cfg.LocalBin
	if bin == "" {
		bin = filepath.Join(r.tmp, "local")
		r.progress("building ./cmd/local of %s", localDir)
		if err := stack.BuildBinary(ctx, localDir, bin); err != nil {
			return err
		}
	}
	r.res.Build = Build{LocalBin: bin, LocalDir: localDir, Git: gitDescribe(ctx, localDir), GoVersion: runtime.Version(),
		OS: runtime.GOOS + "/" + runtime.GOARCH, CPUs: runtime.NumCPU(), Store: "memory"}
	if r.cfg.Disk {
		r.res.Build.Store = "disk"
	}
	tmpl, err := samtemplate.Load(filepath.Join(localDir, "template.yaml"))
	if err != nil {
		return err
	}
	fns, err := tmpl.Functions(samtemplate.Env{Region: CostRegion, AccountID: "000000000000"}, placeholders{})
	if err != nil {
		return err
	}

	upstream, storePID, stopStore, err := r.startStore(ctx)
	if err != nil {
		return err
	}
	defer stopStore()

	attr, err := r.attributionStack(ctx, bin, localDir, upstream)
	if err != nil {
		return err
	}
	r.res.DynamoDB = attr.use
	r.res.Notes = append(r.res.Notes, attr.notes...)

	// The measured stack talks to the DynamoDB server directly: the proxy's extra hop would count against it.
	empty := filepath.Join(r.tmp, "no-accounts.json")
	if err := writeSeed(empty); err != nil {
		return err
	}
	args := []string{"--dynamodb-endpoint", upstream, "--seed", empty}
	if r.cfg.Disk {
		args = append(args, "--data-dir", filepath.Join(r.tmp, "stack"))
	}
	args = append(args, r.cfg.StackArgs...)
	r.progress("starting the measured stack")
	proc, err := stack.StartProcess(ctx, stack.ProcessOptions{Binary: bin, Dir: localDir, Args: args, Stderr: r.stackLog()})
	if err != nil {
		return err
	}
	defer proc.Close()
	mem := &memoryWatch{localPID: proc.PID(), storePID: storePID}
	mem.sample(labelStart)
	mem.mark(1000, labelAfter1000)
	d := r.newDriver(proc, mem)

	var sample histories
	var store *storeTest
	if r.cfg.wants("store") {
		if store = r.newStoreTest(d, attr, upstream, storePID); store == nil {
			r.note("store limit skipped: no template requests were recorded")
		}
	}
	if r.cfg.wants("closed") {
		if sample, err = r.closedPasses(ctx, d, store); err != nil {
			return err
		}
	} else if store != nil {
		for i, cell := range r.cfg.Scale.Cells {
			if err := store.cell(ctx, i, cell.Concurrency, ClosedCell{}); err != nil {
				r.note("store limit: %v", err)
				break
			}
		}
	}
	if err := r.burstAndOpen(ctx, d); err != nil {
		return err
	}
	if r.cfg.wants("engine") {
		r.engine(ctx)
	}
	if r.cfg.wants("memory") {
		r.memoryRun(ctx, d, mem)
	}
	mem.sample(labelEnd)
	var errs []string
	r.res.Memory, errs = mem.result()
	for _, e := range errs {
		r.note("memory: %s", e)
	}
	if err := proc.Close(); err != nil {
		r.note("%v", err)
	}

	// Transitions and invocations per transfer come from the quiet transfers and the sampled ones; durations from
	// the sampled ones only (the quiet transfers' debits were delayed on purpose).
	all := attr.histories.plus(sample)
	r.res.Workflow = Workflow{Samples: all.n, Functions: functionUses(fns, sample, r.postP50AtC1())}
	if all.n > 0 {
		r.res.Workflow.TransitionsPerTransfer = float64(all.transitions) / float64(all.n)
		r.res.Workflow.LambdaInvocationsPerTransfer = float64(all.invocations) / float64(all.n)
		r.res.Workflow.EventsPerTransfer = float64(all.publishes) / float64(all.n)
	}
	// The outcome events come from the table's stream through the relay, outside the histories: its invocations,
	// durations and events are the attribution stack's (quiet transfers, one at a time).
	if attr.reports != nil {
		if use, events, ok := attr.reports.relayUse(attr.histories.n, fns); ok {
			r.res.Workflow.Functions = append(r.res.Workflow.Functions, use)
			r.res.Workflow.EventsPerTransfer += events
		}
	}
	r.res.Cost = ComputeCost(CostInputs{
		Transfers:              1_000_000,
		TransitionsPerTransfer: r.res.Workflow.TransitionsPerTransfer,
		Functions:              r.res.Workflow.Functions,
		WriteUnitsPerTransfer:  r.res.DynamoDB.Transfer.WriteUnits,
		ReadUnitsPerTransfer:   r.res.DynamoDB.Transfer.ReadUnits,
		APIRequestsPerTransfer: 1,
		EventsPerTransfer:      r.res.Workflow.EventsPerTransfer,
		TransitionsSource:      "states entered and retries, execution histories",
		DynamoDBSource:         "quiet stack: new POST + workflow",
	})
	return nil
}

// startStore starts Dynoxide, unless an endpoint was given, and returns its URL, its pid (0 when it is not ours)
// and how to stop it.
func (r *run) startStore(ctx context.Context) (url string, pid int, stop func(), err error) {
	if r.cfg.DynamoDBEndpoint != "" {
		r.res.Build.DynamoDB = r.cfg.DynamoDBEndpoint
		return r.cfg.DynamoDBEndpoint, 0, func() {}, nil
	}
	opts := ddbserver.Options{IndexStreams: r.cfg.IndexStreams}
	if r.cfg.Disk {
		opts.DBPath = filepath.Join(r.tmp, "dynamodb.sqlite")
	}
	srv, err := ddbserver.Start(ctx, opts)
	if err != nil {
		return "", 0, nil, err
	}
	r.res.Build.DynamoDB = dynoxideVersion(ctx)
	return srv.URL, srv.PID(), func() { _ = srv.Close() }, nil
}

// attributionResult is the attribution stack's outcome: the attribution and the quiet transfers' histories.
type attributionResult struct {
	attribution
	histories histories
	// reports are the stack's platform reports and the relay's published events.
	reports *stackReports
}

// attributionStack seeds every account of the run through a stack whose DynamoDB endpoint is the counting proxy,
// attributes a transfer's requests on it, reads the quiet transfers' histories and stops it.
func (r *run) attributionStack(ctx context.Context, bin, dir, upstream string) (attributionResult, error) {
	var out attributionResult
	proxy, err := ddbproxy.New(ddbproxy.Options{Upstream: upstream, InjectCapacity: true})
	if err != nil {
		return out, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return out, fmt.Errorf("proxy listener: %w", err)
	}
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	seed := filepath.Join(r.tmp, "accounts.json")
	if err := writeSeed(seed, r.accounts.all()...); err != nil {
		return out, err
	}
	n := r.cfg.Scale.Attribution
	args := []string{"--dynamodb-endpoint", "http://" + ln.Addr().String(), "--seed", seed, "--fault", attributionFault(n), "--metrics"}
	if r.cfg.Disk {
		args = append(args, "--data-dir", filepath.Join(r.tmp, "attribution-stack"))
	}
	total := 0
	for _, s := range r.accounts.all() {
		total += len(s)
	}
	r.progress("starting the attribution stack behind the counting proxy (seeding %s accounts)", n0(total))
	out.reports = &stackReports{}
	proc, err := stack.StartProcess(ctx, stack.ProcessOptions{Binary: bin, Dir: dir, Args: args, Stderr: io.MultiWriter(r.stackLog(), out.reports)})
	if err != nil {
		return out, err
	}
	defer proc.Close()
	d := r.newDriver(proc, &memoryWatch{})
	r.progress("attributing DynamoDB requests: %d quiet transfers, %d replays each", n, r.cfg.Scale.Replays)
	if out.attribution, err = d.attribute(ctx, proxy, r.accounts.attribution, n, r.cfg.Scale.Replays); err != nil {
		return out, err
	}
	if err := out.histories.read(ctx, d.sfn, out.arns); err != nil {
		return out, err
	}
	if err := out.reports.awaitPublished(ctx, n, 30*time.Second); err != nil {
		out.notes = append(out.notes, "attribution: "+err.Error())
	}
	return out, proc.Close()
}

// newDriver returns a driver of stack's API and Step Functions endpoints.
func (r *run) newDriver(proc *stack.Process, mem *memoryWatch) *driver {
	return &driver{
		api:   &transferclient.Client{Endpoint: proc.API(), HTTP: r.hc},
		sfn:   newSFN(proc.SFN(), r.hc),
		runID: r.runID,
		mem:   mem,
		cpu:   cpuClock{localPID: proc.PID(), storePID: mem.storePID},
	}
}

// stackLog is where the stacks' logs go.
func (r *run) stackLog() io.Writer {
	if r.cfg.StackLog == nil {
		return io.Discard
	}
	return r.cfg.StackLog
}

// closedPasses runs the closed-loop cells of both passes and returns the histories of a sample of the first cell's
// executions, its last ones. When store is not nil, the store test of each many-accounts cell's concurrency runs
// right after that cell, on the store as the cell left it: the DynamoDB server's speed depends on its recent past
// (Dynoxide's fell several-fold over a full run: each TransactWriteItems costs it time in proportion to the
// transactions of the last 10 minutes, docs/dynamodb.md), so a store limit measured at another point of the run
// would not be the limit the cell ran against.
func (r *run) closedPasses(ctx context.Context, d *driver, store *storeTest) (histories, error) {
	var sample histories
	passes := []struct {
		name     string
		accounts []string
	}{{passMany, r.accounts.many}, {passHot, r.accounts.hot}}
	for pi, p := range passes {
		typical := newEWMA()
		for ci, cell := range r.cfg.Scale.Cells {
			r.progress("closed loop, %s accounts (%d): %s transfers at c=%d", p.name, len(p.accounts), n0(cell.Transfers), cell.Concurrency)
			c, arns := d.closedLoop(ctx, p.name, p.accounts, distinctPairs(p.accounts), cell, typical, uint64(pi*100+ci))
			if err := ctx.Err(); err != nil {
				return sample, err
			}
			r.res.Closed = append(r.res.Closed, c)
			if pi == 0 && store != nil {
				if err := store.cell(ctx, ci, cell.Concurrency, c); err != nil {
					r.note("store limit: %v", err)
					store = nil
				}
			}
			if pi == 0 && ci == 0 {
				// The last ones: the stack keeps only its most recent closed executions (--history-max-executions).
				arns = arns[max(0, len(arns)-r.cfg.Scale.HistorySample):]
				if err := sample.read(ctx, d.sfn, arns); err != nil {
					return sample, err
				}
			}
		}
	}
	return sample, nil
}

// burstAndOpen runs the burst, then the open loop at half the many-accounts peak.
func (r *run) burstAndOpen(ctx context.Context, d *driver) error {
	s := r.cfg.Scale
	if r.cfg.wants("burst") {
		r.progress("burst: %s transfers from %d clients over %d accounts, no waiting", n0(s.BurstTransfers), s.BurstClients, s.BurstAccounts)
		b, err := d.burst(ctx, r.accounts.burst, s.BurstTransfers, s.BurstClients, 1000)
		if err != nil {
			return fmt.Errorf("burst: %w", err)
		}
		r.res.Burst = b
	}
	if !r.cfg.wants("open") {
		return nil
	}
	peak, ok := peakCell(r.res.Closed)
	if !ok || peak.CompletedPerSec <= 0 {
		r.note("open loop skipped: the closed loop completed nothing")
		return nil
	}
	// The peak again, now: the burst and the cells after the peak's have loaded the store, and the DynamoDB
	// server's speed depends on its recent past, so half of the earlier peak may be more than the system now serves.
	n := min(float64(peak.Transfers), max(s.OpenLoopSeconds*peak.CompletedPerSec/2, 200))
	cal := Cell{Concurrency: peak.Concurrency, Transfers: int(n)}
	r.progress("open loop: the peak again, %s transfers at c=%d", n0(cal.Transfers), cal.Concurrency)
	again, _ := d.closedLoop(ctx, passMany, r.accounts.many, distinctPairs(r.accounts.many), cal, newEWMA(), 900)
	if err := ctx.Err(); err != nil {
		return err
	}
	rate := again.CompletedPerSec / 2
	r.progress("open loop: %.0f transfers/s (half the peak %.0f/s at c=%d, %.0f/s in the closed loop) for %.0f s", rate, again.CompletedPerSec, peak.Concurrency, peak.CompletedPerSec, s.OpenLoopSeconds)
	o, err := d.openLoop(ctx, r.accounts.many, rate, time.Duration(s.OpenLoopSeconds*float64(time.Second)), 2000)
	if err != nil {
		return fmt.Errorf("open loop: %w", err)
	}
	o.PeakPerSec, o.PeakConcurrency, o.ClosedLoopPeakPerSec = again.CompletedPerSec, peak.Concurrency, peak.CompletedPerSec
	o.PeakTransfers, o.PeakBad, o.PeakCPU = again.Transfers, again.Bad(), again.CPU
	r.res.Open = o
	return nil
}

// storeTest replays the template's requests straight to the DynamoDB server.
type storeTest struct {
	r           *run
	d           *driver
	tpl         template
	perTransfer float64
	endpoint    string
	// storePID is the DynamoDB server's process, 0 when it is not ours to measure.
	storePID int
	hc       *http.Client
}

// newStoreTest returns the store test of the attributed template, or nil when no requests were recorded.
func (r *run) newStoreTest(d *driver, attr attributionResult, endpoint string, storePID int) *storeTest {
	if len(attr.template.requests) == 0 {
		return nil
	}
	perTransfer := r.res.DynamoDB.Transfer.Requests
	if int(perTransfer+0.5) != len(attr.template.requests) {
		r.note("store limit: the template has %d requests, the attribution's mean is %.2f per transfer", len(attr.template.requests), perTransfer)
	}
	return &storeTest{r: r, d: d, tpl: attr.template, perTransfer: perTransfer, endpoint: endpoint, storePID: storePID, hc: newHTTPClient()}
}

// cell sends Scale.DirectTransfers transfers' worth of requests, with the polls the stack's clients made in stack
// (the many-accounts cell at this concurrency; zero when the closed loop was not run), at concurrency c, using the
// i-th block of the direct accounts, and adds the figures to the result.
func (st *storeTest) cell(ctx context.Context, i, c int, stack ClosedCell) error {
	r := st.r
	n := r.cfg.Scale.DirectTransfers
	transfers, err := st.d.directTransfers(st.tpl, r.accounts.direct[2*n*i:2*n*(i+1)], n, stack.PollsPerTransfer)
	if err != nil {
		return err
	}
	r.progress("store limit: %s transfers' requests (%d each, and %.2f GetItem for the polls) straight to DynamoDB at c=%d",
		n0(n), len(st.tpl.requests), stack.PollsPerTransfer, c)
	before := st.storeCPU()
	s := direct(ctx, st.hc, st.endpoint, transfers, c)
	if after := st.storeCPU(); before >= 0 && after >= before && s.Transfers > 0 {
		s.StoreCPUMsPerTransfer = float64(after-before) / float64(time.Millisecond) / float64(s.Transfers)
	}
	s.StackTransfersPerSec = stack.CompletedPerSec
	s.PollsPerTransfer = stack.PollsPerTransfer
	if s.RequestsPerSec > 0 {
		s.Efficiency = s.StackTransfersPerSec * (st.perTransfer + stack.PollsPerTransfer) / s.RequestsPerSec
	}
	if len(s.Errors) > 0 {
		r.note("store limit at c=%d: %s of %s requests failed (%s): conditions of the template that do not hold for fresh identifiers", c, n0(sumErrors(s.Errors)), n0(s.Requests), errorList(s.Errors))
	}
	r.res.Store = append(r.res.Store, s)
	return nil
}

// storeCPU is the DynamoDB server's CPU time so far, or -1 when it is not ours or cannot be read.
func (st *storeTest) storeCPU() time.Duration {
	if st.storePID == 0 {
		return -1
	}
	d, err := ReadCPU(st.storePID)
	if err != nil {
		return -1
	}
	return d
}

func sumErrors(errs map[string]int) int {
	n := 0
	for _, v := range errs {
		n += v
	}
	return n
}

// engine runs the engine comparison when it is built in.
func (r *run) engine(ctx context.Context) {
	if r.cfg.Engine == nil {
		r.note("engine comparison not measured: no EngineFunc was given")
		return
	}
	s := r.cfg.Scale
	r.progress("engine: %s executions at c=%d, against aws-local-stepfunctions", n0(s.EngineExecutions), s.EngineConcurrency)
	e, err := r.cfg.Engine(ctx, s.EngineExecutions, s.EngineConcurrency, r.cfg.NodeDir)
	if err != nil {
		r.note("engine comparison failed: %v", err)
		return
	}
	r.res.Engine = &e
}

// memoryRun runs the long closed loop that shows whether the stack's memory grows with the transfers it has seen.
func (r *run) memoryRun(ctx context.Context, d *driver, mem *memoryWatch) {
	s := r.cfg.Scale
	from := mem.count()
	for k := 1; k < memorySamples; k++ {
		n := from + int64(s.MemoryTransfers*k/memorySamples)
		mem.mark(n, "after "+groupThousands(n)+" transfers")
	}
	r.progress("memory run: %s transfers at c=%d", n0(s.MemoryTransfers), s.MemoryConcurrency)
	c, _ := d.closedLoop(ctx, passMemory, r.accounts.many, distinctPairs(r.accounts.many), Cell{Concurrency: s.MemoryConcurrency, Transfers: s.MemoryTransfers}, newEWMA(), 3000)
	if c.Bad() > 0 {
		r.note("memory run: %s of %s transfers did not complete", n0(c.Bad()), n0(c.Transfers))
	}
}

// postP50AtC1 is the POST p50 of the first many-accounts cell (concurrency 1 in both scales).
func (r *run) postP50AtC1() time.Duration {
	for _, c := range r.res.Closed {
		if c.Pass == passMany {
			return time.Duration(c.POST.P50 * float64(time.Millisecond))
		}
	}
	return 0
}

// newHTTPClient is a client with a connection pool for hundreds of concurrent requests to one host.
func newHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 2048
	t.MaxIdleConnsPerHost = 1024
	return &http.Client{Transport: t}
}

// newRunID is six random letters and digits that make the run's Idempotency-Keys its own.
func newRunID() (string, error) {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("run id: %w", err)
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b), nil
}

// gitDescribe is `git describe --always --dirty` in dir, or "" outside a checkout.
func gitDescribe(ctx context.Context, dir string) string {
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "describe", "--always", "--dirty").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// dynoxideVersion is `dynoxide --version`, or "dynoxide" when it cannot be asked.
func dynoxideVersion(ctx context.Context) string {
	bin, err := ddbserver.BinaryPath()
	if err != nil {
		return "dynoxide"
	}
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return "dynoxide"
	}
	return strings.TrimSpace(string(out))
}
