package loadbench

import (
	"bytes"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	// A real line of /proc/PID/stat, with utime 1234 and stime 56 ticks; and the same with a command name that
	// holds spaces and parentheses, which the fields are counted after.
	line := "4242 (local) S 1 4242 4242 0 -1 4194560 9812 0 0 0 1234 56 0 0 20 0 9 0 777 1000000 3000 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n"
	tests := []struct {
		name    string
		stat    string
		want    time.Duration
		wantErr bool
	}{
		{name: "linux stat", stat: line, want: 12900 * time.Millisecond},
		{name: "command with ) and spaces", stat: strings.Replace(line, "(local)", "(a) b (c)", 1), want: 12900 * time.Millisecond},
		{name: "no command", stat: "4242 local S 1", wantErr: true},
		{name: "truncated", stat: "4242 (local) S 1 4242 4242 0 -1 4194560 9812 0 0 0 1234", wantErr: true},
		{name: "not a number", stat: strings.Replace(line, " 1234 ", " x ", 1), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatCPU([]byte(tt.stat))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("parseStatCPU = %v, %v; want %v, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// TestReadCPUCountsThisProcess burns CPU and expects this process's reading from /proc to grow by what the kernel's
// getrusage says the process used: both are its CPU time, so the comparison holds however busy the machine is
// (the wall time spent would not: a preempted test computes longer than it runs).
func TestReadCPUCountsThisProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("CPU time is read from /proc")
	}
	before, err := ReadCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	usedBefore := rusageCPU(t)
	for rusageCPU(t)-usedBefore < 300*time.Millisecond {
		b := bytes.Repeat([]byte("x"), 1<<14) // small steps: under the race detector a megabyte took seconds a step
		for i := range 50 {
			b = bytes.ReplaceAll(b, []byte{'x' + byte(i)}, []byte{'x' + byte(i+1)})
		}
	}
	used := rusageCPU(t) - usedBefore
	after, err := ReadCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// /proc counts in clock ticks (10 ms), getrusage finer; the garbage collector's threads count in both.
	if got := after - before; got < used-50*time.Millisecond || got > used+100*time.Millisecond {
		t.Errorf("CPU time from /proc grew by %v, getrusage says the process used %v", got, used)
	}
	if _, err := ReadCPU(-1); err == nil {
		t.Error("ReadCPU(-1): no error")
	}
}

// rusageCPU is the process's user and system CPU time as getrusage reports it.
func rusageCPU(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestPerTransfer(t *testing.T) {
	t0 := time.Unix(1000, 0)
	a := cpuReading{at: t0, local: 10 * time.Second, store: 20 * time.Second, generator: time.Second, ok: true}
	b := cpuReading{at: t0.Add(10 * time.Second), local: 13 * time.Second, store: 24 * time.Second, generator: 2 * time.Second, ok: true}
	got := perTransfer(a, b, 1000)
	if got == nil {
		t.Fatal("perTransfer = nil")
	}
	// 3 s, 4 s and 1 s over 1,000 transfers; 8 s of CPU in 10 s of wall time.
	want := CPUShare{LocalMs: 3, StoreMs: 4, GeneratorMs: 1, Cores: 0.8, CeilingPerSec: float64(runtime.NumCPU()) * 1000 / 8}
	if *got != want {
		t.Errorf("perTransfer = %+v, want %+v", *got, want)
	}
	for _, tt := range []struct {
		name      string
		a, b      cpuReading
		completed int
	}{
		{"failed first reading", cpuReading{}, b, 1000},
		{"failed last reading", a, cpuReading{}, 1000},
		{"nothing completed", a, b, 0},
	} {
		if got := perTransfer(tt.a, tt.b, tt.completed); got != nil {
			t.Errorf("%s: perTransfer = %+v, want nil", tt.name, *got)
		}
	}
}

// TestCPUClockWithoutAStore: a store that is not the bench's (pid 0) is not read, and counts nothing.
func TestCPUClockWithoutAStore(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("CPU time is read from /proc")
	}
	r := cpuClock{localPID: os.Getpid()}.read()
	if !r.ok || r.store != 0 || r.local <= 0 || r.generator <= 0 {
		t.Errorf("read = %+v, want ok, no store time, this process's time as local and generator", r)
	}
	if r := (cpuClock{}).read(); r.ok {
		t.Error("a clock without a stack pid read ok")
	}
}
