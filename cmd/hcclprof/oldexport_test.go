package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/realdata"
)

// oldExportCopy builds, in a temporary directory, imagenet-2rank-level1 as a 2024
// torch_npu Level1 text export wrote it: every Ascend Hardware task typed "Other",
// HCCL's own tasks (Notify_Wait, Memcpy, Reduce_Inline, ...) repeated in the hardware
// layer, no Device_id column in step_trace_time.csv, no version fields, no
// Bandwidth(GB/s) in communication.json's Total Op Info. hcclTaskRow gives the
// hardware-layer copy of an HCCL task: its row (tid) and name, from the task's
// stream and name.
func oldExportCopy(t *testing.T, hcclTaskRow func(stream any, name string) (any, string)) string {
	t.Helper()
	src := realdata.Path(t, "imagenet-2rank-level1")
	dst := filepath.Join(t.TempDir(), "imagenet-2024")
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	require.NoError(t, filepath.WalkDir(dst, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		require.NoError(t, os.Chmod(path, 0o644))
		switch name := d.Name(); {
		case name == "trace_view.json":
			rewriteTrace(t, path, hcclTaskRow)
		case name == "step_trace_time.csv":
			dropCSVColumn(t, path, "Device_id")
		case name == "communication.json":
			rewriteJSON(t, path, func(v any) any { return dropKeys(v, false) })
		case strings.HasPrefix(name, "profiler_info") || name == "profiler_metadata.json":
			rewriteJSON(t, path, dropVersions)
		}
		return nil
	}))
	return dst
}

func rewriteTrace(t *testing.T, path string, hcclTaskRow func(stream any, name string) (any, string)) {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var events []map[string]any
	require.NoError(t, json.Unmarshal(b, &events))
	procs := map[any]string{}
	for _, e := range events {
		if e["ph"] == "M" && e["name"] == "process_name" {
			procs[e["pid"]] = e["args"].(map[string]any)["name"].(string)
		}
	}
	var hwPid any
	for pid, name := range procs {
		if name == "Ascend Hardware" {
			hwPid = pid
		}
	}
	require.NotNil(t, hwPid)
	var copies []map[string]any
	for _, e := range events {
		if e["ph"] != "X" {
			continue
		}
		args, _ := e["args"].(map[string]any)
		switch procs[e["pid"]] {
		case "Ascend Hardware":
			args["Task Type"] = "Other"
		case "HCCL":
			if args == nil || args["task type"] == nil {
				continue // the op rows
			}
			tid, name := hcclTaskRow(args["stream id"], e["name"].(string))
			copies = append(copies, map[string]any{"name": name, "pid": hwPid, "tid": tid, "ts": e["ts"], "dur": e["dur"],
				"ph": "X", "args": map[string]any{"Task Type": "Other"}})
		}
	}
	require.NotEmpty(t, copies)
	out, err := json.Marshal(append(events, copies...))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, out, 0o644))
}

func dropCSVColumn(t *testing.T, path, col string) {
	f, err := os.Open(path)
	require.NoError(t, err)
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	require.NoError(t, err)
	idx := -1
	for i, h := range rows[0] {
		if h == col {
			idx = i
		}
	}
	if idx >= 0 {
		for i := range rows {
			rows[i] = append(rows[i][:idx], rows[i][idx+1:]...)
		}
	}
	out, err := os.Create(path)
	require.NoError(t, err)
	w := csv.NewWriter(out)
	require.NoError(t, w.WriteAll(rows))
	require.NoError(t, out.Close())
}

func rewriteJSON(t *testing.T, path string, f func(any) any) {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(b, &v))
	out, err := json.Marshal(f(v))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, out, 0o644))
}

// dropKeys removes Bandwidth(GB/s) from the Total Op Info entries.
func dropKeys(v any, inTotal bool) any {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if inTotal && k == "Bandwidth(GB/s)" {
				delete(x, k)
				continue
			}
			x[k] = dropKeys(c, inTotal || k == "Total Op Info")
		}
	case []any:
		for i := range x {
			x[i] = dropKeys(x[i], inTotal)
		}
	}
	return v
}

// dropVersions removes every member whose name mentions a version.
func dropVersions(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if strings.Contains(strings.ToLower(k), "version") {
				delete(x, k)
				continue
			}
			x[k] = dropVersions(c)
		}
	case []any:
		for i := range x {
			x[i] = dropVersions(x[i])
		}
	}
	return v
}

type jsonAnalyze struct {
	Summary struct {
		CommShare  float64 `json:"comm_share"`
		Incomplete bool    `json:"incomplete"`
	}
	Ranks []struct {
		Rank       int
		Source     string
		Incomplete bool
		Steps      []map[string]any
	}
	Warnings []string
}

// The 2024 export of the imagenet job: HCCL's tasks in the hardware layer, all typed
// "Other". They are told from computation by their stream (the one HCCL's tasks and
// ops run on) and their names, so the recomputation is the profiler's.
func TestOldExportCommTasksAreNotCompute(t *testing.T) {
	dir := oldExportCopy(t, func(stream any, name string) (any, string) { return stream, name })
	out, errOut, code := runCLI(t, "analyze", dir, "--format", "json", "--fail-on", "comm_share>30%")
	assert.Equal(t, 1, code, "the gate fails, the input is complete: %s", errOut)
	var rep jsonAnalyze
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Ranks, 2)
	share := map[int]float64{0: 0.7465, 1: 0.7305}
	for _, rr := range rep.Ranks {
		require.Len(t, rr.Steps, 1)
		assert.InDelta(t, share[rr.Rank], rr.Steps[0]["comm_share"], 0.00005, "rank %d", rr.Rank)
		assert.Equal(t, "timeline", rr.Source)
		assert.False(t, rr.Incomplete)
	}
	assert.InDelta(t, (101963.203+96359.047)/(136581.0+131912.5), rep.Summary.CommShare, 1e-5)
	for _, w := range rep.Warnings {
		assert.NotContains(t, w, "recomputed", "the recomputation agrees with the profiler")
	}
}

// Issue 36 item 2: HCCL's tasks on a side stream that no HCCL task row names, under
// names hcclprof does not know, every one inside an HCCL op: the stream is HCCL's, and
// the recomputation is the profiler's (it was counted as computation, exit 3).
func TestOldExportSideStreamIsHCCLs(t *testing.T) {
	dir := oldExportCopy(t, func(stream any, name string) (any, string) { return 90, "Task_" + name })
	out, errOut, code := runCLI(t, "analyze", dir, "--format", "json", "--fail-on", "comm_share>30%")
	assert.Equal(t, 1, code, "the gate fails, the input is complete: %s", errOut)
	var rep jsonAnalyze
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Ranks, 2)
	for _, rr := range rep.Ranks {
		assert.Equal(t, "timeline", rr.Source)
		assert.False(t, rr.Incomplete)
	}
	assert.InDelta(t, (101963.203+96359.047)/(136581.0+131912.5), rep.Summary.CommShare, 1e-5)
}

// When hcclprof cannot tell the communication tasks from computation (here: on the
// compute stream, under names it does not know), its recomputation is far from
// step_trace_time.csv. The profiler's figures are reported for the rank, the
// disagreement is a problem of the rank, and the run is incomplete: exit 3, or the
// gate's verdict on the profiler's figures with --allow-partial.
func TestOldExportDisagreementReportsProfilerFigures(t *testing.T) {
	dir := oldExportCopy(t, func(stream any, name string) (any, string) { return 2, "Task_" + name })
	_, errOut, code := runCLI(t, "analyze", dir, "--fail-on", "comm_share>30%")
	assert.Equal(t, 3, code, "incomplete: %s", errOut)
	assert.Contains(t, errOut, "input incomplete")

	out, errOut, code := runCLI(t, "analyze", dir, "--format", "json", "--fail-on", "comm_share>30%", "--allow-partial")
	assert.Equal(t, 1, code, "the gate fails on the profiler's figures: %s", errOut)
	var rep jsonAnalyze
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.True(t, rep.Summary.Incomplete)
	require.Len(t, rep.Ranks, 2)
	share := map[int]float64{0: 0.7465, 1: 0.7305}
	for _, rr := range rep.Ranks {
		assert.Equal(t, "step_trace_time.csv", rr.Source)
		assert.True(t, rr.Incomplete)
		require.Len(t, rr.Steps, 1)
		assert.InDelta(t, share[rr.Rank], rr.Steps[0]["comm_share"], 0.00005, "rank %d", rr.Rank)
	}
	assert.InDelta(t, (101963.203+96359.047)/(136581.0+131912.5), rep.Summary.CommShare, 1e-5)
	var problem string
	for _, w := range rep.Warnings {
		if strings.HasPrefix(w, "rank 0: ") && strings.Contains(w, "Communication(Not Overlapped) recomputed") {
			problem = w
		}
	}
	require.NotEmpty(t, problem, "%v", rep.Warnings)
	assert.Contains(t, problem, filepath.Join("rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT", "step_trace_time.csv")+", step 50:")
	assert.Contains(t, problem, "the profiler's is 101963.203 us")
}
