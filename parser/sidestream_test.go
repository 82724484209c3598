package parser

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/realdata"
)

// Issue 36 item 2: a 2024 torch_npu export put HCCL's tasks on side streams that no
// HCCL task row names, typed "Other" and named as no HCCL task is; read by type they
// were computation (Computing +664%). A stream every task of which lies inside an
// HCCL op is HCCL's. The real Level1 trace with such a stream added, tasks inside
// each of its ops; and, as a control, the same stream with one task outside the ops,
// which then computes.
func TestHCCLSideStreamIsNotCompute(t *testing.T) {
	src := realdata.Path(t, "imagenet-2rank-level1", "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT", "trace_view.json")
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	var events []map[string]any
	require.NoError(t, json.Unmarshal(data, &events))
	base, err := parseTraceView(bytes.NewReader(data), src)
	require.NoError(t, err)

	var hwPid any
	var opStarts, opEnds []float64
	for _, ev := range events {
		if ev["ph"] == "M" && ev["name"] == "process_name" {
			if args, _ := ev["args"].(map[string]any); args["name"] == "Ascend Hardware" {
				hwPid = ev["pid"]
			}
		}
	}
	require.NotNil(t, hwPid)
	for _, ev := range events {
		name, _ := ev["name"].(string)
		if ev["ph"] == "X" && len(name) > 5 && name[:5] == "hcom_" && ev["pid"] != hwPid {
			var ts float64
			_, err := fmt.Sscan(ev["ts"].(string), &ts)
			require.NoError(t, err)
			dur := ev["dur"].(float64)
			if dur > 10 {
				opStarts, opEnds = append(opStarts, ts), append(opEnds, ts+dur)
			}
		}
	}
	require.NotEmpty(t, opStarts)
	side := func(outside bool) []map[string]any {
		var out []map[string]any
		task := func(ts float64) map[string]any {
			return map[string]any{"name": "sideTask", "pid": hwPid, "tid": 77, "ts": fmt.Sprintf("%.3f", ts), "dur": 1.0, "ph": "X",
				"args": map[string]any{"Task Type": "Other", "Physic Stream Id": 77, "Model Id": 4294967295}}
		}
		for i := range opStarts {
			for k := 1; k <= 3; k++ {
				out = append(out, task(opStarts[i]+float64(k)*(opEnds[i]-opStarts[i])/5))
			}
		}
		if outside {
			out = append(out, task(opStarts[0]-50))
		}
		return out
	}
	parse := func(extra []map[string]any) *traceTimeline {
		all := append(append([]map[string]any{}, events...), extra...)
		b, err := json.Marshal(all)
		require.NoError(t, err)
		path := filepath.Join(t.TempDir(), "trace_view.json")
		require.NoError(t, os.WriteFile(path, b, 0o644))
		f, err := os.Open(path)
		require.NoError(t, err)
		defer f.Close()
		tl, err := parseTraceView(f, path)
		require.NoError(t, err)
		return tl
	}
	inside := parse(side(false))
	assert.Len(t, inside.Compute, len(base.Compute), "HCCL's side-stream tasks are not computation")
	control := parse(side(true))
	assert.Len(t, control.Compute, len(base.Compute)+3*len(opStarts)+1, "a stream that also runs outside the ops computes")
}
