//go:build unix

package ddbserver

import "syscall"

// sysProcAttr has the kernel send sig to the child when the parent dies, on Linux, so an abrupt exit of the parent
// does not leave the server running.
func sysProcAttr(sig syscall.Signal) *syscall.SysProcAttr { return pdeathsig(sig) }

// processAlive reports whether a process with the id exists (signal 0 checks without sending anything).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
