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

	"github.com/hcclprof/hcclprof/internal/jsonx"
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
	old := jsonx.MaxTreeBytes
	jsonx.MaxTreeBytes = fi.Size() - 1
	t.Cleanup(func() { jsonx.MaxTreeBytes = old })
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
	_, err = parseCommMatrixJSON(bytes.NewBuffer(data), "m.json")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "m.json: more than "+itoa64(jsonx.MaxTreeBytes)+" bytes: over the")
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

// msprof-analyze's cluster_communication.json and cluster_communication_matrix.json
// hold every rank's ops of a cluster (gigabytes on a large one): they are streamed,
// one rank's entry held at a time, and a file past the tree bound is read whole. They
// were read into a tree and refused past it.
func TestClusterJSONStreamedPastTreeBound(t *testing.T) {
	old := jsonx.MaxTreeBytes
	jsonx.MaxTreeBytes = 16
	t.Cleanup(func() { jsonx.MaxTreeBytes = old })
	comm := `{"(0, 1)": {"step40": {"hcom_allReduce__1_0_1@77": {
	  "0": {"Communication Time Info": {"Start Timestamp(us)": 1000.5, "Elapse Time(ms)": 2.5, "Transit Time(ms)": 1.5, "Wait Time(ms)": 1.0, "Synchronization Time(ms)": 0.5, "Idle Time(ms)": 0}},
	  "1": {"Communication Time Info": {"Start Timestamp(us)": 1000.5, "Elapse Time(ms)": 2.0, "Transit Time(ms)": 1.5, "Wait Time(ms)": 0.5, "Synchronization Time(ms)": 0, "Idle Time(ms)": 0}}}}}}`
	var p summaryParts
	require.NoError(t, parseClusterCommJSON(strings.NewReader(comm), clusterCommJSON, &p))
	require.Len(t, p.ops, 2)
	assert.Equal(t, 1, p.ops[1].Rank)
	assert.Equal(t, int64(2_000_000), p.ops[1].Op.ElapseNs)
	assert.Equal(t, "77", p.ops[1].Op.Group)
	assert.Equal(t, []int{0, 1}, p.setGroups["77"].Ranks)

	matrix := `{"(0, 1)": {"step40": {"allreduce-top1@77": {
	  "0-1": {"Transport Type": "HCCS", "Transit Size(MB)": 4.0, "Transit Time(ms)": 0.25, "Bandwidth(GB/s)": 16.0, "Op Name": "hcom_allReduce__1_0_1"}}}}}`
	p = summaryParts{}
	require.NoError(t, parseClusterMatrixJSON(strings.NewReader(matrix), clusterCommMatrixJSON, &p))
	require.Len(t, p.links, 1)
	assert.Equal(t, 0, p.links[0].SrcRank)
	assert.Equal(t, 1, p.links[0].DstRank)
	assert.Equal(t, int64(4_000_000), p.links[0].Link.Bytes, "the profiler's MB (scaledOf)")

	// Damage is still placed in the file.
	err := parseClusterCommJSON(strings.NewReader(comm[:len(comm)-3]), clusterCommJSON, &summaryParts{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), clusterCommJSON)
}
