package testenv

import (
	"errors"
	"syscall"
)

// isMemoryFS says whether dir is on tmpfs.
func isMemoryFS(dir string) bool {
	var st syscall.Statfs_t
	return syscall.Statfs(dir, &st) == nil && st.Type == 0x01021994 // TMPFS_MAGIC
}

// freeBytes is what an unprivileged process may still write into dir's file system
// (0 when it cannot be told).
func freeBytes(dir string) uint64 {
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) != nil {
		return 0
	}
	return st.Bavail * uint64(st.Bsize)
}

// running says whether a process of that id runs (or may: another user's).
func running(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || !errors.Is(err, syscall.ESRCH)
}
