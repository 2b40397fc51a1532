package sfnapi_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
	"github.com/transferflow/orchestrator/localaws/stepfunctions"
)

const logGroup = "arn:aws:logs:us-east-1:123456789012:log-group:/aws/vendedlogs/states/sm:*"

func logging(level types.LogLevel, data bool, groups ...string) *types.LoggingConfiguration {
	l := &types.LoggingConfiguration{Level: level, IncludeExecutionData: data}
	for _, g := range groups {
		l.Destinations = append(l.Destinations, types.LogDestination{CloudWatchLogsLogGroup: &types.CloudWatchLogsLogGroup{LogGroupArn: aws.String(g)}})
	}
	return l
}

// configOf describes a state machine's logging, tracing and encryption configuration in one comparable string.
func configOf(l *types.LoggingConfiguration, tr *types.TracingConfiguration, e *types.EncryptionConfiguration) string {
	s := string(l.Level)
	if l.IncludeExecutionData {
		s += "+data"
	}
	for _, d := range l.Destinations {
		s += " " + aws.ToString(d.CloudWatchLogsLogGroup.LogGroupArn)
	}
	if tr != nil && tr.Enabled {
		s += " traced"
	}
	if e != nil {
		s += " " + string(e.Type)
		if e.KmsKeyId != nil {
			s += " " + aws.ToString(e.KmsKeyId)
		}
		if e.KmsDataKeyReusePeriodSeconds != nil {
			s += fmt.Sprintf(" %ds", *e.KmsDataKeyReusePeriodSeconds)
		}
	}
	return s
}

func describeConfig(t *testing.T, c *sfn.Client, arn string) string {
	t.Helper()
	d, err := c.DescribeStateMachine(context.Background(), &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(arn)})
	if err != nil {
		t.Fatal(err)
	}
	return configOf(d.LoggingConfiguration, d.TracingConfiguration, d.EncryptionConfiguration)
}

// TestConfigurationStoredAndDescribed: the logging, tracing and encryption configuration given to
// CreateStateMachine is described; UpdateStateMachine replaces what it is given and keeps the rest; the defaults
// are AWS's (logging OFF, tracing off, an AWS-owned key); DescribeStateMachineForExecution reports them too.
func TestConfigurationStoredAndDescribed(t *testing.T) {
	srv := stepfunctions.RunT(t)
	c := srv.Client()
	ctx := context.Background()
	plain := create(t, c, "plain", passChoice)
	if got, want := describeConfig(t, c, plain), "OFF AWS_OWNED_KEY"; got != want {
		t.Fatalf("defaults = %q, want %q", got, want)
	}
	out, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("configured"),
		Definition: aws.String(passChoice), RoleArn: aws.String(role),
		LoggingConfiguration:    logging(types.LogLevelError, true, logGroup),
		TracingConfiguration:    &types.TracingConfiguration{Enabled: true},
		EncryptionConfiguration: &types.EncryptionConfiguration{Type: types.EncryptionTypeCustomerManagedKmsKey, KmsKeyId: aws.String("alias/sfn")}})
	if err != nil {
		t.Fatal(err)
	}
	arn := aws.ToString(out.StateMachineArn)
	if got, want := describeConfig(t, c, arn), "ERROR+data "+logGroup+" traced CUSTOMER_MANAGED_KMS_KEY alias/sfn 300s"; got != want {
		t.Fatalf("after create = %q, want %q", got, want)
	}
	if _, err := c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(arn), RoleArn: aws.String(role + "2"),
		LoggingConfiguration: logging(types.LogLevelOff, false)}); err != nil {
		t.Fatal(err)
	}
	if got, want := describeConfig(t, c, arn), "OFF traced CUSTOMER_MANAGED_KMS_KEY alias/sfn 300s"; got != want {
		t.Fatalf("after update = %q, want %q", got, want)
	}
	start, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(arn)})
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.DescribeStateMachineForExecution(ctx, &sfn.DescribeStateMachineForExecutionInput{ExecutionArn: start.ExecutionArn})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := configOf(d.LoggingConfiguration, d.TracingConfiguration, d.EncryptionConfiguration), "OFF traced CUSTOMER_MANAGED_KMS_KEY alias/sfn 300s"; got != want {
		t.Fatalf("for execution = %q, want %q", got, want)
	}
}

// TestConfigurationErrors: AWS's validation of the configuration, on Create and Update, and nothing is written.
func TestConfigurationErrors(t *testing.T) {
	srv := stepfunctions.RunT(t)
	c := srv.Client()
	ctx := context.Background()
	arn := create(t, c, "sm", passChoice)
	createWith := func(l *types.LoggingConfiguration, e *types.EncryptionConfiguration) func() error {
		return func() error {
			return errOf(c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("new"), Definition: aws.String(passChoice),
				RoleArn: aws.String(role), LoggingConfiguration: l, EncryptionConfiguration: e}))
		}
	}
	updateWith := func(l *types.LoggingConfiguration, e *types.EncryptionConfiguration) func() error {
		return func() error {
			return errOf(c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(arn), RoleArn: aws.String(role + "x"),
				LoggingConfiguration: l, EncryptionConfiguration: e}))
		}
	}
	tests := []apiErrorCase{
		{"level without destination", createWith(logging(types.LogLevelAll, false), nil), new(*types.InvalidLoggingConfiguration),
			"Invalid Logging Configuration: Must specify exactly one Log Destination."},
		{"two destinations", updateWith(logging(types.LogLevelAll, false, logGroup, logGroup), nil), new(*types.InvalidLoggingConfiguration),
			"Invalid Logging Configuration: Must specify exactly one Log Destination."},
		{"log group without qualifier", createWith(logging(types.LogLevelFatal, false, "arn:aws:logs:us-east-1:123456789012:log-group:g"), nil),
			new(*types.InvalidLoggingConfiguration), "Invalid Logging Configuration: Log Group ARN must be provided with '*' qualifier."},
		{"not a log group", updateWith(logging(types.LogLevelError, false, "arn:aws:s3:::bucket:*"), nil), new(*types.InvalidLoggingConfiguration),
			"Invalid Logging Configuration: Invalid Log Group ARN: 'arn:aws:s3:::bucket:*'"},
		{"unknown level", createWith(logging("DEBUG", false), nil), new(*types.ValidationException),
			"1 validation error detected: Value 'DEBUG' at 'loggingConfiguration.level' failed to satisfy constraint: Member must satisfy enum value set: [ALL, ERROR, FATAL, OFF]"},
		{"reuse period too short", updateWith(nil, &types.EncryptionConfiguration{Type: types.EncryptionTypeCustomerManagedKmsKey,
			KmsKeyId: aws.String("k"), KmsDataKeyReusePeriodSeconds: aws.Int32(59)}), new(*types.ValidationException),
			"1 validation error detected: Value '59' at 'encryptionConfiguration.kmsDataKeyReusePeriodSeconds' failed to satisfy constraint: Member must have value greater than or equal to 60"},
		{"reuse period too long", createWith(nil, &types.EncryptionConfiguration{Type: types.EncryptionTypeCustomerManagedKmsKey,
			KmsKeyId: aws.String("k"), KmsDataKeyReusePeriodSeconds: aws.Int32(901)}), new(*types.ValidationException), ""},
		{"customer key without id", createWith(nil, &types.EncryptionConfiguration{Type: types.EncryptionTypeCustomerManagedKmsKey}),
			new(*types.InvalidEncryptionConfiguration), ""},
		{"AWS key with an id", updateWith(nil, &types.EncryptionConfiguration{Type: types.EncryptionTypeAwsOwnedKey, KmsKeyId: aws.String("k")}),
			new(*types.InvalidEncryptionConfiguration), ""},
		{"unknown encryption type", createWith(nil, &types.EncryptionConfiguration{Type: "OWN_KEY"}), new(*types.ValidationException), ""},
		{"a configuration without definition or role", func() error {
			return errOf(c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(arn),
				TracingConfiguration: &types.TracingConfiguration{Enabled: true}}))
		}, new(*types.MissingRequiredParameter), ""},
	}
	checkAPIErrors(t, tests)
	if got, want := describeConfig(t, c, arn), "OFF AWS_OWNED_KEY"; got != want {
		t.Fatalf("configuration after refused updates = %q, want %q", got, want)
	}
	d, err := c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(arn)})
	if err != nil || aws.ToString(d.RoleArn) != role {
		t.Fatalf("role after refused updates = %v %v", err, d)
	}
	l, err := c.ListStateMachines(ctx, &sfn.ListStateMachinesInput{})
	if err != nil || len(l.StateMachines) != 1 {
		t.Fatalf("state machines after refused creates = %v %+v", err, l)
	}
}

// TestConfigurationAcrossRestart: the configuration is saved with the state machine in a FileStore.
func TestConfigurationAcrossRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c1, stop1 := servedEngine(t, sfnengine.Options{Store: mustFileStore(t, dir)})
	out, err := c1.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("sm"), Definition: aws.String(passChoice),
		RoleArn: aws.String(role), LoggingConfiguration: logging(types.LogLevelAll, true, logGroup),
		TracingConfiguration: &types.TracingConfiguration{Enabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	stop1()
	_, c2 := restartEngine(t, dir, sfnengine.Options{})
	if got, want := describeConfig(t, c2, aws.ToString(out.StateMachineArn)), "ALL+data "+logGroup+" traced AWS_OWNED_KEY"; got != want {
		t.Fatalf("after the restart = %q, want %q", got, want)
	}
}
