package ddbserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// ErrDataInMemory reports that an in-memory server died: a new one would start empty, so it is not restarted.
var ErrDataInMemory = errors.New("ddbserver: dynoxide exited and its data was in memory, which a restart cannot bring back")

// Restart policy defaults: a server that dies more than DefaultMaxRestarts times within DefaultRestartWindow is
// given up on.
const (
	DefaultMaxRestarts   = 5
	DefaultRestartWindow = time.Minute
)

// SuperviseOptions configures Supervise.
type SuperviseOptions struct {
	Options
	// MaxRestarts and RestartWindow bound the restarts: one more within the window gives up (defaults
	// DefaultMaxRestarts and DefaultRestartWindow). A start that fails counts as a restart.
	MaxRestarts   int
	RestartWindow time.Duration
	// Logger receives "dynamodb exited" and "dynamodb restarted"; nil discards them.
	Logger *slog.Logger
	// OnRestart, when set, is called with the new server after each restart.
	OnRestart func(*Server)
}

// Supervisor keeps a Dynoxide server running: when the process exits without Close (it crashed, or was killed), it
// starts a new one on the same address with the same data file (Options.DBPath), logged. When it cannot (the data
// was in memory, the restarts exceed the policy, a new process does not start), it gives up: Failed is closed and
// Err says why.
type Supervisor struct {
	// URL and Addr are the server's, the same across restarts.
	URL, Addr string

	opts     SuperviseOptions
	logger   *slog.Logger
	stop     chan struct{}
	stopOnce sync.Once
	watching sync.WaitGroup
	failed   chan struct{}

	mu       sync.Mutex
	srv      *Server
	err      error
	restarts int
}

// Supervise starts a server as Start does and watches it until ctx is cancelled or Close is called.
func Supervise(ctx context.Context, opts SuperviseOptions) (*Supervisor, error) {
	if opts.MaxRestarts <= 0 {
		opts.MaxRestarts = DefaultMaxRestarts
	}
	if opts.RestartWindow <= 0 {
		opts.RestartWindow = DefaultRestartWindow
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	srv, err := Start(ctx, opts.Options)
	if err != nil {
		return nil, err
	}
	// Restarts reuse the address the first start resolved (a port of 0 becomes a fixed one).
	opts.Addr = srv.Addr
	s := &Supervisor{URL: srv.URL, Addr: srv.Addr, opts: opts, logger: logger, stop: make(chan struct{}),
		failed: make(chan struct{}), srv: srv}
	s.watching.Add(1)
	go s.watch(ctx)
	return s, nil
}

// watch restarts the server each time it exits on its own.
func (s *Supervisor) watch(ctx context.Context) {
	defer s.watching.Done()
	var starts []time.Time // restarts within the window
	for {
		srv := s.server()
		select {
		case <-srv.Done():
		case <-s.stop:
			return
		case <-ctx.Done():
			return
		}
		if s.stopping(ctx) {
			return
		}
		s.logger.Warn("dynamodb exited", "pid", srv.PID(), "exit", exitText(srv.ExitError()), "address", s.Addr)
		if s.opts.DBPath == "" {
			s.giveUp(ErrDataInMemory)
			return
		}
		for {
			now := time.Now()
			starts = append(starts, now)
			for len(starts) > 0 && now.Sub(starts[0]) > s.opts.RestartWindow {
				starts = starts[1:]
			}
			if len(starts) > s.opts.MaxRestarts {
				s.giveUp(fmt.Errorf("ddbserver: dynoxide exited %d times within %s; not restarting it again", len(starts), s.opts.RestartWindow))
				return
			}
			next, err := Start(ctx, s.opts.Options)
			if s.stopping(ctx) {
				if next != nil {
					_ = next.Close()
				}
				return
			}
			if err == nil {
				s.mu.Lock()
				s.srv = next
				s.restarts++
				n := s.restarts
				s.mu.Unlock()
				s.logger.Info("dynamodb restarted", "pid", next.PID(), "address", s.Addr, "dataFile", s.opts.DBPath, "restarts", n)
				if s.opts.OnRestart != nil {
					s.opts.OnRestart(next)
				}
				break
			}
			s.logger.Warn("dynamodb restart failed", "error", err.Error(), "attempt", len(starts))
			select {
			case <-time.After(backoff(len(starts))):
			case <-s.stop:
				return
			case <-ctx.Done():
				return
			}
		}
	}
}

// exitText describes how a process ended.
func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// backoff is the wait before restart attempt n+1: 100 ms doubling, at most 2 s.
func backoff(n int) time.Duration {
	d := 100 * time.Millisecond << min(n, 5)
	return min(d, 2*time.Second)
}

func (s *Supervisor) stopping(ctx context.Context) bool {
	select {
	case <-s.stop:
		return true
	default:
		return ctx.Err() != nil
	}
}

func (s *Supervisor) giveUp(err error) {
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
	close(s.failed)
}

func (s *Supervisor) server() *Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.srv
}

// Failed is closed when the supervisor has given up on the server; Err then says why.
func (s *Supervisor) Failed() <-chan struct{} { return s.failed }

// Err is why the supervisor gave up, nil while it has not.
func (s *Supervisor) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// PID is the process id of the current server.
func (s *Supervisor) PID() int { return s.server().PID() }

// Restarts is how many times the server has been restarted.
func (s *Supervisor) Restarts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.restarts
}

// Close stops watching and stops the current server.
func (s *Supervisor) Close() error {
	s.stopOnce.Do(func() { close(s.stop) })
	s.watching.Wait()
	return s.server().Close()
}
