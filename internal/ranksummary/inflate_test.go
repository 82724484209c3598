package ranksummary_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/ranksummary"
	"github.com/hcclprof/hcclprof/internal/vfs"
	"github.com/hcclprof/hcclprof/parser"
)

// withSummaryBounds lowers the bounds on a decompressed summary for one test, so
// that a small file stands for the 1.5 GiB summary of the issue.
func withSummaryBounds(t *testing.T, total, trusted int64) {
	t.Helper()
	t.Cleanup(ranksummary.SetBounds(total, trusted))
}

// allocatedBy is how many bytes fn allocated on the heap.
func allocatedBy(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestSummaryInflatingPastTheBoundStopsThere: a summary that decompresses past the
// total bound (1 GiB; 4 MiB here) at a ratio under 1000:1 is refused, naming the file
// and the bound, without the decompressed text being held first (the reader once
// buffered the whole bound, twice, and a 1.5 GiB summary took the process down).
// With its gzip trailer's size forged small, too.
func TestSummaryInflatingPastTheBoundStopsThere(t *testing.T) {
	const bound = 4 << 20
	withSummaryBounds(t, bound, 256<<10)
	// Spaces between two members: 6 MiB of JSON that is valid but for its size;
	// ~6 KB packed, so the ratio bound (1000×, 6 MB) is above the total bound.
	honest := gzipLines(`{"format":"hcclprof-summary","version":2,"rank":2}`,
		`{"Dir": "x",`+strings.Repeat(" ", 6<<20)+`"Format": "torch_npu-text"}`)
	require.Greater(t, vfs.DefaultArchiveLimits.MaxRatio*int64(len(honest)), int64(bound), "the ratio bound must not be the one met")
	forged := bytes.Clone(honest)
	binary.LittleEndian.PutUint32(forged[len(forged)-4:], 100) // ISIZE: "100 bytes"
	for name, data := range map[string][]byte{"honest size": honest, "forged size": forged} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), ranksummary.Name(2))
			require.NoError(t, os.WriteFile(path, data, 0o644))
			var err error
			alloc := allocatedBy(func() { _, err = ranksummary.Read(path, ranksummary.KnownFormat) })
			require.Error(t, err)
			assert.Contains(t, err.Error(), path+":")
			assert.Contains(t, err.Error(), "decompresses to more than 1000 times its size or 4 MiB")
			assert.Less(t, alloc, uint64(bound/4), "allocated %d bytes to refuse a summary over a %d-byte bound", alloc, bound)

			in, err := parser.Discover([]string{path})
			require.NoError(t, err)
			require.Len(t, in.Ranks, 1)
			lr := parser.LoadRank(in.Ranks[0])
			require.Len(t, lr.Problems, 1)
			assert.Contains(t, lr.Problems[0], "decompresses to more than 1000 times its size")
		})
	}
}

// TestSummaryUnderTheBoundReadWithoutDoubling: a summary under the bound whose size
// is above what is trusted from its trailer is counted first, then read; one whose
// trailer lies about a size under the bound is read all the same.
func TestSummaryUnderTheBoundReadWithoutDoubling(t *testing.T) {
	r := sampleRank(t)
	data := summaryBytes(t, r, nil)
	path := filepath.Join(t.TempDir(), ranksummary.Name(r.Rank))
	require.NoError(t, os.WriteFile(path, data, 0o644))
	want, err := ranksummary.Read(path, ranksummary.KnownFormat)
	require.NoError(t, err)

	withSummaryBounds(t, 1<<30, 1<<10) // every summary counted first
	got, err := ranksummary.Read(path, ranksummary.KnownFormat)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	// Two gzip members: the trailer gives the last one's size only.
	zr, err := gzip.NewReader(bytes.NewReader(data))
	require.NoError(t, err)
	var text bytes.Buffer
	_, err = text.ReadFrom(zr)
	require.NoError(t, err)
	half := bytes.IndexByte(text.Bytes(), '\n') + 1
	var two bytes.Buffer
	for _, part := range [][]byte{text.Bytes()[:half], text.Bytes()[half:]} {
		zw := gzip.NewWriter(&two)
		zw.Write(part)
		zw.Close()
	}
	withSummaryBounds(t, 1<<30, 1<<20)
	require.NoError(t, os.WriteFile(path, two.Bytes(), 0o644))
	got, err = ranksummary.Read(path, ranksummary.KnownFormat)
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

// fastSize is the size the reader hands the fast path: what data decompresses
// to, within the bound.
func fastSize(data []byte) int64 {
	n, _ := ranksummary.InflatedSize(data, ranksummary.MaxInflated(int64(len(data))))
	return n
}
