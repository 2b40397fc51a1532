package ddbserver

import (
	"os"
	"strconv"
	"strings"
)

// scratchPrefix begins the name of every scratch folder: dynoxide-<pid of the process that made it>-<random>.
const scratchPrefix = "dynoxide-"

// scratchDir makes the folder of the database of a server started without a DBPath but with an IndexStreams, so
// that the database can be indexed: under /dev/shm (memory, like Dynoxide's own in-memory mode) where the system has one, else in the
// temporary directory. Close removes it. A process that never got to Close (a test binary, whose shared server
// lives until it exits; a killed stack) leaves its folders, which the next scratchDir removes once that process is
// gone (sweepScratch). The folder's name carries the process id, so that nothing is written to mark it: go test
// caches a package's result only while the files its tests opened are unchanged, and a marker file that outlived
// the test would defeat that cache every run.
func scratchDir() (string, error) {
	parent := os.TempDir()
	if shmAvailable() {
		parent = "/dev/shm"
	}
	sweepScratch(parent)
	return os.MkdirTemp(parent, scratchPrefix+strconv.Itoa(os.Getpid())+"-")
}

// scratchOwner is the process id in a scratch folder's name, and false for another name.
func scratchOwner(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, scratchPrefix)
	if !ok {
		return 0, false
	}
	pid, _, ok := strings.Cut(rest, "-")
	n, err := strconv.Atoi(pid)
	return n, ok && err == nil && n > 0
}
