// Package stack runs the whole transfer system on one machine, with no Docker and no AWS account: the
// DynamoDB-compatible server, the Step Functions engine and API, the API Gateway stand-in, the four functions
// (in-process, through the same JSON round trip Lambda does), EventBridge rules and schedules, and the local
// EventBridge (localaws/eventbus) the outcome events go to. Everything is read
// from template.yaml: functions and their environment, API routes, rule patterns, schedules, tables and the state
// machine with its DefinitionSubstitutions.
package stack

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/transferflow/orchestrator/internal/syncio"
	"github.com/transferflow/orchestrator/localaws/ddbserver"
	"github.com/transferflow/orchestrator/localaws/eventbus"
	"github.com/transferflow/orchestrator/localaws/gateway"
	"github.com/transferflow/orchestrator/localaws/internal/heaptrim"
	"github.com/transferflow/orchestrator/localaws/internal/httpserver"
	"github.com/transferflow/orchestrator/localaws/lambdahost"
	"github.com/transferflow/orchestrator/localaws/samtemplate"
	"github.com/transferflow/orchestrator/localaws/sfnengine"
	"github.com/transferflow/orchestrator/localaws/sfnmock"
	"github.com/transferflow/orchestrator/localaws/stepfunctions"
	"github.com/transferflow/orchestrator/localaws/streamsource"
	"github.com/transferflow/orchestrator/localaws/txtokens"
)

// The account and region the local stack's ARNs use.
const (
	Region    = "us-east-1"
	AccountID = "000000000000"
)

// Defaults of --history-retention and --history-max-executions. AWS keeps a standard execution 90 days; the local
// stack keeps a day, enough for a working session and for the transfers a test looks at, and at most 10,000 closed
// executions with --data-dir (about 300 bytes each in memory, a summary; the rest is on disk) or 1,000 in memory
// (about 10 KB each, the history as JSON lines), so that a burst or a benchmark of 100,000 transfers leaves the
// stack's memory flat: 10,000 histories in memory were 100 MB of live heap, several times that in RSS.
const (
	DefaultHistoryRetention             = 24 * time.Hour
	DefaultHistoryMaxExecutions         = 10000
	DefaultHistoryMaxExecutionsInMemory = 1000
)

// DefaultSeed is the --seed file the stack reads when the flag is not given, relative to the template's directory.
const DefaultSeed = "events/local-accounts.json"

// DefaultEventsAddr is where the local EventBridge listens unless --events-addr says otherwise.
const DefaultEventsAddr = "127.0.0.1:8084"

// Config is the local stack's configuration (docs/local-stack.md).
type Config struct {
	// Template is the SAM template the stack is wired from; empty finds it (samtemplate.Locate). The state machine
	// definitions, the default seed and the Dynoxide installed by npm are looked for next to it.
	Template string
	// SeedDefault seeds DefaultSeed next to the template (the --seed default), Seed being ignored.
	SeedDefault bool
	// Hints prints, after the ready line, example commands against the addresses really served, to stderr
	// (make run sets it).
	Hints            bool
	APIAddr          string
	SFNAddr          string
	EventsAddr       string
	DynamoDBAddr     string
	DynamoDBEndpoint string
	DataDir          string
	// IndexStreams is given to the bundled Dynoxide (ddbserver.Options.IndexStreams): cmd/local passes
	// streamindex.Apply, so that its stream stays as fast after a million writes as after ten; a stack a test starts
	// in-process can leave it nil.
	IndexStreams     func(ctx context.Context, dbPath string) error
	Seed             string
	SeedTransfers    string
	ExecutionTimeout time.Duration
	// HistoryRetention and HistoryMaxExecutions bound the closed executions kept (sfnengine.Options.HistoryRetention
	// and MaxClosedExecutions); zero keeps them all.
	HistoryRetention     time.Duration
	HistoryMaxExecutions int
	SweepInterval        time.Duration
	OrphanAfter          time.Duration
	Faults               []*lambdahost.Fault
	// EventsFaults are the --fault events:… faults, injected into the local EventBridge's PutEvents.
	EventsFaults []*eventbus.Fault
	// StreamHold is the --fault stream:hold fault: the functions' DynamoDB stream mappings read and deliver
	// nothing for the life of the stack, as if their poller lagged; the records wait in the stream.
	StreamHold bool
	// StatusChangeDrops is how many of the engine's execution status-change events the --fault
	// status-change:drop[:times=N] fault drops before they reach the rules (-1: every one), as EventBridge's
	// best-effort delivery of Step Functions' status changes may.
	StatusChangeDrops int
	// Metrics writes the functions' CloudWatch EMF lines to stderr with the logs; without it they are discarded.
	Metrics bool
	// LambdaConcurrency is the account's Lambda concurrency quota, shared by the functions the template reserves no
	// concurrency for (0: no limit).
	LambdaConcurrency int
	// PprofAddr, when set, is where net/http/pprof is served (the ready line then names it).
	PprofAddr string
	// ConsoleAddr, when set, is where the audit console is served (the ready line then names it console=).
	ConsoleAddr string
	// Operators are the --operator patterns: a caller whose principal ARN matches one has the template's
	// TransferOperatorPolicy, every other caller its TransferClientPolicy. They are also the template's
	// OperatorPrincipalArns, which the API's resource policy lets through to the operator routes.
	Operators []string
	// MockConfig is the --mock-config file: Step Functions Local's mocked service integrations, which executions
	// started with <state machine ARN>#<TestCase> run with. Empty: the file SFN_MOCK_CONFIG names, if any
	// (MockConfigPath).
	MockConfig string
}

// usage is the first lines of the local stack's --help, before the flags.
const usage = `usage: local [flags]
       local invoke <LogicalId> [--event FILE|-] [--env-vars FILE] [--template FILE]   (local invoke --help)

Runs the transfer orchestrator's stack on this machine, wired from template.yaml (spec: docs/local-stack.md). Once
everything is up it prints one line to stdout: ready api=http://… sfn=http://… dynamodb=http://…

flags:
`

// ParseFlags reads the command line. Usage and flag errors go to output; --help returns flag.ErrHelp.
func ParseFlags(args []string, output io.Writer) (Config, error) {
	var c Config
	fs := flag.NewFlagSet("local", flag.ContinueOnError)
	fs.SetOutput(output)
	fs.Usage = func() {
		fmt.Fprint(output, usage)
		fs.PrintDefaults()
	}
	fs.StringVar(&c.Template, "template", "", "the SAM template to read the wiring from (default: the template.yaml next to this module's go.mod,\nfound from the current directory up, else from this binary's directory up)")
	fs.BoolVar(&c.Hints, "hints", false, "after the ready line, print example commands against the addresses served to stderr (make run sets it)")
	fs.StringVar(&c.APIAddr, "api-addr", "127.0.0.1:3000", "HTTP address of the API (API Gateway REST proxy semantics)")
	fs.StringVar(&c.SFNAddr, "sfn-addr", "127.0.0.1:8083", "address of the Step Functions JSON API")
	fs.StringVar(&c.EventsAddr, "events-addr", DefaultEventsAddr, "address of the local EventBridge (PutEvents) and of CloudWatch Logs' FilterLogEvents over its log groups")
	fs.StringVar(&c.DynamoDBAddr, "dynamodb-addr", "127.0.0.1:8000", "where the bundled DynamoDB-compatible server listens")
	fs.StringVar(&c.DynamoDBEndpoint, "dynamodb-endpoint", "", "use this DynamoDB endpoint instead of starting one")
	fs.StringVar(&c.DataDir, "data-dir", "", "keep data and executions across restarts in this folder (default: in memory)")
	fs.StringVar(&c.Seed, "seed", DefaultSeed, `accounts to create at start: [{"accountId","currency","balance"}]; each balance is funded by a transfer from funding-<currency>; existing accounts are left alone;
the default is read next to the template, a path given relative to the current directory; "" seeds nothing`)
	fs.StringVar(&c.SeedTransfers, "seed-transfers", "", "example transfers to create at start, with their accounts (events/local-transfers.json: what the sam local invoke events reference); existing ones are left alone")
	fs.DurationVar(&c.ExecutionTimeout, "execution-timeout", 0, "override the state machine's TimeoutSeconds")
	fs.DurationVar(&c.HistoryRetention, "history-retention", DefaultHistoryRetention, "how long a closed execution and its history are kept after they stop, in memory or in --data-dir (0: no limit)")
	fs.IntVar(&c.HistoryMaxExecutions, "history-max-executions", -1, "how many closed executions are kept at most, the oldest going first (default: 1000 in memory, 10000 with --data-dir; 0: no limit)")
	fs.DurationVar(&c.SweepInterval, "sweep-interval", 0, "period of the scheduled sweep (default: the template's schedule)")
	fs.DurationVar(&c.OrphanAfter, "orphan-after", 0, "the sweep's staleness threshold (default: the template's ORPHAN_AFTER)")
	fs.BoolVar(&c.Metrics, "metrics", false, "write the functions' metrics (CloudWatch EMF lines) and each invocation's platform report to stderr with the logs")
	fs.IntVar(&c.LambdaConcurrency, "lambda-concurrency", lambdahost.DefaultAccountConcurrency, "the account's Lambda concurrency: in-flight invocations the functions without ReservedConcurrentExecutions share; beyond it (or a function's reservation) invocations are throttled (0: no limit)")
	fs.StringVar(&c.ConsoleAddr, "console-addr", "", "serve the audit console, the web pages of transfers, accounts and executions, on this address, e.g. "+DefaultConsoleAddr+" (make run's) or :0 (default: off)")
	fs.StringVar(&c.MockConfig, "mock-config", "", "Step Functions Local's mock configuration file (MockConfigFile.json): executions started with the state machine ARN\n"+
		"followed by #TestCase get its mocked service responses (default: the file the "+sfnmock.Env+" environment variable names; none without it)")
	fs.StringVar(&c.PprofAddr, "pprof-addr", "", "serve Go's net/http/pprof profiles (/debug/pprof/) on this address, e.g. 127.0.0.1:6060 or :0 (default: off)")
	fs.Func("operator", "a principal with the template's TransferOperatorPolicy, repeatable: an ARN, * and ? wildcards allowed, matched against the caller's\n"+
		"principal ARN (a user's, or for a role session its role's, arn:aws:iam::ACCOUNT:role/NAME); the patterns are also the template's\n"+
		"OperatorPrincipalArns, which the API's resource policy lets through to the operator routes; every other caller has TransferClientPolicy", func(s string) error {
		if s == "" {
			return errors.New("an empty pattern names no principal")
		}
		if strings.Contains(s, ",") {
			// The patterns are also the template's OperatorPrincipalArns, a comma-delimited list, as on AWS.
			return errors.New("a pattern with a comma cannot be one of OperatorPrincipalArns (a comma-delimited list)")
		}
		c.Operators = append(c.Operators, s)
		return nil
	})
	fs.Func("fault", "inject a fault, repeatable: FUNCTION:error=NAME|delay=D|crash=POINT[:times=N][:leg=LEG], events:error=CODE|failed-entry=CODE[:times=N] for the local EventBridge's PutEvents,\n"+
		"status-change:drop[:times=N] to drop the workflow's status-change events before the rules, or stream:hold to hold the DynamoDB stream mappings (nothing read or delivered)", func(s string) error {
		if strings.HasPrefix(s, streamFault+":") {
			if err := parseStreamFault(s); err != nil {
				return err
			}
			c.StreamHold = true
			return nil
		}
		if strings.HasPrefix(s, statusChangeFault+":") {
			n, err := parseStatusChangeFault(s)
			if err != nil {
				return err
			}
			if c.StatusChangeDrops == -1 || n == -1 {
				c.StatusChangeDrops = -1
			} else {
				c.StatusChangeDrops += n
			}
			return nil
		}
		if strings.HasPrefix(s, eventbus.FaultTarget+":") {
			f, err := eventbus.ParseFault(s)
			if err != nil {
				return err
			}
			c.EventsFaults = append(c.EventsFaults, f)
			return nil
		}
		f, err := lambdahost.ParseFault(s)
		if err != nil {
			return err
		}
		c.Faults = append(c.Faults, f)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	c.SeedDefault = true
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "seed" {
			c.SeedDefault = false
		}
	})
	if c.HistoryMaxExecutions < 0 {
		c.HistoryMaxExecutions = DefaultHistoryMaxExecutionsInMemory
		if c.DataDir != "" {
			c.HistoryMaxExecutions = DefaultHistoryMaxExecutions
		}
	}
	return c, nil
}

// stack is a running local stack.
type stack struct {
	cfg      Config
	logger   *slog.Logger
	stderr   io.Writer
	metrics  io.Writer // where the functions' EMF lines go: stderr with --metrics, else io.Discard
	tmpl     *samtemplate.Template
	names    names
	fns      []samtemplate.Function // the template's functions, names resolved
	invoker  *lambdahost.Invoker
	sfn      *stepfunctions.Server // the Step Functions engine and its API (startEngine)
	rules    []rule
	schedule []schedule
	wg       sync.WaitGroup // asynchronous deliveries and schedules
	// drops is how many status-change events deliver still drops (Config.StatusChangeDrops; -1: every one).
	drops    atomic.Int64
	stopping chan struct{} // closed when the stack shuts down: asynchronous retries stop waiting
	newID    func() string
	ddb      *ddbserver.Supervisor // nil with --dynamodb-endpoint
	// sqs and sns run the engine's sqs:sendMessage and sns:publish tasks; nil unless the environment names an
	// endpoint for them (messagingClients).
	sqs sfnengine.SQSAPI
	sns sfnengine.SNSAPI
	// mappings are the event source mappings of the functions' DynamoDB events; deadLetters their on-failure
	// destinations, by queue name (startStreams).
	mappings    []*streamsource.Mapping
	deadLetters map[string]*streamsource.DeadLetterQueue
	// mock is the Step Functions Local mock configuration (--mock-config, SFN_MOCK_CONFIG); nil without one.
	mock *sfnmock.Config
}

// MockConfigPath returns the mock configuration file the stack loads: the --mock-config flag's, else the file the
// environment variable Step Functions Local reads (sfnmock.Env, SFN_MOCK_CONFIG) names; empty for none.
func MockConfigPath(flagValue string, getenv func(string) string) string {
	if flagValue != "" {
		return flagValue
	}
	return getenv(sfnmock.Env)
}

// Run starts the stack, prints the ready line on stdout, serves until ctx is cancelled, then stops everything it
// started, the DynamoDB server included. Stdout carries the ready line only; logs, and metrics with --metrics, go to
// stderr, one whole line per Write.
func Run(ctx context.Context, c Config, stdout, stderr io.Writer) error {
	stderr = syncio.NewWriter(stderr)
	var err error
	s := &stack{cfg: c, stderr: stderr, metrics: io.Discard, logger: slog.New(slog.NewJSONHandler(stderr, nil)), newID: sfnengine.NewUUID,
		stopping: make(chan struct{})}
	if c.Metrics {
		s.metrics = stderr
	}
	s.drops.Store(int64(c.StatusChangeDrops))
	if c.Template == "" {
		if c.Template, err = samtemplate.Locate(); err != nil {
			return fmt.Errorf("find the template (give --template FILE): %w", err)
		}
	}
	if abs, err := filepath.Abs(c.Template); err == nil {
		c.Template = abs
	}
	root := filepath.Dir(c.Template)
	if c.SeedDefault {
		c.Seed = filepath.Join(root, DefaultSeed)
	}
	s.cfg = c
	s.logger.Info("template", "path", c.Template)
	// Memory a burst left behind (a large execution, a load that ended) goes back to the system once the stack is
	// quiet, within seconds rather than at Go's next forced collection minutes later: a development stack should
	// not hold a gigabyte after one hostile workflow (docs/asl-engine.md#quotas). A busy stack is left alone.
	go heaptrim.New(heaptrim.Options{}).Run(ctx, heaptrim.DefaultInterval)
	tmpl, err := samtemplate.Load(c.Template)
	if err != nil {
		return err
	}
	s.tmpl = tmpl
	if path := MockConfigPath(c.MockConfig, os.Getenv); path != "" {
		if s.mock, err = sfnmock.Load(path); err != nil {
			return err
		}
		s.logger.Info("step functions: mock configuration", "path", path)
	}

	// Listeners first, so every address is known before anything is wired to it.
	apiLn, err := net.Listen("tcp", c.APIAddr)
	if err != nil {
		return fmt.Errorf("api listener: %w", err)
	}
	defer apiLn.Close()
	sfnLn, err := net.Listen("tcp", c.SFNAddr)
	if err != nil {
		return fmt.Errorf("step functions listener: %w", err)
	}
	defer sfnLn.Close()
	sfnURL := "http://" + sfnLn.Addr().String()
	eventsLn, err := net.Listen("tcp", c.EventsAddr)
	if err != nil {
		return fmt.Errorf("events listener: %w", err)
	}
	defer eventsLn.Close()
	eventsURL := "http://" + eventsLn.Addr().String()
	var pprofLn net.Listener
	var consoleLn net.Listener
	if c.ConsoleAddr != "" {
		if consoleLn, err = net.Listen("tcp", c.ConsoleAddr); err != nil {
			return fmt.Errorf("console listener: %w", err)
		}
		defer consoleLn.Close()
	}
	if c.PprofAddr != "" {
		if pprofLn, err = net.Listen("tcp", c.PprofAddr); err != nil {
			return fmt.Errorf("pprof listener: %w", err)
		}
		defer pprofLn.Close()
		// The mutex profile (/debug/pprof/mutex) is empty unless sampling is on; one contention event in 100 costs
		// little and is enough to see where goroutines wait for locks.
		goruntime.SetMutexProfileFraction(100)
	}

	ddbURL, ddbFailed, stopDDB, err := s.startDynamoDB(ctx)
	if err != nil {
		return err
	}
	defer stopDDB()

	s.names = newNames(tmpl)
	awsCfg, err := sdkConfig(ctx, ddbURL, sfnURL, eventsURL, tokenWindow)
	if err != nil {
		return err
	}
	s.sqs, s.sns = messagingClients(awsCfg, os.Getenv)
	ddb := dynamodb.NewFromConfig(awsCfg)
	tables, err := tmpl.Tables()
	if err != nil {
		return err
	}
	if err := ddbserver.CreateTables(ctx, ddb, tables); err != nil {
		return err
	}
	// The tables first: !GetAtt Table.StreamArn names a stream the server labels when it creates it.
	if err := s.resolveStreams(ctx, ddb, tables); err != nil {
		return err
	}
	if s.fns, err = tmpl.Functions(s.env(), s.names); err != nil {
		return err
	}
	if err := resolveSecretRefs(s.fns, tmpl, c.DataDir); err != nil {
		return err
	}
	if k, ok := awsCfg.HTTPClient.(*txtokens.Client); ok && k.Keeping() {
		s.logger.Info("dynamodb: the stack keeps the TransactWriteItems idempotency tokens (the server is Dynoxide)", "window", tokenWindow.String())
	}

	bus, err := s.eventBus()
	if err != nil {
		return err
	}
	defer bus.Close()
	if err := s.startFunctions(awsCfg); err != nil {
		return err
	}
	// Rules before the engine: restored executions may publish status changes at once.
	if err := s.startRules(); err != nil {
		return err
	}
	sd := newSeeder(ddb, s.names.table(), s.names.stateMachine(), s.logger)
	if err := sd.seed(ctx, c.Seed); err != nil {
		return err
	}
	fixtureExecutions, err := seedTransfers(ctx, ddb, s.names.table(), sd, c.SeedTransfers, time.Now())
	if err != nil {
		return err
	}
	// The engine's events:putEvents tasks call the local EventBridge in-process (eventbus.Server.PutEvents): the
	// same validation, faults and routing as through --events-addr, without an HTTP round trip per transfer; the
	// functions (the reconciler) still reach it through the SDK and AWS_ENDPOINT_URL_EVENTBRIDGE.
	if err := s.startEngine(ctx, ddb, bus, root); err != nil {
		return err
	}
	defer s.sfn.Close()
	if err := importFixtureExecutions(ctx, s.sfn.Engine(), s.names.stateMachine(), fixtureExecutions); err != nil {
		return err
	}

	gw, err := s.gateway()
	if err != nil {
		return err
	}
	sms, err := tmpl.StateMachines(s.env(), s.names)
	if err != nil {
		return err
	}
	var machines []string
	for _, sm := range sms {
		machines = append(machines, stateMachineArn(sm.LogicalID))
	}
	apiSrv := apiServer(gw, &health{checks: s.healthChecks(awsCfg, machines), logger: s.logger}, APITimeouts, s.logger)
	sfnSrv := sfnServer(s.sfn.Handler(), SFNTimeouts, s.logger)
	eventsSrv := eventsServer(bus, SFNTimeouts, s.logger)
	serveErr := make(chan error, 4)
	go func() { serveErr <- apiSrv.Serve(apiLn) }()
	go func() { serveErr <- sfnSrv.Serve(sfnLn) }()
	go func() { serveErr <- eventsSrv.Serve(eventsLn) }()
	// events= follows the spec's three pairs, then console= when on; pprof=, when on, stays last (docs/local-stack.md).
	ready := fmt.Sprintf("ready api=http://%s sfn=%s dynamodb=%s events=%s", apiLn.Addr(), sfnURL, ddbURL, eventsURL)
	if consoleLn != nil {
		consoleSrv, err := s.console("http://"+apiLn.Addr().String(), awsCfg, sfnURL, machines)
		if err != nil {
			return err
		}
		go func() { serveErr <- consoleSrv.Serve(consoleLn) }()
		defer consoleSrv.Close()
		ready += " console=http://" + consoleLn.Addr().String()
	}
	if pprofLn != nil {
		pprofSrv := httpserver.New(pprofHandler(), httpserver.Options{Timeouts: PprofTimeouts,
			ErrorLog: slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn)})
		go func() { serveErr <- pprofSrv.Serve(pprofLn) }()
		defer pprofSrv.Close()
		ready += " pprof=http://" + pprofLn.Addr().String()
	}

	schedCtx, stopSchedules := context.WithCancel(ctx)
	defer stopSchedules()
	s.startSchedules(schedCtx)
	// The stream mappings once the servers serve: a function they invoke may call the local EventBridge.
	if err := s.startStreams(ctx, awsCfg, ddbURL); err != nil {
		s.stopStreams(context.Background())
		return err
	}

	fmt.Fprintln(stdout, ready)
	if c.Hints && len(machines) > 0 {
		writeHints(stderr, hintsFor(ready, root, machines[0]))
	}

	var runErr error
	select {
	case <-ctx.Done():
	case err := <-serveErr:
		runErr = fmt.Errorf("server stopped: %w", err)
	case <-ddbFailed:
		runErr = s.ddbErr()
	}
	s.logger.Info("shutting down")
	close(s.stopping)
	stopSchedules()
	shutCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	// The stream mappings first: the batch in flight is handled and checkpointed (within shutCtx) while the
	// servers its function may call still serve.
	s.stopStreams(shutCtx)
	_ = apiSrv.Shutdown(shutCtx)
	gw.Close() // the invocations still running after Shutdown's wait end with the stack
	_ = sfnSrv.Shutdown(shutCtx)
	s.sfn.Close()
	waitFor(&s.wg, time.Second)
	_ = eventsSrv.Shutdown(shutCtx)
	return runErr
}

// pprofHandler serves net/http/pprof's index and profiles under /debug/pprof/, on a mux of its own so the API
// never exposes them.
func pprofHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// waitFor waits for wg at most d.
func waitFor(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// startDynamoDB starts Dynoxide under a supervisor (ddbserver.Supervise) that restarts it on the same port and data
// file when it dies; failed is closed when the supervisor gives up (the data was in memory, or it keeps dying), and
// the stack then stops with that error. With --dynamodb-endpoint nothing is started and failed never closes.
func (s *stack) startDynamoDB(ctx context.Context) (url string, failed <-chan struct{}, stop func(), err error) {
	if s.cfg.DynamoDBEndpoint != "" {
		return s.cfg.DynamoDBEndpoint, nil, func() {}, nil
	}
	// Dynoxide as npm installed it next to the template, wherever the stack was started from.
	bin, err := ddbserver.BinaryPathFrom(filepath.Dir(s.cfg.Template))
	if errors.Is(err, ddbserver.ErrBinaryNotFound) {
		bin, err = ddbserver.BinaryPath()
	}
	if err != nil {
		return "", nil, nil, err
	}
	opts := ddbserver.SuperviseOptions{Options: ddbserver.Options{Addr: s.cfg.DynamoDBAddr, Binary: bin, IndexStreams: s.cfg.IndexStreams}, Logger: s.logger}
	if s.cfg.DataDir != "" {
		if err := os.MkdirAll(s.cfg.DataDir, 0o755); err != nil {
			return "", nil, nil, fmt.Errorf("data dir: %w", err)
		}
		opts.DBPath = filepath.Join(s.cfg.DataDir, "dynamodb.sqlite")
	}
	sup, err := ddbserver.Supervise(ctx, opts)
	if err != nil {
		return "", nil, nil, err
	}
	s.ddb = sup
	return sup.URL, sup.Failed(), func() { _ = sup.Close() }, nil
}

// ddbErr is why the DynamoDB supervisor gave up.
func (s *stack) ddbErr() error {
	return fmt.Errorf("dynamodb: %w (it ran at %s)", s.ddb.Err(), s.ddb.URL)
}

// idleConnsPerHost is how many idle connections the functions and the engine keep to each endpoint (Dynoxide, the
// Step Functions API). The SDK's default of 10 makes every request beyond the tenth concurrent one open a new TCP
// connection, and close it afterwards, on both sides.
const idleConnsPerHost = 1024

// messagingClients returns the SQS and SNS clients of the engine's sqs:sendMessage and sns:publish tasks. The local
// stack serves neither service, so each is wired only when the environment points the SDK at one
// (AWS_ENDPOINT_URL_SQS / AWS_ENDPOINT_URL_SNS, or AWS_ENDPOINT_URL for every service), for example an
// SQS-compatible server the user runs; otherwise those tasks fail with SQS.SdkClientException /
// SNS.SdkClientException, errors a Catch or Retry can name, rather than reaching a real AWS account by accident.
func messagingClients(cfg aws.Config, getenv func(string) string) (sfnengine.SQSAPI, sfnengine.SNSAPI) {
	var q sfnengine.SQSAPI
	var p sfnengine.SNSAPI
	all := getenv("AWS_ENDPOINT_URL") != ""
	if all || getenv("AWS_ENDPOINT_URL_SQS") != "" {
		q = sqs.NewFromConfig(cfg)
	}
	if all || getenv("AWS_ENDPOINT_URL_SNS") != "" {
		p = sns.NewFromConfig(cfg)
	}
	return q, p
}

// tokenWindow is how long the stack keeps a TransactWriteItems token for a Dynoxide server (localaws/txtokens):
// DynamoDB's idempotency window, 10 minutes, so a token reused within it is answered as DynamoDB answers it,
// whoever reuses it. An entry is about 60 bytes without pointers: 10 minutes of the bench's peak load (some 240,000
// tokens) hold about 15 MB (docs/dynamodb.md).
const tokenWindow = 10 * time.Minute

// sdkConfig points the AWS SDK at the local endpoints the way a user would: through the SDK's own
// AWS_ENDPOINT_URL_* variables, so function code has no local mode. Credentials and region are set only where the
// environment has none (a --dynamodb-endpoint on AWS keeps the user's own). Its HTTP client keeps the
// TransactWriteItems tokens itself when the DynamoDB server is Dynoxide (localaws/txtokens, docs/dynamodb.md), for
// window.
func sdkConfig(ctx context.Context, ddbURL, sfnURL, eventsURL string, window time.Duration) (aws.Config, error) {
	set := func(k, v string) error {
		if os.Getenv(k) != "" && !strings.HasPrefix(k, "AWS_ENDPOINT_URL_") {
			return nil
		}
		return os.Setenv(k, v)
	}
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL_DYNAMODB": ddbURL,
		"AWS_ENDPOINT_URL_SFN":      sfnURL,
		// The SDK's variable for EventBridge: the service id "EventBridge" upper-cased (not …_EVENTS).
		"AWS_ENDPOINT_URL_EVENTBRIDGE": eventsURL,
		"AWS_REGION":                   Region,
		"AWS_ACCESS_KEY_ID":            "local",
		"AWS_SECRET_ACCESS_KEY":        "local",
	} {
		if err := set(k, v); err != nil {
			return aws.Config{}, err
		}
	}
	cfg, err := config.LoadDefaultConfig(ctx, config.WithHTTPClient(awshttp.NewBuildableClient().WithTransportOptions(
		func(t *http.Transport) {
			t.MaxIdleConns = 2 * idleConnsPerHost
			t.MaxIdleConnsPerHost = idleConnsPerHost
		})))
	if err != nil {
		return aws.Config{}, fmt.Errorf("aws config: %w", err)
	}
	// Wrapped after loading: the SDK configures a custom CA bundle (AWS_CA_BUNDLE) only on its own client type.
	cfg.HTTPClient = txtokens.New(cfg.HTTPClient, window, nil)
	return cfg, nil
}

func (s *stack) gateway() (*gateway.Gateway, error) {
	var routes []gateway.Route
	for _, f := range s.fns {
		for _, ev := range f.Events {
			if ev.Type == samtemplate.EventAPI {
				routes = append(routes, gateway.Route{Method: strings.ToUpper(ev.Method), Resource: ev.Path, Function: f.LogicalID})
			}
		}
	}
	if len(routes) == 0 {
		return nil, errors.New("template.yaml declares no Api events")
	}
	grs, err := s.tmpl.GatewayResponses()
	if err != nil {
		return nil, err
	}
	responses := make(map[string]gateway.Response, len(grs))
	for typ, gr := range grs {
		responses[typ] = gateway.Response{StatusCode: gr.StatusCode, Headers: gr.Headers, Templates: gr.Templates}
	}
	resource, err := s.tmpl.APIResourcePolicy(s.env(), s.names)
	if err != nil {
		return nil, err
	}
	identity, err := s.identityPolicies()
	if err != nil {
		return nil, err
	}
	return gateway.New(routes, s.invoker, gateway.Options{Stage: "v1", AccountID: AccountID, Region: Region, APIID: APIID,
		NewID: s.newID, Logger: s.logger, Responses: responses, ResourcePolicy: resource, IdentityPolicies: identity})
}

// env is what the template's intrinsics resolve against: the local region and account, the defaults of its
// parameters but OperatorPrincipalArns, which is the --operator patterns (so that the API's resource policy lets
// through to the operator routes the principals that have their IAM policy, as a deployment that names its operators
// there does; none without --operator).
func (s *stack) env() samtemplate.Env {
	return samtemplate.Env{Region: Region, AccountID: AccountID,
		Parameters: map[string]string{OperatorPrincipalArnsParameter: strings.Join(s.cfg.Operators, ",")}}
}
