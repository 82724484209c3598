//go:build !linux

package testenv

// isMemoryFS says whether dir is a memory file system: known on Linux only.
func isMemoryFS(string) bool { return false }

// running is never asked off Linux (no memory file system is used).
func running(int) bool { return true }

// freeBytes is never asked off Linux.
func freeBytes(string) uint64 { return 0 }
