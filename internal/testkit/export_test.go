package testkit

// SetFilesBudget sets filesBudget for a test, returning the old one.
func SetFilesBudget(n int64) int64 {
	cache.mu.Lock()
	defer cache.mu.Unlock()
	old := filesBudget
	filesBudget = n
	return old
}
