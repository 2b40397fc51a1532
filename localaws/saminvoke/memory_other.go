//go:build !linux

package saminvoke

import (
	"context"
	"os"
	"syscall"
)

// sysProcAttr: outside Linux the function's process is not tied to this one.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// peakRSS: outside Linux the process's memory is not measured, and REPORT says 0 MB.
func peakRSS(*os.ProcessState) int64 { return 0 }

// watchMemory: outside Linux MemorySize is not enforced.
func watchMemory(context.Context, int, int64, func()) {}
