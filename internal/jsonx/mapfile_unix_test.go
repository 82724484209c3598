//go:build unix

package jsonx

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMapFile: a regular file at its start is mapped with its bytes; a reader that is
// not a file, a file read from already, or an empty one is left to be read.
func TestMapFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "trace_view.json")
	want := bytes.Repeat([]byte(`{"ph": "X"}, `), 1000)
	require.NoError(t, os.WriteFile(p, want, 0o644))
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	data, unmap, ok := MapFile(f)
	require.True(t, ok)
	assert.Equal(t, want, data)
	unmap()

	_, err = f.Read(make([]byte, 1))
	require.NoError(t, err)
	_, _, ok = MapFile(f)
	assert.False(t, ok, "a file not at its start")
	_, _, ok = MapFile(bytes.NewReader(want))
	assert.False(t, ok, "not a file")

	empty := filepath.Join(t.TempDir(), "empty.json")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	e, err := os.Open(empty)
	require.NoError(t, err)
	defer e.Close()
	_, _, ok = MapFile(e)
	assert.False(t, ok, "an empty file cannot be mapped")
}

// TestReadMappedFileThatShrinks: a mapped file truncated while it is read faults when
// its lost pages are touched; readMapped turns that into an error naming the file,
// where it would otherwise crash the process.
func TestReadMappedFileThatShrinks(t *testing.T) {
	p := filepath.Join(t.TempDir(), "trace_view.json")
	require.NoError(t, os.WriteFile(p, bytes.Repeat([]byte{' '}, 1<<20), 0o644))
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	data, unmap, ok := MapFile(f)
	require.True(t, ok)
	defer unmap()
	require.NoError(t, os.Truncate(p, 0))
	var sum int
	err = readMapped(p, func() error {
		for i := 0; i < len(data); i += 4096 {
			sum += int(data[i])
		}
		return nil
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), p+": the file could not be read to its end: it shrank while it was read")
	assert.NoError(t, readMapped(p, func() error { return nil }))
	assert.PanicsWithValue(t, "not a fault", func() { _ = readMapped(p, func() error { panic("not a fault") }) })
}
