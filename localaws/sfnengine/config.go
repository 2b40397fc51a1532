package sfnengine

import "reflect"

// Logging levels of LoggingConfiguration.Level.
const (
	LogLevelAll   = "ALL"
	LogLevelError = "ERROR"
	LogLevelFatal = "FATAL"
	LogLevelOff   = "OFF"
)

// Encryption types of EncryptionConfiguration.Type.
const (
	EncryptionAWSOwnedKey    = "AWS_OWNED_KEY"
	EncryptionCustomerKMSKey = "CUSTOMER_MANAGED_KMS_KEY"
)

// Config is a state machine's logging, tracing and encryption configuration, in the API's JSON shape. The engine
// keeps and reports it; it does not act on it (see docs/asl-engine.md, "Logging, tracing and encryption").
type Config struct {
	Logging    *LoggingConfiguration    `json:"loggingConfiguration,omitempty"`
	Tracing    *TracingConfiguration    `json:"tracingConfiguration,omitempty"`
	Encryption *EncryptionConfiguration `json:"encryptionConfiguration,omitempty"`
}

// LoggingConfiguration is where and how much of an execution's history would be logged to CloudWatch Logs.
type LoggingConfiguration struct {
	Level                string           `json:"level"`
	IncludeExecutionData bool             `json:"includeExecutionData"`
	Destinations         []LogDestination `json:"destinations,omitempty"`
}

// LogDestination is a CloudWatch Logs log group.
type LogDestination struct {
	CloudWatchLogsLogGroup *CloudWatchLogsLogGroup `json:"cloudWatchLogsLogGroup,omitempty"`
}

// CloudWatchLogsLogGroup names a log group by its ARN, which ends with ":*".
type CloudWatchLogsLogGroup struct {
	LogGroupArn string `json:"logGroupArn"`
}

// TracingConfiguration says whether X-Ray tracing is enabled.
type TracingConfiguration struct {
	Enabled bool `json:"enabled"`
}

// EncryptionConfiguration is the key that encrypts the state machine's data at rest.
type EncryptionConfiguration struct {
	Type                         string `json:"type"`
	KmsKeyID                     string `json:"kmsKeyId,omitempty"`
	KmsDataKeyReusePeriodSeconds int    `json:"kmsDataKeyReusePeriodSeconds,omitempty"`
}

// WithDefaults returns c with AWS's defaults for what it leaves out: logging OFF without execution data, tracing
// disabled, an AWS-owned key.
func (c Config) WithDefaults() Config {
	if c.Logging == nil {
		c.Logging = &LoggingConfiguration{Level: LogLevelOff}
	}
	if c.Tracing == nil {
		c.Tracing = &TracingConfiguration{}
	}
	if c.Encryption == nil {
		c.Encryption = &EncryptionConfiguration{Type: EncryptionAWSOwnedKey}
	}
	return c
}

// over returns c with the parts that u sets replaced by u's (UpdateStateMachine's rule: what is not given is kept).
func (c Config) over(u Config) Config {
	if u.Logging != nil {
		c.Logging = u.Logging
	}
	if u.Tracing != nil {
		c.Tracing = u.Tracing
	}
	if u.Encryption != nil {
		c.Encryption = u.Encryption
	}
	return c
}

// equal reports whether two configurations are the same once their defaults are filled in.
func (c Config) equal(o Config) bool {
	return reflect.DeepEqual(c.WithDefaults(), o.WithDefaults())
}
