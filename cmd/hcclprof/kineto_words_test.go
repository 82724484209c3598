package main

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/realdata"
)

// Issue 36 item 8: a Kineto trace whose process group is named "world" was printed
// "world world", and inspect said its NCCL ops were sized while their bytes were null.
// The real trace, its group renamed "world" and its message sizes removed.
func TestKinetoWorldGroupAndUnsizedOps(t *testing.T) {
	src := realdata.Path(t, "kineto-nccl-a100-2gpu", "nccl_data.json.gz")
	f, err := os.Open(src)
	require.NoError(t, err)
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	var trace map[string]any
	require.NoError(t, json.NewDecoder(zr).Decode(&trace))
	f.Close()
	info := trace["distributedInfo"].(map[string]any)
	for _, pg := range info["pg_config"].([]any) {
		pg := pg.(map[string]any)
		pg["pg_name"], pg["pg_desc"] = "world", "world"
	}
	for _, ev := range trace["traceEvents"].([]any) {
		args, _ := ev.(map[string]any)["args"].(map[string]any)
		if args == nil {
			continue
		}
		if _, ok := args["Process Group Name"]; ok {
			args["Process Group Name"], args["Process Group Description"] = "world", "world"
		}
		delete(args, "In msg nelems")
		delete(args, "Out msg nelems")
		delete(args, "dtype")
	}
	dir := t.TempDir()
	out, err := os.Create(filepath.Join(dir, "rank0.pt.trace.json.gz"))
	require.NoError(t, err)
	zw := gzip.NewWriter(out)
	require.NoError(t, json.NewEncoder(zw).Encode(trace))
	require.NoError(t, zw.Close())
	require.NoError(t, out.Close())

	report, stderr, code := runCLI(t, "analyze", dir)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, report, "world")
	assert.NotContains(t, report, "world world")
	ins, stderr, code := runCLI(t, "inspect", dir)
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, ins, "sized from", "no op carries a size")
	assert.Contains(t, ins, "sizes are not in the trace")
	assert.False(t, strings.Contains(ins, "world world"))
}

// Issue 36 item 8: inspect said "Problems 0" and claimed a step breakdown for a rank
// that analyze (and inspect's own exit code) makes incomplete. The real Level0 run
// with rank 0's step table emptied.
func TestInspectNamesWhatAnalyzeFindsIncomplete(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run")
	require.NoError(t, os.CopyFS(run, os.DirFS(realdata.Path(t, "imagenet-2rank-level0"))))
	steps, err := filepath.Glob(filepath.Join(run, "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT", "step_trace_time.csv"))
	require.NoError(t, err)
	require.Len(t, steps, 1)
	data, err := os.ReadFile(steps[0])
	require.NoError(t, err)
	header, _, _ := strings.Cut(string(data), "\n")
	require.NoError(t, os.WriteFile(steps[0], []byte(header+"\n"), 0o644))

	out, _, code := runCLI(t, "inspect", run, "--format", "json")
	assert.Equal(t, 3, code)
	var rep struct {
		Ranks []struct {
			Rank         int
			Problems     []string
			Capabilities []struct {
				Name      string
				Available bool
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Ranks, 2)
	assert.NotEmpty(t, rep.Ranks[0].Problems, "rank 0 is incomplete")
	assert.Empty(t, rep.Ranks[1].Problems)
	for _, c := range rep.Ranks[0].Capabilities {
		if c.Name == "step_breakdown" {
			assert.False(t, c.Available)
		}
	}
}

// Issue 36 item 7: on the real CANN 8.3 Level2 run the profiler's op-level Transit is
// 0 while the op's HCCS transport carried 23.6 ms; the diagnosis uses the transport's
// figure and the JSON showed only transit_us 0. It now gives the figure the analysis
// uses and where it came from.
func TestJSONGivesTheMovingTimeTheAnalysisUses(t *testing.T) {
	out, stderr, code := runCLI(t, "analyze", realdata.Path(t, "megatron-pp2dp2-2of4rank"), "--format", "json")
	require.Equal(t, 0, code, stderr)
	var rep struct {
		Communication struct {
			Ops []struct {
				Rank         int
				Name         string
				TransitUs    *float64 `json:"transit_us"`
				MovingUs     *float64 `json:"moving_us"`
				MovingSource *string  `json:"moving_source"`
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	found := false
	for _, o := range rep.Communication.Ops {
		if o.Rank == 0 && o.Name == "hcom_reduceScatter__097_4_1" {
			found = true
			require.NotNil(t, o.TransitUs)
			assert.Equal(t, 0.0, *o.TransitUs, "the profiler's figure, as it wrote it")
			require.NotNil(t, o.MovingUs)
			assert.InDelta(t, 23565.6, *o.MovingUs, 0.01)
			require.NotNil(t, o.MovingSource)
			assert.Equal(t, "transports", *o.MovingSource)
		}
	}
	assert.True(t, found)
}
