package ddbserver

import "syscall"

func sysProcAttr(syscall.Signal) *syscall.SysProcAttr { return nil }
