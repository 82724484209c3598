package parser

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/realdata"
)

// TestUntimedDuplicateRankFlagged: two plainly named rank directories that both claim
// rank 1 (nothing in their names tells a re-run from another rank) are both read and
// both incomplete, naming both directories; one was dropped with a note and rank 1
// shown with the other's figures, exit 0.
func TestUntimedDuplicateRankFlagged(t *testing.T) {
	src := realdata.Path(t, "imagenet-2rank-level1")
	root := t.TempDir()
	a, b := filepath.Join(root, "rank1_a"), filepath.Join(root, "rank1_b")
	require.NoError(t, os.CopyFS(a, os.DirFS(filepath.Join(src, "rank0_ascend_pt"))))
	require.NoError(t, os.CopyFS(b, os.DirFS(filepath.Join(src, "rank1_ascend_pt"))))
	info, err := os.ReadFile(filepath.Join(a, "profiler_info_0.json"))
	require.NoError(t, err)
	require.Contains(t, string(info), `"rank_id": 0`)
	require.NoError(t, os.Remove(filepath.Join(a, "profiler_info_0.json")))
	require.NoError(t, os.WriteFile(filepath.Join(a, "profiler_info_1.json"), []byte(strings.Replace(string(info), `"rank_id": 0`, `"rank_id": 1`, 1)), 0o644))

	c, err := LoadCluster([]string{root}, LoadOptions{})
	require.NoError(t, err)
	require.Len(t, c.Ranks, 2, "both are read")
	for _, r := range c.Ranks {
		joined := strings.Join(r.Problems, "\n")
		assert.Contains(t, joined, "rank 1 is claimed by both "+a+" and "+b, "rank %d", r.Rank)
	}
	assert.NotContains(t, strings.Join(c.Notes, "\n"), "duplicate of rank 1")
}
