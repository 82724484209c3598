package parser

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/fixtures/render"
	"github.com/hcclprof/hcclprof/fixtures/scenario"
	"github.com/hcclprof/hcclprof/fixtures/sim"
	"github.com/hcclprof/hcclprof/internal/realdata"
	"github.com/hcclprof/hcclprof/profile"
)

const alexnetProf = "PROF_000001_20230818142704322_COJGGGCANRMICFBC"

// TestMsprofAlexnet reads the real msprof output of MindSpore AlexNet (CANN ≤ 7,
// per-iteration timelines) and checks the analysis against the figures of
// ../shared/realdata/README.md ("msprof-mindspore-alexnet device 0"): the sums of the
// Overlap Analysis rows of msprof_0_2_N.json and the Iteration Time of
// step_trace_0_2_1.json, with share = Communication(Not Overlapped) / Iteration time.
func TestMsprofAlexnet(t *testing.T) {
	dir := realdata.Path(t, "msprof-mindspore-alexnet", alexnetProf)
	require.True(t, isMsprofDir(dir))
	ranks, err := loadMsprofDir(dir)
	require.NoError(t, err)
	require.Len(t, ranks, 1)
	r := ranks[0]
	assert.Equal(t, 0, r.Rank, "info.json.0 rank_id")
	assert.Equal(t, profile.FormatMsprof, r.Format)
	assert.Empty(t, r.Problems)
	assert.True(t, r.HasTimeline)
	assert.True(t, r.Overlap.Present(), "the Overlap Analysis rows are kept for the cross-check")
	assert.Equal(t, []string{"device_0/info.json.0", "device_0/timeline/msprof_0_2_1.json", "device_0/timeline/msprof_0_2_2.json",
		"device_0/timeline/msprof_0_2_3.json", "device_0/timeline/step_trace_0_2_1.json"}, r.FilesUsed)
	assert.Contains(t, r.FilesIgnored, "device_0/timeline/hccl_0_2_1.json")
	// One AllReduce per iteration on the old "Communication Kernel" row, graph-named.
	require.Len(t, r.CommOps, 3)
	for _, op := range r.CommOps {
		assert.Equal(t, "Default/AllReduce-op534_0", op.Name)
		assert.Equal(t, "allreduce", op.Type)
		assert.Equal(t, "Communication Kernel", op.GroupRow)
	}
	assert.NotEmpty(t, r.CommTasks)

	// The step trace lists 10 iterations; only the 3 with a timeline are steps, and
	// each marker is the Iteration event's [ts, ts+dur) on the device clock. The
	// others are named (a warning of the report): before, nothing said the report
	// covers 3 of the 10.
	require.Len(t, r.Steps, 3)
	assert.Equal(t, []string{"the profiler's step trace lists iterations 1-10; the exported timelines hold 1-3: iterations 4-10 are not analysed " +
		"(msprof --export=on without --model-id and --iteration-id exports them all)"}, r.Notes)
	want := []struct {
		step                                int
		computing, commNotOv, comm, free    float64 // µs, as the README rounds them
		iterationUs                         float64
		share                               float64
		startNs                             int64
		overlapComputing, overlapCommNotOvl float64 // exact Overlap Analysis sums
	}{
		{1, 5914.6, 41534.3, 41534.3, 113.6, 47587.81, 0.873, 56635864652490, 5914.58, 41534.3},
		{2, 5928.1, 9303.0, 9303.0, 114.6, 15369.16, 0.605, 56635944370310, 5928.1, 9303.05},
		{3, 5946.6, 9213.8, 9213.8, 120.8, 15304.02, 0.602, 56635983041790, 5946.6, 9213.81},
	}
	for i, w := range want {
		assert.Equal(t, w.step, r.Steps[i].Step)
		assert.Equal(t, w.startNs, r.Steps[i].StartNs)
		assert.InDelta(t, w.iterationUs, float64(r.Steps[i].DurNs())/1000, 1e-9, "Iteration Time")
	}

	res := analysis.Analyze(&profile.Cluster{Ranks: ranks}, analysis.Options{})
	require.Len(t, res.Ranks, 1)
	rr := res.Ranks[0]
	assert.Equal(t, analysis.SourceTimeline, rr.Source)
	for _, w := range res.Warnings {
		assert.NotContains(t, w, "recomputed", "the recomputation must agree with the trace's Overlap Analysis rows")
	}
	require.Len(t, rr.Steps, 3)
	us := func(ns int64) float64 { return float64(ns) / 1000 }
	for i, w := range want {
		s := rr.Steps[i]
		require.Equal(t, w.step, s.Step)
		// The README rounds to 0.1 µs: within 0.05 of its figures, exact to the
		// Overlap Analysis sums.
		assert.InDelta(t, w.computing, us(s.ComputingNs), 0.05, "iteration %d Computing", w.step)
		assert.InDelta(t, w.comm, us(s.CommunicationNs), 0.051, "iteration %d Communication", w.step)
		assert.InDelta(t, w.commNotOv, us(s.CommNotOverlappedNs), 0.051, "iteration %d Comm(Not Overlapped)", w.step)
		assert.InDelta(t, w.free, us(s.FreeNs), 0.05, "iteration %d Free", w.step)
		assert.InDelta(t, w.overlapComputing, us(s.ComputingNs), 1e-9, "iteration %d Computing vs Overlap Analysis", w.step)
		assert.InDelta(t, w.overlapCommNotOvl, us(s.CommNotOverlappedNs), 1e-9, "iteration %d Comm(Not Overlapped) vs Overlap Analysis", w.step)
		assert.Zero(t, s.OverlappedNs, "graph mode runs the AllReduce after backward: nothing overlaps")
		// The README's share divides by the Iteration Time; hcclprof's Stage is the
		// device span of the iteration's tasks, ~23-25 µs shorter (the iteration
		// starts before its first task and ends after its last), so comm_share
		// differs from it in the third decimal.
		iter := r.Steps[i].DurNs()
		assert.InDelta(t, w.share, float64(s.CommNotOverlappedNs)/float64(iter), 0.0005, "iteration %d share", w.step)
		assert.Equal(t, s.ComputingNs+s.CommNotOverlappedNs+s.FreeNs, s.StageNs, "Stage = Computing + Comm(Not Overlapped) + Free")
		assert.Less(t, s.StageNs, iter)
		assert.Greater(t, s.StageNs, iter-30000)
		t.Logf("iteration %d: Computing %.3f, Communication %.3f, Not Overlapped %.3f, Free %.3f, Stage %.3f, Iteration %.3f, share %.4f (README %.3f), comm_share %.4f",
			w.step, us(s.ComputingNs), us(s.CommunicationNs), us(s.CommNotOverlappedNs), us(s.FreeNs), us(s.StageNs), us(iter),
			float64(s.CommNotOverlappedNs)/float64(iter), w.share, s.CommShare())
	}
	// Iteration 1 is the warm-up outlier: its AllReduce waits ~41 ms.
	assert.Greater(t, rr.Steps[0].CommunicationNs, 4*rr.Steps[1].CommunicationNs)
}

// genMsprof writes a built-in scenario in the msprof format and returns the truth and
// the cluster directory.
func genMsprof(tb testing.TB, name string, edit func(*scenario.Scenario)) (*sim.Truth, string) {
	tb.Helper()
	sc, err := scenario.Builtin(name)
	require.NoError(tb, err)
	if edit != nil {
		edit(sc)
	}
	run, err := sim.Simulate(sc)
	require.NoError(tb, err)
	dir := tb.TempDir()
	truth, _, err := render.WriteCluster(run, dir, render.Options{Format: render.FormatMsprof})
	require.NoError(tb, err)
	return truth, dir
}

func msprofProfDirs(tb testing.TB, dir string) []string {
	tb.Helper()
	profs, err := filepath.Glob(filepath.Join(dir, "PROF_*"))
	require.NoError(tb, err)
	sort.Strings(profs)
	return profs
}

// TestMsprofGeneratedCluster reads the generator's CANN 8 PROF directories: 8 ranks
// with their rank ids, one step-less range each (msprof writes no step marker for an
// op-based run), whose Computing, Communication, Overlapped and Comm(Not Overlapped)
// equal the ground truth's sums over steps. Free and Stage also count the device idle
// time between steps, which no step holds: both exceed the sums by that same gap.
func TestMsprofGeneratedCluster(t *testing.T) {
	truth, dir := genMsprof(t, "demo-2server-8rank", nil)
	profs := msprofProfDirs(t, dir)
	require.Len(t, profs, 8)
	var ranks []*profile.Rank
	for _, p := range profs {
		require.True(t, isMsprofDir(p), p)
		rs, err := loadMsprofDir(p)
		require.NoError(t, err)
		require.Len(t, rs, 1, "one device per PROF directory")
		r := rs[0]
		assert.Empty(t, r.Problems, p)
		assert.True(t, r.HasTimeline)
		assert.Empty(t, r.Steps, "no step markers in an op-based msprof export")
		assert.True(t, r.Overlap.Present())
		assert.NotEmpty(t, r.CommStats)
		assert.NotEmpty(t, r.CommMatrix)
		assert.Equal(t, profile.FormatMsprof, r.Format)
		assert.Equal(t, r.Rank, r.Info.RankID)
		for _, f := range r.FilesUsed {
			assert.Regexp(t, `^(device_\d/info\.json\.\d|mindstudio_profiler_output/msprof_\d{14}\.json|analyze/communication(_matrix)?\.json)$`, f)
		}
		assert.NotEmpty(t, r.FilesIgnored, "op_summary and the statistics CSVs are not read")
		ranks = append(ranks, r)
	}
	sort.Slice(ranks, func(i, j int) bool { return ranks[i].Rank < ranks[j].Rank })
	for i, r := range ranks {
		require.Equal(t, i, r.Rank, "rank ids 0..7 from info.json.N")
	}

	res := analysis.Analyze(&profile.Cluster{Ranks: ranks}, analysis.Options{})
	for _, w := range res.Warnings {
		assert.NotContains(t, w, "recomputed", "the recomputation must agree with the trace's Overlap Analysis rows")
	}
	assert.Equal(t, 1, res.Summary.Steps)
	require.Len(t, res.Ranks, len(truth.Ranks))
	for _, tr := range truth.Ranks {
		rr := res.Ranks[tr.Rank]
		require.Equal(t, tr.Rank, rr.Rank)
		require.Len(t, rr.Steps, 1)
		got := rr.Steps[0]
		assert.Equal(t, -1, got.Step)
		assert.False(t, got.HasStep)
		var comp, comm, notOv, ov, free, stage float64
		for _, s := range tr.Steps {
			comp += s.ComputingUs
			comm += s.CommunicationUs
			notOv += s.CommunicationNotOverlappedUs
			ov += s.OverlappedUs
			free += s.FreeUs
			stage += s.StageUs
		}
		us := func(ns int64) float64 { return float64(ns) / 1000 }
		for _, f := range []struct {
			name      string
			got, want float64
		}{
			{"Computing", us(got.ComputingNs), comp},
			{"Communication", us(got.CommunicationNs), comm},
			{"Overlapped", us(got.OverlappedNs), ov},
			{"Comm(Not Overlapped)", us(got.CommNotOverlappedNs), notOv},
		} {
			assert.InDelta(t, f.want, f.got, 1e-3*f.want, "rank %d %s (0.1%%)", tr.Rank, f.name)
			assert.InDelta(t, f.want, f.got, 0.01, "rank %d %s (exact but for the µs rounding of ground_truth.json)", tr.Rank, f.name)
		}
		gap := us(got.StageNs) - stage
		assert.Greater(t, gap, 0.0, "rank %d: the whole-run range holds the inter-step gaps", tr.Rank)
		assert.InDelta(t, gap, us(got.FreeNs)-free, 0.01, "rank %d: Stage and Free exceed the sums by the same gap", tr.Rank)
	}
}

// TestMsprofCommunicationFlat checks the flat analyze/communication.json of a
// generated PROF directory: every op key but the "Total HCCL Operators" entry, step
// -1, the group hash attached to the timeline's ops.
func TestMsprofCommunicationFlat(t *testing.T) {
	_, dir := genMsprof(t, "demo-2server-8rank", nil)
	p := msprofProfDirs(t, dir)[0]
	raw, err := os.ReadFile(filepath.Join(p, "analyze", "communication.json"))
	require.NoError(t, err)
	var flat map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &flat))
	var keys []string
	for k := range flat {
		if !strings.HasPrefix(k, "Total") {
			keys = append(keys, k)
		}
	}
	require.Contains(t, flat, "Total HCCL Operators")

	ranks, err := loadMsprofDir(p)
	require.NoError(t, err)
	r := ranks[0]
	require.Len(t, r.CommStats, len(keys))
	var got []string
	for _, s := range r.CommStats {
		got = append(got, s.Name+"@"+s.Group)
		assert.Equal(t, -1, s.Step)
		assert.False(t, s.P2P)
		assert.Positive(t, s.ElapseNs)
		assert.Positive(t, s.StartNs)
		assert.NotEmpty(t, s.Transports)
	}
	assert.ElementsMatch(t, keys, got)
	// Each timeline op has its communication.json entry and takes its group hash.
	require.Len(t, r.CommOps, len(r.CommStats))
	byName := map[string]profile.CommOpStats{}
	for _, s := range r.CommStats {
		byName[s.Name] = s
	}
	for _, op := range r.CommOps {
		s, ok := byName[op.Name]
		require.True(t, ok, op.Name)
		assert.Equal(t, s.Group, op.Group)
		assert.Equal(t, s.ElapseNs, op.DurNs(), "Elapse Time is the op's duration")
	}
	for _, l := range r.CommMatrix {
		assert.Equal(t, -1, l.Step)
		assert.NotEmpty(t, l.Group)
	}
}

// msprofCopyTree copies a directory of regular files.
func msprofCopyTree(tb testing.TB, src, dst string) {
	tb.Helper()
	require.NoError(tb, filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	}))
}

func msprofExportTimeline(tb testing.TB, prof string) string {
	tb.Helper()
	m, err := filepath.Glob(filepath.Join(prof, msprofExportDir, "msprof_*.json"))
	require.NoError(tb, err)
	require.Len(tb, m, 1)
	return m[0]
}

// TestMsprofTruncatedTimeline: a truncated or corrupt timeline leaves a partial rank
// with a problem naming the file and the byte offset; the other files are read.
func TestMsprofTruncatedTimeline(t *testing.T) {
	_, dir := genMsprof(t, "demo-2server-8rank", nil)
	src := msprofProfDirs(t, dir)[0]
	full, err := loadMsprofDir(src)
	require.NoError(t, err)

	t.Run("truncated", func(t *testing.T) {
		prof := filepath.Join(t.TempDir(), filepath.Base(src))
		msprofCopyTree(t, src, prof)
		tl := msprofExportTimeline(t, prof)
		b, err := os.ReadFile(tl)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(tl, b[:len(b)*6/10], 0o644))
		ranks, err := loadMsprofDir(prof)
		require.NoError(t, err)
		r := ranks[0]
		require.Len(t, r.Problems, 1)
		assert.Contains(t, r.Problems[0], tl)
		assert.Contains(t, r.Problems[0], "byte ")
		assert.Contains(t, r.Problems[0], "the timeline is partial")
		assert.True(t, r.Incomplete())
		assert.True(t, r.HasTimeline)
		assert.NotEmpty(t, r.Compute)
		assert.Less(t, len(r.Compute)+len(r.CommTasks), len(full[0].Compute)+len(full[0].CommTasks))
		assert.Equal(t, full[0].CommStats, r.CommStats, "communication.json is still read")
		res := analysis.Analyze(&profile.Cluster{Ranks: ranks}, analysis.Options{})
		assert.True(t, res.Summary.Incomplete)
	})
	t.Run("corrupt", func(t *testing.T) {
		prof := filepath.Join(t.TempDir(), filepath.Base(src))
		msprofCopyTree(t, src, prof)
		tl := msprofExportTimeline(t, prof)
		b, err := os.ReadFile(tl)
		require.NoError(t, err)
		at := len(b) / 2
		for b[at] != '{' {
			at++
		}
		b[at] = '#'
		require.NoError(t, os.WriteFile(tl, b, 0o644))
		ranks, err := loadMsprofDir(prof)
		require.NoError(t, err)
		r := ranks[0]
		require.Len(t, r.Problems, 1)
		assert.Contains(t, r.Problems[0], tl)
		assert.Contains(t, r.Problems[0], "byte ")
		assert.True(t, r.HasTimeline)
	})
}

// TestMsprofSlices: a timeline sliced into msprof_slice_{k}_{ts}.json files reads as
// the whole file does, even when the process names are in another slice than the
// events; the newest export wins over an older one.
func TestMsprofSlices(t *testing.T) {
	_, dir := genMsprof(t, "demo-2server-8rank", nil)
	src := msprofProfDirs(t, dir)[0]
	full, err := loadMsprofDir(src)
	require.NoError(t, err)

	prof := filepath.Join(t.TempDir(), filepath.Base(src))
	msprofCopyTree(t, src, prof)
	tl := msprofExportTimeline(t, prof)
	ts := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(tl), "msprof_"), ".json")
	var events []json.RawMessage
	b, err := os.ReadFile(tl)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &events))
	var meta, other []json.RawMessage
	for _, e := range events {
		if strings.Contains(string(e), `"ph": "M"`) || strings.Contains(string(e), `"ph":"M"`) {
			meta = append(meta, e)
		} else {
			other = append(other, e)
		}
	}
	require.NotEmpty(t, meta)
	half := len(other) / 2
	parts := [][]json.RawMessage{other[:half], append(append([]json.RawMessage{}, other[half:]...), meta...)}
	require.NoError(t, os.Remove(tl))
	for k, s := range parts {
		out, err := json.Marshal(s)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(prof, msprofExportDir, "msprof_slice_"+strconv.Itoa(k)+"_"+ts+".json"), out, 0o644))
	}
	// An older, whole export: ignored, the slices are newer.
	older := filepath.Join(prof, msprofExportDir, "msprof_20000101000000.json")
	require.NoError(t, os.WriteFile(older, []byte(`[{"ph": "X", "name": "x", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": {"Task Type": "AI_CORE"}}]`), 0o644))

	ranks, err := loadMsprofDir(prof)
	require.NoError(t, err)
	r, f := ranks[0], full[0]
	assert.Empty(t, r.Problems)
	assert.Contains(t, r.FilesIgnored, "mindstudio_profiler_output/msprof_20000101000000.json")
	assert.Contains(t, r.FilesUsed, "mindstudio_profiler_output/msprof_slice_0_"+ts+".json")
	assert.Contains(t, r.FilesUsed, "mindstudio_profiler_output/msprof_slice_1_"+ts+".json")
	assert.Equal(t, f.Compute, r.Compute)
	assert.Equal(t, f.CommOps, r.CommOps)
	assert.Equal(t, f.CommTasks, r.CommTasks)
	assert.Equal(t, f.Overlap, r.Overlap)

	// Slices number one timeline from 0: without slice 0 the rank is incomplete,
	// naming the lost part (it read as a whole timeline of the other half).
	lost := filepath.Join(prof, msprofExportDir, "msprof_slice_0_"+ts+".json")
	require.NoError(t, os.Remove(lost))
	ranks, err = loadMsprofDir(prof)
	require.NoError(t, err)
	require.Len(t, ranks[0].Problems, 1)
	assert.Equal(t, lost+": missing, while slices up to 1 of the same export are there: the timeline is partial", ranks[0].Problems[0])
}

// A PROF directory whose device_N lost its info.json.N still holds that device's
// export: the device is read, numbered as one without a rank_id, and incomplete,
// naming the lost file. (It was skipped with a note: the job lost a rank's whole
// timeline, and the others' waits for it read as waits for an unprofiled rank.)
func TestMsprofDeviceWithoutInfo(t *testing.T) {
	_, dir := genMsprof(t, "demo-2server-8rank", nil)
	run := filepath.Join(t.TempDir(), "run")
	msprofCopyTree(t, dir, run)
	prof := msprofProfDirs(t, run)[1]
	infos, err := filepath.Glob(filepath.Join(prof, "device_*", "info.json.*"))
	require.NoError(t, err)
	require.Len(t, infos, 1)
	var info struct {
		RankID int `json:"rank_id"`
	}
	b, err := os.ReadFile(infos[0])
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &info))
	require.NoError(t, os.Remove(infos[0]))

	c, err := LoadCluster([]string{run}, LoadOptions{})
	require.NoError(t, err)
	require.Len(t, c.Ranks, 8, "the device is not skipped")
	var lost *profile.Rank
	for _, r := range c.Ranks {
		if len(r.Problems) > 0 {
			require.Nil(t, lost, "one rank only")
			lost = r
		}
	}
	require.NotNil(t, lost)
	assert.Equal(t, info.RankID, lost.Rank, "the one rank no other device holds")
	assert.Equal(t, []string{filepath.Dir(infos[0]) + ": no info.json." + strings.TrimPrefix(filepath.Ext(infos[0]), ".") +
		" (msprof writes one in every device directory): the device's rank, host and chip are not known, and it is numbered as a device without a rank_id"}, lost.Problems)
	assert.True(t, lost.HasTimeline)
	assert.NotEmpty(t, lost.CommOps)
}

// msprofWriteFiles writes name → content under dir.
func msprofWriteFiles(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(tb, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(tb, os.WriteFile(p, []byte(content), 0o644))
	}
}

// msprofOldIteration is one per-iteration msprof timeline of the older layout: an AI_CORE
// kernel, the hardware view of an HCCL task (NOTIFY_WAIT, not compute), an op on the
// "Communication Kernel" row and the Overlap Analysis rows; numeric monotonic ts.
func msprofOldIteration(startUs float64) string {
	f := func(x float64) string { b, _ := json.Marshal(x); return string(b) }
	return `[
{"name": "process_name", "pid": 3, "tid": 0, "args": {"name": "Ascend Hardware"}, "ph": "M"},
{"name": "Iteration 9", "pid": 3, "tid": 10036, "ts": ` + f(startUs-5) + `, "dur": 400, "cat": "Iteration Time", "ph": "X", "args": {"Iteration ID": 9}},
{"name": "Default/Conv2D-op1", "pid": 3, "tid": 2, "ts": ` + f(startUs) + `, "dur": 100, "args": {"Task Type": "AI_CORE", "Stream Id": 2}, "ph": "X"},
{"name": "NOTIFY_WAIT", "pid": 3, "tid": 13, "ts": ` + f(startUs+120) + `, "dur": 150, "args": {"Task Type": "NOTIFY_WAIT"}, "ph": "X"},
{"name": "EVENT_WAIT", "pid": 3, "tid": 2, "ts": ` + f(startUs+100) + `, "dur": 10, "args": {"Task Type": "EVENT_WAIT"}, "ph": "X"},
{"name": "process_name", "pid": 1003611, "tid": 0, "args": {"name": "HCCL"}, "ph": "M"},
{"name": "thread_name", "pid": 1003611, "tid": 70000, "args": {"name": "Communication Kernel"}, "ph": "M"},
{"name": "Default/AllReduce-op534_0", "pid": 1003611, "tid": 70000, "ts": ` + f(startUs+110) + `, "dur": 200, "ph": "X"},
{"name": "process_name", "pid": 1003612, "tid": 0, "args": {"name": "Overlap Analysis"}, "ph": "M"},
{"name": "Computing", "pid": 1003612, "tid": 0, "ts": ` + f(startUs) + `, "dur": 100, "ph": "X"},
{"name": "Communication", "pid": 1003612, "tid": 1, "ts": ` + f(startUs+110) + `, "dur": 200, "ph": "X"},
{"name": "Communication(Not Overlapped)", "pid": 1003612, "tid": 2, "ts": ` + f(startUs+110) + `, "dur": 200, "ph": "X"},
{"name": "Free", "pid": 1003612, "tid": 3, "ts": ` + f(startUs+100) + `, "dur": 10, "ph": "X"}
]`
}

// TestMsprofOldLayout: the older per-iteration layout, merged into one run. Only the
// iterations with a timeline become steps; numeric file order; rank_id -1 kept as -1.
func TestMsprofOldLayout(t *testing.T) {
	prof := filepath.Join(t.TempDir(), "PROF_000001_20230818142704322_ABCDEFGHIJKLMNOP")
	stepTrace := `[
{"name": "process_name", "pid": 10036, "tid": 0, "args": {"name": "Step Trace"}, "ph": "M"},
{"name": "Iteration 1", "pid": 10036, "tid": 10036, "ts": 995.5, "dur": 400, "cat": "Iteration Time", "ph": "X", "args": {"Iteration ID": 1, "Iteration Time(ns)": 400000.0}},
{"name": "FP_BP Time 1", "pid": 10036, "tid": 10036, "ts": 1000, "dur": 100, "cat": "FP_BP Time", "ph": "X", "args": {"Iteration ID": 1}},
{"name": "Iteration 2", "pid": 10036, "tid": 10036, "ts": 1995.5, "dur": 400, "cat": "Iteration Time", "ph": "X", "args": {"Iteration ID": 2}},
{"name": "Iteration 10", "pid": 10036, "tid": 10036, "ts": 9995.5, "dur": 400, "cat": "Iteration Time", "ph": "X", "args": {"Iteration ID": 10}},
{"name": "Data_aug Bound 1", "cat": "Data_aug Bound", "ph": "s", "ts": 1395.5, "pid": 10036, "tid": 10036, "id": "Data_aug Bound 1", "args": {"Iteration ID": 1}}
]`
	msprofWriteFiles(t, prof, map[string]string{
		"device_0/info.json.0":                    `{"jobInfo": "NA", "devices": "0", "rank_id": -1}`,
		"device_0/timeline/msprof_0_2_1.json":     msprofOldIteration(1000.5),
		"device_0/timeline/msprof_0_2_10.json":    msprofOldIteration(10000.5),
		"device_0/timeline/step_trace_0_2_1.json": stepTrace,
		"device_0/timeline/hccl_0_2_1.json":       `[]`,
	})
	require.True(t, isMsprofDir(prof))
	ranks, err := loadMsprofDir(prof)
	require.NoError(t, err)
	require.Len(t, ranks, 1)
	r := ranks[0]
	assert.Equal(t, -1, r.Rank)
	assert.Equal(t, -1, r.Info.RankID)
	assert.Empty(t, r.Problems)
	assert.Equal(t, []string{"device_0/info.json.0", "device_0/timeline/msprof_0_2_1.json", "device_0/timeline/msprof_0_2_10.json",
		"device_0/timeline/step_trace_0_2_1.json"}, r.FilesUsed)
	assert.Equal(t, []string{"device_0/timeline/hccl_0_2_1.json"}, r.FilesIgnored)
	// Iteration 2 has no timeline file: no step. The timeline's own Iteration events
	// (with a cat) are not read as tasks.
	require.Len(t, r.Steps, 2)
	assert.Equal(t, profile.StepMarker{Step: 1, Interval: profile.Interval{StartNs: 995500, EndNs: 1395500}}, r.Steps[0])
	assert.Equal(t, 10, r.Steps[1].Step)
	assert.Equal(t, []profile.Interval{{StartNs: 1000500, EndNs: 1100500}, {StartNs: 10000500, EndNs: 10100500}}, r.Compute,
		"AI_CORE only: NOTIFY_WAIT and EVENT_WAIT are not compute")
	require.Len(t, r.CommOps, 2)

	res := analysis.Analyze(&profile.Cluster{Ranks: ranks}, analysis.Options{})
	for _, w := range res.Warnings {
		assert.NotContains(t, w, "recomputed")
	}
	require.Len(t, res.Ranks[0].Steps, 2)
	for _, s := range res.Ranks[0].Steps {
		assert.Equal(t, int64(100000), s.ComputingNs)
		assert.Equal(t, int64(200000), s.CommunicationNs)
		assert.Equal(t, int64(10000), s.FreeNs)
		assert.Equal(t, int64(310000), s.StageNs)
		assert.Equal(t, int64(5000), s.PreparingNs)
	}
}

// A per-iteration export whose msprof_ timeline of one iteration is gone while its
// hccl_ and task_time_ files are there lost that file: the rank is incomplete, naming
// it. (Read as an export of the other iterations, the real AlexNet run lost its 15 ms
// step 2 without a word, and its mean step read 31 ms instead of 26.) An iteration with
// none of its files was left out of the export, as the real run left out 4 to 10.
func TestMsprofOldLayoutLostIteration(t *testing.T) {
	src := realdata.Path(t, "msprof-mindspore-alexnet", alexnetProf)
	timeline := filepath.Join("device_0", "timeline")
	t.Run("timeline alone gone", func(t *testing.T) {
		prof := filepath.Join(t.TempDir(), alexnetProf)
		msprofCopyTree(t, src, prof)
		require.NoError(t, os.Remove(filepath.Join(prof, timeline, "msprof_0_2_2.json")))
		ranks, err := loadMsprofDir(prof)
		require.NoError(t, err)
		require.Len(t, ranks, 1)
		r := ranks[0]
		require.Len(t, r.Problems, 1)
		assert.Equal(t, filepath.Join(prof, timeline, "msprof_0_2_2.json")+
			": missing, while hccl_0_2_2.json and task_time_0_2_2.json of the same iteration are there: that iteration's steps are not measured", r.Problems[0])
		assert.Equal(t, []int{1, 3}, stepNumbers(r.Steps))
	})
	t.Run("iteration left out", func(t *testing.T) {
		prof := filepath.Join(t.TempDir(), alexnetProf)
		msprofCopyTree(t, src, prof)
		for _, f := range []string{"msprof_0_2_2.json", "hccl_0_2_2.json", "task_time_0_2_2.json"} {
			require.NoError(t, os.Remove(filepath.Join(prof, timeline, f)))
		}
		ranks, err := loadMsprofDir(prof)
		require.NoError(t, err)
		assert.Empty(t, ranks[0].Problems)
		assert.Equal(t, []int{1, 3}, stepNumbers(ranks[0].Steps))
	})
}

func stepNumbers(steps []profile.StepMarker) []int {
	out := make([]int, len(steps))
	for i, s := range steps {
		out[i] = s.Step
	}
	return out
}

func TestMsprofNoTimeline(t *testing.T) {
	prof := filepath.Join(t.TempDir(), "PROF_000001_20250109074733000_KPYJITEXCXKJYRCD")
	msprofWriteFiles(t, prof, map[string]string{
		"device_3/info.json.3": `{"rank_id": 5, "hostUid": "42"}`,
		"host/info.json":       `{}`,
	})
	ranks, err := loadMsprofDir(prof)
	require.NoError(t, err)
	require.Len(t, ranks, 1)
	assert.Equal(t, 5, ranks[0].Rank)
	assert.False(t, ranks[0].HasTimeline)
	require.Len(t, ranks[0].Problems, 1)
	assert.Contains(t, ranks[0].Problems[0], "msprof --export=on")

	_, err = loadMsprofDir(t.TempDir())
	assert.Error(t, err, "no device_N")
	_, err = loadMsprofDir(filepath.Join(t.TempDir(), "absent"))
	assert.Error(t, err)
}

func TestMsprofBadInfo(t *testing.T) {
	prof := filepath.Join(t.TempDir(), "PROF_000001_20250109074733000_KPYJITEXCXKJYRCD")
	msprofWriteFiles(t, prof, map[string]string{"device_0/info.json.0": `{"rank_id": [1]}`})
	devs, err := scanMsprofDir(prof)
	require.NoError(t, err)
	require.Len(t, devs, 1)
	assert.Equal(t, -1, devs[0].RankID)
	assert.Contains(t, devs[0].Problem, "info.json.0")
	assert.Contains(t, devs[0].Problem, "rank_id")
}

func TestIsMsprofDir(t *testing.T) {
	root := t.TempDir()
	msprofWriteFiles(t, root, map[string]string{
		"PROF_000001_20250109074733000_KPYJITEXCXKJYRCD/x":    "",
		"renamed/device_3/info.json.3":                        "{}",
		"nodevice/device_3/start_info.3":                      "{}",
		"PROF_1_2_X/device_x/info.json.0":                     "{}",
		"rank0_ascend_pt/profiler_info_0.json":                "{}",
		"PROF_000001_2025010907473300_SHORT/device_0/nothing": "",
		"file.json": "",
	})
	for name, want := range map[string]bool{
		"PROF_000001_20250109074733000_KPYJITEXCXKJYRCD": true,
		"renamed":                            true,
		"nodevice":                           false,
		"PROF_1_2_X":                         false,
		"rank0_ascend_pt":                    false,
		"PROF_000001_2025010907473300_SHORT": false,
		"file.json":                          false,
		"absent":                             false,
	} {
		assert.Equal(t, want, isMsprofDir(filepath.Join(root, name)), name)
	}
}

func TestAssignMsprofRanks(t *testing.T) {
	dev := func(dir string, n, rank int, host string) msprofDevice {
		return msprofDevice{ProfDir: dir, Device: n, RankID: rank, Rank: rank, HostUID: host, Timestamp: msprofDirTimestamp(dir)}
	}
	const (
		early = "PROF_000001_20250109074733000_AAAAAAAAAAAAAAAA"
		late  = "PROF_000001_20250109080000000_BBBBBBBBBBBBBBBB"
	)
	t.Run("unset rank ids", func(t *testing.T) {
		devs := []msprofDevice{
			dev("h2/"+early, 1, -1, "9"),
			dev("h1/"+early, 1, -1, "10"),
			dev("h2/"+early, 0, -1, "9"),
			dev("h1/"+late, 0, -1, "10"),
			dev("h1/"+early, 0, -1, "10"),
		}
		kept, notes := assignMsprofRanks(devs)
		require.Len(t, kept, 4)
		// hostUid sorts as a string: "10" < "9".
		want := []struct {
			dir  string
			dev  int
			rank int
		}{{"h1/" + early, 0, 0}, {"h1/" + early, 1, 1}, {"h2/" + early, 0, 2}, {"h2/" + early, 1, 3}}
		for i, w := range want {
			assert.Equal(t, w.dir, kept[i].ProfDir)
			assert.Equal(t, w.dev, kept[i].Device)
			assert.Equal(t, w.rank, kept[i].Rank)
			assert.Equal(t, -1, kept[i].RankID, "the file's rank_id is kept as written")
		}
		require.NotEmpty(t, notes)
		assert.Contains(t, strings.Join(notes, "\n"), "h1/"+late+" device_0 ignored")
	})
	t.Run("known rank ids", func(t *testing.T) {
		devs := []msprofDevice{dev("a/"+early, 0, 1, ""), dev("b/"+late, 3, 1, ""), dev("c/"+early, 2, 0, ""), dev("d/"+early, 5, -1, "")}
		kept, notes := assignMsprofRanks(devs)
		require.Len(t, kept, 3)
		assert.Equal(t, []int{0, 1, 2}, []int{kept[0].Rank, kept[1].Rank, kept[2].Rank})
		assert.Equal(t, "b/"+late, kept[1].ProfDir, "the latest directory of a rank is kept")
		assert.Equal(t, "d/"+early, kept[2].ProfDir, "an unset rank takes the first free number")
		assert.Contains(t, strings.Join(notes, "\n"), "a/"+early+" device_0 ignored")
	})
	// Devices that claim one rank while collecting at the same time are different
	// devices: the job's rank ids are not global. Both are kept and incomplete; a
	// device of another host an hour later is a re-run, and the latest is kept.
	t.Run("one rank claimed at the same time", func(t *testing.T) {
		const soon = "PROF_000001_20250109074750000_CCCCCCCCCCCCCCCC" // 17 s after early
		devs := []msprofDevice{dev("a/"+early, 0, 0, ""), dev("a/"+early, 1, 0, ""), dev("h1/"+early, 0, 2, "h1"), dev("h2/"+soon, 0, 2, "h2"),
			dev("h1/"+early, 1, 3, "h1"), dev("h2/"+late, 1, 3, "h2")}
		kept, notes := assignMsprofRanks(devs)
		require.Len(t, kept, 5)
		got := map[string]msprofDevice{}
		for _, d := range kept {
			got[fmt.Sprintf("%s %d", d.ProfDir, d.Device)] = d
		}
		assert.Equal(t, 0, got["a/"+early+" 0"].Rank)
		assert.Equal(t, 1, got["a/"+early+" 1"].Rank, "the second claimant takes the first free number")
		assert.Equal(t, "rank 0 is claimed also by a/"+early+" device_1, which another process (device 1) profiled at the same time (0s apart): "+
			"the job's rank ids are not its global ranks (local ranks, or two jobs mixed), so which rank each is is not known", got["a/"+early+" 0"].Problem)
		assert.Contains(t, got["a/"+early+" 1"].Problem, "rank 0 is claimed also by a/"+early+" device_0, which another process (device 0)")
		assert.Equal(t, 2, got["h1/"+early+" 0"].Rank)
		assert.Equal(t, 4, got["h2/"+soon+" 0"].Rank)
		assert.Contains(t, got["h2/"+soon+" 0"].Problem, "(host h1 device 0) profiled at the same time (17s apart)")
		assert.Contains(t, got["h2/"+soon+" 0"].Problem, "; numbered as a device without a rank_id")
		assert.Equal(t, 3, got["h2/"+late+" 1"].Rank, "an hour later: a re-run, the latest kept")
		assert.Empty(t, got["h2/"+late+" 1"].Problem)
		assert.Contains(t, strings.Join(notes, "\n"), "h1/"+early+" device_1 ignored")
	})
	t.Run("generated cluster with local rank ids", func(t *testing.T) {
		_, dir := genMsprof(t, "demo-2server-8rank", nil)
		var devs []msprofDevice
		for _, p := range msprofProfDirs(t, dir) {
			d, err := scanMsprofDir(p)
			require.NoError(t, err)
			require.Len(t, d, 1)
			d[0].RankID %= 4 // each server's devices numbered 0-3
			d[0].Rank = d[0].RankID
			devs = append(devs, d...)
		}
		kept, _ := assignMsprofRanks(devs)
		require.Len(t, kept, 8, "before, one server's four devices were dropped as older duplicates")
		for i, d := range kept {
			assert.Equal(t, i, d.Rank)
			assert.Contains(t, d.Problem, fmt.Sprintf("rank %d is claimed also by ", d.RankID))
			// A summary of the device carries the claim discovery compared.
			c := msprofClaim(d)
			require.NotEmpty(t, c.worker)
			require.Positive(t, c.atNs)
			assert.Equal(t, c, claimOfRank(loadMsprofDevice(d)))
		}
	})
	t.Run("generated cluster with rank ids cleared", func(t *testing.T) {
		_, dir := genMsprof(t, "demo-2server-8rank", nil)
		var devs []msprofDevice
		want := map[string]int{}
		for _, p := range msprofProfDirs(t, dir) {
			d, err := scanMsprofDir(p)
			require.NoError(t, err)
			require.Len(t, d, 1)
			want[p] = d[0].RankID
			d[0].RankID, d[0].Rank = -1, -1
			devs = append(devs, d...)
		}
		kept, _ := assignMsprofRanks(devs)
		require.Len(t, kept, 8)
		// The generator numbers ranks host by host, device by device; the host uids
		// are what order the hosts.
		byHost := map[string][]msprofDevice{}
		for _, d := range kept {
			byHost[d.HostUID] = append(byHost[d.HostUID], d)
		}
		assert.Len(t, byHost, 2)
		for i, d := range kept {
			assert.Equal(t, i, d.Rank)
			if i > 0 {
				prev := kept[i-1]
				assert.True(t, prev.HostUID < d.HostUID || (prev.HostUID == d.HostUID && prev.Device < d.Device))
			}
			r := loadMsprofDevice(d)
			assert.Equal(t, d.Rank, r.Rank)
			assert.Equal(t, -1, r.Info.RankID)
		}
	})
}

func TestMsprofMultiDeviceExport(t *testing.T) {
	_, dir := genMsprof(t, "demo-2server-8rank", nil)
	src := msprofProfDirs(t, dir)[0]
	prof := filepath.Join(t.TempDir(), filepath.Base(src))
	msprofCopyTree(t, src, prof)
	msprofWriteFiles(t, prof, map[string]string{"device_7/info.json.7": `{"rank_id": 7}`})
	ranks, err := loadMsprofDir(prof)
	require.NoError(t, err)
	require.Len(t, ranks, 2)
	assert.Equal(t, 0, ranks[0].Rank)
	assert.Empty(t, ranks[0].Problems)
	assert.True(t, ranks[0].HasTimeline)
	assert.NotEmpty(t, ranks[0].CommStats)
	assert.Equal(t, 7, ranks[1].Rank)
	assert.False(t, ranks[1].HasTimeline)
	assert.Empty(t, ranks[1].CommStats)
	require.Len(t, ranks[1].Problems, 1)
	assert.Contains(t, ranks[1].Problems[0], "as device 0's")
}

// BenchmarkMsprofDir reads one generated CANN 8 PROF directory: info.json, the
// timeline (about 16 MB) and the analyze/ JSON files. MB/s counts the files read.
func BenchmarkMsprofDir(b *testing.B) {
	sc, err := scenario.Parse([]byte(`
ranks: 2
ranks_per_server: 2
steps: 4
model: {gradient_bytes: 600000000, dtype: BFP16, forward_ms: 60, backward_ms: 120, optimizer_ms: 5, kernel_us: 60}
ddp: {bucket_mb: 25, overlap: 0.8}
`))
	require.NoError(b, err)
	run, err := sim.Simulate(sc)
	require.NoError(b, err)
	dir := b.TempDir()
	_, _, err = render.WriteCluster(run, dir, render.Options{Format: render.FormatMsprof})
	require.NoError(b, err)
	prof := msprofProfDirs(b, dir)[0]
	// Bytes of the files read (the CSVs beside them are not).
	first, err := loadMsprofDir(prof)
	require.NoError(b, err)
	var size int64
	for _, f := range first[0].FilesUsed {
		st, err := os.Stat(filepath.Join(prof, f))
		require.NoError(b, err)
		size += st.Size()
	}
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	var events int
	for i := 0; i < b.N; i++ {
		ranks, err := loadMsprofDir(prof)
		if err != nil || len(ranks) != 1 || len(ranks[0].Problems) > 0 || !ranks[0].HasTimeline {
			b.Fatalf("err %v, %d ranks", err, len(ranks))
		}
		events = len(ranks[0].Compute) + len(ranks[0].CommTasks)
	}
	b.ReportMetric(math.Round(float64(events)), "tasks")
}
