package parser

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/realdata"
	"github.com/hcclprof/hcclprof/profile"
)

// realCopy copies a realdata dataset into a temporary directory, for a test to damage.
func realCopy(t *testing.T, dataset string) string {
	t.Helper()
	src := realdata.Path(t, dataset)
	dst := filepath.Join(t.TempDir(), dataset)
	msprofCopyTree(t, src, dst)
	return dst
}

// editFile rewrites a file of a test's copy.
func editFile(t *testing.T, path string, edit func(string) string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	out := edit(string(b))
	require.NotEqual(t, string(b), out, "the edit changed nothing in %s", path)
	require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
}

func rankNumbered(t *testing.T, c *profile.Cluster, n int) *profile.Rank {
	t.Helper()
	for _, r := range c.Ranks {
		if r.Rank == n {
			return r
		}
	}
	require.Failf(t, "no such rank", "rank %d not read", n)
	return nil
}

// TestStepTraceDuplicateColumn: a second Stage column placed before the real one was
// taken as the stage (a share of 0.41 for the profiler's 0.70). A column the header
// holds twice is refused, naming the file, the header line and both columns: the
// rank is incomplete.
func TestStepTraceDuplicateColumn(t *testing.T) {
	dir := realCopy(t, "imagenet-2rank-level0")
	st := filepath.Join(dir, "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT", "step_trace_time.csv")
	editFile(t, st, func(s string) string {
		lines := strings.SplitAfter(s, "\n")
		lines[0] = "Stage," + lines[0]
		lines[1] = "200000," + lines[1]
		return strings.Join(lines, "")
	})
	c, err := LoadCluster([]string{dir}, LoadOptions{})
	require.NoError(t, err)
	r0, r1 := rankNumbered(t, c, 0), rankNumbered(t, c, 1)
	assert.Empty(t, r1.Problems)
	require.NotEmpty(t, r0.Problems)
	assert.Contains(t, strings.Join(r0.Problems, "\n"), st+":1: column \"Stage\" appears twice in the header (columns 1 and 8)")
	for _, row := range r0.StepTrace {
		assert.NotEqual(t, int64(200_000_000), row.StageNs, "the first Stage column was taken")
	}

	// The same for the table read alone.
	_, err = ParseStepTraceCSV(strings.NewReader("Stage,"+stHeader2024+"\n1,"+stRow2024+"\n"), "st.csv")
	requireSyntaxError(t, err, "st.csv", "appears twice")
}
