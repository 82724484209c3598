// Package testenv sets up a test process: its temporary files in memory and a
// collector paced for tests. Packages with generated clusters get it through
// testkit.Main; the generator's own packages, which testkit imports, call Main here.
package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

// Main runs a package's tests (call it from TestMain) between Setup and its done.
func Main(m *testing.M) {
	done := Setup()
	code := m.Run()
	done()
	os.Exit(code)
}

// Setup puts the process' temporary files in memory (MemoryTemp) and paces its
// collector for tests (tuneGC). done removes the temporary directory.
func Setup() (done func()) {
	done = MemoryTemp()
	tuneGC()
	return done
}

// memoryTemp is the memory file system the temporary files go to.
const memoryTemp = "/dev/shm"

// MemoryTemp points TMPDIR (unless set) at a directory of the process' own on a
// memory file system when there is one: the generated clusters and every test's
// t.TempDir are written there, and the processes the tests start inherit it. On a
// disk, writing the generated profiles was much of the tests' kernel time (2 GB:
// 3.5 s of system time, 15 s of wall as the write-back throttled it, against 0.5 s
// and 1.3 s on tmpfs). done removes the directory. What a killed test process left
// would hold memory until the machine restarts: the directories of processes no
// longer running are removed first.
func MemoryTemp() (done func()) {
	done = func() {}
	if os.Getenv("TMPDIR") != "" || !isMemoryFS(memoryTemp) || freeBytes(memoryTemp) < memoryTempFree {
		return done
	}
	removeStale()
	dir, err := os.MkdirTemp(memoryTemp, fmt.Sprintf("%s%d-", tempPrefix, os.Getpid()))
	if err != nil {
		return done
	}
	os.Setenv("TMPDIR", dir)
	return func() {
		if err := os.RemoveAll(dir); err != nil {
			fmt.Fprintln(os.Stderr, "testenv:", err)
		}
	}
}

// memoryTempFree is the room the memory file system must have for a test process to
// use it: a container's /dev/shm is often 64 MB, and a process keeps up to a few GB
// of generated clusters there (testkit's bounds), beside the other package's process
// that go test runs at the same time. With less, the files go to the disk's TMPDIR.
const memoryTempFree = 8 << 30

// tempPrefix begins a process' directory, the process id after it.
const tempPrefix = "hcclprof-test-"

// removeStale removes the directories of test processes no longer running.
func removeStale() {
	entries, _ := os.ReadDir(memoryTemp)
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), tempPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		if pid, err := strconv.Atoi(pidText); err == nil && !running(pid) {
			os.RemoveAll(filepath.Join(memoryTemp, e.Name()))
		}
	}
}

// tuneGC collects less often than Go's default (unless GOGC or GOMEMLIMIT is set):
// the tests allocate much (generating, reading and analysing clusters) and keep
// little, and collecting each time the heap doubled was a tenth of their CPU. The heap
// may now grow to five times what is live, up to a soft limit of 2 GiB, past which the
// collector runs as often as it must to stay under it (more often than the default's
// only in a process keeping more than 1 GiB live; the tests keep a few hundred MB).
func tuneGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(400)
	debug.SetMemoryLimit(2 << 30)
}
