package stack

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/transferflow/orchestrator/localaws/internal/httpserver"
	"github.com/transferflow/orchestrator/localaws/sfnapi"
	"github.com/transferflow/orchestrator/localaws/sfnengine"
	"github.com/transferflow/orchestrator/localaws/stepfunctions"
)

// slowInvoker answers every function after its delay.
type slowInvoker struct{ delay time.Duration }

func (s slowInvoker) Invoke(ctx context.Context, _ string, _ []byte) ([]byte, error) {
	select {
	case <-time.After(s.delay):
		return []byte(`{"done":true}`), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// TestSFNServerAnswersStartSyncExecutionPastItsWriteTimeout: the stack's Step Functions server (its timeouts and
// body deadline) answers a StartSyncExecution whose Express execution runs longer than the write timeout, at the
// address as given (sfnapi.WithoutHostPrefix).
func TestSFNServerAnswersStartSyncExecutionPastItsWriteTimeout(t *testing.T) {
	srv := stepfunctions.New(stepfunctions.WithEngineOptions(sfnengine.Options{Lambda: slowInvoker{delay: 500 * time.Millisecond}}))
	t.Cleanup(srv.Close)
	timeouts := httpserver.Timeouts{Header: time.Second, Body: time.Second, Write: 100 * time.Millisecond, Idle: time.Second}
	addr := listen(t, sfnServer(srv.Handler(), timeouts, slog.New(slog.DiscardHandler)))
	c := sfn.New(sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://" + addr), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}, sfnapi.WithoutHostPrefix)
	ctx := context.Background()
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("slow"), RoleArn: aws.String("arn:aws:iam::123456789012:role/r"),
		Type:       types.StateMachineTypeExpress,
		Definition: aws.String(`{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:f","End":true}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: sm.StateMachineArn, Input: aws.String(`{}`)})
	if err != nil || out.Status != types.SyncExecutionStatusSucceeded || aws.ToString(out.Output) != `{"done":true}` {
		t.Fatalf("StartSyncExecution = %+v, %v", out, err)
	}
}
