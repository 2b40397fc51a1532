package transfer

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/transferflow/orchestrator/internal/ledger"
	"github.com/transferflow/orchestrator/internal/metrics"
)

// Config is the orchestrator's configuration, read from the environment once.
type Config struct {
	TableName         string
	StateMachineArn   string
	IdempotencyTTL    time.Duration
	ReservationWindow time.Duration
	// MaxTransferAmount is the largest amount one transfer may move, in minor units (1 to MaxAmount).
	MaxTransferAmount int64
	// MetricsNamespace is the CloudWatch namespace of the function's metrics (docs/metrics.md).
	MetricsNamespace string
	// KeySecret keys the hash of (scope, Idempotency-Key) in record keys and transfer ids (ledger.KeyHasher); empty:
	// the unkeyed hash of deployments without one.
	KeySecret []byte
	// LegacyKeysUntil is when records under the unkeyed hash, written before KeySecret was set, are no longer
	// checked (ledger.WithLegacyKeysUntil); zero: there are none.
	LegacyKeysUntil time.Time
}

// DefaultMaxTransferAmount is MAX_TRANSFER_AMOUNT when unset, as template.yaml's MaxTransferAmount defaults to it:
// 10^9 minor units, 10 million units of a two-decimal currency.
const DefaultMaxTransferAmount = 1_000_000_000

const (
	// defaultSweepMargin is how long before its deadline the reconciler's sweep stops taking up transfers: several
	// times what one transfer's DescribeExecution, ledger read and settlement take on AWS.
	defaultSweepMargin       = 5 * time.Second
	defaultTTL               = 7 * 24 * time.Hour
	minTTL                   = ledger.MinRetention
	defaultReservationWindow = 10 * time.Second
)

var stateMachineArnRe = regexp.MustCompile(`^arn:aws[a-z-]*:states:[a-z0-9-]+:\d{12}:stateMachine:[A-Za-z0-9_-]{1,80}$`)

// startArnRe is the ARN the orchestrator starts executions with: a state machine's, or one qualified with a version
// number or an alias name (template.yaml gives it the alias live, so that a deploy shifts new transfers gradually).
var startArnRe = regexp.MustCompile(`^arn:aws[a-z-]*:states:[a-z0-9-]+:\d{12}:stateMachine:[A-Za-z0-9_-]{1,80}(:[A-Za-z0-9_.-]{1,80})?$`)

// LoadConfig reads TABLE_NAME, STATE_MACHINE_ARN (the ARN executions are started with: a state machine's, or its
// version's or alias's), IDEMPOTENCY_TTL (a Go duration, default 168h, at least 24h so a record outlives its workflow;
// 0 keeps records forever), RESERVATION_WINDOW (default 10s, 2s to 5m),
// MAX_TRANSFER_AMOUNT (default DefaultMaxTransferAmount, 1 to MaxAmount), METRICS_NAMESPACE (see
// DefaultMetricsNamespace), IDEMPOTENCY_KEY_SECRET (at least ledger.MinKeySecret bytes; unset: the unkeyed hash) and
// LEGACY_KEY_HASH_UNTIL (RFC 3339, needs the secret; unset: no records under the unkeyed hash). Errors never
// quote the secret.
func LoadConfig(getenv func(string) string) (Config, error) {
	c := Config{TableName: getenv("TABLE_NAME"), StateMachineArn: getenv("STATE_MACHINE_ARN")}
	if c.TableName == "" {
		return Config{}, fmt.Errorf("TABLE_NAME is required")
	}
	if !startArnRe.MatchString(c.StateMachineArn) {
		return Config{}, fmt.Errorf("STATE_MACHINE_ARN=%q is not the ARN of a state machine, a version or an alias", c.StateMachineArn)
	}
	var err error
	if c.MetricsNamespace, err = metricsNamespace(getenv); err != nil {
		return Config{}, err
	}
	if c.IdempotencyTTL, err = duration(getenv, "IDEMPOTENCY_TTL", defaultTTL); err != nil {
		return Config{}, err
	}
	if c.IdempotencyTTL != 0 && c.IdempotencyTTL < minTTL {
		return Config{}, fmt.Errorf("IDEMPOTENCY_TTL=%s must be 0 (forever) or at least %s", c.IdempotencyTTL, minTTL)
	}
	if c.ReservationWindow, err = duration(getenv, "RESERVATION_WINDOW", defaultReservationWindow); err != nil {
		return Config{}, err
	}
	if c.ReservationWindow < 2*time.Second || c.ReservationWindow > 5*time.Minute {
		return Config{}, fmt.Errorf("RESERVATION_WINDOW=%s must be between 2s and 5m", c.ReservationWindow)
	}
	c.MaxTransferAmount = DefaultMaxTransferAmount
	if v := getenv("MAX_TRANSFER_AMOUNT"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 || n > MaxAmount {
			return Config{}, fmt.Errorf("MAX_TRANSFER_AMOUNT=%q must be an integer from 1 to %d", v, int64(MaxAmount))
		}
		c.MaxTransferAmount = n
	}
	if c.KeySecret, c.LegacyKeysUntil, err = keySecret(getenv); err != nil {
		return Config{}, err
	}
	return c, nil
}

// keySecret reads IDEMPOTENCY_KEY_SECRET and LEGACY_KEY_HASH_UNTIL.
func keySecret(getenv func(string) string) ([]byte, time.Time, error) {
	secret := getenv("IDEMPOTENCY_KEY_SECRET")
	switch {
	case strings.HasPrefix(secret, "{{resolve:"):
		return nil, time.Time{}, fmt.Errorf("IDEMPOTENCY_KEY_SECRET is an unresolved dynamic reference; CloudFormation (or the local stack) resolves it")
	case secret != "" && len(secret) < ledger.MinKeySecret:
		return nil, time.Time{}, fmt.Errorf("IDEMPOTENCY_KEY_SECRET must be at least %d bytes, not %d", ledger.MinKeySecret, len(secret))
	}
	v := getenv("LEGACY_KEY_HASH_UNTIL")
	if v == "" {
		return []byte(secret), time.Time{}, nil
	}
	until, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("LEGACY_KEY_HASH_UNTIL=%q is not an RFC 3339 time such as 2026-12-01T00:00:00Z", v)
	}
	if secret == "" {
		return nil, time.Time{}, fmt.Errorf("LEGACY_KEY_HASH_UNTIL needs IDEMPOTENCY_KEY_SECRET: without it every record is under the unkeyed hash")
	}
	return []byte(secret), until, nil
}

// DefaultMetricsNamespace is the CloudWatch namespace of the functions' metrics when METRICS_NAMESPACE is unset;
// template.yaml sets TransferOrchestrator/<stack name>, so that two stacks in one account keep their metrics apart.
const DefaultMetricsNamespace = "TransferOrchestrator"

// metricsNamespace reads METRICS_NAMESPACE: DefaultMetricsNamespace when unset, else a valid CloudWatch namespace.
func metricsNamespace(getenv func(string) string) (string, error) {
	ns := getenv("METRICS_NAMESPACE")
	if ns == "" {
		return DefaultMetricsNamespace, nil
	}
	if err := metrics.CheckNamespace(ns); err != nil {
		return "", fmt.Errorf("METRICS_NAMESPACE: %w", err)
	}
	return ns, nil
}

func duration(getenv func(string) string, name string, def time.Duration) (time.Duration, error) {
	v := getenv(name)
	if v == "" {
		return def, nil
	}
	if v == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s=%q is not a non-negative duration such as 168h", name, v)
	}
	return d, nil
}

// LedgerConfig is the debit and credit functions' configuration, read from the environment once.
type LedgerConfig struct {
	TableName string
	// MetricsNamespace is the CloudWatch namespace of the function's metrics (docs/metrics.md).
	MetricsNamespace string
}

// LoadLedgerConfig reads TABLE_NAME and METRICS_NAMESPACE (see DefaultMetricsNamespace).
func LoadLedgerConfig(getenv func(string) string) (LedgerConfig, error) {
	c := LedgerConfig{TableName: getenv("TABLE_NAME")}
	if c.TableName == "" {
		return LedgerConfig{}, fmt.Errorf("TABLE_NAME is required")
	}
	var err error
	if c.MetricsNamespace, err = metricsNamespace(getenv); err != nil {
		return LedgerConfig{}, err
	}
	return c, nil
}

// ReconcilerConfig is the timeout reconciler's configuration.
type ReconcilerConfig struct {
	TableName       string
	StateMachineArn string
	OrphanAfter     time.Duration
	GiveUpAfter     time.Duration
	SweepLimit      int
	// MetricsNamespace is the CloudWatch namespace of the function's metrics (docs/metrics.md).
	MetricsNamespace string
}

// LoadReconcilerConfig reads TABLE_NAME, STATE_MACHINE_ARN,
// ORPHAN_AFTER (default 2m: how old an IN_PROGRESS
// transfer must be before the sweep looks at it), ORPHAN_GIVE_UP_AFTER (default 1h: when a workflow that never
// started is settled ORPHANED instead of re-driven), SWEEP_LIMIT (default 500 transfers a sweep) and
// METRICS_NAMESPACE (see DefaultMetricsNamespace).
func LoadReconcilerConfig(getenv func(string) string) (ReconcilerConfig, error) {
	c := ReconcilerConfig{TableName: getenv("TABLE_NAME"), StateMachineArn: getenv("STATE_MACHINE_ARN"), SweepLimit: 500}
	if c.TableName == "" {
		return ReconcilerConfig{}, fmt.Errorf("TABLE_NAME is required")
	}
	if !stateMachineArnRe.MatchString(c.StateMachineArn) {
		return ReconcilerConfig{}, fmt.Errorf("STATE_MACHINE_ARN=%q is not a state machine ARN", c.StateMachineArn)
	}
	var err error
	if c.MetricsNamespace, err = metricsNamespace(getenv); err != nil {
		return ReconcilerConfig{}, err
	}
	if c.OrphanAfter, err = duration(getenv, "ORPHAN_AFTER", 2*time.Minute); err != nil {
		return ReconcilerConfig{}, err
	}
	if c.GiveUpAfter, err = duration(getenv, "ORPHAN_GIVE_UP_AFTER", time.Hour); err != nil {
		return ReconcilerConfig{}, err
	}
	if c.GiveUpAfter < c.OrphanAfter {
		return ReconcilerConfig{}, fmt.Errorf("ORPHAN_GIVE_UP_AFTER=%s must not be shorter than ORPHAN_AFTER=%s", c.GiveUpAfter, c.OrphanAfter)
	}
	if v := getenv("SWEEP_LIMIT"); v != "" {
		if _, err := fmt.Sscan(v, &c.SweepLimit); err != nil || c.SweepLimit < 1 {
			return ReconcilerConfig{}, fmt.Errorf("SWEEP_LIMIT=%q is not a positive integer", v)
		}
	}
	return c, nil
}

// RelayConfig is the outcome relay's configuration.
type RelayConfig struct {
	// EventBusName is the bus of the outcome events.
	EventBusName string
}

// LoadRelayConfig reads EVENT_BUS_NAME, the bus the outcome events go to.
func LoadRelayConfig(getenv func(string) string) (RelayConfig, error) {
	c := RelayConfig{EventBusName: getenv("EVENT_BUS_NAME")}
	if c.EventBusName == "" {
		return RelayConfig{}, fmt.Errorf("EVENT_BUS_NAME is required")
	}
	return c, nil
}
