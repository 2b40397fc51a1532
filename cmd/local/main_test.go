package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/transferflow/orchestrator/internal/ddblocal"
)

// TestRunStartsTablesAndStops runs the stack on a free port, waits for the ready line, checks the template's
// table exists, then cancels and expects run to return within the spec's 5 seconds with the server gone.
func TestRunStartsTablesAndStops(t *testing.T) {
	if _, err := ddblocal.BinaryPath(); err != nil {
		ddblocal.StartT(t) // skips (or fails under CI) with the reason
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	dataDir := t.TempDir()
	go func() {
		done <- run(ctx, []string{"--template", filepath.Join("..", "..", "template.yaml"), "--dynamodb-addr", "127.0.0.1:0", "--data-dir", dataDir}, pw, io.Discard)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no ready line: %v (%v)", err, <-done)
	}
	endpoint, ok := strings.CutPrefix(strings.TrimSpace(line), "ready dynamodb=")
	if !ok {
		t.Fatalf("ready line = %q", line)
	}
	go io.Copy(io.Discard, pr)
	out, err := ddblocal.NewClient(endpoint, nil).ListTables(context.Background(), &dynamodb.ListTablesInput{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(out.TableNames, ",") != "TransfersTable" {
		t.Errorf("tables = %v", out.TableNames)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "dynamodb.sqlite")); err != nil {
		t.Errorf("no database file in --data-dir: %v", err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("run did not stop within 5 seconds")
	}
	if _, err := ddblocal.NewClient(endpoint, nil).ListTables(context.Background(), &dynamodb.ListTablesInput{}, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 }); err == nil {
		t.Error("the DynamoDB server still answers after shutdown")
	}
}
