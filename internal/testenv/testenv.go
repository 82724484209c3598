// Package testenv sets up a test process: its temporary files in memory and a
// collector paced for tests. Packages with generated clusters get it through
// testkit.Main; the generator's own packages, which testkit imports, call Main here.
package testenv

import (
	"os"
	"runtime/debug"
	"testing"
)

// Main runs a package's tests (call it from TestMain) after Setup.
func Main(m *testing.M) {
	Setup()
	os.Exit(m.Run())
}

// Setup puts the process' temporary files in memory (MemoryTemp) and paces its
// collector for tests (TuneGC).
func Setup() {
	MemoryTemp()
	TuneGC()
}

// memoryTemp is the memory file system the temporary files go to.
const memoryTemp = "/dev/shm"

// MemoryTemp points TMPDIR (unless set) at a memory file system when there is one:
// the generated clusters and every test's t.TempDir are written there, and the
// processes the tests start inherit it. On a disk, writing the generated profiles was
// much of the tests' kernel time (2 GB: 3.5 s of system time, 15 s of wall as the
// write-back throttled it, against 0.5 s and 1.3 s on tmpfs).
func MemoryTemp() {
	if os.Getenv("TMPDIR") != "" || !isMemoryFS(memoryTemp) {
		return
	}
	probe, err := os.MkdirTemp(memoryTemp, "hcclprof-probe-")
	if err != nil {
		return
	}
	os.Remove(probe)
	os.Setenv("TMPDIR", memoryTemp)
}

// TuneGC collects less often than Go's default (unless GOGC or GOMEMLIMIT is set):
// the tests allocate much (generating, reading and analysing clusters) and keep
// little, and collecting each time the heap doubled was a tenth of their CPU. The heap
// may now grow to five times what is live, up to a soft limit of 2 GiB, past which the
// collector runs as often as it must to stay under it (more often than the default's
// only in a process keeping more than 1 GiB live; the tests keep a few hundred MB).
func TuneGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(400)
	debug.SetMemoryLimit(2 << 30)
}
