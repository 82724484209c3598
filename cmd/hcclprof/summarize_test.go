package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/fixtures/render"
	"github.com/hcclprof/hcclprof/fixtures/scenario"
	"github.com/hcclprof/hcclprof/fixtures/sim"
	"github.com/hcclprof/hcclprof/internal/driver"
	"github.com/hcclprof/hcclprof/internal/ranksummary"
	"github.com/hcclprof/hcclprof/internal/realdata"
)

// genSmall writes a built-in scenario kept affordable: at most two steps and, beyond
// 16 ranks, its first 8 ranks profiled (the whole job is still simulated).
func genSmall(t *testing.T, name string, format render.Format) string {
	t.Helper()
	sc, err := scenario.Builtin(name)
	require.NoError(t, err)
	full := *sc
	sc.Steps = min(sc.Steps, 2)
	if sc.Ranks > 16 && len(sc.ProfiledRanks) == 0 {
		for r := range 8 {
			sc.ProfiledRanks = append(sc.ProfiledRanks, r)
		}
	}
	run, err := sim.Simulate(sc)
	if err != nil { // a problem injected in a later step: keep the steps
		sc.Steps = full.Steps
		run, err = sim.Simulate(sc)
	}
	require.NoError(t, err)
	return writeRun(t, run, format)
}

// writeScenario simulates sc and writes it in format to a temporary directory.
func writeScenario(t *testing.T, sc *scenario.Scenario, format render.Format) string {
	t.Helper()
	run, err := sim.Simulate(sc)
	require.NoError(t, err)
	return writeRun(t, run, format)
}

func writeRun(t *testing.T, run *sim.Run, format render.Format) string {
	t.Helper()
	dir := t.TempDir()
	_, _, err := render.WriteCluster(run, dir, render.Options{Format: format})
	require.NoError(t, err)
	return dir
}

var reportCommandLine = regexp.MustCompile(`(?m)^\s*"command": ".*",?\n`)

// sameReports runs analyze over two inputs in JSON and text and requires the reports
// to be equal byte for byte, but for the command line the JSON records.
func sameReports(t *testing.T, raw, summaries []string) {
	t.Helper()
	for _, format := range []string{"json", "text"} {
		want, _, wantCode := runCLI(t, append([]string{"analyze", "--format", format}, raw...)...)
		got, stderr, gotCode := runCLI(t, append([]string{"analyze", "--format", format}, summaries...)...)
		require.Equal(t, wantCode, gotCode, stderr)
		require.NotEmpty(t, want)
		if format == "json" {
			require.Regexp(t, reportCommandLine, want, "the JSON report records its command")
			want, got = reportCommandLine.ReplaceAllString(want, ""), reportCommandLine.ReplaceAllString(got, "")
		}
		require.Equal(t, want, got, "--format %s", format)
	}
}

// summarize runs the summarize command and requires it to succeed.
func summarize(t *testing.T, out string, args ...string) {
	t.Helper()
	stdout, stderr, code := runCLI(t, append([]string{"summarize", "-q", "-o", out}, args...)...)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "wrote ")
}

// TestSummaryReportsEqualRaw summarises every built-in scenario in every format the
// generator writes and requires analyze of the summaries to print what analyze of the
// profiles prints.
func TestSummaryReportsEqualRaw(t *testing.T) {
	for _, format := range append(slices.Clone(render.Formats), render.FormatKineto) {
		for _, name := range scenario.BuiltinNames() {
			t.Run(string(format)+"/"+name, func(t *testing.T) {
				if sc, err := scenario.Builtin(name); err == nil && render.CheckFormat(sc, format) != nil {
					t.Skipf("%s is not written in %s", name, format)
				}
				if testing.Short() && name != "demo-2server-8rank" && name != "h100-dp16-2node" {
					t.Skip("-short: the bundled scenario and one NVIDIA job only")
				}
				dir := genSmall(t, name, format)
				sums := t.TempDir()
				summarize(t, sums, dir)
				files, err := filepath.Glob(filepath.Join(sums, "*"+ranksummary.Suffix))
				require.NoError(t, err)
				ranks, err := filepath.Glob(filepath.Join(dir, "*"))
				require.NoError(t, err)
				require.Len(t, files, len(ranks)-1, "a summary per rank (the directory also holds ground_truth.json)")
				sameReports(t, []string{dir}, []string{sums})
			})
		}
	}
}

// TestSummaryReportsEqualRawOnRealData does the same for the real samples, which
// hold the formats the generator does not write (Kineto, MindSpore, msprof-analyze's
// inputs, Level0).
func TestSummaryReportsEqualRawOnRealData(t *testing.T) {
	for _, name := range []string{"imagenet-2rank-db", "imagenet-2rank-level0", "imagenet-2rank-level1", "kineto-nccl-a100-2gpu",
		"megatron-pp2dp2-2of4rank", "msprof-cann85-matmul", "msprof-mindspore-alexnet", "torchnpu-1rank-nohccl", "torchnpu-910b3-cann9-5step"} {
		t.Run(name, func(t *testing.T) {
			dir := realdata.Path(t, name)
			sums := t.TempDir()
			summarize(t, sums, dir)
			sameReports(t, []string{dir}, []string{sums})
			// The links' fit too: from task rows, or from the profiler's Size
			// Distribution (Megatron), both of which a summary keeps.
			want, _, wantCode := runCLI(t, "calibrate", "--format", "json", dir)
			got, stderr, gotCode := runCLI(t, "calibrate", "--format", "json", sums)
			require.Equal(t, wantCode, gotCode, stderr)
			require.Equal(t, want, got, "calibrate")
		})
	}
}

// TestSummarizeInParallelProcesses runs summarize in four processes at once, each over
// a disjoint quarter of a cluster's ranks, into one directory (as every node of a job
// would into a shared one); analyze of the gathered summaries equals the direct
// report.
func TestSummarizeInParallelProcesses(t *testing.T) {
	dir := genSmall(t, "straggler-64rank", render.FormatText)
	ranks, err := filepath.Glob(filepath.Join(dir, "*_ascend_pt"))
	require.NoError(t, err)
	require.Len(t, ranks, 8)
	sort.Strings(ranks)
	sums := t.TempDir()
	const procs = 4
	var wg sync.WaitGroup
	outs := make([][]byte, procs)
	errs := make([]error, procs)
	for p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var part []string
			for i := p; i < len(ranks); i += procs {
				part = append(part, ranks[i])
			}
			outs[p], errs[p] = exec.Command(binary(t), append([]string{"summarize", "-q", "--workers", "1", "-o", sums}, part...)...).CombinedOutput()
		}()
	}
	wg.Wait()
	for p := range procs {
		require.NoError(t, errs[p], "%s", outs[p])
		assert.Contains(t, string(outs[p]), "wrote 2 rank summaries")
	}
	entries, err := os.ReadDir(sums)
	require.NoError(t, err)
	require.Len(t, entries, 8, "one file per rank, no temporary left")
	sameReports(t, []string{dir}, []string{sums})
}

// TestMixedRawAndSummaries analyses half of a cluster from its rank directories and
// half from summaries, named on the command line, as one run.
func TestMixedRawAndSummaries(t *testing.T) {
	for _, format := range []render.Format{render.FormatText, render.FormatDB} {
		t.Run(string(format), func(t *testing.T) {
			dir := genSmall(t, "demo-2server-8rank", format)
			ranks, err := filepath.Glob(filepath.Join(dir, "*_ascend_pt"))
			require.NoError(t, err)
			require.Len(t, ranks, 8)
			sort.Strings(ranks)
			sums := t.TempDir()
			summarize(t, sums, ranks[4:]...)
			mixed := append(append([]string{}, ranks[:4]...), sums)
			sameReports(t, []string{dir}, mixed)
		})
	}
}

// TestDamagedSummaryIsIncomplete: a damaged summary among good ones makes its rank
// incomplete (exit 3, the file named), as a damaged trace does; --allow-partial
// reports the rest.
func TestDamagedSummaryIsIncomplete(t *testing.T) {
	sums := t.TempDir()
	summarize(t, sums, sample)
	victim := filepath.Join(sums, ranksummary.Name(3))
	data, err := os.ReadFile(victim)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(victim, data[:len(data)/2], 0o644))
	_, stderr, code := runCLI(t, "analyze", sums)
	assert.Equal(t, driver.ExitIncomplete, code)
	assert.Contains(t, stderr, "rank 3: "+victim+": byte ")
	assert.Contains(t, stderr, "the file is truncated")
	out, _, code := runCLI(t, "analyze", sums, "--allow-partial", "--format", "json")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, `"incomplete": true`)

	// A file of another program under a summary's name.
	var foreign bytes.Buffer
	zw := gzip.NewWriter(&foreign)
	fmt.Fprintln(zw, `{"traceEvents": []}`)
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(victim, foreign.Bytes(), 0o644))
	_, stderr, code = runCLI(t, "analyze", sums)
	assert.Equal(t, driver.ExitIncomplete, code)
	assert.Contains(t, stderr, victim+": byte 0 of the decompressed summary: not an hcclprof rank summary")
}

// TestSummaryIsSmall: on a generated rank with a sizable trace (~10 MB) the summary is
// at least 100 times smaller than the trace.
func TestSummaryIsSmall(t *testing.T) {
	sc, err := scenario.Parse([]byte(`
product: a2
ranks: 2
ranks_per_server: 2
steps: 2
model: {gradient_bytes: 600000000, dtype: BFP16, forward_ms: 60, backward_ms: 120, optimizer_ms: 5, kernel_us: 60}
ddp: {bucket_mb: 25, overlap: 0.8}
`))
	require.NoError(t, err)
	dir := writeScenario(t, sc, render.FormatText)
	sums := t.TempDir()
	summarize(t, sums, dir)
	traces, err := filepath.Glob(filepath.Join(dir, "*", "ASCEND_PROFILER_OUTPUT", "trace_view.json"))
	require.NoError(t, err)
	require.Len(t, traces, 2)
	sort.Strings(traces) // by the rank directories' names, which follow the ranks
	for rank, trace := range traces {
		st, err := os.Stat(trace)
		require.NoError(t, err)
		require.Greater(t, st.Size(), int64(8<<20), "a sizable trace")
		sum, err := os.Stat(filepath.Join(sums, ranksummary.Name(rank)))
		require.NoError(t, err)
		ratio := float64(st.Size()) / float64(sum.Size())
		t.Logf("rank %d: trace %d bytes, summary %d bytes: %.0fx", rank, st.Size(), sum.Size(), ratio)
		assert.GreaterOrEqual(t, ratio, 100.0)
	}
	sameReports(t, []string{dir}, []string{sums})
}

// TestSummaryKeepsTheMicroBatches: the micro-batches accumulated per step are counted
// from every compute kernel, which a summary folds; the summary carries the count, so
// the report (and the advice that states the count) is the raw data's.
func TestSummaryKeepsTheMicroBatches(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a generated run of 8 micro-batches per step, analysed four times")
	}
	sc, err := scenario.Parse([]byte(`
product: a2
ranks: 8
ranks_per_server: 8
steps: 3
seed: 33
model: {gradient_bytes: 2000000000, dtype: FP32, forward_ms: 1.5, backward_ms: 3, optimizer_ms: 2, kernel_us: 150}
ddp: {bucket_mb: 25, overlap: 0.3, accumulation: 8}
`))
	require.NoError(t, err)
	dir := writeScenario(t, sc, render.FormatText)
	sums := t.TempDir()
	summarize(t, sums, dir)
	sameReports(t, []string{dir}, []string{sums})
	// Accumulating 16 is twice the 8 the profile holds (with 1 assumed it would be 16×).
	out, _, _ := runCLI(t, "advise", "--format", "json", sums)
	assert.Contains(t, out, "the effective batch grows 2×", "the count read from the summaries is 8")
}

// TestSummariesOfLocalRankIDsInOneDirectory: the bundled sample's second server wrote
// local rank ids (0-3), and each server summarises its ranks into the one shared
// directory, two processes at once. Before, the second server's summaries replaced the
// first's and the gathered analyze read four ranks, exit 0. Now every summary is kept
// and analyze reads eight, both claimants of each rank incomplete (exit 3); a server
// summarising again replaces its own files only.
func TestSummariesOfLocalRankIDsInOneDirectory(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run")
	require.NoError(t, os.CopyFS(run, os.DirFS(sample)))
	second, err := filepath.Glob(filepath.Join(run, "node1_*"))
	require.NoError(t, err)
	require.Len(t, second, 4)
	for _, dir := range second {
		infos, err := filepath.Glob(filepath.Join(dir, "profiler_info_*.json"))
		require.NoError(t, err)
		require.Len(t, infos, 1)
		var global int
		_, err = fmt.Sscanf(filepath.Base(infos[0]), "profiler_info_%d.json", &global)
		require.NoError(t, err)
		b, err := os.ReadFile(infos[0])
		require.NoError(t, err)
		local := bytes.Replace(b, []byte(fmt.Sprintf(`"rank_id": %d`, global)), []byte(fmt.Sprintf(`"rank_id": %d`, global-4)), 1)
		require.NotEqual(t, b, local)
		require.NoError(t, os.Remove(infos[0]))
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("profiler_info_%d.json", global-4)), local, 0o644))
	}
	first, err := filepath.Glob(filepath.Join(run, "node0_*"))
	require.NoError(t, err)

	sums := t.TempDir()
	var wg sync.WaitGroup
	outs := make([][]byte, 2)
	for i, part := range [][]string{first, second} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], _ = exec.Command(binary(t), append([]string{"summarize", "-q", "-o", sums}, part...)...).CombinedOutput()
		}()
	}
	wg.Wait()
	for i := range outs {
		assert.Contains(t, string(outs[i]), "wrote 4 rank summaries", "each server's own ranks are whole")
	}
	entries, err := os.ReadDir(sums)
	require.NoError(t, err)
	require.Len(t, entries, 8, "no summary replaced another's")

	out, stderr, code := runCLI(t, "analyze", sums, "--format", "json")
	assert.Equal(t, 3, code, stderr)
	assert.Contains(t, stderr, "is claimed also by")
	assert.Contains(t, out, `"ranks_profiled": 8`)

	again, err := exec.Command(binary(t), append([]string{"summarize", "-q", "-o", sums}, second...)...).CombinedOutput()
	require.NoError(t, err, "%s", again)
	entries, err = os.ReadDir(sums)
	require.NoError(t, err)
	assert.Len(t, entries, 8, "the same inputs summarised again replace their own summaries")
}
