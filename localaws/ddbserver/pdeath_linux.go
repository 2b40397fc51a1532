package ddbserver

import "syscall"

func pdeathsig(sig syscall.Signal) *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: sig} }
