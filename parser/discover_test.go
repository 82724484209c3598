package parser

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/realdata"
	"github.com/hcclprof/hcclprof/profile"
)

func mkRank(t *testing.T, root, name string, rank int) string {
	t.Helper()
	dir := filepath.Join(root, name)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ascendOutput), 0o755))
	if rank >= 0 {
		info := `{"config": {"experimental_config": {"_profiler_level": "Level0"}}, "rank_id": ` + strconv.Itoa(rank) + `}`
		require.NoError(t, os.WriteFile(filepath.Join(dir, "profiler_info_"+strconv.Itoa(rank)+".json"), []byte(info), 0o644))
	}
	csv := "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,Communication(Not Overlapped and Exclude Receive),Preparing\n1,1,2,0,2,1,4,0,2,0\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, ascendOutput, "step_trace_time.csv"), []byte(csv), 0o644))
	return dir
}

func TestDiscoverClusterRoot(t *testing.T) {
	root := t.TempDir()
	mkRank(t, filepath.Join(root, "nodeB"), "host_2_20250101000000001_ascend_pt", 2)
	mkRank(t, filepath.Join(root, "nodeA"), "host_1_20250101000000001_ascend_pt", 0)
	old := mkRank(t, root, "host_1_20240101000000001_ascend_pt", 1)
	newer := mkRank(t, root, "host_1_20250101000000009_ascend_pt", 1)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "empty_ascend_pt"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(newer, ascendOutput, "memory_record.csv"), []byte("x"), 0o644))

	in, err := Discover([]string{root})
	require.NoError(t, err)
	require.Len(t, in.Ranks, 3)
	for i, r := range in.Ranks {
		assert.Equal(t, i, r.Rank)
	}
	assert.Equal(t, newer, in.Ranks[1].Dir, "the latest directory of a duplicated rank wins")
	assert.Contains(t, in.Notes, "duplicate rank 1: using "+newer+", ignoring "+old)
	assert.Contains(t, in.Notes, "skipped "+filepath.Join(root, "empty_ascend_pt")+": no ASCEND_PROFILER_OUTPUT/ inside")

	r := LoadRank(in.Ranks[1])
	assert.Equal(t, []string{filepath.Join(ascendOutput, "memory_record.csv")}, r.FilesIgnored)
	assert.Equal(t, "Level0", r.Info.ProfilerLevel)
	require.Len(t, r.StepTrace, 1)
	assert.Equal(t, 4.0, r.StepTrace[0].StageUs)

	c, err := LoadCluster([]string{root}, LoadOptions{Workers: 2})
	require.NoError(t, err)
	assert.Len(t, c.Ranks, 3)
	assert.Contains(t, c.Notes, "ignored files hcclprof does not read: memory_record.csv (1)")
}

func TestDiscoverUnrankedAndFiles(t *testing.T) {
	root := t.TempDir()
	a := mkRank(t, root, "a_ascend_pt", -1)
	ranked := mkRank(t, root, "b_ascend_pt", 3)
	stray := filepath.Join(root, "notes.txt")
	require.NoError(t, os.WriteFile(stray, []byte("hi"), 0o644))

	in, err := Discover([]string{a, ranked, stray})
	require.NoError(t, err)
	require.Len(t, in.Ranks, 2)
	assert.Equal(t, 3, in.Ranks[0].Rank)
	assert.Equal(t, 4, in.Ranks[1].Rank, "a rank without profiler_info is numbered after the known ones")
	assert.Contains(t, in.Notes, "ignored "+stray+": not a profiler file hcclprof reads")

	_, err = Discover([]string{t.TempDir()})
	assert.ErrorIs(t, err, ErrNothingFound)
}

// TestDiscoverEveryFormat finds, under one root, a torch_npu text rank, an msprof
// PROF directory and a Kineto trace, each read in its own format.
func TestDiscoverEveryFormat(t *testing.T) {
	kineto := realdata.Path(t, "kineto-nccl-a100-2gpu", "nccl_data.json.gz")
	prof := realdata.Path(t, "msprof-mindspore-alexnet")
	level1 := realdata.Path(t, "imagenet-2rank-level1", "rank1_ascend_pt")
	root := t.TempDir()
	require.NoError(t, os.CopyFS(filepath.Join(root, "npu", "rank1_ascend_pt"), os.DirFS(level1)))
	require.NoError(t, os.CopyFS(filepath.Join(root, "msprof"), os.DirFS(prof)))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "gpu"), 0o755))
	b, err := os.ReadFile(kineto)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "gpu", "worker0.1700000000000.pt.trace.json.gz"), b, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "gpu", "notes.json"), []byte(`{"a": 1}`), 0o644))

	c, err := LoadCluster([]string{root}, LoadOptions{})
	require.NoError(t, err)
	got := map[profile.Format]int{}
	for _, r := range c.Ranks {
		got[r.Format]++
		assert.Empty(t, r.Problems, "rank %d (%s)", r.Rank, r.Format)
	}
	// The torch_npu rank is 1; the msprof device's rank_id is 0 and the Kineto trace
	// says rank 0 too: one of the two rank-0 inputs is kept, the other named in a note.
	require.Len(t, c.Ranks, 2)
	assert.Equal(t, 1, got[profile.FormatTorchNPUText])
	assert.Equal(t, 1, got[profile.FormatMsprof]+got[profile.FormatKineto])
	joined := strings.Join(c.Notes, "\n")
	assert.Regexp(t, `duplicate rank 0: using .*(PROF_|pt\.trace\.json\.gz).*, ignoring .*(PROF_|pt\.trace\.json\.gz)`, joined)
	assert.Contains(t, joined, "mixed cluster")
}

func TestDiscoverSingleKinetoFile(t *testing.T) {
	kineto := realdata.Path(t, "kineto-nccl-a100-2gpu", "nccl_data.json.gz")
	in, err := Discover([]string{kineto})
	require.NoError(t, err)
	require.Len(t, in.Ranks, 1)
	assert.Equal(t, kineto, in.Ranks[0].Kineto)
	assert.Equal(t, 0, in.Ranks[0].Rank, "the rank comes from distributedInfo")
}
