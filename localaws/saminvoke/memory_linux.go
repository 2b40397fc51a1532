package saminvoke

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// memoryPollInterval is how often the sandbox reads the process's resident memory to enforce MemorySize.
const memoryPollInterval = 5 * time.Millisecond

// sysProcAttr ties the function's process to this one: it is killed if the invoke dies first.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }

// peakRSS is the most resident memory the ended process used, in bytes (the kernel's ru_maxrss, in KiB on Linux).
func peakRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss << 10
	}
	return 0
}

// rss is the process's resident memory now, in bytes, from /proc/PID/statm (whose second field counts pages).
func rss(pid int) (int64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize()), err == nil
}

// watchMemory calls exceeded, once, when the process's resident memory goes over limit bytes, until ctx ends or
// the process is gone.
func watchMemory(ctx context.Context, pid int, limit int64, exceeded func()) {
	t := time.NewTicker(memoryPollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			n, ok := rss(pid)
			if !ok {
				return
			}
			if n > limit {
				exceeded()
				return
			}
		}
	}
}
