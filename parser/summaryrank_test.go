package parser

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/realdata"
)

// TestSummaryHeaderBodyRankMismatch: a rank summary whose header says rank 1 while
// its body is rank 0's (rank 0's body spliced under rank 1's header) is flagged,
// naming the file and line, rather than read as rank 1 without a word.
func TestSummaryHeaderBodyRankMismatch(t *testing.T) {
	src := realdata.Path(t, "imagenet-2rank-level1")
	c, err := LoadCluster([]string{src}, LoadOptions{})
	require.NoError(t, err)
	require.Len(t, c.Ranks, 2)
	lines := func(rank int) []string {
		b := summaryBytes(t, c.Ranks[rank], nil)
		zr, err := gzip.NewReader(bytes.NewReader(b))
		require.NoError(t, err)
		text, err := io.ReadAll(zr)
		require.NoError(t, err)
		var out []string
		sc := bufio.NewScanner(bytes.NewReader(text))
		sc.Buffer(nil, 1<<26)
		for sc.Scan() {
			out = append(out, sc.Text())
		}
		require.Len(t, out, 2)
		return out
	}
	r0, r1 := lines(0), lines(1)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "rank0.hcclprof-summary.json.gz"), gzipLines(r0...), 0o644))
	spliced := filepath.Join(dir, "rank1.hcclprof-summary.json.gz")
	require.NoError(t, os.WriteFile(spliced, gzipLines(r1[0], r0[1]), 0o644))

	got, err := LoadCluster([]string{dir}, LoadOptions{})
	require.NoError(t, err)
	require.Len(t, got.Ranks, 2)
	assert.Empty(t, got.Ranks[0].Problems)
	assert.Contains(t, strings.Join(got.Ranks[1].Problems, "\n"), spliced+":2: the header (line 1) says rank 1, but the body is of rank 0")

	// The untouched pair reads clean.
	require.NoError(t, os.WriteFile(spliced, gzipLines(r1...), 0o644))
	got, err = LoadCluster([]string{dir}, LoadOptions{})
	require.NoError(t, err)
	for _, r := range got.Ranks {
		assert.Empty(t, r.Problems, "rank %d", r.Rank)
	}
}
