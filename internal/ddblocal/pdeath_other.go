//go:build unix && !linux

package ddblocal

import "syscall"

func pdeathsig() *syscall.SysProcAttr { return nil }
