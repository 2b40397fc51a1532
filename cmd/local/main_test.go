package main

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestTuneGC(t *testing.T) {
	gogc, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(gogc); debug.SetMemoryLimit(limit) })
	tests := []struct {
		name      string
		env       map[string]string
		wantGOGC  int
		wantLimit int64
	}{
		{"unset: the local stack's", nil, 400, 2 << 30},
		{"the user's GOGC and GOMEMLIMIT are kept", map[string]string{"GOGC": "100", "GOMEMLIMIT": "off"}, 100, math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			debug.SetGCPercent(100)
			debug.SetMemoryLimit(math.MaxInt64)
			tuneGC(func(k string) string { return tt.env[k] })
			if got := debug.SetGCPercent(100); got != tt.wantGOGC {
				t.Errorf("GC percent %d, want %d", got, tt.wantGOGC)
			}
			if got := debug.SetMemoryLimit(-1); got != tt.wantLimit {
				t.Errorf("memory limit %d, want %d", got, tt.wantLimit)
			}
		})
	}
}
