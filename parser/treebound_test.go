package parser

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/realdata"
)

// TestJSONTreeBound: a file read whole into a tree (communication_matrix.json here)
// past the bound (256 MiB; 4 KiB in this test) is refused by its size, naming the
// file, its size and the bound, and the rank is incomplete; the other rank is read.
// One read from a stream of unknown size stops at the bound.
func TestJSONTreeBound(t *testing.T) {
	src := realdata.Path(t, "imagenet-2rank-level1")
	root := t.TempDir()
	require.NoError(t, os.CopyFS(root, os.DirFS(src)))
	matrix := filepath.Join(root, "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT", "communication_matrix.json")
	fi, err := os.Stat(matrix)
	require.NoError(t, err)
	old := maxJSONTreeBytes
	maxJSONTreeBytes = fi.Size() - 1
	t.Cleanup(func() { maxJSONTreeBytes = old })
	// Rank 1's is larger still: give it room.
	other := filepath.Join(root, "rank1_ascend_pt", "ASCEND_PROFILER_OUTPUT", "communication_matrix.json")
	require.NoError(t, os.WriteFile(other, []byte(`{}`), 0o644))

	c, err := LoadCluster([]string{root}, LoadOptions{})
	require.NoError(t, err)
	require.Len(t, c.Ranks, 2)
	problems := strings.Join(c.Ranks[0].Problems, "\n")
	assert.Contains(t, problems, "communication_matrix.json: "+itoa64(fi.Size())+" bytes: over the 0 MiB this reader holds in memory")
	assert.NotContains(t, strings.Join(c.Ranks[1].Problems, "\n"), "holds in memory")

	data, err := os.ReadFile(matrix)
	require.NoError(t, err)
	_, err = ParseCommMatrixJSON(bytes.NewBuffer(data), "m.json")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "m.json: more than "+itoa64(maxJSONTreeBytes)+" bytes: over the")
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
