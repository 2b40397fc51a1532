package loadbench

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"
)

// userHZ is the unit of the CPU times in /proc/PID/stat: Linux exports them in USER_HZ ticks, 100 a second on every
// architecture's user-space ABI (sysconf(_SC_CLK_TCK)), whatever the kernel's own tick rate.
const userHZ = 100

// ReadCPU returns the CPU time process pid has used so far, user and system, from /proc/PID/stat (Linux).
func ReadCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read cpu of %d: %w", pid, err)
	}
	return parseStatCPU(b)
}

// parseStatCPU reads utime and stime (fields 14 and 15) from a /proc/PID/stat text. The command name (field 2) is
// in parentheses and may itself hold spaces and parentheses, so the fields are counted from the last ')'.
func parseStatCPU(stat []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("stat %q: no command name", stat)
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("stat %q: %d fields after the command name, want at least 13", stat, len(f))
	}
	var ticks int64
	for _, s := range f[11:13] { // state is field 3, f[0]; utime and stime are fields 14 and 15
		n, err := strconv.ParseInt(string(s), 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("stat %q: utime/stime %q", stat, s)
		}
		ticks += n
	}
	return time.Duration(ticks) * (time.Second / userHZ), nil
}

// cpuClock reads the CPU time of the three processes a closed-loop cell keeps busy: the stack, the DynamoDB server
// (when it is ours) and this load generator.
type cpuClock struct {
	localPID, storePID int // storePID 0: not ours to measure
}

// cpuReading is what the processes had used at one moment; ok is false when the stack's could not be read.
type cpuReading struct {
	at                      time.Time
	local, store, generator time.Duration
	ok                      bool
}

func (c cpuClock) read() cpuReading {
	r := cpuReading{at: time.Now()}
	var err error
	if r.local, err = ReadCPU(c.localPID); err != nil {
		return r
	}
	if c.storePID != 0 {
		if r.store, err = ReadCPU(c.storePID); err != nil {
			return r
		}
	}
	if r.generator, err = ReadCPU(os.Getpid()); err != nil {
		return r
	}
	r.ok = true
	return r
}

// perTransfer is the CPU each process spent between the readings a and b per completed transfer, or nil when either
// reading failed or nothing completed.
func perTransfer(a, b cpuReading, completed int) *CPUShare {
	if !a.ok || !b.ok || completed <= 0 {
		return nil
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(completed) }
	s := &CPUShare{
		LocalMs:     ms(b.local - a.local),
		StoreMs:     ms(b.store - a.store),
		GeneratorMs: ms(b.generator - a.generator),
	}
	total := s.LocalMs + s.StoreMs + s.GeneratorMs
	if wall := b.at.Sub(a.at); wall > 0 {
		s.Cores = total * float64(completed) / (float64(wall) / float64(time.Millisecond))
	}
	if total > 0 {
		s.CeilingPerSec = float64(runtime.NumCPU()) * 1000 / total
	}
	return s
}
