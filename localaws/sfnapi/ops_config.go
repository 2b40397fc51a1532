package sfnapi

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// Wire error types of the logging, tracing and encryption configuration.
const (
	codeInvalidLoggingConfiguration    = "InvalidLoggingConfiguration"
	codeInvalidEncryptionConfiguration = "InvalidEncryptionConfiguration"
)

// Limits of the encryption configuration, from the API model.
const (
	minKmsReusePeriod     = 60
	maxKmsReusePeriod     = 900
	defaultKmsReusePeriod = 300
	maxKmsKeyIDLength     = 2048
)

// logGroupArnRE is a CloudWatch Logs log group ARN, with the ":*" qualifier Step Functions requires (kept apart).
var logGroupArnRE = regexp.MustCompile(`^arn:aws[a-z-]*:logs:[a-z0-9-]+:\d{12}:log-group:[\w./#-]{1,512}(:\*)?$`)

// configInput is the configuration members of CreateStateMachine and UpdateStateMachine, as sent.
type configInput struct {
	LoggingConfiguration *struct {
		Level                *string `json:"level"`
		IncludeExecutionData bool    `json:"includeExecutionData"`
		Destinations         []struct {
			CloudWatchLogsLogGroup *struct {
				LogGroupArn string `json:"logGroupArn"`
			} `json:"cloudWatchLogsLogGroup"`
		} `json:"destinations"`
	} `json:"loggingConfiguration"`
	TracingConfiguration *struct {
		Enabled bool `json:"enabled"`
	} `json:"tracingConfiguration"`
	EncryptionConfiguration *struct {
		Type                         *string `json:"type"`
		KmsKeyID                     *string `json:"kmsKeyId"`
		KmsDataKeyReusePeriodSeconds *int    `json:"kmsDataKeyReusePeriodSeconds"`
	} `json:"encryptionConfiguration"`
}

// config checks the configuration as AWS does and returns it for the engine (a member not sent stays nil): the
// model's constraints first (ValidationException), then each configuration's rules (InvalidLoggingConfiguration,
// InvalidEncryptionConfiguration). A customer managed key without a reuse period gets AWS's default, 300 s.
func (in configInput) config() (sfnengine.Config, error) {
	var c sfnengine.Config
	var violations []string
	if l := in.LoggingConfiguration; l != nil {
		level := sfnengine.LogLevelOff
		if l.Level != nil {
			level = *l.Level
		}
		levels := []string{sfnengine.LogLevelAll, sfnengine.LogLevelError, sfnengine.LogLevelFatal, sfnengine.LogLevelOff}
		if !contains(levels, level) {
			violations = append(violations, fmt.Sprintf("Value '%s' at 'loggingConfiguration.level' failed to satisfy constraint: Member must satisfy enum value set: [%s]", level, strings.Join(levels, ", ")))
		}
		c.Logging = &sfnengine.LoggingConfiguration{Level: level, IncludeExecutionData: l.IncludeExecutionData}
		for _, d := range l.Destinations {
			var group *sfnengine.CloudWatchLogsLogGroup
			if d.CloudWatchLogsLogGroup != nil {
				group = &sfnengine.CloudWatchLogsLogGroup{LogGroupArn: d.CloudWatchLogsLogGroup.LogGroupArn}
			}
			c.Logging.Destinations = append(c.Logging.Destinations, sfnengine.LogDestination{CloudWatchLogsLogGroup: group})
		}
	}
	if t := in.TracingConfiguration; t != nil {
		c.Tracing = &sfnengine.TracingConfiguration{Enabled: t.Enabled}
	}
	if e := in.EncryptionConfiguration; e != nil {
		types := []string{sfnengine.EncryptionAWSOwnedKey, sfnengine.EncryptionCustomerKMSKey}
		c.Encryption = &sfnengine.EncryptionConfiguration{}
		switch {
		case e.Type == nil:
			violations = append(violations, "Value null at 'encryptionConfiguration.type' failed to satisfy constraint: Member must not be null")
		case !contains(types, *e.Type):
			violations = append(violations, fmt.Sprintf("Value '%s' at 'encryptionConfiguration.type' failed to satisfy constraint: Member must satisfy enum value set: [%s]", *e.Type, strings.Join(types, ", ")))
		default:
			c.Encryption.Type = *e.Type
		}
		if e.KmsKeyID != nil {
			if n := len([]rune(*e.KmsKeyID)); n < 1 || n > maxKmsKeyIDLength {
				violations = append(violations, fmt.Sprintf("Value '%s' at 'encryptionConfiguration.kmsKeyId' failed to satisfy constraint: Member must have length between 1 and %d", *e.KmsKeyID, maxKmsKeyIDLength))
			}
			c.Encryption.KmsKeyID = *e.KmsKeyID
		}
		if p := e.KmsDataKeyReusePeriodSeconds; p != nil {
			if *p < minKmsReusePeriod {
				violations = append(violations, fmt.Sprintf("Value '%d' at 'encryptionConfiguration.kmsDataKeyReusePeriodSeconds' failed to satisfy constraint: Member must have value greater than or equal to %d", *p, minKmsReusePeriod))
			}
			if *p > maxKmsReusePeriod {
				violations = append(violations, fmt.Sprintf("Value '%d' at 'encryptionConfiguration.kmsDataKeyReusePeriodSeconds' failed to satisfy constraint: Member must have value less than or equal to %d", *p, maxKmsReusePeriod))
			}
			c.Encryption.KmsDataKeyReusePeriodSeconds = *p
		}
	}
	if err := validationError(violations); err != nil {
		return sfnengine.Config{}, err
	}
	if err := checkLogging(c.Logging); err != nil {
		return sfnengine.Config{}, err
	}
	if err := checkEncryption(c.Encryption); err != nil {
		return sfnengine.Config{}, err
	}
	return c, nil
}

// checkLogging applies Step Functions' rules to a logging configuration: exactly one destination unless the level
// is OFF, a CloudWatch Logs log group ARN qualified with ":*".
func checkLogging(l *sfnengine.LoggingConfiguration) error {
	if l == nil {
		return nil
	}
	if len(l.Destinations) > 1 || (l.Level != sfnengine.LogLevelOff && len(l.Destinations) == 0) {
		return errorf(codeInvalidLoggingConfiguration, "Invalid Logging Configuration: Must specify exactly one Log Destination.")
	}
	for _, d := range l.Destinations {
		if d.CloudWatchLogsLogGroup == nil || d.CloudWatchLogsLogGroup.LogGroupArn == "" {
			return errorf(codeInvalidLoggingConfiguration, "Invalid Logging Configuration: Must specify a CloudWatch Logs log group ARN.")
		}
		arn := d.CloudWatchLogsLogGroup.LogGroupArn
		if !logGroupArnRE.MatchString(arn) {
			return errorf(codeInvalidLoggingConfiguration, "Invalid Logging Configuration: Invalid Log Group ARN: '%s'", arn)
		}
		if !strings.HasSuffix(arn, ":*") {
			return errorf(codeInvalidLoggingConfiguration, "Invalid Logging Configuration: Log Group ARN must be provided with '*' qualifier.")
		}
	}
	return nil
}

// checkEncryption applies Step Functions' rules to an encryption configuration: a customer managed key needs its
// kmsKeyId (and its reuse period defaults to 300 s); an AWS-owned key takes neither.
func checkEncryption(e *sfnengine.EncryptionConfiguration) error {
	if e == nil {
		return nil
	}
	switch e.Type {
	case sfnengine.EncryptionCustomerKMSKey:
		if e.KmsKeyID == "" {
			return errorf(codeInvalidEncryptionConfiguration, "Invalid Encryption Configuration: 'kmsKeyId is required when the type is %s'", sfnengine.EncryptionCustomerKMSKey)
		}
		if e.KmsDataKeyReusePeriodSeconds == 0 {
			e.KmsDataKeyReusePeriodSeconds = defaultKmsReusePeriod
		}
	case sfnengine.EncryptionAWSOwnedKey:
		if e.KmsKeyID != "" || e.KmsDataKeyReusePeriodSeconds != 0 {
			return errorf(codeInvalidEncryptionConfiguration, "Invalid Encryption Configuration: 'kmsKeyId and kmsDataKeyReusePeriodSeconds apply only to the type %s'", sfnengine.EncryptionCustomerKMSKey)
		}
	}
	return nil
}

// describeConfig adds a state machine's configuration to a DescribeStateMachine answer.
func describeConfig(out map[string]any, c sfnengine.Config) {
	c = c.WithDefaults()
	out["loggingConfiguration"] = c.Logging
	out["tracingConfiguration"] = c.Tracing
	out["encryptionConfiguration"] = c.Encryption
}
