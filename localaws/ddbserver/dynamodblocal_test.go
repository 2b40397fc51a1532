package ddbserver_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/transferflow/orchestrator/localaws/ddbserver"
)

func TestTestStore(t *testing.T) {
	tests := []struct {
		name, env, want, wantErr string
	}{
		{name: "unset is dynoxide", env: "", want: ddbserver.Dynoxide},
		{name: "dynoxide", env: "dynoxide", want: ddbserver.Dynoxide},
		{name: "dynamodb local", env: "dynamodb-local", want: ddbserver.DynamoDBLocal},
		{name: "anything else is refused", env: "DynamoDBLocal", wantErr: `ddbserver: TEST_DYNAMODB="DynamoDBLocal": want dynoxide or dynamodb-local`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("TEST_DYNAMODB", tt.env)
			got, err := ddbserver.TestStore()
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("TestStore() = %q, %v; want the error %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("TestStore() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestDynamoDBLocalDir(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("DYNAMODB_LOCAL_DIR", empty)
	if _, err := ddbserver.DynamoDBLocalDir(); !errors.Is(err, ddbserver.ErrDynamoDBLocalNotFound) || !strings.Contains(err.Error(), empty) {
		t.Errorf("DYNAMODB_LOCAL_DIR without the jar: %v, want ErrDynamoDBLocalNotFound naming the folder", err)
	}
	if err := os.WriteFile(filepath.Join(empty, "DynamoDBLocal-3.1.0.jar"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := ddbserver.DynamoDBLocalDir(); err != nil || got != empty {
		t.Errorf("DynamoDBLocalDir() = %q, %v; want %q", got, err, empty)
	}
}

func TestJavaPath(t *testing.T) {
	t.Run("JAVA_HOME without java", func(t *testing.T) {
		home := t.TempDir()
		t.Setenv("JAVA_HOME", home)
		if _, err := ddbserver.JavaPath(); err == nil || !strings.Contains(err.Error(), "JAVA_HOME") {
			t.Errorf("JavaPath() error %v, want one naming JAVA_HOME", err)
		}
	})
	t.Run("no java on PATH", func(t *testing.T) {
		t.Setenv("JAVA_HOME", "")
		t.Setenv("PATH", t.TempDir())
		if _, err := ddbserver.JavaPath(); !errors.Is(err, ddbserver.ErrJavaNotFound) {
			t.Errorf("JavaPath() error %v, want ErrJavaNotFound", err)
		}
	})
}

// TestStartDynamoDBLocalReportsAJavaThatExits: a java that exits at once (too old a Java, say, refusing the class
// files) is reported with its output, not waited on for the ready timeout.
func TestStartDynamoDBLocalReportsAJavaThatExits(t *testing.T) {
	dir := t.TempDir()
	java := filepath.Join(dir, "java")
	script := "#!/bin/sh\necho 'UnsupportedClassVersionError: class file version 61.0' >&2\nexit 1\n"
	if err := os.WriteFile(java, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := ddbserver.StartDynamoDBLocal(context.Background(), ddbserver.LocalOptions{Dir: dir, Java: java})
	if err == nil || !strings.Contains(err.Error(), "exited before it was ready") || !strings.Contains(err.Error(), "UnsupportedClassVersionError") {
		t.Fatalf("StartDynamoDBLocal error %v, want the exit with java's output", err)
	}
}

// TestStartWithTablesTIsolatesTests: every test gets the template's tables to itself. With Dynoxide each has its own
// server and the template's names; with DynamoDB Local the test binary's tests share one server and each gets
// tables named for it, which are deleted when the test ends.
func TestStartWithTablesTIsolatesTests(t *testing.T) {
	var servers [2]*ddbserver.Server
	var names [2]string
	for i := range servers {
		t.Run("test", func(t *testing.T) {
			srv, tables := ddbserver.StartWithTablesT(t)
			servers[i], names[i] = srv, tables["TransfersTable"]
		})
	}
	switch servers[0].Store {
	case ddbserver.Dynoxide:
		select {
		case <-servers[0].Done():
		default:
			t.Error("the first test's server still runs after its test")
		}
		if names[0] != "TransfersTable" || names[1] != "TransfersTable" {
			t.Errorf("tables %s, %s; want the template's names", names[0], names[1])
		}
	case ddbserver.DynamoDBLocal:
		if servers[0] != servers[1] || names[0] == names[1] || !strings.HasPrefix(names[0], "TransfersTable-") {
			t.Errorf("servers %s, %s with tables %s, %s; want one server with two TransfersTable-N", servers[0].URL, servers[1].URL, names[0], names[1])
		}
		out, err := ddbserver.NewClient(servers[0].URL, nil).ListTables(context.Background(), &dynamodb.ListTablesInput{})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range out.TableNames {
			if n == names[0] || n == names[1] {
				t.Errorf("table %s left after its test ended", n)
			}
		}
		if err := servers[0].Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := ddbserver.NewClient(servers[0].URL, nil).ListTables(context.Background(), &dynamodb.ListTablesInput{Limit: aws.Int32(1)}); err != nil {
			t.Errorf("the shared server stopped on Close: %v", err)
		}
	default:
		t.Fatalf("server %q", servers[0].Store)
	}
}
