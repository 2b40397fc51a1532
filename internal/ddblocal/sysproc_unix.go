//go:build unix

package ddblocal

import "syscall"

// sysProcAttr puts the child in the parent's death signal set on Linux-like systems where available, so an abrupt
// exit of the parent does not leave the server running.
func sysProcAttr() *syscall.SysProcAttr { return pdeathsig() }
