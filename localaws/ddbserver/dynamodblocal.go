package ddbserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// DynamoDBLocalMainClass is DynamoDB Local's entry point in its 3.x jars (2.x had com.amazonaws.services.dynamodbv2.local.main.ServerRunner).
const DynamoDBLocalMainClass = "software.amazon.dynamodb.services.local.main.ServerRunner"

// dynamoDBLocalRel is where `make ddblocal-deps` puts DynamoDB Local's jars and native libraries, from the
// repository root (tools/dynamodb-local/pom.xml says which version).
var dynamoDBLocalRel = filepath.Join("tools", "dynamodb-local", "lib")

// Errors of StartDynamoDBLocal's look-ups.
var (
	// ErrJavaNotFound reports that no java executable was found; DynamoDB Local 3.x needs Java 17 or later.
	ErrJavaNotFound = errors.New("ddbserver: java not found: DynamoDB Local needs Java 17 or later " +
		"(install a JDK or JRE 17+, e.g. `apt-get install openjdk-17-jre-headless`, or set JAVA_HOME)")
	// ErrDynamoDBLocalNotFound reports that DynamoDB Local's jars are not installed.
	ErrDynamoDBLocalNotFound = errors.New("ddbserver: DynamoDB Local not found (run `make ddblocal-deps` at the " +
		"repository root, or set DYNAMODB_LOCAL_DIR to the folder with DynamoDBLocal-*.jar and its libraries)")
)

// LocalOptions configures StartDynamoDBLocal.
type LocalOptions struct {
	// Addr is host:port for the URL; an empty Addr or a port of 0 picks a free port on 127.0.0.1. DynamoDB Local has
	// no option for the interface: it listens on every interface of the port.
	Addr string
	// Dir is the folder with DynamoDBLocal-*.jar, its dependencies and sqlite4java's native libraries; empty finds
	// it with DynamoDBLocalDir.
	Dir string
	// Java is the java executable; empty finds it with JavaPath.
	Java string
	// ReadyTimeout bounds the wait for the server to answer a ListTables (default 60s: the JVM takes seconds).
	ReadyTimeout time.Duration
}

// DynamoDBLocalDir finds DynamoDB Local's jars: $DYNAMODB_LOCAL_DIR, else tools/dynamodb-local/lib in the current
// directory or the nearest parent that has one. The folder must hold DynamoDBLocal-*.jar.
func DynamoDBLocalDir() (string, error) {
	if d := os.Getenv("DYNAMODB_LOCAL_DIR"); d != "" {
		if !hasDynamoDBLocalJar(d) {
			return "", fmt.Errorf("ddbserver: DYNAMODB_LOCAL_DIR=%q has no DynamoDBLocal-*.jar: %w", d, ErrDynamoDBLocalNotFound)
		}
		return d, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("ddbserver: %w", err)
	}
	for {
		if p := filepath.Join(dir, dynamoDBLocalRel); hasDynamoDBLocalJar(p) {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", ErrDynamoDBLocalNotFound
		}
		dir = parent
	}
}

func hasDynamoDBLocalJar(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "DynamoDBLocal-*.jar"))
	return len(m) > 0
}

// JavaPath finds the java executable: $JAVA_HOME/bin/java, else java on PATH.
func JavaPath() (string, error) {
	if h := os.Getenv("JAVA_HOME"); h != "" {
		p := filepath.Join(h, "bin", "java")
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("ddbserver: JAVA_HOME=%q: %w", h, err)
		}
		return p, nil
	}
	p, err := exec.LookPath("java")
	if err != nil {
		return "", ErrJavaNotFound
	}
	return p, nil
}

// StartDynamoDBLocal runs AWS's DynamoDB Local (3.x) in memory and waits until it answers a ListTables. It runs with
// -sharedDb, so that every client shares one database whatever its credentials and region, as with Dynoxide, and
// with -disableTelemetry. java.library.path names the native SQLite libraries Maven puts beside the jars, as the
// Maven recipe for DynamoDB Local has it; 3.1.0 did not use them here: it loads the copy embedded in its jar,
// extracted into java.io.tmpdir (docs/dynamodb.md). The process is killed when ctx is cancelled or Close is called.
func StartDynamoDBLocal(ctx context.Context, opts LocalOptions) (*Server, error) {
	dir, java := opts.Dir, opts.Java
	var err error
	if dir == "" {
		if dir, err = DynamoDBLocalDir(); err != nil {
			return nil, err
		}
	}
	if java == "" {
		if java, err = JavaPath(); err != nil {
			return nil, err
		}
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, fmt.Errorf("ddbserver: %w", err)
	}
	host, port, _, err := resolveAddr(opts.Addr)
	if err != nil {
		return nil, err
	}
	args := []string{
		"-Djava.library.path=" + dir,
		// One collector thread, and the client compiler only: C2 compiling in the background made the JVM ready in
		// 16 s instead of 6 s on the 2-core machine under load, and the tests' requests were no faster for it
		// (docs/dynamodb.md, "Timings").
		"-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-cp", filepath.Join(dir, "*"),
		DynamoDBLocalMainClass,
		"-inMemory", "-sharedDb", "-disableTelemetry", "-port", strconv.Itoa(port),
	}
	cmd := exec.CommandContext(ctx, java, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 3 * time.Second
	// SIGTERM, not SIGKILL, when the parent dies: DynamoDB Local extracts the native SQLite library from its jar into
	// java.io.tmpdir at every start (sqlite-392-<uuid>-libsqlite4java.so, 0.8 MB) and deletes it in a shutdown hook,
	// which a SIGKILL skips. The shared server of a test binary ends this way.
	cmd.SysProcAttr = sysProcAttr(syscall.SIGTERM)
	out := &startLog{n: 16 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("ddbserver: start %s: %w", java, err)
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	s := &Server{URL: "http://" + addr, Addr: addr, Store: DynamoDBLocal, cmd: cmd, done: make(chan struct{})}
	go func() {
		s.err = cmd.Wait()
		close(s.done)
	}()
	timeout := opts.ReadyTimeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	if err := s.waitListTables(ctx, timeout); err != nil {
		_ = s.Close()
		<-s.done
		return nil, fmt.Errorf("ddbserver: %w (output: %s)", err, strings.TrimSpace(out.String()))
	}
	return s, nil
}

// waitListTables polls the server with ListTables until it answers or the timeout passes. DynamoDB Local answers
// GET / with 400, so the health check Dynoxide has cannot be used.
func (s *Server) waitListTables(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	db := NewClient(s.URL, nil)
	var last error
	for {
		select {
		case <-s.done:
			return fmt.Errorf("dynamodb local exited before it was ready: %v", s.err)
		default:
		}
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := db.ListTables(actx, &dynamodb.ListTablesInput{Limit: aws.Int32(1)}, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
		cancel()
		if err == nil {
			return nil
		}
		var answered *awshttp.ResponseError
		if errors.As(err, &answered) && answered.HTTPStatusCode() != 0 {
			// It is listening and refused: waiting longer would not change the answer.
			return fmt.Errorf("dynamodb local answers ListTables with an error: %w", err)
		}
		last = err
		if time.Now().After(deadline) {
			return fmt.Errorf("dynamodb local not ready at %s after %s: %v", s.URL, timeout, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
