package ddbserver

import "syscall"

func sysProcAttr(syscall.Signal) *syscall.SysProcAttr { return nil }

// processAlive reports whether a process with the id may exist: on Windows it is not checked, so a scratch folder
// is removed only by its own server's Close.
func processAlive(int) bool { return true }

// shmAvailable is false: Windows has no /dev/shm.
func shmAvailable() bool { return false }

// sweepScratch does nothing on Windows: a scratch folder is removed only by its own server's Close.
func sweepScratch(string) {}
