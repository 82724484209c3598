//go:build unix

package parser

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/realdata"
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
	data, unmap, ok := mapFile(f)
	require.True(t, ok)
	assert.Equal(t, want, data)
	unmap()

	_, err = f.Read(make([]byte, 1))
	require.NoError(t, err)
	_, _, ok = mapFile(f)
	assert.False(t, ok, "a file not at its start")
	_, _, ok = mapFile(bytes.NewReader(want))
	assert.False(t, ok, "not a file")

	empty := filepath.Join(t.TempDir(), "empty.json")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	e, err := os.Open(empty)
	require.NoError(t, err)
	defer e.Close()
	_, _, ok = mapFile(e)
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
	data, unmap, ok := mapFile(f)
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

// TestMappedTraceReadsAsStreamed: a trace read from its mapped file gives the same
// timeline as the same bytes streamed, and a file cut inside an event the same error.
func TestMappedTraceReadsAsStreamed(t *testing.T) {
	src := realdata.Path(t, "imagenet-2rank-level1", "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT", "trace_view.json")
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	streamed, err := ParseTraceView(bytes.NewReader(data), src)
	require.NoError(t, err)
	mapped := parseTraceFile(t, src)
	require.NotEmpty(t, mapped.CommTasks)
	assert.Equal(t, streamed, mapped)

	cut := filepath.Join(t.TempDir(), "trace_view.json")
	require.NoError(t, os.WriteFile(cut, data[:len(data)/2], 0o644))
	_, wantErr := ParseTraceView(bytes.NewReader(data[:len(data)/2]), cut)
	require.Error(t, wantErr)
	f, err := os.Open(cut)
	require.NoError(t, err)
	defer f.Close()
	_, unmap, ok := mapFile(f)
	require.True(t, ok, "the cut file is mapped")
	unmap()
	_, gotErr := ParseTraceView(f, cut)
	assert.Equal(t, wantErr.Error(), gotErr.Error())
}

// TestMappedKinetoReadsAsStreamed: a Kineto trace read from its mapped file gives the
// same rank as its bytes streamed.
func TestMappedKinetoReadsAsStreamed(t *testing.T) {
	gz, err := os.Open(realdata.Path(t, "kineto-nccl-a100-2gpu", "nccl_data.json.gz"))
	require.NoError(t, err)
	defer gz.Close()
	zr, err := gzip.NewReader(gz)
	require.NoError(t, err)
	data, err := io.ReadAll(zr)
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "trace.json")
	require.NoError(t, os.WriteFile(p, data, 0o644))

	streamed, err := ParseKineto(bytes.NewReader(data), p)
	require.NoError(t, err)
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	_, unmap, ok := mapFile(f)
	require.True(t, ok)
	unmap()
	mapped, err := ParseKineto(f, p)
	require.NoError(t, err)
	require.NotEmpty(t, mapped.CommOps)
	assert.Equal(t, streamed, mapped)
}
