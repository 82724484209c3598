package parser_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/parser"
	"github.com/hcclprof/hcclprof/profile"
)

// writeMsprofDBProf builds an msprof --type=db PROF directory from a generated torch_npu
// db: the unified db has the same schema (docs/formats.md §7.1) without PYTORCH_API (the CLI
// profiles no framework), at the PROF root as msprof_{14 digits}.db, beside a device
// folder with its info.json, analyze/communication_analyzer.db and a text export that
// must be ignored.
func writeMsprofDBProf(t *testing.T, rank0 string, withAnalysis bool) string {
	t.Helper()
	prof := filepath.Join(t.TempDir(), "PROF_000001_20250109074733000_ABCDEFGHIJKLMNOP")
	db := filepath.Join(prof, "msprof_20250109074800.db")
	copyFile(t, filepath.Join(rank0, "ASCEND_PROFILER_OUTPUT", "ascend_pytorch_profiler_0.db"), db)
	execDB(t, db, "DROP TABLE PYTORCH_API", "DROP TABLE STEP_TIME")
	require.NoError(t, os.MkdirAll(filepath.Join(prof, "device_0"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(prof, "device_0", "info.json.0"), []byte(`{"rank_id": 5, "hostUid": "h1"}`), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(prof, "mindstudio_profiler_output"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(prof, "mindstudio_profiler_output", "msprof_20250109074800.json"), []byte("[]"), 0o644))
	if withAnalysis {
		copyFile(t, filepath.Join(rank0, "ASCEND_PROFILER_OUTPUT", "analysis.db"), filepath.Join(prof, "analyze", "communication_analyzer.db"))
	}
	return prof
}

func TestMsprofUnifiedDB(t *testing.T) {
	_, rank0 := writeDemoDB(t)
	ref, err := parser.LoadCluster([]string{rank0}, parser.LoadOptions{})
	require.NoError(t, err)
	want := ref.Ranks[0]

	prof := writeMsprofDBProf(t, rank0, true)
	c, err := parser.LoadCluster([]string{prof}, parser.LoadOptions{})
	require.NoError(t, err)
	require.Len(t, c.Ranks, 1)
	r := c.Ranks[0]
	assert.Equal(t, profile.FormatMsprofDB, r.Format)
	assert.Equal(t, 5, r.Rank, "from info.json.0's rank_id")
	assert.Empty(t, r.Problems)
	assert.Equal(t, "Ascend910B", r.Info.ChipName)
	assert.Contains(t, r.FilesUsed, "msprof_20250109074800.db")
	assert.Contains(t, r.FilesUsed, "analyze/communication_analyzer.db")
	assert.Contains(t, r.FilesIgnored, "mindstudio_profiler_output", "the text export beside the db is not read")
	// The same device tasks, ops and HCCL tasks as the torch_npu db it came from; no
	// step markers (msprof marks none in an op-based run).
	assert.Equal(t, want.Compute, r.Compute)
	assert.Equal(t, want.CommOps, r.CommOps)
	assert.Equal(t, want.CommTasks, r.CommTasks)
	assert.Empty(t, r.Steps)
	assert.Equal(t, len(want.CommStats), len(r.CommStats), "the profiler's per-op figures from communication_analyzer.db")

	// The whole run as one step: Computing and Communication are the unions of the
	// same intervals, so they cover at least the stepped figures of the reference.
	res := analysis.Analyze(c, analysis.Options{})
	require.Len(t, res.Ranks[0].Steps, 1)
	whole := res.Ranks[0].Steps[0]
	refRes := analysis.Analyze(ref, analysis.Options{})
	var comp, comm int64
	for _, st := range refRes.Ranks[0].Steps {
		comp += st.ComputingNs
		comm += st.CommunicationNs
	}
	assert.GreaterOrEqual(t, whole.ComputingNs, comp)
	assert.InDelta(t, float64(comm), float64(whole.CommunicationNs), 0.02*float64(comm))
	require.NotEmpty(t, res.Communication.Ops)
	assert.Equal(t, "profiler", res.Communication.Ops[0].Source)
}

func TestMsprofUnifiedDBCorrupt(t *testing.T) {
	_, rank0 := writeDemoDB(t)
	prof := writeMsprofDBProf(t, rank0, false)
	db := filepath.Join(prof, "msprof_20250109074800.db")
	b, err := os.ReadFile(db)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(db, b[:len(b)/3], 0o644))
	c, err := parser.LoadCluster([]string{prof}, parser.LoadOptions{})
	require.NoError(t, err)
	require.Len(t, c.Ranks, 1)
	r := c.Ranks[0]
	require.NotEmpty(t, r.Problems)
	assert.True(t, strings.Contains(strings.Join(r.Problems, "\n"), "msprof_20250109074800.db"), "the problem names the file: %v", r.Problems)
}
