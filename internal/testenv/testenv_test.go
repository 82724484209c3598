package testenv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The directory of a process no longer running is removed; a running one's is kept.
func TestRemoveStale(t *testing.T) {
	if !isMemoryFS(memoryTemp) {
		t.Skip("no memory file system")
	}
	const gone = 1 << 30 // no process has that id (pid_max is at most 4194304)
	stale, err := os.MkdirTemp(memoryTemp, tempPrefix+"1073741824-")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(stale, "f"), []byte("x"), 0o644))
	live, err := os.MkdirTemp(memoryTemp, tempPrefix+"1-") // init runs
	require.NoError(t, err)
	defer os.RemoveAll(live)
	require.False(t, running(gone))
	removeStale()
	_, err = os.Stat(stale)
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, err = os.Stat(live)
	assert.NoError(t, err)
}

// The room left is read from the file system: something on the temporary directory,
// nothing on a path that does not exist (the memory directory is then not used).
func TestFreeBytes(t *testing.T) {
	if !isMemoryFS(memoryTemp) {
		t.Skip("no memory file system")
	}
	assert.Greater(t, freeBytes(t.TempDir()), uint64(0))
	assert.Zero(t, freeBytes(filepath.Join(t.TempDir(), "absent")))
}
