//go:build unix

package ddbserver

import (
	"os"
	"syscall"
)

// sysProcAttr has the kernel send sig to the child when the parent dies, on Linux, so an abrupt exit of the parent
// does not leave the server running.
func sysProcAttr(sig syscall.Signal) *syscall.SysProcAttr { return pdeathsig(sig) }

// processAlive reports whether a process with the id exists (signal 0 checks without sending anything).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}

// shmAvailable reports whether /dev/shm is a directory. It asks the kernel directly: go test's file log, which
// decides whether a test result may be cached, records what package os stats and opens, and /dev/shm changes with
// every scratch folder made in it.
func shmAvailable() bool {
	var st syscall.Stat_t
	return syscall.Stat("/dev/shm", &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFDIR
}

// sweepScratch removes the scratch folders in parent whose process is gone, listing parent with the kernel's own
// calls for the reason shmAvailable gives.
func sweepScratch(parent string) {
	fd, err := syscall.Open(parent, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer syscall.Close(fd)
	buf := make([]byte, 8192)
	var names []string
	for {
		n, err := syscall.ReadDirent(fd, buf)
		if err != nil || n <= 0 {
			break
		}
		_, _, names = syscall.ParseDirent(buf[:n], -1, names)
	}
	for _, name := range names {
		if pid, ok := scratchOwner(name); ok && !processAlive(pid) {
			_ = os.RemoveAll(parent + "/" + name)
		}
	}
}
