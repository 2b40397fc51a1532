package ddblocal

import "syscall"

func pdeathsig() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
