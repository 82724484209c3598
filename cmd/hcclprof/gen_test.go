package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGenOmit: --omit trace writes the summaries without the device timelines and
// records the omission; --omit none overrides a scenario's omit.
func TestGenOmit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	_, errOut, code := runBin(t, "gen", "demo-2node-8rank", "-o", dir, "--omit", "trace")
	require.Equal(t, 0, code, errOut)
	traces, _ := filepath.Glob(filepath.Join(dir, "*_ascend_pt", "ASCEND_PROFILER_OUTPUT", "trace_view.json"))
	assert.Empty(t, traces)
	steps, _ := filepath.Glob(filepath.Join(dir, "*_ascend_pt", "ASCEND_PROFILER_OUTPUT", "step_trace_time.csv"))
	assert.Len(t, steps, 8)
	var truth struct {
		Omitted  []string `json:"omitted"`
		Scenario struct {
			Omit []string `json:"omit"`
		} `json:"scenario"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "ground_truth.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &truth))
	assert.Equal(t, []string{"trace"}, truth.Omitted)
	assert.Equal(t, []string{"trace"}, truth.Scenario.Omit)

	// A scenario file that omits the trace, overridden by --omit none.
	sc := filepath.Join(t.TempDir(), "s.yaml")
	require.NoError(t, os.WriteFile(sc, []byte("ranks: 2\nsteps: 1\nmodel: {gradient_bytes: 1000000, forward_ms: 1, backward_ms: 2, kernel_us: 500}\nomit: [trace]\n"), 0o644))
	for _, tc := range []struct {
		args   []string
		traces int
	}{{nil, 0}, {[]string{"--omit", "none"}, 2}} {
		out := filepath.Join(t.TempDir(), "c")
		_, errOut, code := runBin(t, append([]string{"gen", sc, "-o", out}, tc.args...)...)
		require.Equal(t, 0, code, errOut)
		traces, _ := filepath.Glob(filepath.Join(out, "*_ascend_pt", "ASCEND_PROFILER_OUTPUT", "trace_view.json"))
		assert.Len(t, traces, tc.traces, "%v", tc.args)
	}
	_, errOut, code = runBin(t, "gen", "demo-2node-8rank", "-o", t.TempDir(), "--omit", "kernels")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `omit "kernels"`)
}
