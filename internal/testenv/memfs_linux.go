package testenv

import "syscall"

// isMemoryFS says whether dir is on tmpfs.
func isMemoryFS(dir string) bool {
	var st syscall.Statfs_t
	return syscall.Statfs(dir, &st) == nil && st.Type == 0x01021994 // TMPFS_MAGIC
}
