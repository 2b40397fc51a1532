package ddblocal

import "syscall"

func sysProcAttr(syscall.Signal) *syscall.SysProcAttr { return nil }
