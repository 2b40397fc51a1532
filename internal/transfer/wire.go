package transfer

import (
	"crypto/rand"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/transferflow/orchestrator/internal/ledger"
	"github.com/transferflow/orchestrator/internal/metrics"
)

// lambdaMetrics is where a function's metrics go on Lambda: EMF lines on standard output, which Lambda sends to the
// function's log group, where CloudWatch Logs extracts the metrics. Tests and the local stack replace the handler's
// Metrics field.
func lambdaMetrics(namespace string) *metrics.Emitter {
	if namespace == "" {
		namespace = DefaultMetricsNamespace
	}
	return metrics.New(os.Stdout, namespace)
}

// NewOrchestratorHandler wires the API function from an SDK config (whose endpoints the SDK resolves, e.g. from
// AWS_ENDPOINT_URL_DYNAMODB and AWS_ENDPOINT_URL_SFN) and the function's configuration. Both
// functions/orchestrator and the local stack call it.
func NewOrchestratorHandler(cfg aws.Config, c Config, logger *slog.Logger) *Orchestrator {
	store := ledger.NewStore(dynamodb.NewFromConfig(cfg), c.TableName, ledger.WithLegacyKeysUntil(c.LegacyKeysUntil))
	sfnClient := sfn.NewFromConfig(cfg)
	return &Orchestrator{
		Store:             store,
		SFN:               sfnClient,
		History:           sfnClient,
		HistoryCache:      NewHistoryCache(DefaultHistoryCacheBytes, DefaultHistoryCacheMaxAge),
		Legs:              store,
		Accounts:          store,
		Openings:          store,
		Owners:            store,
		Activity:          store,
		StateMachineArn:   c.StateMachineArn,
		Keys:              ledger.NewKeyHasher(c.KeySecret),
		TTL:               c.IdempotencyTTL,
		ReservationWindow: c.ReservationWindow,
		MaxTransferAmount: c.MaxTransferAmount,
		StartTimeout:      c.ReservationWindow / 2,
		Now:               time.Now,
		Random:            rand.Reader,
		Logger:            logger,
		Metrics:           lambdaMetrics(c.MetricsNamespace),
	}
}

// NewDebitHandler wires the debit function from an SDK config and the function's configuration. Both functions/debit
// and the local stack call it.
func NewDebitHandler(cfg aws.Config, c LedgerConfig, logger *slog.Logger) *Debit {
	return &Debit{Ledger: ledger.NewLedger(dynamodb.NewFromConfig(cfg), c.TableName), Now: time.Now, Logger: logger,
		Metrics: lambdaMetrics(c.MetricsNamespace)}
}

// NewCreditHandler wires the credit function (CREDIT and REFUND legs) from an SDK config and the function's
// configuration. Both functions/credit and the local stack call it.
func NewCreditHandler(cfg aws.Config, c LedgerConfig, logger *slog.Logger) *Credit {
	return &Credit{Ledger: ledger.NewLedger(dynamodb.NewFromConfig(cfg), c.TableName), Now: time.Now, Logger: logger,
		Metrics: lambdaMetrics(c.MetricsNamespace)}
}

// NewReconcilerHandler wires the timeout-reconciler function. Both functions/timeout-reconciler and the local stack
// call it.
func NewReconcilerHandler(cfg aws.Config, c ReconcilerConfig, logger *slog.Logger) *Reconciler {
	db := dynamodb.NewFromConfig(cfg)
	return &Reconciler{
		Ledger:          ledger.NewLedger(db, c.TableName),
		Records:         ledger.NewStore(db, c.TableName),
		SFN:             sfn.NewFromConfig(cfg),
		StateMachineArn: c.StateMachineArn,
		OrphanAfter:     c.OrphanAfter,
		GiveUpAfter:     c.GiveUpAfter,
		SweepLimit:      c.SweepLimit,
		SweepMargin:     defaultSweepMargin,
		Now:             time.Now,
		Logger:          logger,
		Metrics:         lambdaMetrics(c.MetricsNamespace),
	}
}

// NewOutcomeRelayHandler wires the outcome-relay function (EventBridge's endpoint comes from the SDK config:
// AWS_ENDPOINT_URL_EVENTBRIDGE locally). Both functions/outcome-relay and the local stack call it.
func NewOutcomeRelayHandler(cfg aws.Config, c RelayConfig, logger *slog.Logger) *OutcomeRelay {
	return &OutcomeRelay{Events: eventbridge.NewFromConfig(cfg), EventBusName: c.EventBusName, Logger: logger}
}

// OutcomeRelayFunction is the outcome-relay function's handler for lambda.Start: the Handle method of
// NewOutcomeRelayHandler's OutcomeRelay. functions/outcome-relay gives it to fnconfig.Main.
func OutcomeRelayFunction(cfg aws.Config, c RelayConfig, logger *slog.Logger) any {
	return NewOutcomeRelayHandler(cfg, c, logger).Handle
}

// OrchestratorFunction is the API function's handler for lambda.Start: the Handle method of NewOrchestratorHandler's
// Orchestrator. functions/orchestrator gives it to fnconfig.Main.
func OrchestratorFunction(cfg aws.Config, c Config, logger *slog.Logger) any {
	return NewOrchestratorHandler(cfg, c, logger).Handle
}

// DebitFunction is the debit function's handler for lambda.Start: the Handle method of NewDebitHandler's Debit.
// functions/debit gives it to fnconfig.Main.
func DebitFunction(cfg aws.Config, c LedgerConfig, logger *slog.Logger) any {
	return NewDebitHandler(cfg, c, logger).Handle
}

// CreditFunction is the credit function's handler for lambda.Start: the Handle method of NewCreditHandler's Credit.
// functions/credit gives it to fnconfig.Main.
func CreditFunction(cfg aws.Config, c LedgerConfig, logger *slog.Logger) any {
	return NewCreditHandler(cfg, c, logger).Handle
}

// ReconcilerFunction is the timeout-reconciler function's handler for lambda.Start: the Handle method of
// NewReconcilerHandler's Reconciler. functions/timeout-reconciler gives it to fnconfig.Main.
func ReconcilerFunction(cfg aws.Config, c ReconcilerConfig, logger *slog.Logger) any {
	return NewReconcilerHandler(cfg, c, logger).Handle
}
