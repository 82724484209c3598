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

	"github.com/hcclprof/hcclprof/internal/jsonx"
	"github.com/hcclprof/hcclprof/internal/realdata"
)

// TestMappedTraceReadsAsStreamed: a trace read from its mapped file gives the same
// timeline as the same bytes streamed, and a file cut inside an event the same error.
func TestMappedTraceReadsAsStreamed(t *testing.T) {
	src := realdata.Path(t, "imagenet-2rank-level1", "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT", "trace_view.json")
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	streamed, err := parseTraceView(bytes.NewReader(data), src)
	require.NoError(t, err)
	mapped := parseTraceFile(t, src)
	require.NotEmpty(t, mapped.CommTasks)
	assert.Equal(t, streamed, mapped)

	cut := filepath.Join(t.TempDir(), "trace_view.json")
	require.NoError(t, os.WriteFile(cut, data[:len(data)/2], 0o644))
	_, wantErr := parseTraceView(bytes.NewReader(data[:len(data)/2]), cut)
	require.Error(t, wantErr)
	f, err := os.Open(cut)
	require.NoError(t, err)
	defer f.Close()
	_, unmap, ok := jsonx.MapFile(f)
	require.True(t, ok, "the cut file is mapped")
	unmap()
	_, gotErr := parseTraceView(f, cut)
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

	streamed, err := parseKineto(bytes.NewReader(data), p)
	require.NoError(t, err)
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	_, unmap, ok := jsonx.MapFile(f)
	require.True(t, ok)
	unmap()
	mapped, err := parseKineto(f, p)
	require.NoError(t, err)
	require.NotEmpty(t, mapped.CommOps)
	assert.Equal(t, streamed, mapped)
}
