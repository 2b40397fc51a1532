package ddbserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/transferflow/orchestrator/localaws/samtemplate"
)

// Tester is the part of testing.TB the helpers use.
type Tester interface {
	Helper()
	Skipf(format string, args ...any)
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// The servers the test helpers can start, as TEST_DYNAMODB names them.
const (
	// Dynoxide is the default: a server of its own for each test, ready in milliseconds.
	Dynoxide = "dynoxide"
	// DynamoDBLocal is AWS's DynamoDB Local on Java 17+. Its JVM takes seconds to start, so StartWithTablesT shares
	// one server between a test binary's tests, each with tables of its own; StartT still starts one per test.
	DynamoDBLocal = "dynamodb-local"
)

// TestStore returns the server the test helpers start, from TEST_DYNAMODB: Dynoxide when it is unset or empty,
// DynamoDBLocal for "dynamodb-local". Tests branch on it only where the two servers differ in a documented way
// (docs/dynamodb.md).
func TestStore() (string, error) {
	switch v := os.Getenv("TEST_DYNAMODB"); v {
	case "", Dynoxide:
		return Dynoxide, nil
	case DynamoDBLocal:
		return DynamoDBLocal, nil
	default:
		return "", fmt.Errorf("ddbserver: TEST_DYNAMODB=%q: want %s or %s", v, Dynoxide, DynamoDBLocal)
	}
}

// StartT starts a server of its own for a test and stops it when the test ends: Dynoxide, or DynamoDB Local under
// TEST_DYNAMODB=dynamodb-local. Without Dynoxide's binary the test is skipped with a message naming `make test`,
// except under CI=true, where that is a failure; a DynamoDB Local that was asked for and cannot start (no Java, no
// jars) always fails the test.
func StartT(t Tester) *Server {
	t.Helper()
	store, err := TestStore()
	if err != nil {
		t.Fatalf("%v", err)
	}
	if store == DynamoDBLocal {
		s, err := StartDynamoDBLocal(context.Background(), LocalOptions{})
		if err != nil {
			t.Fatalf("start dynamodb local: %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
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

// sharedLocal is the DynamoDB Local that StartWithTablesT shares between the tests of one test binary. It is never
// closed: the kernel kills it when the test binary exits (the parent-death signal, Linux).
var sharedLocal struct {
	once sync.Once
	srv  *Server
	err  error
}

// sharedDynamoDBLocal starts the shared DynamoDB Local on first use and returns it while it runs.
func sharedDynamoDBLocal() (*Server, error) {
	sharedLocal.once.Do(func() {
		s, err := StartDynamoDBLocal(context.Background(), LocalOptions{})
		if err != nil {
			sharedLocal.err = fmt.Errorf("start dynamodb local: %w", err)
			return
		}
		s.shared = true
		sharedLocal.srv = s
	})
	if sharedLocal.err != nil {
		return nil, sharedLocal.err
	}
	select {
	case <-sharedLocal.srv.done:
		return nil, fmt.Errorf("ddbserver: the shared dynamodb local at %s exited: %v", sharedLocal.srv.URL, sharedLocal.srv.err)
	default:
	}
	return sharedLocal.srv, nil
}

// tableSeq numbers the table sets StartWithTablesT creates in a shared server.
var tableSeq atomic.Int64

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

// parsedTables keeps each template's tables, by path, as the first StartWithTablesT of the test binary read them:
// parsing template.yaml took about 20 ms under the race detector, and a package's tests start a server with tables a
// hundred times or more. A test binary never sees the template change.
var parsedTables sync.Map // path → func() ([]samtemplate.Table, error)

// templateTables returns a copy of the tables of the template at path, each Create shared with the cache: callers
// replace an element's Create with a changed copy, never change it in place.
func templateTables(path string) ([]samtemplate.Table, error) {
	load, _ := parsedTables.LoadOrStore(path, sync.OnceValues(func() ([]samtemplate.Table, error) {
		tmpl, err := samtemplate.Load(path)
		if err != nil {
			return nil, err
		}
		return tmpl.Tables()
	}))
	tables, err := load.(func() ([]samtemplate.Table, error))()
	return slices.Clone(tables), err
}

// StartWithTablesT starts a server for a test and creates the tables of the repository's template.yaml in it,
// without their streams. It returns the server and the name of each table by logical id. With Dynoxide the server
// is the test's own and the tables have the template's names; with DynamoDB Local the server is shared by the test
// binary's tests and each test's tables have names of their own (the template's name and a number, e.g.
// TransfersTable-7), deleted when the test ends. Tests take the names from the map, never from the template.
//
// No stream, because no test that takes its tables from here reads one (the stack's tests and the end-to-end
// suite run the stack, which makes the template's tables with their streams), a stream changes nothing of what a
// write does, and a test's Dynoxide, unindexed (Options.IndexStreams), pays for every stream record it ever wrote
// on each write: 1.6 ms a PutItem with 2,000 records in the stream against 0.6 ms on a table without one.
func StartWithTablesT(t Tester) (*Server, map[string]string) {
	t.Helper()
	store, err := TestStore()
	if err != nil {
		t.Fatalf("%v", err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatalf("%v", err)
	}
	root, err := samtemplate.FindRoot(wd)
	if err != nil {
		t.Fatalf("%v", err)
	}
	tables, err := templateTables(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatalf("%v", err)
	}
	for i := range tables {
		in := *tables[i].Create
		in.StreamSpecification = nil
		tables[i].Create, tables[i].StreamViewType = &in, ""
	}
	var s *Server
	if store == DynamoDBLocal {
		if s, err = sharedDynamoDBLocal(); err != nil {
			t.Fatalf("%v", err)
		}
		n := tableSeq.Add(1)
		for i := range tables {
			in := *tables[i].Create
			in.TableName = aws.String(fmt.Sprintf("%s-%d", aws.ToString(in.TableName), n))
			tables[i].Create = &in
		}
	} else {
		s = StartT(t)
	}
	db := NewClient(s.URL, nil)
	if err := CreateTables(context.Background(), db, tables); err != nil {
		t.Fatalf("%v", err)
	}
	names := map[string]string{}
	for _, tb := range tables {
		names[tb.LogicalID] = aws.ToString(tb.Create.TableName)
	}
	if s.shared {
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for _, name := range names {
				_, _ = db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
			}
		})
	}
	return s, names
}
