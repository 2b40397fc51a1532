package stack

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/transferflow/orchestrator/localaws/internal/httpserver"
	"github.com/transferflow/orchestrator/localaws/sfnapi"
	"github.com/transferflow/orchestrator/localaws/sfnengine"
	"github.com/transferflow/orchestrator/localaws/stepfunctions"
)

// TestPublishAliasStartsThroughTheAlias: for a template's AutoPublishAlias the stack publishes the definition as a
// version and points the alias at it; StartExecution on the alias ARN, through the stack's Step Functions server,
// runs that version under the state machine's own execution ARN. A new definition moves the alias to a new version;
// the same one publishes nothing new.
func TestPublishAliasStartsThroughTheAlias(t *testing.T) {
	srv := stepfunctions.New(stepfunctions.WithEngineOptions(sfnengine.Options{Lambda: slowInvoker{}, Region: Region, AccountID: AccountID}))
	t.Cleanup(srv.Close)
	timeouts := httpserver.Timeouts{Header: time.Second, Body: time.Second, Write: 5 * time.Second, Idle: time.Second}
	addr := listen(t, sfnServer(srv.Handler(), timeouts, slog.New(slog.DiscardHandler)))
	c := sfn.New(sfn.Options{Region: Region, BaseEndpoint: aws.String("http://" + addr), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}, sfnapi.WithoutHostPrefix)
	ctx := context.Background()
	eng := srv.Engine()
	const role = "arn:aws:iam::000000000000:role/r"
	machine := stateMachineArn("M")
	if _, err := eng.CreateStateMachine(ctx, sfnengine.CreateInput{Name: "M", Definition: `{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`, RoleArn: role}); err != nil {
		t.Fatal(err)
	}
	if err := publishAlias(ctx, eng, machine, ""); err != nil {
		t.Fatalf("no alias: %v", err)
	}
	if vs, err := eng.ListStateMachineVersions(ctx, machine); err != nil || len(vs) != 0 {
		t.Fatalf("no alias published versions %v, %v", vs, err)
	}
	start := func(name, wantVersion string) {
		t.Helper()
		out, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(machine + ":live"), Name: aws.String(name)})
		if err != nil {
			t.Fatalf("StartExecution on the alias: %v", err)
		}
		if want := "arn:aws:states:" + Region + ":" + AccountID + ":execution:M:" + name; aws.ToString(out.ExecutionArn) != want {
			t.Errorf("execution ARN %s, want %s", aws.ToString(out.ExecutionArn), want)
		}
		d, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: out.ExecutionArn})
		if err != nil {
			t.Fatal(err)
		}
		if aws.ToString(d.StateMachineArn) != machine || aws.ToString(d.StateMachineAliasArn) != machine+":live" ||
			aws.ToString(d.StateMachineVersionArn) != machine+":"+wantVersion {
			t.Errorf("%s: state machine %s alias %s version %s, want %s, its alias live and version %s", name,
				aws.ToString(d.StateMachineArn), aws.ToString(d.StateMachineAliasArn), aws.ToString(d.StateMachineVersionArn),
				machine, wantVersion)
		}
	}
	if err := publishAlias(ctx, eng, machine, "live"); err != nil {
		t.Fatal(err)
	}
	start("a", "1")
	if err := publishAlias(ctx, eng, machine, "live"); err != nil {
		t.Fatalf("again with the same definition: %v", err)
	}
	if vs, err := eng.ListStateMachineVersions(ctx, machine); err != nil || len(vs) != 1 {
		t.Errorf("the same definition published again: versions %v, %v", vs, err)
	}
	if _, err := eng.UpdateStateMachine(ctx, machine, `{"StartAt":"P","States":{"P":{"Type":"Pass","Result":2,"End":true}}}`, role); err != nil {
		t.Fatal(err)
	}
	if err := publishAlias(ctx, eng, machine, "live"); err != nil {
		t.Fatalf("after an update: %v", err)
	}
	start("b", "2")
}
