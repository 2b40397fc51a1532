package ddbserver_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/transferflow/orchestrator/internal/syncio"
	"github.com/transferflow/orchestrator/localaws/ddbserver"
)

// guard is how long these tests wait for the supervisor before they call it stuck; nothing asserts a duration.
const guard = 30 * time.Second

// supervise starts a supervised server for a test, skipping it as StartT does without the binary.
func supervise(t *testing.T, opts ddbserver.SuperviseOptions) *ddbserver.Supervisor {
	t.Helper()
	bin, err := ddbserver.BinaryPath()
	if err != nil {
		ddbserver.StartT(t) // skips, or fails under CI, with the reason
	}
	opts.Binary = bin
	sup, err := ddbserver.Supervise(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sup.Close() })
	return sup
}

// TestSupervisorRestartsAKilledServerWithItsData: a server killed with SIGKILL is started again on the same address
// with the same data file, logged, and what was written before is there.
func TestSupervisorRestartsAKilledServerWithItsData(t *testing.T) {
	restarted := make(chan *ddbserver.Server, 1)
	var logs syncio.Buffer
	sup := supervise(t, ddbserver.SuperviseOptions{
		Options:   ddbserver.Options{DBPath: filepath.Join(t.TempDir(), "data.sqlite")},
		Logger:    slog.New(slog.NewJSONHandler(&logs, nil)),
		OnRestart: func(s *ddbserver.Server) { restarted <- s },
	})
	db := ddbserver.NewClient(sup.URL, nil)
	ctx := context.Background()
	if _, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String("kept"),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("kept"),
		Item: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "before"}}}); err != nil {
		t.Fatal(err)
	}
	before := sup.PID()
	p, err := os.FindProcess(before)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	var next *ddbserver.Server
	select {
	case next = <-restarted:
	case <-sup.Failed():
		t.Fatalf("the supervisor gave up: %v", sup.Err())
	case <-time.After(guard):
		t.Fatal("the killed server was not restarted")
	}
	if next.PID() == before || next.Addr != sup.Addr || sup.Restarts() != 1 {
		t.Errorf("after the restart: pid %d (was %d), address %s (was %s), restarts %d", next.PID(), before, next.Addr, sup.Addr, sup.Restarts())
	}
	out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("kept"),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "before"}}})
	if err != nil || out.Item == nil {
		t.Fatalf("the item written before the kill: %v, %v", out, err)
	}
	for _, msg := range []string{`"msg":"dynamodb exited"`, `"msg":"dynamodb restarted"`} {
		if !strings.Contains(logs.String(), msg) {
			t.Errorf("no %s in the logs:\n%s", msg, logs.String())
		}
	}
}

// TestSupervisorGivesUpOnAnInMemoryServer: a server whose data was in memory is not restarted empty.
func TestSupervisorGivesUpOnAnInMemoryServer(t *testing.T) {
	sup := supervise(t, ddbserver.SuperviseOptions{})
	p, err := os.FindProcess(sup.PID())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sup.Failed():
		if !errors.Is(sup.Err(), ddbserver.ErrDataInMemory) || sup.Restarts() != 0 {
			t.Errorf("gave up with %v after %d restarts, want ErrDataInMemory and none", sup.Err(), sup.Restarts())
		}
	case <-time.After(guard):
		t.Fatal("the supervisor did not give up")
	}
}

// TestSupervisorCloseIsNotACrash: Close stops the server without a restart or a failure.
func TestSupervisorCloseIsNotACrash(t *testing.T) {
	sup := supervise(t, ddbserver.SuperviseOptions{Options: ddbserver.Options{DBPath: filepath.Join(t.TempDir(), "data.sqlite")}})
	if err := sup.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sup.Failed():
		t.Errorf("Close made the supervisor give up: %v", sup.Err())
	default:
	}
	if sup.Restarts() != 0 {
		t.Errorf("restarts after Close = %d", sup.Restarts())
	}
}
