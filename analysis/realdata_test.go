package analysis_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/realdata"
	"github.com/hcclprof/hcclprof/parser"
)

// stepUs is one row of the profiler's own figures (../shared/realdata/README.md).
type stepUs struct {
	computing, notOverlapped, overlapped, communication, free, stage, bubble, preparing float64
}

func assertWithin(t *testing.T, want, gotNs float64, rel float64, field string) {
	t.Helper()
	got := gotNs / 1000
	tol := math.Max(rel*math.Abs(want), 0.5) // Stage and Preparing are quantised to ~0.25 us
	assert.InDelta(t, want, got, tol, "%s: want %.3f us, got %.3f us", field, want, got)
}

// Every step field of both ranks, recomputed from trace_view.json, matches the
// profiler's step_trace_time.csv within 0.1%.
func TestImagenetLevel1MatchesProfiler(t *testing.T) {
	dir := realdata.Path(t, "imagenet-2rank-level1")
	c, err := parser.LoadCluster([]string{dir}, parser.LoadOptions{})
	require.NoError(t, err)
	res := analysis.Analyze(c, analysis.Options{})
	want := map[int]stepUs{
		0: {8873.756, 101963.203, 4028.675, 105991.878, 25744.050, 136581.0, 0, 17902.5},
		1: {8878.295, 96359.047, 4016.239, 100375.286, 26675.274, 131912.5, 0, 20433.25},
	}
	require.Len(t, res.Ranks, 2)
	for _, rr := range res.Ranks {
		assert.Equal(t, analysis.SourceTimeline, rr.Source)
		require.Len(t, rr.Steps, 1)
		s, w := rr.Steps[0], want[rr.Rank]
		assert.Equal(t, 50, s.Step)
		assertWithin(t, w.computing, float64(s.ComputingNs), 0.001, "Computing")
		assertWithin(t, w.notOverlapped, float64(s.CommNotOverlappedNs), 0.001, "Communication(Not Overlapped)")
		assertWithin(t, w.overlapped, float64(s.OverlappedNs), 0.001, "Overlapped")
		assertWithin(t, w.communication, float64(s.CommunicationNs), 0.001, "Communication")
		assertWithin(t, w.free, float64(s.FreeNs), 0.001, "Free")
		assertWithin(t, w.stage, float64(s.StageNs), 0.001, "Stage")
		assertWithin(t, w.bubble, float64(s.BubbleNs), 0.001, "Bubble")
		assertWithin(t, w.preparing, float64(s.PreparingNs), 0.001, "Preparing")
	}
	assert.InDelta(t, 0.7465, res.Ranks[0].Steps[0].CommShare(), 0.00005)
	assert.InDelta(t, 0.7305, res.Ranks[1].Steps[0].CommShare(), 0.00005)
	// The recomputation agrees with step_trace_time.csv: no mismatch warning. The one
	// warning is the links to the 6 ranks not profiled (see
	// TestImagenetLevel1LinksBetweenProfiledRanks).
	require.Len(t, res.Warnings, 2)
	assert.Contains(t, res.Warnings[0], "lower bounds from communication_matrix.json")
	assert.Contains(t, res.Warnings[1], "go between group-local ranks that map to no global rank")
	// Run-level: time-weighted over both ranks.
	assert.InDelta(t, (101963.203+96359.047)/(136581.0+131912.5), res.Summary.CommShare, 1e-5)
	require.NotNil(t, res.Summary.OverlapRatio)
	assert.InDelta(t, (4028.675+4016.239)/(105991.878+100375.286), *res.Summary.OverlapRatio, 1e-5)
	require.NotNil(t, res.Summary.AllReduceShare)
	assert.Equal(t, res.Summary.CommTotalShare, *res.Summary.AllReduceShare, "every op is an AllReduce")
	// One collective row: 4 FP32 AllReduce ops per rank in one 8-rank group.
	require.Len(t, res.Collectives, 1)
	coll := res.Collectives[0]
	assert.Equal(t, "allreduce", coll.Op)
	assert.Equal(t, "17522688603477080586", coll.Group)
	assert.Equal(t, 8, coll.GroupSize)
	assert.Equal(t, 8, coll.Count)
	assert.Equal(t, int64(2*4*(4097000+16781312+37752832+2469696)), coll.Bytes)
	assertWithin(t, 105991.878+100375.286, float64(coll.TotalNs), 0.00001, "collective total")
	assert.InDelta(t, float64(coll.Bytes)/float64(coll.TotalNs)*2*7/8, coll.BusBwGBps, 1e-9)
}

// Level1 copied with only its summaries (no trace_view.json, no kernel_details.csv):
// the AllReduce union comes from communication.json's op starts and elapses, as
// the timeline's does from its ops (it read 0, and a gate on allreduce_share passed).
func TestImagenetLevel1AllReduceFromCommunicationJSON(t *testing.T) {
	src := realdata.Path(t, "imagenet-2rank-level1")
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(src)))
	for _, rank := range []string{"rank0_ascend_pt", "rank1_ascend_pt"} {
		for _, f := range []string{"trace_view.json", "kernel_details.csv"} {
			require.NoError(t, os.Remove(filepath.Join(dir, rank, "ASCEND_PROFILER_OUTPUT", f)))
		}
	}
	c, err := parser.LoadCluster([]string{dir}, parser.LoadOptions{})
	require.NoError(t, err)
	res := analysis.Analyze(c, analysis.Options{})
	require.Len(t, res.Ranks, 2)
	for _, rr := range res.Ranks {
		assert.Equal(t, analysis.SourceStepTrace, rr.Source)
		assert.Equal(t, "communication.json", rr.OpsSource)
		require.Len(t, rr.Steps, 1)
		s := rr.Steps[0]
		assert.Equal(t, s.CommunicationNs, s.AllReduceNs, "rank %d: every op is an AllReduce", rr.Rank)
	}
	// The trace's figure (TestImagenetLevel1MatchesProfiler: equal to comm_total_share).
	require.NotNil(t, res.Summary.AllReduceShare)
	assert.InDelta(t, 0.768611, *res.Summary.AllReduceShare, 5e-7)
}

// Level1 has no parallel_group_info, and 2 of its world group's 8 ranks were
// profiled: each rank's LOCAL self-link ("0-0", "1-1") says which member it is, as
// msprof-analyze reads it, so the links between them are placed (they were all
// dropped without a word), with the profiler's own matrix totals; the links to the 6
// ranks not profiled stay out, and a warning says how much.
func TestImagenetLevel1LinksBetweenProfiledRanks(t *testing.T) {
	dir := realdata.Path(t, "imagenet-2rank-level1")
	c, err := parser.LoadCluster([]string{dir}, parser.LoadOptions{})
	require.NoError(t, err)
	res := analysis.Analyze(c, analysis.Options{})
	links := res.Communication.Links
	require.Len(t, links, 2)
	// communication_matrix.json's allreduce-total "0-1" of rank 0 and "1-0" of rank 1:
	// 61.210624 MB in 3.88393759375 ms and 3.8604771875 ms.
	assert.Equal(t, [3]any{0, 1, "HCCS"}, [3]any{links[0].Src, links[0].Dst, links[0].Transport})
	assert.Equal(t, [3]any{1, 0, "HCCS"}, [3]any{links[1].Src, links[1].Dst, links[1].Transport})
	for i, wantNs := range []float64{3883937.59, 3860477.19} {
		assert.Equal(t, int64(61_210_624), links[i].Bytes)
		assert.InDelta(t, wantNs, float64(links[i].TimeNs), 1000, "the tasks' sum, to the matrix's µs")
	}
	assert.Positive(t, res.Communication.UnmappedLinkBytes)
	var warned bool
	for _, w := range res.Warnings {
		warned = warned || strings.Contains(w, "(85.7% of all) go between group-local ranks that map to no global rank")
	}
	assert.True(t, warned, "%q", res.Warnings)
}

func TestImagenetLevel0FallsBackToStepTrace(t *testing.T) {
	dir := realdata.Path(t, "imagenet-2rank-level0")
	c, err := parser.LoadCluster([]string{dir}, parser.LoadOptions{})
	require.NoError(t, err)
	res := analysis.Analyze(c, analysis.Options{})
	require.Len(t, res.Ranks, 2)
	want := map[int][2]float64{0: {116251.25, 81515.607}, 1: {100602.25, 64616.114}}
	share := map[int]float64{0: 0.7012, 1: 0.6423}
	for _, rr := range res.Ranks {
		assert.Equal(t, analysis.SourceStepTrace, rr.Source)
		require.Len(t, rr.Steps, 1)
		s := rr.Steps[0]
		assertWithin(t, want[rr.Rank][0], float64(s.StageNs), 0.00001, "Stage")
		assertWithin(t, want[rr.Rank][1], float64(s.CommNotOverlappedNs), 0.00001, "Comm(Not Overlapped)")
		assert.InDelta(t, share[rr.Rank], s.CommShare(), 0.00005)
		assert.Greater(t, s.AllReduceNs, int64(0), "AllReduce time from kernel_details.csv")
	}
	require.Len(t, res.Collectives, 1)
	assert.Equal(t, 8, res.Collectives[0].Count)
	assert.Zero(t, res.Collectives[0].Bytes, "Level0 kernel_details has no data types")
}

func TestNoHCCLGivesZeroShare(t *testing.T) {
	dir := realdata.Path(t, "torchnpu-1rank-nohccl")
	c, err := parser.LoadCluster([]string{dir}, parser.LoadOptions{})
	require.NoError(t, err)
	res := analysis.Analyze(c, analysis.Options{})
	require.Len(t, res.Ranks, 1)
	assert.Equal(t, 0.0, res.Summary.CommShare)
	assert.Equal(t, 0.0, res.Summary.CommTotalShare)
	assert.Empty(t, res.Collectives)
	s := res.Ranks[0].Steps[0]
	// The profiler's Overlap Analysis rows of this trace: Computing 1788.2505, Free 9481.667.
	assertWithin(t, 1788.2505, float64(s.ComputingNs), 0.001, "Computing")
	assertWithin(t, 9481.667, float64(s.FreeNs), 0.001, "Free")
	assert.Empty(t, res.Warnings, "no step_trace_time.csv here: checked against the Overlap Analysis rows, which agree")
}

// torch_npu 2.7.1 / CANN 9.1, a host-bound run: every host step outlasts its device
// work, so the profiler counts the idle time up to the next step's first task as Free
// of the step and Stage reaches to that task (steps 3-6); the last step ends at its
// last task. All five steps' figures of step_trace_time.csv are reproduced within 0.1%.
func TestCANN9HostBoundStepsMatchProfiler(t *testing.T) {
	dir := realdata.Path(t, "torchnpu-910b3-cann9-5step")
	c, err := parser.LoadCluster([]string{dir}, parser.LoadOptions{})
	require.NoError(t, err)
	res := analysis.Analyze(c, analysis.Options{})
	// Computing, Communication, Free, Stage, Preparing (../shared/realdata/README.md).
	want := map[int][5]float64{
		3: {35.64, 0, 2214.72, 2250.25, 527.0},
		4: {34.36, 0, 2208.18, 2242.50, 399.5},
		5: {34.40, 0, 2113.74, 2148.25, 453.0},
		6: {34.40, 0, 2265.66, 2300.25, 397.75},
		7: {35.52, 0, 1384.98, 1420.25, 391.5},
	}
	require.Len(t, res.Ranks, 1)
	rr := res.Ranks[0]
	assert.Equal(t, analysis.SourceTimeline, rr.Source)
	require.Len(t, rr.Steps, 5)
	// Within 0.1% of each figure, with no absolute floor: the profiler's Stage and
	// Preparing are differences of float64 µs epoch timestamps (0.25 µs apart), well
	// inside 0.1% of these steps.
	within := func(want float64, gotNs int64, step int, field string) {
		got := float64(gotNs) / 1000
		assert.InDelta(t, want, got, 0.001*want+1e-9, "step %d %s: want %.3f us, got %.3f us", step, field, want, got)
	}
	for _, s := range rr.Steps {
		w, ok := want[s.Step]
		require.True(t, ok, "step %d", s.Step)
		within(w[0], s.ComputingNs, s.Step, "Computing")
		within(w[1], s.CommunicationNs, s.Step, "Communication")
		within(w[1], s.CommNotOverlappedNs, s.Step, "Communication(Not Overlapped)")
		within(w[2], s.FreeNs, s.Step, "Free")
		within(w[3], s.StageNs, s.Step, "Stage")
		within(w[4], s.PreparingNs, s.Step, "Preparing")
	}
	assert.Empty(t, res.Warnings, "recomputation agrees with step_trace_time.csv")
	assert.False(t, rr.Incomplete)
}

// Level1 with its tasks' size or transport argument renamed (as a newer profiler might
// name it): the data tasks are in no link and the size checks read "nothing to
// examine"; a warning now says why, per rank.
func TestImagenetLevel1DataTasksWithoutLabels(t *testing.T) {
	src := realdata.Path(t, "imagenet-2rank-level1")
	for _, c := range []struct{ arg, want string }{
		{`"size(Byte)"`, "rank %d: of its 72 HCCL data tasks (Memcpy, Reduce_Inline, RDMASend), 72 have no size: those are in no link, no bandwidth and no size check"},
		{`"transport type"`, "rank %d: of its 72 HCCL data tasks (Memcpy, Reduce_Inline, RDMASend), 72 have no transport type: those are in no link, no bandwidth and no size check"},
	} {
		t.Run(c.arg, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.CopyFS(dir, os.DirFS(src)))
			for _, rank := range []string{"rank0_ascend_pt", "rank1_ascend_pt"} {
				p := filepath.Join(dir, rank, "ASCEND_PROFILER_OUTPUT", "trace_view.json")
				b, err := os.ReadFile(p)
				require.NoError(t, err)
				renamed := strings.ReplaceAll(string(b), c.arg, `"renamed"`)
				require.NotEqual(t, string(b), renamed)
				require.NoError(t, os.Chmod(p, 0o644))
				require.NoError(t, os.WriteFile(p, []byte(renamed), 0o644))
			}
			c2, err := parser.LoadCluster([]string{dir}, parser.LoadOptions{})
			require.NoError(t, err)
			res := analysis.Analyze(c2, analysis.Options{})
			for rank := range 2 {
				assert.Contains(t, res.Warnings, fmt.Sprintf(c.want, rank))
			}
			assert.Empty(t, res.Communication.Links)
		})
	}
	// The profile as written: no such warning.
	c, err := parser.LoadCluster([]string{src}, parser.LoadOptions{})
	require.NoError(t, err)
	for _, w := range analysis.Analyze(c, analysis.Options{}).Warnings {
		assert.NotContains(t, w, "HCCL data tasks")
	}
}

// Rank directories of two runs gathered in one directory: Level1's rank 0 beside
// Level0's rank 1, profiled 57 minutes apart. Each rank's figures are its own, but the
// cluster's compare them as one job's: a warning says so, with both start times.
func TestRanksOfTwoRunsAreWarnedOf(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(filepath.Join(dir, "rank0_ascend_pt"), os.DirFS(realdata.Path(t, "imagenet-2rank-level1", "rank0_ascend_pt"))))
	require.NoError(t, os.CopyFS(filepath.Join(dir, "rank1_ascend_pt"), os.DirFS(realdata.Path(t, "imagenet-2rank-level0", "rank1_ascend_pt"))))
	c, err := parser.LoadCluster([]string{dir}, parser.LoadOptions{})
	require.NoError(t, err)
	res := analysis.Analyze(c, analysis.Options{})
	assert.Contains(t, res.Warnings, "rank 1 started step 50 at 2025-01-09 06:50:43 UTC and rank 0 at 2025-01-09 07:48:03 UTC, 57m20s apart "+
		"(1 step(s) over 1m0s apart): profiles of different runs, or a clock far off? Their ops are compared as one collective's, so the waits, slow ranks and links "+
		"mix unrelated runs; analyse each run's ranks apart")

	// Each run alone: no such warning.
	for _, ds := range []string{"imagenet-2rank-level1", "imagenet-2rank-level0"} {
		c, err := parser.LoadCluster([]string{realdata.Path(t, ds)}, parser.LoadOptions{})
		require.NoError(t, err)
		for _, w := range analysis.Analyze(c, analysis.Options{}).Warnings {
			assert.NotContains(t, w, "different runs", ds)
		}
	}
}

// Megatron's two ranks with rank 2's parallel_group_info giving the pp group another
// member (metadata of another job beside this one's): a warning names both claims, and
// the group keeps the first rank's two members in every table (the collectives read
// the last rank's three, the group list the first's two).
func TestMegatronGroupMembersDisagree(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(realdata.Path(t, "megatron-pp2dp2-2of4rank"))))
	p := filepath.Join(dir, "rank_2_ascend_pt", "profiler_metadata.json")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	const pp = `"group_name": "pp", "group_rank": 1, "global_ranks": [0, 2]`
	require.Contains(t, string(b), pp)
	require.NoError(t, os.Chmod(p, 0o644))
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), pp, `"group_name": "pp", "group_rank": 2, "global_ranks": [0, 1, 2]`, 1)), 0o644))

	c, err := parser.LoadCluster([]string{dir}, parser.LoadOptions{})
	require.NoError(t, err)
	res := analysis.Analyze(c, analysis.Options{})
	assert.Contains(t, res.Warnings, "profiler_metadata.json's parallel_group_info differs between ranks on a group's members: "+
		"pp group …756128: rank 0 says {0, 2}, rank 2 {0-2}; metadata of another run or job? The first rank's members are used")
	found := false
	for _, col := range res.Collectives {
		if strings.HasSuffix(col.Group, "756128") {
			found = true
			assert.Equal(t, 2, col.GroupSize, "%s %s", col.Op, col.Group)
		}
	}
	assert.True(t, found)
}

// The Level1 db without its COMMUNICATION_TASK_INFO table: the timeline's ops remain,
// their tasks are gone, and the run read as one profiled without tasks. Level1 records
// them: a warning says they are missing.
func TestImagenetDBWithoutTaskRows(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(realdata.Path(t, "imagenet-2rank-db"))))
	p := filepath.Join(dir, "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT", "ascend_pytorch_profiler_0.db")
	require.NoError(t, os.Chmod(p, 0o644))
	db, err := sql.Open("sqlite", p)
	require.NoError(t, err)
	_, err = db.ExecContext(context.Background(), "DROP TABLE COMMUNICATION_TASK_INFO")
	require.NoError(t, err)
	require.NoError(t, db.Close())

	c, err := parser.LoadCluster([]string{dir}, parser.LoadOptions{})
	require.NoError(t, err)
	res := analysis.Analyze(c, analysis.Options{})
	assert.Contains(t, res.Warnings, "rank 0: profiled at Level1, its timeline has 4 HCCL ops but no HCCL task rows, which that level records: "+
		"links, transfer times and size checks come from the profiler's per-op totals only")

	c, err = parser.LoadCluster([]string{realdata.Path(t, "imagenet-2rank-db")}, parser.LoadOptions{})
	require.NoError(t, err)
	for _, w := range analysis.Analyze(c, analysis.Options{}).Warnings {
		assert.NotContains(t, w, "no HCCL task rows")
	}
}

// A communication matrix names only the group-local ranks that exchanged data in the
// profiled window: the group's size it gives is a lower bound, said so. imagenet's
// two ranks name local ranks 0-7 of their group (no parallel_group_info); a copy
// whose rank 0 also sends to local rank 9 (a 16-rank job, say, whose matrix names 10)
// has at least 10 members, at least 8 of them not profiled: not exactly 8.
func TestMatrixGroupSizeIsLowerBound(t *testing.T) {
	src := realdata.Path(t, "imagenet-2rank-level1")
	dst := t.TempDir()
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	for _, tc := range []struct {
		name            string
		extraLink       bool
		size, unprofile int
	}{{"as profiled", false, 8, 6}, {"a link to local rank 9", true, 10, 8}} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.extraLink {
				apo := filepath.Join(dst, "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT")
				require.NoError(t, os.Chmod(apo, 0o755))
				path := filepath.Join(apo, "communication_matrix.json")
				b, err := os.ReadFile(path)
				require.NoError(t, err)
				const link = `"0-1": {"Transport Type": "HCCS"`
				require.Contains(t, string(b), link)
				b = []byte(strings.Replace(string(b), link, `"0-9": {"Transport Type": "HCCS", "Transit Size(MB)": 1, "Transit Time(ms)": 1, "Bandwidth(GB/s)": 1, "Op Name": "hcom_allReduce__586_2_1"}, `+link, 1))
				require.NoError(t, os.WriteFile(path, b, 0o644))
			}
			c, err := parser.LoadCluster([]string{dst}, parser.LoadOptions{})
			require.NoError(t, err)
			res := analysis.Analyze(c, analysis.Options{})
			require.Len(t, res.Collectives, 1)
			coll := res.Collectives[0]
			assert.Equal(t, tc.size, coll.GroupSize)
			assert.Equal(t, "communication_matrix.json (at least)", coll.GroupSizeSource)
			assert.True(t, analysis.IsLowerBound(coll.GroupSizeSource))
			require.Len(t, res.Exposure.Unprofiled, 1)
			ug := res.Exposure.Unprofiled[0]
			assert.Equal(t, tc.size, ug.Size)
			assert.Equal(t, tc.unprofile, ug.MissingCount)
			assert.True(t, ug.AtLeast, "a size from the matrix is a lower bound")
			assert.Contains(t, res.Warnings, fmt.Sprintf("group sizes not in the files (no parallel_group_info, distributed_args, or msprof-analyze's communication_group.json with the members): lower bounds from communication_matrix.json, which names only the ranks seen in the profiled window: group 17522688603477080586 at least %d (2 profiled); busbw and the wait for unprofiled ranks use them", tc.size))
		})
	}
}
