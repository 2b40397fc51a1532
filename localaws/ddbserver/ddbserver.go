// Package ddbserver starts and stops a DynamoDB-compatible server as an owned subprocess: Dynoxide, which the local
// stack and the tests use, or AWS's own DynamoDB Local, which the tests use under TEST_DYNAMODB=dynamodb-local
// (`make test-ddblocal`, docs/dynamodb.md).
//
// Dynoxide's binary comes from the npm package @dynoxide/<os>-<arch>, pinned in the repository's package-lock.json
// and installed by `make test` and `make run`; DYNOXIDE_BIN overrides where it is looked for. DynamoDB Local's jars
// come from Maven (tools/dynamodb-local/pom.xml, installed by `make ddblocal-deps`) and run on Java 17 or later;
// DYNAMODB_LOCAL_DIR and JAVA_HOME override where they are looked for.
package ddbserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrBinaryNotFound reports that no Dynoxide binary is installed; `make test` or `npm install` installs it.
var ErrBinaryNotFound = errors.New("ddbserver: dynoxide binary not found (run `make test` or `npm install` at the repository root, or set DYNOXIDE_BIN)")

// Options configures Start.
type Options struct {
	// Addr is host:port to listen on; an empty Addr or a port of 0 picks a free port on 127.0.0.1.
	Addr string
	// DBPath is the SQLite file that keeps the data; empty keeps it for the server's life only: in Dynoxide's own
	// memory, or, with IndexStreams, in a file of its own in memory (/dev/shm) where the system has one, so that it
	// can be indexed, removed by Close.
	DBPath string
	// IndexStreams, when set, is called with the server's database file once the server answers, before Start
	// returns: package streamindex's Apply, which makes Dynoxide's stream queries take a constant time. A server
	// that lives for hours (the local stack, the bench's) needs it; a test's, whose streams hold a few thousand
	// records, does not, and its binary is spared linking SQLite.
	IndexStreams func(ctx context.Context, dbPath string) error
	// Binary is the dynoxide executable; empty finds it with BinaryPath.
	Binary string
	// ReadyTimeout bounds the wait for the server to accept requests (default 10s).
	ReadyTimeout time.Duration
}

// Server is a running DynamoDB-compatible server process. Close stops it.
type Server struct {
	// URL is the endpoint to give the AWS SDK, e.g. http://127.0.0.1:41234.
	URL string
	// Addr is the host:port the server listens on.
	Addr string
	// Store names the server: Dynoxide or DynamoDBLocal.
	Store string

	cmd  *exec.Cmd
	done chan struct{}
	err  error
	// shared is set on the server StartWithTablesT shares between a test binary's tests: Close leaves it running.
	shared bool
	// scratch is the folder of the database of a server started without a DBPath; Close removes it.
	scratch string
}

// BinaryPath finds the Dynoxide executable: $DYNOXIDE_BIN, else node_modules/@dynoxide/<platform>/dynoxide in the
// current directory or the nearest parent that has one.
func BinaryPath() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("ddbserver: %w", err)
	}
	return BinaryPathFrom(dir)
}

// BinaryPathFrom is BinaryPath searching from dir and its parents instead of the current directory.
func BinaryPathFrom(dir string) (string, error) {
	if p := os.Getenv("DYNOXIDE_BIN"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("ddbserver: DYNOXIDE_BIN=%q: %w", p, err)
		}
		return p, nil
	}
	name := "dynoxide"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	osName := map[string]string{"linux": "linux", "darwin": "darwin", "windows": "win32"}[runtime.GOOS]
	rel := filepath.Join("node_modules", "@dynoxide", osName+"-"+arch, name)
	for {
		p := filepath.Join(dir, rel)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", ErrBinaryNotFound
		}
		dir = parent
	}
}

// portAttempts is how many free ports Start tries when it picks the port itself: between the moment a free port is
// found and the moment Dynoxide listens on it, another process (another test's server, on a busy machine) can take
// it, and Dynoxide then exits saying the port is in use.
const portAttempts = 3

// Start runs Dynoxide and waits until it answers DynamoDB requests. The process is killed when ctx is cancelled or
// Close is called.
func Start(ctx context.Context, opts Options) (*Server, error) {
	bin := opts.Binary
	if bin == "" {
		var err error
		if bin, err = BinaryPath(); err != nil {
			return nil, err
		}
	}
	for attempt := 1; ; attempt++ {
		host, port, picked, err := resolveAddr(opts.Addr)
		if err != nil {
			return nil, err
		}
		s, err := launch(ctx, bin, host, port, opts)
		if errors.Is(err, errPortInUse) && picked && attempt < portAttempts {
			continue
		}
		return s, err
	}
}

// errPortInUse marks a start that failed because Dynoxide found its port taken.
var errPortInUse = errors.New("port in use")

// launch starts Dynoxide on host:port and waits until it is ready.
func launch(ctx context.Context, bin, host string, port int, opts Options) (*Server, error) {
	var err error
	dbPath, scratch := opts.DBPath, ""
	if dbPath == "" && opts.IndexStreams != nil {
		if scratch, err = scratchDir(); err != nil {
			return nil, fmt.Errorf("ddbserver: %w", err)
		}
		dbPath = filepath.Join(scratch, "dynamodb.sqlite")
	}
	args := []string{"serve", "--host", host, "--port", strconv.Itoa(port)}
	if dbPath != "" {
		args = append(args, "--db-path", dbPath)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 3 * time.Second
	cmd.SysProcAttr = sysProcAttr(syscall.SIGKILL)
	stderr := &startLog{n: 8 << 10, bound: make(chan struct{})}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		if scratch != "" {
			_ = os.RemoveAll(scratch)
		}
		return nil, fmt.Errorf("ddbserver: start %s: %w", bin, err)
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	s := &Server{URL: "http://" + addr, Addr: addr, Store: Dynoxide, cmd: cmd, done: make(chan struct{}), scratch: scratch}
	go func() {
		s.err = cmd.Wait()
		close(s.done)
	}()
	timeout := opts.ReadyTimeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	if err := s.waitReady(ctx, timeout, stderr.bound); err != nil {
		_ = s.Close()
		msg := strings.TrimSpace(stderr.String())
		if strings.Contains(msg, "already in use") {
			err = fmt.Errorf("%w (%w)", err, errPortInUse)
		}
		return nil, fmt.Errorf("ddbserver: %w (stderr: %s)", err, msg)
	}
	if opts.IndexStreams != nil {
		if err := opts.IndexStreams(ctx, dbPath); err != nil {
			_ = s.Close()
			return nil, err
		}
	}
	return s, nil
}

// resolveAddr turns addr into a host and a concrete port, picking a free one (freePort) for port 0; picked says it
// did.
func resolveAddr(addr string) (host string, port int, picked bool, err error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, false, fmt.Errorf("ddbserver: address %q: %w", addr, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if port, err = strconv.Atoi(portStr); err != nil {
		return "", 0, false, fmt.Errorf("ddbserver: port %q: %w", portStr, err)
	}
	if port != 0 {
		return host, port, false, nil
	}
	if port, err = freePort(host); err != nil {
		return "", 0, false, fmt.Errorf("ddbserver: pick a free port: %w", err)
	}
	return host, port, true, nil
}

// freePort returns a port of host that nothing listens on now (a variable for the tests).
var freePort = func(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitReady waits until the server's own process has bound its port (bound, closed when Dynoxide says so), then
// polls its health endpoint (GET /) until it answers 200 or the timeout passes. Without the first condition another
// server that took the port between freePort and Dynoxide's start (another test's Dynoxide, on a busy machine) could
// answer the poll: the stack would then use that server, and stop once its own Dynoxide, which could not listen,
// had exited.
func (s *Server) waitReady(ctx context.Context, timeout time.Duration, bound <-chan struct{}) error {
	deadline := time.Now().Add(timeout)
	client := &http.Client{Timeout: time.Second}
	for {
		select {
		case <-s.done:
			return fmt.Errorf("dynoxide exited before it was ready: %v", s.err)
		default:
		}
		select {
		case <-bound:
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/", nil)
			if resp, err := client.Do(req); err == nil {
				_ = resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return nil
				}
			}
		default:
		}
		if time.Now().After(deadline) {
			select {
			case <-bound:
				return fmt.Errorf("dynoxide not ready at %s after %s", s.URL, timeout)
			default:
				return fmt.Errorf("dynoxide did not say %q within %s", listeningLine+s.URL, timeout)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Close stops the server (SIGTERM, then SIGKILL after a grace period) and waits for it to exit. On the server that
// StartWithTablesT shares between tests it does nothing: that one stops when the test binary exits.
func (s *Server) Close() error {
	if s.shared {
		return nil
	}
	if s.scratch != "" {
		defer os.RemoveAll(s.scratch)
	}
	select {
	case <-s.done:
		return nil
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(3 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	return nil
}

// Done is closed when the process has exited.
func (s *Server) Done() <-chan struct{} { return s.done }

// ExitError is how the process ended (nil for a clean exit), once Done is closed; nil before.
func (s *Server) ExitError() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

// PID is the process id of the server, for reading its resource use (for example its resident memory in
// /proc/PID/status).
func (s *Server) PID() int { return s.cmd.Process.Pid }

// listeningLine starts the line Dynoxide writes on standard error once it has bound its port (followed by its URL);
// when it cannot bind, it writes "port … is already in use" instead and exits. Its maintainers document the line as
// a promise that container tooling waits on, as this package does.
const listeningLine = "Dynoxide listening on "

// startLog keeps the first n bytes a server process writes, so a chatty child cannot grow memory without bound, and
// closes bound, when it is not nil, once they include listeningLine (Dynoxide's standard error). Its methods may be
// called from any goroutine.
type startLog struct {
	mu    sync.Mutex
	b     strings.Builder
	n     int
	bound chan struct{}
	seen  bool
}

func (l *startLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	if l.bound != nil && !l.seen && strings.Contains(l.b.String(), listeningLine) {
		l.seen = true
		close(l.bound)
	}
	return len(p), nil
}

// String returns what was kept.
func (l *startLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
