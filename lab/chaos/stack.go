package chaos

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/transferflow/orchestrator/localaws/stack"
)

// startTries bounds the attempts to start the stack after a kill (the killed stack's DynamoDB server may still hold
// its files for a moment).
const startTries = 5

// killReq is a kill on its way to the restarter; killed when the process is already dead.
type killReq struct {
	kill   Kill
	killed bool
}

// stackProc owns the local stack's process through its kills and restarts: it kills it when the clients' accepted
// transfers reach a kill point, and restarts it on the same --data-dir with the next epoch's faults.
type stackProc struct {
	base   []string // flags of every start
	epochs []Epoch
	log    func(format string, args ...any)
	rt     *router
	opts   stack.ProcessOptions

	accepted atomic.Int64

	mu        sync.Mutex
	proc      *stack.Process
	epoch     int
	kills     []Kill
	next      int  // the next kill point
	busy      bool // a kill is under way: the restarter owns the process
	queue     chan killReq
	killed    int
	at202     int
	down      time.Duration
	downSince time.Time
}

// start runs the stack with epoch's faults and points the router at it.
func (s *stackProc) start(ctx context.Context, epoch int) error {
	args := append(append([]string(nil), s.base...), s.epochs[epoch].Args()...)
	opts := s.opts
	opts.Args = args
	var err error
	for try := 1; try <= startTries; try++ {
		var p *stack.Process
		if p, err = stack.StartProcess(ctx, opts); err == nil {
			u, perr := url.Parse(p.API())
			if perr != nil {
				_ = p.Close()
				return fmt.Errorf("stack api url %q: %w", p.API(), perr)
			}
			host := u.Host
			s.rt.host.Store(&host)
			s.mu.Lock()
			s.proc, s.epoch = p, epoch
			s.mu.Unlock()
			return nil
		}
		s.log("start %d of epoch %d failed: %v", try, epoch, err)
		if serr := sleep(ctx, time.Duration(try)*time.Second); serr != nil {
			return serr
		}
	}
	return fmt.Errorf("start the stack for epoch %d: %w", epoch, err)
}

// current is the running process.
func (s *stackProc) current() *stack.Process {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc
}

// onAccepted counts a transfer's first 2xx answer. At a kill point it queues the kill; one without delay is done
// here, at once, while the answer's workflow has (most likely) not reached its first state.
func (s *stackProc) onAccepted() {
	n := int(s.accepted.Add(1))
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.next < len(s.kills) && s.kills[s.next].AfterAccepted <= n {
		k := killReq{kill: s.kills[s.next]}
		s.next++
		if k.kill.Delay == 0 && !s.busy {
			s.killLocked()
			s.at202++
			k.killed = true
		}
		s.busy = true
		s.queue <- k
	}
}

// flushKills queues the kill points the clients did not reach, so that the campaign kills as often as planned.
func (s *stackProc) flushKills() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ; s.next < len(s.kills); s.next++ {
		s.busy = true
		s.queue <- killReq{kill: s.kills[s.next]}
	}
	close(s.queue)
}

// killLocked sends SIGKILL to the stack.
func (s *stackProc) killLocked() {
	_ = syscall.Kill(s.proc.PID(), syscall.SIGKILL)
	s.killed++
	s.downSince = time.Now()
}

// restarter carries out the queued kills one after the other: kill (after the kill's delay, unless done already),
// wait for the process to die, start the next epoch. It returns when the queue is closed and empty.
func (s *stackProc) restarter(ctx context.Context) error {
	for k := range s.queue {
		if !k.killed {
			if err := sleep(ctx, k.kill.Delay); err != nil {
				return err
			}
			s.mu.Lock()
			s.killLocked()
			s.mu.Unlock()
		}
		p := s.current()
		<-p.Done()
		s.mu.Lock()
		next := s.epoch + 1
		n := s.killed
		s.mu.Unlock()
		if err := s.start(ctx, next); err != nil {
			return err
		}
		s.mu.Lock()
		s.down += time.Since(s.downSince)
		if len(s.queue) == 0 {
			s.busy = false
		}
		s.mu.Unlock()
		s.log("kill %d/%d at %d accepted (+%s); epoch %d: %s", n, len(s.kills), k.kill.AfterAccepted,
			k.kill.Delay, next, describe(s.epochs[next]))
	}
	return nil
}

// describe lists an epoch's fault flags.
func describe(e Epoch) string {
	if len(e.Faults) == 0 {
		return "no faults"
	}
	s := ""
	for i, f := range e.Faults {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprint(f.Args)
	}
	return s
}
