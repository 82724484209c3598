package parser

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/realdata"
)

// Issue 36: a lone kernel_details.csv with its Step Id and HCCL rows was refused
// ("no step found"). It is the rank's timeline when nothing else gives one: each step
// the span of its tasks. The expected figures are computed here from the CSV with
// the standard library, independently of the parser.
func TestLoneKernelDetailsIsATimeline(t *testing.T) {
	path := realdata.Path(t, "torchnpu-1rank-kernels", "kernel_details.csv")
	f, err := os.Open(path)
	require.NoError(t, err)
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	require.NoError(t, err)
	col := map[string]int{}
	for i, c := range rows[0] {
		col[c] = i
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	comm, compute := 0, 0
	for _, row := range rows[1:] {
		start, err := strconv.ParseFloat(strings.TrimSpace(row[col["Start Time(us)"]]), 64)
		require.NoError(t, err)
		dur, err := strconv.ParseFloat(row[col["Duration(us)"]], 64)
		require.NoError(t, err)
		lo, hi = math.Min(lo, start), math.Max(hi, start+dur)
		if row[col["Accelerator Core"]] == "HCCL" {
			comm++
		} else {
			compute++
		}
	}

	dir := t.TempDir()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lone := filepath.Join(dir, "kernel_details.csv")
	require.NoError(t, os.WriteFile(lone, data, 0o644))
	cl, err := LoadCluster([]string{dir}, LoadOptions{})
	require.NoError(t, err)
	ranks := cl.Ranks
	require.Len(t, ranks, 1)
	r := ranks[0]
	assert.Empty(t, r.Problems)
	require.True(t, r.HasTimeline)
	require.Len(t, r.Steps, 1)
	assert.Equal(t, 1, r.Steps[0].Step)
	assert.InDelta(t, (hi-lo)/1e3, float64(r.Steps[0].DurNs())/1e6, 1e-3, "the step spans its tasks (ms)")
	assert.Len(t, r.CommOps, comm)
	assert.Len(t, r.Compute, compute)
	require.NotEmpty(t, r.Notes)
	assert.Contains(t, r.Notes[0], "Step Id")

	// Steps whose tasks interleave cannot be told apart: a problem, not a guess.
	lines := strings.Split(string(data), "\n")
	for i := 2; i < len(lines); i += 2 {
		if strings.HasPrefix(lines[i], "1,") {
			lines[i] = "2," + lines[i][2:]
		}
	}
	require.NoError(t, os.WriteFile(lone, []byte(strings.Join(lines, "\n")), 0o644))
	cl, err = LoadCluster([]string{dir}, LoadOptions{})
	require.NoError(t, err)
	ranks = cl.Ranks
	require.Len(t, ranks, 1)
	require.NotEmpty(t, ranks[0].Problems)
	assert.Contains(t, ranks[0].Problems[0], "interleave")
}

// Issue 36: a lone op_summary (msprof's task list) with Step Id and HCCL rows was
// refused. Named alone, or as the only file of a copied export, it is the device's
// timeline; named alone, the timeline beside it is not read.
func TestLoneOpSummaryIsATimeline(t *testing.T) {
	path := realdata.Path(t, "torchnpu-1rank-kernels", "kernel_details.csv")
	f, err := os.Open(path)
	require.NoError(t, err)
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	require.NoError(t, err)
	// The same tasks under msprof's column names, with its Device_id first.
	renamed := map[string]string{"Name": "Op Name", "Accelerator Core": "Task Type", "Start Time(us)": "Task Start Time(us)", "Duration(us)": "Task Duration(us)"}
	var b strings.Builder
	w := csv.NewWriter(&b)
	for i, row := range rows {
		out := append([]string{"0"}, row...)
		if i == 0 {
			out[0] = "Device_id"
			for j, c := range row {
				if n, ok := renamed[c]; ok {
					out[j+1] = n
				}
			}
		}
		require.NoError(t, w.Write(out))
	}
	w.Flush()
	dir := filepath.Join(t.TempDir(), "mindstudio_profiler_output")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	summary := filepath.Join(dir, "op_summary_20260101000000.csv")
	require.NoError(t, os.WriteFile(summary, []byte(b.String()), 0o644))
	for _, arg := range []string{dir, summary} {
		cl, err := LoadCluster([]string{arg}, LoadOptions{})
		require.NoError(t, err, arg)
		require.Len(t, cl.Ranks, 1)
		r := cl.Ranks[0]
		assert.Empty(t, r.Problems, arg)
		require.Len(t, r.Steps, 1, arg)
		assert.Equal(t, len(rows)-1, len(r.Compute)+len(r.CommOps), arg)
	}
}
