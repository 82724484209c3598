package parser_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/fixtures/render"
	"github.com/hcclprof/hcclprof/fixtures/scenario"
	"github.com/hcclprof/hcclprof/fixtures/sim"
	"github.com/hcclprof/hcclprof/internal/realdata"
	"github.com/hcclprof/hcclprof/internal/testkit"
	"github.com/hcclprof/hcclprof/parser"
	"github.com/hcclprof/hcclprof/profile"

	_ "modernc.org/sqlite"
)

// The real db export of imagenet-2rank-db (rank 0, step 50) gives, through discovery,
// the db parser and the analysis, the profiler's own analysis.db StepTraceTime
// figures (../shared/realdata/README.md) within 0.5 µs, with no warning.
func TestTorchDBRealDataMatchesProfiler(t *testing.T) {
	dir := realdata.Path(t, "imagenet-2rank-db")
	c, err := parser.LoadCluster([]string{dir}, parser.LoadOptions{})
	require.NoError(t, err)
	require.Len(t, c.Ranks, 1)
	r := c.Ranks[0]
	assert.Equal(t, 0, r.Rank)
	assert.Equal(t, profile.FormatTorchNPUDB, r.Format)
	assert.Empty(t, r.Problems)
	assert.Equal(t, []string{"ASCEND_PROFILER_OUTPUT/analysis.db", "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db", "profiler_info_0.json"}, r.FilesUsed)
	assert.Empty(t, r.FilesIgnored)
	assert.Equal(t, "db", r.Info.ExportType)
	assert.Equal(t, "Level1", r.Info.ProfilerLevel)
	assert.Equal(t, "Ascend910B", r.Info.ChipName, "NPU_INFO")

	// STEP_TIME.
	require.True(t, r.HasTimeline)
	assert.Equal(t, []profile.StepMarker{{Step: 50, Interval: profile.Interval{StartNs: 1736410576386409710, EndNs: 1736410576538298460}}}, r.Steps)
	// The 187 COMPUTE_TASK_INFO tasks, DSA_SQE included.
	assert.Len(t, r.Compute, 187)
	assert.True(t, slices.IsSortedFunc(r.Compute, func(a, b profile.Interval) int { return int(a.StartNs - b.StartNs) }))
	// COMMUNICATION_OP: 4 FP32 AllReduce ops in the group whose hash ends in 210.
	require.Len(t, r.CommOps, 4)
	var commNs int64
	for i, op := range r.CommOps {
		assert.Equal(t, fmt.Sprintf("hcom_allReduce__210_%d_1", i), op.Name)
		assert.Equal(t, "allreduce", op.Type)
		assert.Equal(t, "17148521525495523210", op.Group, "the decimal double hash of the raw group name")
		assert.Equal(t, "FP32", op.DataType)
		assert.Equal(t, "MESH-RING", op.AlgType)
		assert.Equal(t, -1, op.Step)
		commNs += op.DurNs()
	}
	const rawGroup = "90.91.105.46%enp189s0f0_60000_0_1736410538306028"
	assert.Equal(t, profile.CommOp{Name: "hcom_allReduce__210_0_1", Type: "allreduce", Group: "17148521525495523210",
		GroupRow: rawGroup, Interval: profile.Interval{StartNs: 1736410576431631806, EndNs: 1736410576520382799},
		Step: -1, DataType: "FP32", Count: 4097000, AlgType: "MESH-RING"}, r.CommOps[0])
	assert.Equal(t, int64(102108100), commNs, "the ops' durations sum to analysis.db's communication")
	// COMMUNICATION_TASK_INFO ⋈ TASK: docs/formats.md §7.1's verbatim rows.
	assert.Len(t, r.CommTasks, 296)
	assert.Contains(t, r.CommTasks, profile.CommTask{Plane: 0, TaskLabels: &profile.TaskLabels{GroupRow: rawGroup, Name: "Memcpy", TransportType: "SDMA", LinkType: "ON_CHIP"}, Interval: profile.Interval{StartNs: 1736410576431633686, EndNs: 1736410576431637106},
		SrcRank: 0, DstRank: 0, SizeBytes: 2064384})
	// Flows: 190 kernel launches and one HcclAllreduce (the db links only the first of
	// the four ops to a framework op).
	require.Len(t, r.Flows, 191)
	assert.Equal(t, profile.DeviceFlow{DeviceNs: 1736410576404465403, HostNs: 1736410576401580120}, r.Flows[0])
	assert.Contains(t, r.Flows, profile.DeviceFlow{DeviceNs: 1736410576431631806, HostNs: 1736410576430870360}, "an HCCL launch ends at its COMMUNICATION_OP start")
	// OVERLAP_ANALYSIS, types 0..3.
	sum := func(ivs []profile.Interval) (n int64) {
		for _, iv := range ivs {
			n += iv.DurNs()
		}
		return n
	}
	assert.Equal(t, int64(8903431), sum(r.Overlap.Computing))
	assert.Equal(t, int64(102108100), sum(r.Overlap.Communication))
	assert.Equal(t, int64(98071947), sum(r.Overlap.CommNotOverlapped))
	assert.Equal(t, int64(25258144), sum(r.Overlap.Free))
	// META_DATA: only ENV_VARIABLES in this db.
	assert.Contains(t, r.Metadata.Env, "HCCL_RDMA_TC")
	assert.Nil(t, r.Metadata.ParallelGroups)
	// analysis.db.
	assert.Equal(t, []profile.StepTraceRow{{Step: 50, HasStep: true, ComputingNs: 8_903_431, CommNotOverlappedNs: 98_071_947,
		OverlappedNs: 4_036_153, CommunicationNs: 102_108_100, FreeNs: 25_258_144, StageNs: 132_233_522, BubbleNs: 0,
		CommNotOverlappedExclRecvNs: 98_071_947, PreparingNs: 18_055_693, HasPreparing: true}}, r.StepTrace)
	require.Len(t, r.CommStats, 4)
	s0 := r.CommStats[0]
	assert.Equal(t, "hcom_allReduce__210_0_1", s0.Name)
	assert.Equal(t, "17148521525495523210", s0.Group)
	assert.Equal(t, 50, s0.Step)
	assert.False(t, s0.P2P)
	assert.Equal(t, int64(1736410576431645200), s0.StartNs, "start_timestamp keeps its written digits")
	assert.Equal(t, int64(88750993), s0.ElapseNs)
	hccs := s0.Transports["HCCS"]
	assert.Equal(t, int64(28647232), hccs.Bytes)
	assert.Equal(t, []profile.PacketBin{{SizeBytes: 1937312, Count: 2, TimeNs: 240505}, {SizeBytes: 2064384, Count: 12, TimeNs: 1581392}}, hccs.SizeDistribution)
	assert.Empty(t, s0.Transports["SDMA"].SizeDistribution, "the SDMA aggregate row adds no packet bin")
	assert.Contains(t, r.CommMatrix, profile.MatrixLink{Step: 50, OpKey: "allreduce-top1", Group: "17148521525495523210", SrcLocal: 0, DstLocal: 1,
		Transport: "HCCS", Bytes: 37781504, TimeNs: 2234105, BandwidthGBps: 16.9113, OpName: "hcom_allReduce__210_2_1"})

	res := analysis.Analyze(c, analysis.Options{})
	// The recomputation agrees with analysis.db's StepTraceTime: no mismatch warning.
	// The warnings: the group's size is a lower bound (no parallel_group_info: the
	// matrix names 8 of its ranks), and the links to the 7 ranks not profiled cannot
	// be placed (only rank 0 says which member it is).
	unmapped := "407.79 MiB of HCCL transfers (100.0% of all) go between group-local ranks that map to no global rank"
	require.Len(t, res.Warnings, 2)
	assert.Contains(t, res.Warnings[0], "lower bounds from communication_matrix.json, which names only the ranks seen in the profiled window: group 17148521525495523210 at least 8 (1 profiled)")
	assert.Contains(t, res.Warnings[1], unmapped)
	require.Len(t, res.Ranks, 1)
	rr := res.Ranks[0]
	assert.Equal(t, analysis.SourceTimeline, rr.Source)
	require.Len(t, rr.Steps, 1)
	s := rr.Steps[0]
	assert.Equal(t, 50, s.Step)
	for _, f := range []struct {
		name string
		want float64
		got  int64
	}{
		{"Computing", 8903.431, s.ComputingNs},
		{"Communication(Not Overlapped)", 98071.947, s.CommNotOverlappedNs},
		{"Overlapped", 4036.153, s.OverlappedNs},
		{"Communication", 102108.1, s.CommunicationNs},
		{"Free", 25258.144, s.FreeNs},
		{"Stage", 132233.522, s.StageNs},
		{"Bubble", 0, s.BubbleNs},
		{"Preparing", 18055.693, s.PreparingNs},
	} {
		assert.InDelta(t, f.want, float64(f.got)/1000, 0.5, f.name)
	}
	assert.InDelta(t, 0.7417, s.CommShare(), 0.00005)
	require.Len(t, res.Collectives, 1)
	assert.Equal(t, 8, res.Collectives[0].GroupSize, "from CommAnalyzerMatrix's links")
}

// A single ascend_pytorch_profiler_N.db argument is read alone, like a lone
// trace_view.json.
func TestTorchDBSingleFileArgument(t *testing.T) {
	db := realdata.Path(t, "imagenet-2rank-db", "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT", "ascend_pytorch_profiler_0.db")
	c, err := parser.LoadCluster([]string{db}, parser.LoadOptions{})
	require.NoError(t, err)
	require.Len(t, c.Ranks, 1)
	r := c.Ranks[0]
	assert.Equal(t, 0, r.Rank)
	assert.Equal(t, profile.FormatTorchNPUDB, r.Format)
	assert.Equal(t, []string{"ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db", "profiler_info_0.json"}, r.FilesUsed)
	assert.Empty(t, r.StepTrace, "analysis.db was not named")
	res := analysis.Analyze(c, analysis.Options{})
	require.Len(t, res.Ranks, 1)
	assert.InDelta(t, 132233.522, float64(res.Ranks[0].Steps[0].StageNs)/1000, 0.5)
	// Checked against OVERLAP_ANALYSIS instead of StepTraceTime: no mismatch. Without
	// CommAnalyzerMatrix the group size is not stated, but the tasks send to local
	// ranks up to 7: the world group of 8 that the Level1 run's matrix names.
	require.Len(t, res.Warnings, 2)
	assert.Equal(t, "group 17148521525495523210: size unknown (no parallel_group_info or communication_matrix.json); its HCCL tasks name group-local ranks up to 7, so it has at least 8 ranks, 1 of them profiled: busbw and the wait for unprofiled ranks use 8", res.Warnings[0])
	assert.Contains(t, res.Warnings[1], "407.79 MiB of HCCL transfers (100.0% of all) go between group-local ranks that map to no global rank")
	require.Len(t, res.Collectives, 1)
	assert.Equal(t, 8, res.Collectives[0].GroupSize)
}

// runScenario simulates a built-in scenario, edited by edit when not nil.
func runScenario(t testing.TB, name string, edit func(*scenario.Scenario)) *sim.Run {
	t.Helper()
	sc, err := scenario.Builtin(name)
	require.NoError(t, err)
	if edit != nil {
		edit(sc)
		require.NoError(t, sc.Normalize())
	}
	run, err := sim.Simulate(sc)
	require.NoError(t, err)
	return run
}

// The text and db renderings of one generated run analyse identically, step by step
// and rank by rank, and both match the generator's ground truth. -short leaves out
// slow-link-2server (16 ranks) and cuts the pipeline case to TP2 × PP4 (8 ranks).
func TestTorchDBMatchesTextExport(t *testing.T) {
	cases := []struct {
		name     string
		scenario string
		edit     func(*scenario.Scenario)
	}{
		{"demo-2server-8rank", "demo-2server-8rank", nil},
		{"slow-link-2server", "slow-link-2server", nil},
		// Pipeline parallelism (hcom_send/hcom_receive, Bubble): pp4-dp8-256rank cut to
		// 32 ranks, TP8 × PP4 × DP1.
		{"pp4-tp8-32rank", "pp4-dp8-256rank", func(sc *scenario.Scenario) {
			sc.Ranks = 32
			sc.Parallel.TP, sc.Parallel.PP = 8, 4
			sc.Algorithm.Inter = "" // HCCL's default for 4 servers
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "slow-link-2server" && testing.Short() {
				t.Skip("-short: the demo and the pipeline case")
			}
			sc := testkit.Builtin(t, tc.scenario)
			if tc.edit != nil {
				tc.edit(sc)
				if sc.Parallel.PP > 1 && testkit.Short(t, "TP2 × PP4 on 8 ranks") {
					sc.Ranks, sc.Parallel.TP = 8, 2
				}
				require.NoError(t, sc.Normalize())
			}
			text, db := testkit.Generate(t, sc, render.FormatText), testkit.Generate(t, sc, render.FormatDB)
			textDir, dbDir, truth := text.Dir, db.Dir, text.Truth
			require.Equal(t, truth.Ranks, db.Truth.Ranks, "one run, one truth")

			textC, err := parser.LoadCluster([]string{textDir}, parser.LoadOptions{})
			require.NoError(t, err)
			dbC, err := parser.LoadCluster([]string{dbDir}, parser.LoadOptions{})
			require.NoError(t, err)
			require.Len(t, dbC.Ranks, len(textC.Ranks))
			assert.Empty(t, dbC.Notes)
			for i, r := range dbC.Ranks {
				tr := textC.Ranks[i]
				require.Equal(t, tr.Rank, r.Rank)
				assert.Equal(t, profile.FormatTorchNPUDB, r.Format)
				assert.Empty(t, r.Problems, "rank %d", r.Rank)
				// The timeline is the same, read from either export.
				assert.Equal(t, tr.Steps, r.Steps, "rank %d steps", r.Rank)
				assert.Equal(t, tr.Compute, r.Compute, "rank %d compute", r.Rank)
				assert.Equal(t, withoutRows(tr.CommOps), withoutRows(r.CommOps), "rank %d ops", r.Rank)
				assert.ElementsMatch(t, tasksWithoutRows(tr.CommTasks), tasksWithoutRows(r.CommTasks), "rank %d tasks", r.Rank)
				assert.Equal(t, tr.StepTrace, r.StepTrace, "rank %d step trace", r.Rank)
				assert.Equal(t, tr.Metadata, r.Metadata, "rank %d metadata", r.Rank)
				assert.Equal(t, tr.CommMatrix, r.CommMatrix, "rank %d matrix", r.Rank)
				assert.Equal(t, withTraffic(tr.CommStats), r.CommStats, "rank %d comm stats", r.Rank)
			}

			textRes := analysis.Analyze(textC, analysis.Options{})
			dbRes := analysis.Analyze(dbC, analysis.Options{})
			assert.Empty(t, dbRes.Warnings)
			assert.Empty(t, textRes.Warnings)
			require.Len(t, dbRes.Ranks, len(textRes.Ranks))
			for i := range dbRes.Ranks {
				assert.Equal(t, textRes.Ranks[i].Steps, dbRes.Ranks[i].Steps, "rank %d", dbRes.Ranks[i].Rank)
			}
			assert.Equal(t, textRes.Summary, dbRes.Summary)
			assert.Equal(t, textRes.Collectives, dbRes.Collectives)
			testkit.AssertMatchesTruth(t, dbRes, truth)
		})
	}
}

// withoutRows drops the text timeline's row names, which the db has no equivalent of.
func withoutRows(ops []profile.CommOp) []profile.CommOp {
	out := slices.Clone(ops)
	for i := range out {
		out[i].GroupRow = ""
	}
	return out
}

// tasksWithoutRows drops GroupRow, which names the timeline row in the text export
// and the raw group in the db.
func tasksWithoutRows(tasks []profile.CommTask) []profile.CommTask {
	out := slices.Clone(tasks)
	for i := range out {
		labels := *out[i].TaskLabels // other labels, not the shared ones changed
		labels.GroupRow = ""
		out[i].TaskLabels = &labels
	}
	return out
}

// withTraffic drops the transports without traffic, which communication.json lists
// with zeros and analysis.db leaves out.
func withTraffic(stats []profile.CommOpStats) []profile.CommOpStats {
	out := slices.Clone(stats)
	for i := range out {
		tr := map[string]profile.TransportStats{}
		for k, v := range out[i].Transports {
			if v.Bytes != 0 || v.TimeNs != 0 || len(v.SizeDistribution) > 0 {
				if len(v.SizeDistribution) == 0 {
					v.SizeDistribution = nil
				}
				tr[k] = v
			}
		}
		if len(tr) == 0 {
			tr = nil
		}
		out[i].Transports = tr
	}
	return out
}

// writeDemoDB writes demo-2server-8rank in the db format and returns the cluster dir and
// rank 0's directory.
func writeDemoDB(t testing.TB) (cluster, rank0 string) {
	t.Helper()
	run := runScenario(t, "demo-2server-8rank", nil)
	dir := t.TempDir()
	_, _, err := render.WriteCluster(run, dir, render.Options{Format: render.FormatDB})
	require.NoError(t, err)
	matches, err := filepath.Glob(filepath.Join(dir, "*", "ASCEND_PROFILER_OUTPUT", "ascend_pytorch_profiler_0.db"))
	require.NoError(t, err)
	require.Len(t, matches, 1)
	return dir, filepath.Dir(filepath.Dir(matches[0]))
}

type fileState struct {
	sum   [32]byte
	mtime time.Time
	mode  fs.FileMode
}

func snapshot(t *testing.T, dir string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		st, err := os.Stat(p)
		require.NoError(t, err)
		out[p] = fileState{sha256.Sum256(b), st.ModTime(), st.Mode()}
		return nil
	}))
	return out
}

// Parsing never modifies the input: every file keeps its bytes, mtime and mode, and
// no journal, WAL or shared-memory file appears beside the dbs.
func TestTorchDBLeavesInputUntouched(t *testing.T) {
	dir, _ := writeDemoDB(t)
	// Make the mtimes old, so that a write within the test's second would show.
	old := time.Date(2025, 1, 9, 7, 47, 33, 0, time.UTC)
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			err = os.Chtimes(p, old, old)
		}
		return err
	}))
	before := snapshot(t, dir)
	c, err := parser.LoadCluster([]string{dir}, parser.LoadOptions{})
	require.NoError(t, err)
	require.Len(t, c.Ranks, 8)
	for _, r := range c.Ranks {
		require.Empty(t, r.Problems)
	}
	assert.Equal(t, before, snapshot(t, dir))
}

// copyFile copies src to dst.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
	require.NoError(t, os.WriteFile(dst, b, 0o644))
}

// execDB runs statements on a db (read-write: the tests' own copies).
var execDB = testkit.ExecDB

// Damaged or foreign dbs give an error that names the file and says what is wrong,
// never a panic, and the rank is marked incomplete. (This stands in for a fuzz
// target: SQLite files are binary, with checksummed structure a fuzzer rarely gets
// past.)
func TestTorchDBCorruptions(t *testing.T) {
	_, rank0 := writeDemoDB(t)
	srcDB := filepath.Join(rank0, "ASCEND_PROFILER_OUTPUT", "ascend_pytorch_profiler_0.db")
	srcAnalysis := filepath.Join(rank0, "ASCEND_PROFILER_OUTPUT", "analysis.db")
	good, err := os.ReadFile(srcDB)
	require.NoError(t, err)

	cases := []struct {
		name    string
		analyis bool // damage analysis.db instead of the profiler db
		damage  func(t *testing.T, path string)
		want    string // in the error
		partial bool   // the timeline may still be read
	}{
		{name: "truncated to half", damage: func(t *testing.T, p string) {
			require.NoError(t, os.Truncate(p, int64(len(good)/2)))
		}, want: "truncated"},
		{name: "truncated by 1%", damage: func(t *testing.T, p string) {
			require.NoError(t, os.Truncate(p, int64(len(good))*99/100))
		}, want: "truncated"},
		{name: "garbage", damage: func(t *testing.T, p string) {
			b := bytes.Repeat([]byte("not a database, just garbage\n"), len(good)/29)
			require.NoError(t, os.WriteFile(p, b, 0o644))
		}, want: "not a SQLite database"},
		{name: "empty", damage: func(t *testing.T, p string) {
			require.NoError(t, os.WriteFile(p, nil, 0o644))
		}, want: "empty file"},
		{name: "zeroed header", damage: func(t *testing.T, p string) {
			b := slices.Clone(good)
			clear(b[:100])
			require.NoError(t, os.WriteFile(p, b, 0o644))
		}, want: "not a SQLite database"},
		{name: "zeroed schema page", damage: func(t *testing.T, p string) {
			b := slices.Clone(good)
			clear(b[100:4096]) // the rest of page 1: sqlite_master
			require.NoError(t, os.WriteFile(p, b, 0o644))
		}, want: "corrupt"},
		{name: "no TASK table", damage: func(t *testing.T, p string) {
			execDB(t, p, "DROP TABLE TASK")
		}, want: "no table TASK"},
		{name: "TASK without connectionId", damage: func(t *testing.T, p string) {
			execDB(t, p, "ALTER TABLE TASK DROP COLUMN connectionId")
		}, want: "table TASK has no column connectionId"},
		{name: "COMMUNICATION_OP without endNs", damage: func(t *testing.T, p string) {
			execDB(t, p, "ALTER TABLE COMMUNICATION_OP DROP COLUMN endNs")
		}, want: "table COMMUNICATION_OP has no column endNs", partial: true},
		{name: "PYTORCH_API.startNs not a number", damage: func(t *testing.T, p string) {
			execDB(t, p, "UPDATE PYTORCH_API SET startNs = 'soon' WHERE rowid = (SELECT MAX(rowid) FROM PYTORCH_API WHERE connectionId IS NOT NULL)")
		}, want: `PYTORCH_API.startNs: sql: Scan error on column index 1, name "startNs": "soon" is not an integer`},
		{name: "STEP_TIME text", damage: func(t *testing.T, p string) {
			execDB(t, p, "UPDATE STEP_TIME SET startNs = 'x'")
		}, want: "reading STEP_TIME"},
		{name: "META_DATA not JSON", damage: func(t *testing.T, p string) {
			execDB(t, p, "UPDATE META_DATA SET value = '{''tp'': 1' WHERE name = 'parallel_group_info'")
		}, want: "META_DATA parallel_group_info", partial: true},
		// Damage that read as empty names, zero sizes and lost rows, without a word.
		{name: "a task type missing from STRING_IDS", damage: func(t *testing.T, p string) {
			execDB(t, p, "DELETE FROM STRING_IDS WHERE id = (SELECT taskType FROM COMMUNICATION_TASK_INFO LIMIT 1)")
		}, want: "is not in STRING_IDS", partial: true},
		{name: "ENUM_HCCL_TRANSPORT_TYPE missing", damage: func(t *testing.T, p string) {
			execDB(t, p, "DROP TABLE ENUM_HCCL_TRANSPORT_TYPE")
		}, want: "is not in ENUM_HCCL_TRANSPORT_TYPE", partial: true},
		{name: "an op without a name", damage: func(t *testing.T, p string) {
			execDB(t, p, "UPDATE COMMUNICATION_OP SET opName = NULL WHERE rowid = (SELECT MIN(rowid) FROM COMMUNICATION_OP)")
		}, want: "opName is NULL", partial: true},
		{name: "an op without a group", damage: func(t *testing.T, p string) {
			execDB(t, p, "UPDATE COMMUNICATION_OP SET groupName = NULL")
		}, want: "groupName is NULL", partial: true},
		{name: "a task without a size", damage: func(t *testing.T, p string) {
			execDB(t, p, "UPDATE COMMUNICATION_TASK_INFO SET size = NULL")
		}, want: "size is NULL", partial: true},
		{name: "tasks without a TASK row", damage: func(t *testing.T, p string) {
			execDB(t, p, "UPDATE COMMUNICATION_TASK_INFO SET globalTaskId = NULL WHERE rowid % 2 = 0")
		}, want: "COMMUNICATION_TASK_INFO rows have no TASK row", partial: true},
		{name: "analysis.db transit time NULL", analyis: true, damage: func(t *testing.T, p string) {
			execDB(t, p, "UPDATE CommAnalyzerTime SET transit_time = NULL")
		}, want: "column transit_time: NULL", partial: true},
		{name: "analysis.db op without a group", analyis: true, damage: func(t *testing.T, p string) {
			execDB(t, p, "UPDATE CommAnalyzerTime SET group_name = NULL")
		}, want: "column group_name: NULL", partial: true},
		{name: "analysis.db bandwidth without a transport", analyis: true, damage: func(t *testing.T, p string) {
			execDB(t, p, "UPDATE CommAnalyzerBandwidth SET transport_type = NULL")
		}, want: "column transport_type: NULL", partial: true},
		{name: "analysis.db packet count NULL", analyis: true, damage: func(t *testing.T, p string) {
			execDB(t, p, "UPDATE CommAnalyzerBandwidth SET count = NULL")
		}, want: "column count: NULL", partial: true},
		{name: "analysis.db truncated", analyis: true, damage: func(t *testing.T, p string) {
			st, err := os.Stat(p)
			require.NoError(t, err)
			require.NoError(t, os.Truncate(p, st.Size()/2))
		}, want: "analysis.db: truncated", partial: true},
		{name: "analysis.db StepTraceTime without stage", analyis: true, damage: func(t *testing.T, p string) {
			execDB(t, p, "ALTER TABLE StepTraceTime DROP COLUMN stage")
		}, want: "table StepTraceTime has no column stage", partial: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rankDir := filepath.Join(t.TempDir(), filepath.Base(rank0))
			out := filepath.Join(rankDir, "ASCEND_PROFILER_OUTPUT")
			dbPath := filepath.Join(out, "ascend_pytorch_profiler_0.db")
			anPath := filepath.Join(out, "analysis.db")
			copyFile(t, srcDB, dbPath)
			copyFile(t, srcAnalysis, anPath)
			copyFile(t, filepath.Join(rank0, "profiler_info_0.json"), filepath.Join(rankDir, "profiler_info_0.json"))
			damaged := dbPath
			if tc.analyis {
				damaged = anPath
			}
			tc.damage(t, damaged)

			if !tc.analyis {
				var err error
				require.NotPanics(t, func() { _, err = parser.ParseTorchDB(dbPath) })
				require.Error(t, err)
				assert.Contains(t, err.Error(), dbPath, "the error names the file")
				assert.Contains(t, err.Error(), tc.want)
			}

			var c *profile.Cluster
			require.NotPanics(t, func() {
				var err error
				c, err = parser.LoadCluster([]string{rankDir}, parser.LoadOptions{})
				require.NoError(t, err)
			})
			require.Len(t, c.Ranks, 1)
			r := c.Ranks[0]
			assert.True(t, r.Incomplete(), "the rank is marked incomplete")
			require.NotEmpty(t, r.Problems)
			assert.Contains(t, strings.Join(r.Problems, "\n"), filepath.Base(damaged))
			assert.Contains(t, strings.Join(r.Problems, "\n"), tc.want)
			if !tc.partial {
				assert.Empty(t, r.Compute, "nothing is taken from a db that cannot be trusted")
			}
			res := analysis.Analyze(c, analysis.Options{})
			assert.True(t, res.Summary.Incomplete)
		})
	}
}

// Discovery: a rank directory with both exports is read from the db, with a note,
// and the text files are listed as skipped; ranks come from the db's name.
func TestDiscoverPrefersDB(t *testing.T) {
	_, rank0 := writeDemoDB(t)
	textRun := runScenario(t, "demo-2server-8rank", nil)
	textDir := t.TempDir()
	_, _, err := render.WriteCluster(textRun, textDir, render.Options{Format: render.FormatText})
	require.NoError(t, err)
	both := filepath.Join(t.TempDir(), filepath.Base(rank0))
	for _, src := range []string{rank0, filepath.Join(textDir, filepath.Base(rank0))} {
		require.NoError(t, filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			copyFile(t, p, filepath.Join(both, rel))
			return nil
		}))
	}
	in, err := parser.Discover([]string{both})
	require.NoError(t, err)
	require.Len(t, in.Ranks, 1)
	assert.Equal(t, filepath.Join(both, "ASCEND_PROFILER_OUTPUT", "ascend_pytorch_profiler_0.db"), in.Ranks[0].DB)
	assert.Contains(t, strings.Join(in.Notes, "\n"), "holds both the db and the text export; reading ascend_pytorch_profiler_0.db")
	r := parser.LoadRank(in.Ranks[0])
	assert.Equal(t, profile.FormatTorchNPUDB, r.Format)
	assert.Empty(t, r.Problems)
	assert.Contains(t, r.FilesIgnored, filepath.Join("ASCEND_PROFILER_OUTPUT", "trace_view.json"))
	assert.NotContains(t, r.FilesUsed, filepath.Join("ASCEND_PROFILER_OUTPUT", "trace_view.json"))

	// The rank comes from the db's file name, as msprof-analyze takes it.
	renamed := filepath.Join(t.TempDir(), "x_ascend_pt")
	copyFile(t, filepath.Join(rank0, "ASCEND_PROFILER_OUTPUT", "ascend_pytorch_profiler_0.db"),
		filepath.Join(renamed, "ASCEND_PROFILER_OUTPUT", "ascend_pytorch_profiler_6.db"))
	in, err = parser.Discover([]string{renamed})
	require.NoError(t, err)
	require.Len(t, in.Ranks, 1)
	assert.Equal(t, 6, in.Ranks[0].Rank)

	// Loose dbs in a folder.
	loose := t.TempDir()
	copyFile(t, filepath.Join(rank0, "ASCEND_PROFILER_OUTPUT", "ascend_pytorch_profiler_0.db"), filepath.Join(loose, "ascend_pytorch_profiler_3.db"))
	c, err := parser.LoadCluster([]string{loose}, parser.LoadOptions{})
	require.NoError(t, err)
	require.Len(t, c.Ranks, 1)
	assert.Equal(t, 3, c.Ranks[0].Rank)
	assert.True(t, c.Ranks[0].HasTimeline)
	assert.NotContains(t, strings.Join(c.Notes, "\n"), ".db", "the dbs read are not reported as ignored")
}

// BenchmarkTorchDB parses one rank's profiler db and analysis.db through LoadRank:
// "generated" is rank 0 of a 2-rank run with ~60 µs kernels (4 steps, ~15k TASK rows,
// 3 MB), "imagenet-2rank-db" the real db (skipped without ../shared/realdata).
// Reports MB/s of db read and ms per rank.
func BenchmarkTorchDB(b *testing.B) {
	b.Run("generated", func(b *testing.B) {
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
		_, _, err = render.WriteCluster(run, dir, render.Options{Format: render.FormatDB})
		require.NoError(b, err)
		benchLoadRank(b, dir)
	})
	b.Run("imagenet-2rank-db", func(b *testing.B) {
		benchLoadRank(b, realdata.Path(b, "imagenet-2rank-db"))
	})
}

func benchLoadRank(b *testing.B, dir string) {
	in, err := parser.Discover([]string{dir})
	require.NoError(b, err)
	ri := in.Ranks[0]
	require.NotEmpty(b, ri.DB)
	var size int64
	for _, p := range []string{ri.DB, filepath.Join(filepath.Dir(ri.DB), "analysis.db")} {
		st, err := os.Stat(p)
		require.NoError(b, err)
		size += st.Size()
	}
	b.SetBytes(size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := parser.LoadRank(ri)
		if len(r.Problems) > 0 || len(r.Compute) == 0 {
			b.Fatalf("bad parse: %v", r.Problems)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/rank")
}

// analysis.db variants: torch_npu 2.7.1's StepTraceTime with a leading deviceId, a
// run without step markers (empty step, the absolute-timestamp Preparing bug), and a
// CommAnalyzerTime whose step is a bare 'step'.
func TestAnalysisDBVariants(t *testing.T) {
	p := filepath.Join(t.TempDir(), "analysis.db")
	execDB(t, p,
		"CREATE TABLE StepTraceTime (deviceId INTEGER, step TEXT, computing NUMERIC, communication_not_overlapped NUMERIC, overlapped NUMERIC, communication NUMERIC, free NUMERIC, stage NUMERIC, bubble NUMERIC, communication_not_overlapped_and_exclude_receive NUMERIC, preparing NUMERIC)",
		"INSERT INTO StepTraceTime VALUES (3, '', 10, 4, 1, 5, 2, 17, 0, 4, 1736410576386409.7)",
		"CREATE TABLE CommAnalyzerTime (hccl_op_name TEXT, group_name TEXT, start_timestamp NUMERIC, elapse_time NUMERIC, transit_time NUMERIC, wait_time NUMERIC, synchronization_time NUMERIC, idle_time NUMERIC, step TEXT, type TEXT)",
		"INSERT INTO CommAnalyzerTime VALUES ('hcom_send__1_0_1', '7', 1736410576431645.2, 0.5, 0.25, 0, 0, 0.25, 'step', 'p2p')",
	)
	a, err := parser.ParseAnalysisDB(p)
	require.NoError(t, err)
	assert.Equal(t, []profile.StepTraceRow{{Step: -1, HasStep: false, ComputingNs: 10_000, CommNotOverlappedNs: 4000, OverlappedNs: 1000,
		CommunicationNs: 5000, FreeNs: 2000, StageNs: 17_000, CommNotOverlappedExclRecvNs: 4000}}, a.StepTrace)
	assert.Equal(t, []profile.CommOpStats{{Step: -1, P2P: true, Name: "hcom_send__1_0_1", Group: "7", StartNs: 1736410576431645200,
		ElapseNs: 500000, TransitNs: 250000, IdleNs: 250000}}, a.CommStats)
	assert.Empty(t, a.CommMatrix)

	// A schema without idle_time: Elapse − Transit − Wait, as the profiler writes it, not 0.
	execDB(t, p, "ALTER TABLE CommAnalyzerTime DROP COLUMN idle_time")
	a, err = parser.ParseAnalysisDB(p)
	require.NoError(t, err)
	require.Len(t, a.CommStats, 1)
	assert.Equal(t, int64(250000), a.CommStats[0].IdleNs)
}
