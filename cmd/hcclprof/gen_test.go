package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGenOmit: --omit trace writes the summaries without the device timelines and
// records the omission; --omit none overrides a scenario's omit.
func TestGenOmit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	_, errOut, code := runCLI(t, "gen", "demo-2server-8rank", "-o", dir, "--omit", "trace")
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
		_, errOut, code := runCLI(t, append([]string{"gen", sc, "-o", out}, tc.args...)...)
		require.Equal(t, 0, code, errOut)
		traces, _ := filepath.Glob(filepath.Join(out, "*_ascend_pt", "ASCEND_PROFILER_OUTPUT", "trace_view.json"))
		assert.Len(t, traces, tc.traces, "%v", tc.args)
	}
	_, errOut, code = runCLI(t, "gen", "demo-2server-8rank", "-o", t.TempDir(), "--omit", "kernels")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `omit "kernels"`)
}

// TestGenRefusesHugeScenarios: scenarios that used to run out of memory or hang are
// refused at once (exit 2), naming the field and its limit, and write nothing.
func TestGenRefusesHugeScenarios(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		args       []string
		want       string
	}{
		{"100M ranks", "ranks: 100000000\n", nil, "ranks (line 1): 100000000 is above the limit of 65536"},
		{"1G ranks", "ranks: 1000000000\n", nil, "ranks (line 1): 1000000000 is above the limit of 65536"},
		{"1G steps", "ranks: 8\nsteps: 1000000000\n", nil, "steps (line 2): 1000000000 is above the limit of 10000"},
		{"ranks flag", "ranks: 8\n", []string{"--ranks", "100000000"}, "ranks: 100000000 is above the limit of 65536"},
		{"ranks × steps", "ranks: 65536\nsteps: 100\n", nil, "ranks × steps = 65536 × 100 = 6553600 is above the generator's limit of 1048576"},
		{"kernels", "ranks: 8\nmodel: {forward_ms: 100000, kernel_us: 1}\n", nil, "kernels per step on one rank"},
		{"bytes", "ranks: 4096\nsteps: 200\nmodel: {forward_ms: 60, kernel_us: 100}\n", nil, "above the limit of 64.0 GiB (--max-bytes raises it)"},
		{"bytes flag", "ranks: 8\nmodel: {forward_ms: 60}\n", []string{"--max-bytes", "1MB"}, "about 7.6 MiB in the text format, above the limit of 1000000 bytes"},
		{"bad flag", "ranks: 8\nmodel: {forward_ms: 60}\n", []string{"--max-bytes", "lots"}, `--max-bytes: "lots" is not a size`},
		{"negative steps flag", "ranks: 8\nmodel: {forward_ms: 60}\n", []string{"--steps", "-3"}, "--steps -3: must be at least 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := filepath.Join(t.TempDir(), "s.yaml")
			y := tc.yaml
			if !strings.Contains(y, "model") {
				y += "model: {forward_ms: 1}\n"
			}
			require.NoError(t, os.WriteFile(sc, []byte(y), 0o644))
			dir := filepath.Join(t.TempDir(), "c")
			var errOut string
			var code int
			allocated := allocatedBy(func() {
				_, errOut, code = runCLI(t, append([]string{"gen", sc, "-o", dir}, tc.args...)...)
			})
			assert.Equal(t, 2, code, errOut)
			assert.Contains(t, errOut, tc.want)
			t.Logf("allocated %d bytes", allocated)
			assert.Less(t, allocated, uint64(refusalBytes), "refused up front, before simulating")
			assert.NoDirExists(t, dir)
		})
	}
}

// refusalBytes bounds what a refused gen allocates: reading the scenario and its
// limits (about 150 KB), not simulating it (the smallest case here, 8 ranks for 7.6
// MiB of output, allocates about 50 MB when generated). A bound on the heap rather
// than on the clock, so that a busy machine does not fail the test.
const refusalBytes = 4 << 20

// allocatedBy is how many bytes fn allocated on the heap (the tests around it run
// one at a time).
func allocatedBy(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestGenCleansUpAfterFailure: a write that fails midway (a file stands where a
// rank's directory must go) leaves the --force directory as it was.
func TestGenCleansUpAfterFailure(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644))
	// The fifth rank's directory name, taken by a file.
	blocker := "node1_3001000_20250109074733000_ascend_pt"
	require.NoError(t, os.WriteFile(filepath.Join(dir, blocker), []byte("in the way"), 0o644))
	_, errOut, code := runCLI(t, "gen", "demo-2server-8rank", "-o", dir, "--force", "--workers", "1")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, blocker)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{blocker, "notes.txt"}, names, "only what was there before")
}

// TestGenOldBuiltinName: an Ascend built-in renamed from "2node" to "2server" is
// generated by its old name, the same files, and --list shows only the new name.
func TestGenOldBuiltinName(t *testing.T) {
	list, errOut, code := runCLI(t, "gen", "--list")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, list, "demo-2server-8rank ")
	// The old Ascend names are not listed ("node" stays in the NVIDIA built-ins' names,
	// as NVIDIA calls its servers).
	for _, old := range []string{"demo-2node-8rank", "healthy-2node-16rank", "slow-link-2node"} {
		assert.NotContains(t, list, old+" ")
	}

	oldShow, errOut, code := runCLI(t, "gen", "demo-2node-8rank", "--show")
	require.Equal(t, 0, code, errOut)
	newShow, _, _ := runCLI(t, "gen", "demo-2server-8rank", "--show")
	assert.Equal(t, newShow, oldShow)

	dirs := [2]string{}
	for i, name := range []string{"slow-link-2node", "slow-link-2server"} {
		dirs[i] = filepath.Join(t.TempDir(), "c")
		_, errOut, code := runCLI(t, "gen", name, "-o", dirs[i], "--omit", "trace", "--steps", "1")
		require.Equal(t, 0, code, errOut)
	}
	a, err := os.ReadFile(filepath.Join(dirs[0], "ground_truth.json"))
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(dirs[1], "ground_truth.json"))
	require.NoError(t, err)
	assert.Equal(t, string(b), string(a))
	assert.Contains(t, string(a), `"name": "slow-link-2server"`)
}

// TestGenBuiltinBesideItsOutput: a directory named as a built-in (the output of the
// same command run before) does not hide the built-in; another directory is refused
// as what it is.
func TestGenBuiltinBesideItsOutput(t *testing.T) {
	wd := t.TempDir()
	t.Chdir(wd)
	for _, out := range []string{"demo-2server-8rank", "again"} {
		_, errOut, code := runCLI(t, "gen", "demo-2server-8rank", "-o", out, "--omit", "trace", "--steps", "1")
		require.Equal(t, 0, code, errOut)
	}
	a, err := os.ReadFile(filepath.Join(wd, "demo-2server-8rank", "ground_truth.json"))
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(wd, "again", "ground_truth.json"))
	require.NoError(t, err)
	assert.Equal(t, string(a), string(b))

	_, errOut, code := runCLI(t, "gen", "again", "-o", "third")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "again is a directory, not a scenario file or a built-in name")
}

// TestGenCountsInTheSingular (issue 38 item 3): one step and one problem are said as
// such ("1 problems", "1 steps" before).
func TestGenCountsInTheSingular(t *testing.T) {
	sc := filepath.Join(t.TempDir(), "s.yaml")
	require.NoError(t, os.WriteFile(sc, []byte("ranks: 2\nsteps: 1\nmodel: {gradient_bytes: 1000000, forward_ms: 1, backward_ms: 2, kernel_us: 500}\nproblems: [{kind: warmup, factor: 2}]\n"), 0o644))
	out, errOut, code := runCLI(t, "gen", sc, "-o", filepath.Join(t.TempDir(), "c"))
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, ": 2 ranks × 1 step, text format")
	assert.Contains(t, out, ", 1 problem (ground truth in ")
}
