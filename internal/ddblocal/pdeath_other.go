//go:build unix && !linux

package ddblocal

import "syscall"

func pdeathsig(syscall.Signal) *syscall.SysProcAttr { return nil }
