package ddblocal

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/transferflow/orchestrator/internal/samtemplate"
)

// Tester is the part of testing.TB the helpers use.
type Tester interface {
	Helper()
	Skipf(format string, args ...any)
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// StartT starts a Dynoxide server for a test and stops it when the test ends. Without the binary the test is
// skipped with a message naming `make test`, except under CI=true, where that is a failure.
func StartT(t Tester) *Server {
	t.Helper()
	bin, err := BinaryPath()
	if errors.Is(err, ErrBinaryNotFound) {
		if os.Getenv("CI") != "" {
			t.Fatalf("%v", err)
		}
		t.Skipf("DynamoDB integration test skipped: %v; `make test` installs it", err)
	}
	if err != nil {
		t.Fatalf("%v", err)
	}
	s, err := Start(context.Background(), Options{Binary: bin})
	if err != nil {
		t.Fatalf("start dynoxide: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// idleConnsPerHost is how many idle connections NewClient's default HTTP client keeps to the server: more than
// net/http's default of 2, so concurrent requests reuse connections instead of opening a new one each.
const idleConnsPerHost = 64

// NewClient returns a DynamoDB client for endpoint with static test credentials. httpClient may be nil; tests pass
// one to count or fail requests on the wire.
func NewClient(endpoint string, httpClient aws.HTTPClient) *dynamodb.Client {
	cfg := aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
	}
	if httpClient != nil {
		cfg.HTTPClient = httpClient
	} else {
		cfg.HTTPClient = awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
			t.MaxIdleConnsPerHost = idleConnsPerHost
		})
	}
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(endpoint) })
}

// StartWithTablesT starts a server for a test and creates the tables of the repository's template.yaml in it. It
// returns the server and the name of each table by logical id.
func StartWithTablesT(t Tester) (*Server, map[string]string) {
	t.Helper()
	s := StartT(t)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatalf("%v", err)
	}
	root, err := samtemplate.FindRoot(wd)
	if err != nil {
		t.Fatalf("%v", err)
	}
	tmpl, err := samtemplate.Load(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatalf("%v", err)
	}
	tables, err := tmpl.Tables()
	if err != nil {
		t.Fatalf("%v", err)
	}
	if err := CreateTables(context.Background(), NewClient(s.URL, nil), tables); err != nil {
		t.Fatalf("%v", err)
	}
	names := map[string]string{}
	for _, tb := range tables {
		names[tb.LogicalID] = aws.ToString(tb.Create.TableName)
	}
	return s, names
}
