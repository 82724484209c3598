package main

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/realdata"
)

// Issue 36 item 1: a 2024 torch_npu db export whose step table says 2–20% less
// Communication than its own COMMUNICATION_OP rows sum to exited 3, though the user
// holds the whole profile and can fix nothing. The real db export with its step
// table's communication lowered by 10% (Free raised to keep Stage): the profiler
// disagrees with itself, its step table is reported, a warning says so, exit 0.
// The control lowers Computing instead: hcclprof's own classification is then in
// doubt, and the rank stays incomplete (exit 3).
func TestProfilerDisagreeingWithItselfIsAWarning(t *testing.T) {
	for _, tc := range []struct {
		name   string
		update string
		code   int
	}{
		{"communication", "UPDATE StepTraceTime SET free = free + 0.1*communication_not_overlapped, communication = 0.9*communication, communication_not_overlapped = 0.9*communication_not_overlapped, communication_not_overlapped_and_exclude_receive = 0.9*communication_not_overlapped_and_exclude_receive", 0},
		{"computing", "UPDATE StepTraceTime SET free = free + 0.1*computing, computing = 0.9*computing", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := filepath.Join(t.TempDir(), "run")
			require.NoError(t, os.CopyFS(run, os.DirFS(realdata.Path(t, "imagenet-2rank-db"))))
			dbs, err := filepath.Glob(filepath.Join(run, "*", "ASCEND_PROFILER_OUTPUT", "analysis.db"))
			require.NoError(t, err)
			require.NotEmpty(t, dbs)
			for _, db := range dbs {
				conn, err := sql.Open("sqlite", db)
				require.NoError(t, err)
				_, err = conn.Exec(tc.update)
				require.NoError(t, err)
				require.NoError(t, conn.Close())
			}
			out, stderr, code := runCLI(t, "analyze", run)
			assert.Equal(t, tc.code, code, stderr)
			if tc.code == 0 {
				assert.Contains(t, out, "the profiler disagrees with itself; its step table is reported")
			}
		})
	}
}

// Issue 36 item 1: a link of msprof-analyze's communication matrix whose group's
// members are unknown made its rank incomplete (exit 3), though no figure rests on a
// link. The generated cluster output with a p2p op of an unknown group added to its
// matrix: a note, exit 0.
func TestUnattributedMatrixLinkIsANote(t *testing.T) {
	dir := t.TempDir()
	_, stderr, code := runCLI(t, "gen", "demo-2server-8rank", "-o", dir, "--cluster-output")
	require.Equal(t, 0, code, stderr)
	out := filepath.Join(dir, "cluster_analysis_output")
	path := filepath.Join(out, "cluster_communication_matrix.json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var matrix map[string]map[string]map[string]any
	require.NoError(t, json.Unmarshal(data, &matrix))
	var links any
	var step string
	for _, steps := range matrix {
		for s, ops := range steps {
			for _, l := range ops {
				step, links = s, l
				break
			}
			break
		}
		break
	}
	require.NotNil(t, links)
	matrix["p2p"] = map[string]map[string]any{step: {"hcom_send__999_0_1@99999": links}}
	data, err = json.Marshal(matrix)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))
	report, stderr, code := runCLI(t, "analyze", out)
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, report, "are not shown: their group's members are unknown")
}

// Issue 36 item 5: allreduce_share came from a kernel_details.csv cut short (0.005)
// while the per-op analysis beside it put far more of the step in AllReduce. The real
// Megatron run with each rank's kernel_details.csv cut to its first 39 rows: the
// AllReduce share is the uncut run's, and the disagreement is named.
func TestShortKernelDetailsDoesNotHideAllReduce(t *testing.T) {
	src := realdata.Path(t, "megatron-pp2dp2-2of4rank")
	share := func(dir string) (float64, []string) {
		out, stderr, code := runCLI(t, "analyze", dir, "--format", "json")
		require.Equal(t, 0, code, stderr)
		var rep struct {
			Summary struct {
				AllReduceShare float64 `json:"allreduce_share"`
			}
			Warnings []string
		}
		require.NoError(t, json.Unmarshal([]byte(out), &rep))
		return rep.Summary.AllReduceShare, rep.Warnings
	}
	whole, _ := share(src)
	run := filepath.Join(t.TempDir(), "run")
	require.NoError(t, os.CopyFS(run, os.DirFS(src)))
	kds, err := filepath.Glob(filepath.Join(run, "*", "ASCEND_PROFILER_OUTPUT", "kernel_details.csv"))
	require.NoError(t, err)
	require.Len(t, kds, 2)
	for _, kd := range kds {
		data, err := os.ReadFile(kd)
		require.NoError(t, err)
		lines := strings.SplitAfter(string(data), "\n")
		require.NoError(t, os.Chmod(kd, 0o644))
		require.NoError(t, os.WriteFile(kd, []byte(strings.Join(lines[:40], "")), 0o644))
	}
	cut, warnings := share(run)
	assert.InDelta(t, whole, cut, 1e-6)
	assert.Greater(t, cut, 0.1)
	found := false
	for _, w := range warnings {
		found = found || strings.Contains(w, "op records disagree on the AllReduce time")
	}
	assert.True(t, found, "%v", warnings)
}
