package stack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/transferflow/orchestrator/internal/ledger"
	"github.com/transferflow/orchestrator/internal/metrics"
	"github.com/transferflow/orchestrator/internal/transfer"
	"github.com/transferflow/orchestrator/localaws/lambdahost"
	"github.com/transferflow/orchestrator/localaws/samtemplate"
	"github.com/transferflow/orchestrator/localaws/sfnengine"
	"github.com/transferflow/orchestrator/localaws/stepfunctions"
)

// names resolves the template's logical ids to the names and ARNs the local stack gives them.
type names struct {
	tmpl *samtemplate.Template
	// streams are the ARNs of the tables' streams in AWS's form, by logical id, known once the tables are created
	// (Run sets them before it resolves anything that may name one).
	streams map[string]string
}

func newNames(t *samtemplate.Template) names { return names{tmpl: t, streams: map[string]string{}} }

func (n names) kind(id string) (string, error) {
	r, ok := n.tmpl.Resources[id]
	if !ok {
		if g, ok := n.tmpl.GeneratedResource(id); ok {
			return g.Type, nil
		}
		return "", fmt.Errorf("no resource %s in the template", id)
	}
	return r.Type, nil
}

// Ref implements samtemplate.Resolver.
func (n names) Ref(id string) (string, error) {
	kind, err := n.kind(id)
	if err != nil {
		return "", err
	}
	switch kind {
	case "AWS::DynamoDB::Table", "AWS::Serverless::Function":
		return id, nil
	case "AWS::Serverless::Api":
		// The API the gateway serves, the id of its execute-api ARNs.
		return APIID, nil
	case "AWS::Serverless::StateMachine":
		return stateMachineArn(id), nil
	case samtemplate.TypeLambdaAlias, samtemplate.TypeStateMachineAlias:
		// The ARN of the alias AutoPublishAlias gives a function (the Lambda host runs the code at hand whatever the
		// qualifier) or the state machine (startEngine publishes it).
		g, _ := n.tmpl.GeneratedResource(id)
		if kind == samtemplate.TypeLambdaAlias {
			return functionArn(g.Parent) + ":" + g.Alias, nil
		}
		return stateMachineArn(g.Parent) + ":" + g.Alias, nil
	case "AWS::Events::EventBus", "AWS::Events::Rule":
		// Locally a bus and a rule are named by their logical ids, as `sam local` names resources.
		return id, nil
	case "AWS::Logs::LogGroup":
		return n.logGroupName(id)
	case "AWS::SecretsManager::Secret":
		// Its ARN, which a {{resolve:secretsmanager:…}} reference names; resolveSecretRefs gives its value.
		return secretArn(id), nil
	}
	return "", fmt.Errorf("!Ref %s: the local stack does not model %s", id, kind)
}

// GetAtt implements samtemplate.Resolver.
func (n names) GetAtt(id, attr string) (string, error) {
	kind, err := n.kind(id)
	if err != nil {
		return "", err
	}
	switch kind + "." + attr {
	case "AWS::Serverless::Function.Arn":
		return functionArn(id), nil
	case "AWS::Serverless::StateMachine.Name":
		return id, nil
	case "AWS::Serverless::StateMachine.Arn":
		return stateMachineArn(id), nil
	case "AWS::DynamoDB::Table.Arn":
		return fmt.Sprintf("arn:aws:dynamodb:%s:%s:table/%s", Region, AccountID, id), nil
	case "AWS::DynamoDB::Table.StreamArn":
		if arn, ok := n.streams[id]; ok {
			return arn, nil
		}
		return "", fmt.Errorf("!GetAtt %s.StreamArn: the table has no stream (StreamSpecification), or it is not created yet", id)
	case "AWS::SQS::Queue.Arn":
		// The local stack serves no SQS; a queue is named by its logical id, and an event source mapping's
		// on-failure destination on it is a file (streamsource.DeadLetterQueue).
		return queueArn(id), nil
	case "AWS::SQS::Queue.QueueName":
		return id, nil
	case "AWS::Events::EventBus.Arn":
		return eventBusArn(id), nil
	case "AWS::Events::EventBus.Name":
		return id, nil
	case "AWS::Events::Rule.Arn":
		return fmt.Sprintf("arn:aws:events:%s:%s:rule/%s", Region, AccountID, id), nil
	case "AWS::Logs::LogGroup.Arn":
		name, err := n.logGroupName(id)
		if err != nil {
			return "", err
		}
		return logGroupArnPrefix + name + ":*", nil
	}
	return "", fmt.Errorf("!GetAtt %s.%s: the local stack does not model it", id, attr)
}

// table is the name of the template's (first) table, where accounts are seeded.
func (n names) table() string {
	var ids []string
	for id, r := range n.tmpl.Resources {
		if r.Type == "AWS::DynamoDB::Table" {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	if len(ids) == 0 {
		return ""
	}
	return ids[0]
}

// logGroupName is a log group's LogGroupName as the template gives it (with AWS::StackName "local"), or its logical
// id when the template gives none.
func (n names) logGroupName(id string) (string, error) {
	name, ok, err := n.tmpl.PropertyString(id, "LogGroupName", samtemplate.Env{Region: Region, AccountID: AccountID}, n)
	if err != nil || !ok {
		return id, err
	}
	return name, nil
}

// logGroupArnPrefix starts the ARN of a local log group: the name and ":*" follow.
var logGroupArnPrefix = fmt.Sprintf("arn:aws:logs:%s:%s:log-group:", Region, AccountID)

func queueArn(name string) string {
	return fmt.Sprintf("arn:aws:sqs:%s:%s:%s", Region, AccountID, name)
}

func eventBusArn(name string) string {
	return fmt.Sprintf("arn:aws:events:%s:%s:event-bus/%s", Region, AccountID, name)
}

// stateMachine is the ARN of the template's (first) state machine, "" if it has none.
func (n names) stateMachine() string {
	var ids []string
	for id, r := range n.tmpl.Resources {
		if r.Type == "AWS::Serverless::StateMachine" {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	if len(ids) == 0 {
		return ""
	}
	return stateMachineArn(ids[0])
}

// functionArn is the unqualified ARN of the local function name.
func functionArn(name string) string {
	return fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", Region, AccountID, name)
}

func stateMachineArn(name string) string {
	return fmt.Sprintf("arn:aws:states:%s:%s:stateMachine:%s", Region, AccountID, name)
}

// runtimeFunc builds one function's handler from the SDK config and the environment the template gives the function.
// The handler writes its metrics to metricsOut instead of Lambda's standard output, which locally carries the ready
// line.
type runtimeFunc func(cfg aws.Config, getenv func(string) string, logger *slog.Logger, metricsOut io.Writer, crashPoint func(point string) func()) (any, error)

// runtimes are the functions the local stack can run, by CodeUri. Each calls the same wiring the function's main
// calls, so the code that runs locally is the code that runs on AWS.
var runtimes = map[string]runtimeFunc{
	"functions/orchestrator": func(cfg aws.Config, getenv func(string) string, logger *slog.Logger, metricsOut io.Writer, crashPoint func(string) func()) (any, error) {
		c, err := transfer.LoadConfig(getenv)
		if err != nil {
			return nil, err
		}
		h := transfer.NewOrchestratorHandler(cfg, c, logger)
		h.Metrics = metrics.New(metricsOut, c.MetricsNamespace)
		if store, ok := h.Store.(*ledger.Store); ok {
			h.Store = crashAfterReserve{Store: store, crash: crashPoint("after-reserve")}
		}
		return h.Handle, nil
	},
	"functions/debit": func(cfg aws.Config, getenv func(string) string, logger *slog.Logger, metricsOut io.Writer, _ func(string) func()) (any, error) {
		c, err := transfer.LoadLedgerConfig(getenv)
		if err != nil {
			return nil, err
		}
		h := transfer.NewDebitHandler(cfg, c, logger)
		h.Metrics = metrics.New(metricsOut, c.MetricsNamespace)
		return h.Handle, nil
	},
	"functions/credit": func(cfg aws.Config, getenv func(string) string, logger *slog.Logger, metricsOut io.Writer, crashPoint func(string) func()) (any, error) {
		c, err := transfer.LoadLedgerConfig(getenv)
		if err != nil {
			return nil, err
		}
		h := transfer.NewCreditHandler(cfg, c, logger)
		h.Metrics = metrics.New(metricsOut, c.MetricsNamespace)
		if l, ok := h.Ledger.(*ledger.Ledger); ok {
			h.Ledger = crashAfterCredit{Ledger: l, crash: crashPoint("after-credit")}
		}
		return h.Handle, nil
	},
	"functions/timeout-reconciler": func(cfg aws.Config, getenv func(string) string, logger *slog.Logger, metricsOut io.Writer, _ func(string) func()) (any, error) {
		c, err := transfer.LoadReconcilerConfig(getenv)
		if err != nil {
			return nil, err
		}
		h := transfer.NewReconcilerHandler(cfg, c, logger)
		h.Metrics = metrics.New(metricsOut, c.MetricsNamespace)
		return h.Handle, nil
	},
	"functions/outcome-relay": func(cfg aws.Config, getenv func(string) string, logger *slog.Logger, _ io.Writer, _ func(string) func()) (any, error) {
		c, err := transfer.LoadRelayConfig(getenv)
		if err != nil {
			return nil, err
		}
		return transfer.NewOutcomeRelayHandler(cfg, c, logger).Handle, nil
	},
}

// trimCodeURI turns a CodeUri such as "functions/debit/" or "./functions/debit" into the runtimes key.
func trimCodeURI(uri string) string { return strings.Trim(filepath.ToSlash(uri), "./") }

// crashAfterReserve is the orchestrator's store with the crash=after-reserve fault point: the function dies right
// after its reservation is written, before it starts the workflow.
type crashAfterReserve struct {
	*ledger.Store
	crash func()
}

func (c crashAfterReserve) Reserve(ctx context.Context, rec ledger.Transfer, now time.Time) (ledger.Transfer, bool, error) {
	existing, created, err := c.Store.Reserve(ctx, rec, now)
	if err == nil && created {
		c.crash()
	}
	return existing, created, err
}

// crashAfterCredit is the credit function's ledger with the crash=after-credit fault point: the function dies right
// after its CREDIT (which settles the record) committed, so the workflow sees the credit fail although it went
// through.
type crashAfterCredit struct {
	*ledger.Ledger
	crash func()
}

func (c crashAfterCredit) ApplyLeg(ctx context.Context, req ledger.LegRequest, now time.Time) (ledger.Entry, bool, error) {
	e, replayed, err := c.Ledger.ApplyLeg(ctx, req, now)
	if err == nil && !replayed && req.Leg == ledger.LegCredit {
		c.crash()
	}
	return e, replayed, err
}

// startFunctions builds every function of the template with its template environment, and caps their concurrency
// with the template's ReservedConcurrentExecutions and --lambda-concurrency.
func (s *stack) startFunctions(cfg aws.Config) error {
	var local []lambdahost.Function
	for _, f := range s.fns {
		rt, ok := runtimes[trimCodeURI(f.CodeURI)]
		if !ok {
			return fmt.Errorf("function %s: no local runtime for CodeUri %q", f.LogicalID, f.CodeURI)
		}
		env := f.Environment
		if _, ok := env["ORPHAN_AFTER"]; ok && s.cfg.OrphanAfter > 0 {
			env["ORPHAN_AFTER"] = s.cfg.OrphanAfter.String()
			if give, err := time.ParseDuration(env["ORPHAN_GIVE_UP_AFTER"]); err == nil && give < s.cfg.OrphanAfter {
				env["ORPHAN_GIVE_UP_AFTER"] = s.cfg.OrphanAfter.String()
			}
		}
		logger := slog.New(lambdahost.LogHandler(s.logger.Handler())).With("function", f.LogicalID)
		// The crash point looks the fault up when it is reached, in the invoker built below.
		handler, err := rt(cfg, func(k string) string { return env[k] }, logger, s.metrics, func(point string) func() {
			return func() { s.invoker.CrashPoint(f.LogicalID, point)() }
		})
		if err != nil {
			return fmt.Errorf("function %s: %w", f.LogicalID, err)
		}
		local = append(local, lambdahost.Function{
			Name:       f.LogicalID,
			NewHandler: func() lambda.Handler { return lambda.NewHandler(handler) },
			Timeout:    f.Timeout,
		})
	}
	s.invoker = lambdahost.New(Region, AccountID, s.newID, s.logger, local...)
	if s.cfg.Metrics {
		// With the metrics, each invocation's platform report (duration, billed duration), as Lambda writes it to
		// the function's log group; lab/loadbench prices the outcome relay's invocations from them.
		s.invoker.ReportTo(s.metrics)
	}
	limits := lambdahost.Concurrency{Account: s.cfg.LambdaConcurrency, Reserved: map[string]int{}}
	for _, f := range s.fns {
		if f.ReservedConcurrentExecutions != nil {
			limits.Reserved[f.LogicalID] = *f.ReservedConcurrentExecutions
		}
	}
	if err := s.invoker.SetConcurrency(limits); err != nil {
		return fmt.Errorf("lambda concurrency: %w", err)
	}
	for _, f := range s.cfg.Faults {
		s.invoker.AddFault(f)
	}
	return nil
}

// startEngine builds the Step Functions engine and its API through package stepfunctions, as other modules do (restoring executions from --data-dir) and creates the template's
// state machines with their DefinitionSubstitutions applied.
func (s *stack) startEngine(ctx context.Context, ddb sfnengine.DynamoDBAPI, events sfnengine.EventBridgeAPI, root string) error {
	var store sfnengine.Store = sfnengine.NewMemoryStore()
	if s.cfg.DataDir != "" {
		fs, err := sfnengine.NewFileStore(filepath.Join(s.cfg.DataDir, "stepfunctions"))
		if err != nil {
			return err
		}
		store = fs
	}
	s.sfn = stepfunctions.New(stepfunctions.WithEngineOptions(sfnengine.Options{
		Lambda:               s.invoker,
		DynamoDB:             ddb,
		EventBridge:          events,
		SQS:                  s.sqs,
		SNS:                  s.sns,
		Store:                store,
		Region:               Region,
		AccountID:            AccountID,
		Logger:               s.logger,
		ExecutionTimeout:     s.cfg.ExecutionTimeout,
		CheckpointEveryState: s.cfg.DataDir != "",
		HistoryRetention:     s.cfg.HistoryRetention,
		MaxClosedExecutions:  s.cfg.HistoryMaxExecutions,
		Subscribers:          []sfnengine.Subscriber{s.deliver},
		Publishes:            s.publishes,
		MockConfig:           s.mock,
	}))
	eng := s.sfn.Engine()
	if s.cfg.DataDir != "" {
		if err := eng.Restore(ctx); err != nil {
			return err
		}
	}
	sms, err := s.tmpl.StateMachines(s.env(), s.names)
	if err != nil {
		return err
	}
	for _, sm := range sms {
		b, err := os.ReadFile(filepath.Join(root, sm.DefinitionURI))
		if err != nil {
			return fmt.Errorf("state machine %s: %w", sm.LogicalID, err)
		}
		def := sfnengine.SubstituteDefinition(string(b), sm.Substitutions)
		role := fmt.Sprintf("arn:aws:iam::%s:role/%sRole", AccountID, sm.LogicalID)
		_, err = eng.CreateStateMachine(ctx, sfnengine.CreateInput{Name: sm.LogicalID, Definition: def, RoleArn: role, Type: sm.Type})
		if errors.Is(err, sfnengine.ErrStateMachineExists) {
			_, err = eng.UpdateStateMachine(ctx, stateMachineArn(sm.LogicalID), def, role)
		}
		if err != nil {
			return fmt.Errorf("state machine %s: %w", sm.LogicalID, err)
		}
		if err := publishAlias(ctx, eng, stateMachineArn(sm.LogicalID), sm.AutoPublishAlias); err != nil {
			return fmt.Errorf("state machine %s: %w", sm.LogicalID, err)
		}
	}
	return nil
}

// publishAlias does locally what the SAM transform's resources for AutoPublishAlias do on deploy: it publishes the
// state machine's current definition as a version (the version it has if it was published before, as when the
// stack restarts on its --data-dir with the same template) and points the alias at it, all at once: the template's
// DeploymentPreference has no local meaning. Executions running an older version go on with it. Nothing to do when
// alias is "".
func publishAlias(ctx context.Context, eng *sfnengine.Engine, machine, alias string) error {
	if alias == "" {
		return nil
	}
	v, err := eng.PublishStateMachineVersion(ctx, machine, "", "")
	if err != nil {
		return fmt.Errorf("publish a version: %w", err)
	}
	routes := []sfnengine.Route{{VersionArn: v.Arn, Weight: 100}}
	_, err = eng.UpdateStateMachineAlias(ctx, machine+":"+alias, nil, routes)
	if errors.Is(err, sfnengine.ErrResourceNotFound) {
		_, err = eng.CreateStateMachineAlias(ctx, alias, "", routes)
	}
	if err != nil {
		return fmt.Errorf("alias %s: %w", alias, err)
	}
	return nil
}
