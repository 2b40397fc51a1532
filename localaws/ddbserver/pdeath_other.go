//go:build unix && !linux

package ddbserver

import "syscall"

func pdeathsig(syscall.Signal) *syscall.SysProcAttr { return nil }
