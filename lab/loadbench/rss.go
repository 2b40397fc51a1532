package loadbench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

// ReadRSS returns the resident set size of process pid in bytes, from the VmRSS line of /proc/PID/status (Linux).
func ReadRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read rss of %d: %w", pid, err)
	}
	return parseVmRSS(b)
}

// parseVmRSS finds "VmRSS:   123456 kB" in a /proc/PID/status text.
func parseVmRSS(status []byte) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("VmRSS line %q: want N kB", sc.Text())
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("VmRSS line %q: %w", sc.Text(), err)
		}
		return kb * 1024, nil
	}
	return 0, fmt.Errorf("no VmRSS line")
}

// memoryWatch samples the resident memory of the stack and of the DynamoDB server at milestones of the number of
// finished transfers. It is safe for concurrent use.
type memoryWatch struct {
	localPID, storePID int // storePID 0: not ours to measure

	mu      sync.Mutex
	done    int64
	marks   map[int64]string
	samples []RSSSample
	errs    []string
}

// mark asks for a sample, labelled label, when the count of finished transfers reaches n.
func (m *memoryWatch) mark(n int64, label string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.marks == nil {
		m.marks = map[int64]string{}
	}
	if n <= m.done {
		m.sampleLocked(label)
		return
	}
	m.marks[n] = label
}

// finished counts n more finished transfers and samples at any milestone reached.
func (m *memoryWatch) finished(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for range n {
		m.done++
		if label, ok := m.marks[m.done]; ok {
			delete(m.marks, m.done)
			m.sampleLocked(label)
		}
	}
}

// sample takes a sample now.
func (m *memoryWatch) sample(label string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sampleLocked(label)
}

func (m *memoryWatch) sampleLocked(label string) {
	s := RSSSample{Label: label, Transfers: m.done}
	if rss, err := ReadRSS(m.localPID); err == nil {
		s.LocalMB = mb(rss)
	} else {
		m.errs = append(m.errs, err.Error())
	}
	if m.storePID != 0 {
		if rss, err := ReadRSS(m.storePID); err == nil {
			s.StoreMB = mb(rss)
		}
	}
	m.samples = append(m.samples, s)
}

func (m *memoryWatch) count() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.done
}

func (m *memoryWatch) result() ([]RSSSample, []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]RSSSample(nil), m.samples...), append([]string(nil), m.errs...)
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }
