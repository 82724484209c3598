package advisor_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/realdata"
	"github.com/hcclprof/hcclprof/parser"
	"github.com/hcclprof/hcclprof/profile"
)

func analyseDir(t *testing.T, dir string) (*profile.Cluster, *analysis.Result, advisor.Advice) {
	t.Helper()
	c, err := parser.LoadCluster([]string{dir}, parser.LoadOptions{})
	require.NoError(t, err)
	res := analysis.Analyze(c, analysis.Options{})
	return c, res, advisor.Advise(res, advisor.EnvOf(c), advisor.DefaultOptions)
}

// commJSONOps reads a communication.json's ops as the profiler wrote them, with a
// plain decoder (not hcclprof's parser): name@group → time info in ms.
func commJSONOps(t *testing.T, path string) map[string]map[string]float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc map[string]map[string]map[string]struct {
		Time map[string]float64 `json:"Communication Time Info"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	out := map[string]map[string]float64{}
	for _, step := range doc {
		for _, kind := range step {
			for key, op := range kind {
				if !strings.HasPrefix(key, "Total") {
					out[key] = op.Time
				}
			}
		}
	}
	return out
}

// assertOpsEqualCommJSON checks that every op of every rank equals its
// communication.json entry, and that no entry is missing.
func assertOpsEqualCommJSON(t *testing.T, res *analysis.Result, dirOf map[int]string) {
	t.Helper()
	byRank := map[int]map[string]analysis.OpStat{}
	for _, o := range res.Communication.Ops {
		if byRank[o.Rank] == nil {
			byRank[o.Rank] = map[string]analysis.OpStat{}
		}
		byRank[o.Rank][o.Name+"@"+o.Group] = o
	}
	for rank, dir := range dirOf {
		want := commJSONOps(t, filepath.Join(dir, "ASCEND_PROFILER_OUTPUT", "communication.json"))
		require.Len(t, byRank[rank], len(want), "rank %d: one op per communication.json entry", rank)
		for key, w := range want {
			o, ok := byRank[rank][key]
			require.True(t, ok, "rank %d: %s missing", rank, key)
			assert.Equal(t, "profiler", o.Source, key)
			assert.InDelta(t, w["Elapse Time(ms)"]*1e6, float64(o.ElapseNs), 1, key)
			assert.InDelta(t, w["Transit Time(ms)"]*1e6, float64(o.TransitNs), 1, key)
			assert.InDelta(t, w["Wait Time(ms)"]*1e6, float64(o.WaitNs), 1, key)
			assert.InDelta(t, w["Synchronization Time(ms)"]*1e6, float64(o.SyncNs), 1, key)
			assert.InDelta(t, w["Idle Time(ms)"]*1e6, float64(o.IdleNs), 1, key)
		}
	}
}

// The Megatron PP2×DP2 job without trace_view.json: per-op figures from
// communication.json, links from the matrix, the pipeline found, and the diagnosis is
// the stage imbalance (stage 1 computes ~169 ms more per step than stage 0).
func TestMegatronWithoutTraceDiagnosesStageImbalance(t *testing.T) {
	dir := realdata.Path(t, "megatron-pp2dp2-2of4rank")
	c, res, adv := analyseDir(t, dir)
	require.Len(t, c.Ranks, 2)
	for _, r := range c.Ranks {
		assert.Equal(t, "communication.json", r.CommOpsSource, "rank %d", r.Rank)
	}
	assertOpsEqualCommJSON(t, res, map[int]string{
		0: filepath.Join(dir, "rank_0_ascend_pt"), 2: filepath.Join(dir, "rank_2_ascend_pt")})
	var total int64
	n := 0
	for _, col := range res.Collectives {
		total += col.TotalNs
		n += col.Count
	}
	assert.Equal(t, 38, n, "15 ops on rank 0 and 23 on rank 2")
	assert.InDelta(t, 420.174+277.650, float64(total)/1e6, 0.002, "the collectives table sums communication.json")

	// Op-level Transit is 0 at this level: data movement comes from the transports.
	for _, o := range res.Communication.Ops {
		if o.Rank == 0 && o.Name == "hcom_reduceScatter__097_4_1" {
			assert.Equal(t, "transports", o.MovingSource)
			assert.InDelta(t, 23.566, float64(o.MovingNs)/1e6, 0.001)
		}
		if o.Rank == 0 && o.Name == "hcom_batchSendRecv__128_4_1" {
			assert.InDelta(t, 158.553-0.804, float64(o.CrossWaitNs)/1e6, 0.002, "rank 0 waits for rank 2 in the same p2p op")
		}
	}
	assert.NotEmpty(t, res.Communication.Links, "links from communication_matrix.json")
	for _, l := range res.Communication.Links {
		assert.NotEqual(t, l.Src, l.Dst)
	}
	require.Len(t, res.Communication.Pipelines, 1)
	pl := res.Communication.Pipelines[0]
	assert.Equal(t, []int{0, 2}, pl.Ranks)
	// Its traffic is batchSendRecv: the profiler's Bubble reads 0, which measures
	// nothing, and the micro-batches cannot be counted from receives.
	assert.False(t, pl.BubbleKnown())
	assert.Zero(t, pl.Microbatches)
	assert.NotEmpty(t, res.Communication.GroupSteps)
	assert.Equal(t, 4, res.Summary.RanksExpected, "distributed_args.world_size")
	require.Len(t, res.Exposure.Unprofiled, 4, "dp_cp, dp, default_group ... lack ranks 1 and 3")
	for _, g := range res.Exposure.Unprofiled {
		assert.Subset(t, []int{1, 3}, g.Missing, g.Kind)
	}

	d := adv.Diagnosis
	assert.Equal(t, advisor.CauseStageImbalance, d.Cause, d.Title)
	assert.Contains(t, d.Title, "stage 1 computes 169.158 ms more per step than stage 0")
	assert.Contains(t, d.Evidence, "no Bubble measured for the pipeline: its traffic is batchSendRecv")
	assert.NotContains(t, d.Evidence, "counted as Bubble 0.000 ms")
	require.NotNil(t, res.Summary.ExposedWaitShare)
	// The parts never exceed comm_share, which stays a share.
	assert.LessOrEqual(t, *res.Summary.ExposedTransferShare+*res.Summary.ExposedWaitShare, res.Summary.CommShare+1e-9)
	assert.LessOrEqual(t, res.Summary.CommShare, 1.0)
	// Most of each rank's exposed communication is pipeline waiting.
	for _, re := range res.Exposure.Ranks {
		share := float64(re.PipelineWaitNs) / float64(re.ExposedNs)
		assert.Greater(t, share, 0.5, "rank %d: pipeline waiting %.2f of its exposed communication", re.Rank, share)
	}
	assert.Empty(t, adv.Recommendations, "no bucket or algorithm change while waiting leads")
	var ids []string
	for _, f := range adv.Findings {
		ids = append(ids, f.ID)
	}
	assert.Contains(t, ids, "cause_stage_imbalance")
	for _, f := range adv.Findings {
		assert.Empty(t, advisor.UnknownVariables(f.Title+" "+f.Evidence))
	}
}

// imagenet without trace_view.json: the same ops as communication.json, and the same
// diagnosis as with the trace (waiting for the (at least 6) unprofiled ranks of group …586).
func TestImagenetWithoutTraceSameDiagnosis(t *testing.T) {
	src := realdata.Path(t, "imagenet-2rank-level1")
	_, withTrace, advWith := analyseDir(t, src)

	dst := t.TempDir()
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	for _, r := range []string{"rank0_ascend_pt", "rank1_ascend_pt"} {
		require.NoError(t, os.Chmod(filepath.Join(dst, r, "ASCEND_PROFILER_OUTPUT"), 0o755))
		require.NoError(t, os.Remove(filepath.Join(dst, r, "ASCEND_PROFILER_OUTPUT", "trace_view.json")))
	}
	c, without, advWithout := analyseDir(t, dst)
	for _, r := range c.Ranks {
		assert.False(t, r.HasTimeline)
		assert.Equal(t, "communication.json", r.CommOpsSource)
	}
	assertOpsEqualCommJSON(t, without, map[int]string{
		0: filepath.Join(dst, "rank0_ascend_pt"), 1: filepath.Join(dst, "rank1_ascend_pt")})

	for _, adv := range []advisor.Advice{advWith, advWithout} {
		assert.Equal(t, advisor.CauseUnprofiled, adv.Diagnosis.Cause, adv.Diagnosis.Title)
		// No parallel_group_info: the group's size (8) comes from the matrix, its
		// members are not named.
		assert.Contains(t, adv.Diagnosis.Title, "73.9% of the step is exposed communication; 93.6% of it waits for the ranks of world group …080586 that were not profiled (at least 6)")
	}
	assert.Equal(t, advWith.Diagnosis.Title, advWithout.Diagnosis.Title)
	// The step figures come from the trace in one case and step_trace_time.csv in
	// the other: they agree to the csv's rounding.
	assert.InDelta(t, *withTrace.Summary.ExposedWaitShare, *without.Summary.ExposedWaitShare, 1e-5)
	assert.InDelta(t, withTrace.Summary.CommShare, without.Summary.CommShare, 1e-5)
	require.Len(t, without.Exposure.Unprofiled, 1)
	assert.Equal(t, 6, without.Exposure.Unprofiled[0].MissingCount)
	assert.Equal(t, 8, without.Exposure.Unprofiled[0].Size)
}

// imagenet with one rank's op records gone (rank 1 keeps only step_trace_time.csv):
// its exposed communication is no op's, so nothing says whether it moved data or
// waited. It was counted as the ops' own synchronisation: exposed_wait_share read
// 36.7% against the 71.2% both ranks give, a figure, and a gate on it passed; the
// group's unprofiled ranks read 7 though rank 1 may be one of its 8 members.
func TestImagenetRankWithoutOpRecordsIsUnaccounted(t *testing.T) {
	src := realdata.Path(t, "imagenet-2rank-level1")
	_, full, _ := analyseDir(t, src)

	dst, out := writableCopy(t, src, "rank1_ascend_pt")
	for _, f := range []string{"trace_view.json", "communication.json", "communication_matrix.json", "kernel_details.csv"} {
		require.NoError(t, os.Remove(filepath.Join(out, f)))
	}
	_, res, adv := analyseDir(t, dst)
	assert.InDelta(t, full.Summary.CommShare, res.Summary.CommShare, 1e-5, "rank 1's steps still come from step_trace_time.csv")
	assert.Nil(t, res.Summary.ExposedWaitShare, "a lower bound is not the figure")
	assert.Nil(t, res.Summary.ExposedTransferShare)
	var rank1 analysis.RankExposure
	for _, r := range res.Exposure.Ranks {
		if r.Rank == 1 {
			rank1 = r
		}
	}
	assert.Positive(t, rank1.ExposedNs)
	assert.Equal(t, rank1.ExposedNs, rank1.UnaccountedNs, "none of rank 1's exposed time is an op's")
	assert.InDelta(t, float64(rank1.ExposedNs)/float64(res.Exposure.StageNs), res.Exposure.UnaccountedShare, 1e-9)
	assert.Zero(t, res.Exposure.OtherShare)
	require.Len(t, res.Exposure.Unprofiled, 1)
	assert.Equal(t, 6, res.Exposure.Unprofiled[0].MissingCount)
	assert.True(t, res.Exposure.Unprofiled[0].AtLeast)

	// Rank 0's own waiting still leads, as a lower bound, and the split names rank 1 (the
	// group is named without its kind "world": only rank 0's ops show it).
	assert.Equal(t, advisor.CauseUnprofiled, adv.Diagnosis.Cause, adv.Diagnosis.Title)
	assert.Equal(t, "73.9% of the step is exposed communication; at least 49.6% of it waits for the ranks of group …080586 that were not profiled (at least 6)", adv.Diagnosis.Title)
	assert.Contains(t, adv.Diagnosis.Evidence, "no op record covers 35.9% of the step (rank 1, whose steps have no op record), so these shares are lower bounds")
}

// Level0 with one rank's kernel_details.csv gone: most exposed time has no op, and
// the diagnosis says so instead of "in neither moving data nor waiting for a peer"
// (synchronisation within ops that rank 0 does not have).
func TestLevel0RankWithoutKernelsIsUnaccounted(t *testing.T) {
	src := realdata.Path(t, "imagenet-2rank-level0")
	dst := t.TempDir()
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	out := filepath.Join(dst, "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT")
	require.NoError(t, os.Chmod(out, 0o755))
	require.NoError(t, os.Remove(filepath.Join(out, "kernel_details.csv")))
	_, res, adv := analyseDir(t, dst)
	assert.Equal(t, advisor.CauseUnknown, adv.Diagnosis.Cause)
	assert.Equal(t, "67.4% of the step is exposed communication; no op record accounts for 55.8% of it", adv.Diagnosis.Title)
	assert.True(t, strings.HasPrefix(adv.Diagnosis.Evidence, "no op record covers 37.6% of the step (rank 0, whose steps have no op record)"), adv.Diagnosis.Evidence)
	assert.Nil(t, res.Summary.ExposedWaitShare)
}

// The CANN 9.1 single-device run idles ~98% of every step: the diagnosis is the host,
// not communication (there is none).
func TestCANN9RunIsHostBound(t *testing.T) {
	dir := realdata.Path(t, "torchnpu-910b3-cann9-5step")
	_, res, adv := analyseDir(t, dir)
	require.Len(t, res.Ranks, 1)
	require.Len(t, res.Ranks[0].Steps, 5)
	assert.Equal(t, advisor.CauseHostBound, adv.Diagnosis.Cause, adv.Diagnosis.Title)
	// Σ (Free + Preparing) / Σ (Stage + Preparing) of the profiler's own five rows
	// (realdata README): the host's wait over the step the host sees.
	free := 2214.72 + 2208.18 + 2113.74 + 2265.66 + 1384.98
	stage := 2250.25 + 2242.50 + 2148.25 + 2300.25 + 1420.25
	prep := 5 * 433.75
	assert.InDelta(t, (free+prep)/(stage+prep), adv.Diagnosis.Share, 0.001)
	assert.Contains(t, adv.Diagnosis.Title, "the host is the bottleneck")
	assert.Zero(t, res.Summary.CommShare)
	var ids []string
	for _, f := range adv.Findings {
		ids = append(ids, f.ID)
	}
	assert.Contains(t, ids, "cause_host_bound")
	// The profiler's own Preparing column (step_trace_time.csv) averages 433.75 µs.
	assert.Contains(t, adv.Diagnosis.Evidence, "Preparing 0.434 ms before it")
}

// msprof-cann85-matmul: msprof 25.5.0's capture of one AscendC matmul kernel, only its
// mindstudio_profiler_output/. One step-less range, the collection, from the kernel's
// start to the device's last task: Computing is the kernel (7.840 us, task_time_*.csv),
// Free the 1164.540 us after it that msprof's own Free row covers, Stage 1172.380 us,
// no communication; the recomputation agrees with the profiler's Overlap Analysis
// rows, and the diagnosis is what those figures say: the device idles 99.3% of it,
// host-bound.
func TestMsprofCann85MatmulDiagnosis(t *testing.T) {
	dir := realdata.Path(t, "msprof-cann85-matmul")
	_, res, adv := analyseDir(t, dir)
	assert.Empty(t, res.Warnings)
	require.Len(t, res.Ranks, 1)
	rr := res.Ranks[0]
	assert.Equal(t, 0, rr.Rank)
	assert.Equal(t, string(profile.FormatMsprof), rr.Format)
	assert.Equal(t, analysis.SourceTimeline, rr.Source, "the recomputation agrees with the Overlap Analysis rows")
	assert.False(t, rr.Incomplete)
	assert.Empty(t, rr.Problems)
	require.Len(t, rr.Steps, 1)
	s := rr.Steps[0]
	assert.False(t, s.HasStep)
	assert.Equal(t, int64(7_840), s.ComputingNs)
	assert.Equal(t, int64(1_164_540), s.FreeNs)
	assert.Equal(t, int64(1_172_380), s.StageNs)
	assert.Zero(t, s.CommunicationNs)
	assert.Zero(t, s.CommNotOverlappedNs)
	assert.Equal(t, 1, res.Summary.Ranks)
	assert.Equal(t, 1, res.Summary.Steps)
	assert.Zero(t, res.Summary.CommShare)
	assert.Equal(t, advisor.CauseHostBound, adv.Diagnosis.Cause, adv.Diagnosis.Title)
	assert.Contains(t, adv.Diagnosis.Title, "99.3%")
	// No host markers, so no Preparing: the evidence does not state the host's lead as 0.
	assert.False(t, s.HasPreparing)
	assert.NotContains(t, adv.Diagnosis.Evidence, "the host starts each step")
}

// TestMegatronSmallMessagesCostLittle: 12 of the Megatron run's 22 ops that move data
// over SDMA-class links move less than 16 MB (msprof-analyze's rule fires), but they
// are scalar AllReduces and the pipeline's 8 MiB sends, which move data for 0.10% of
// the step: the finding says so and is low, not medium. The cost is recomputed here
// from communication.json with a plain decoder: per op the SDMA entry (else the sum of
// HCCS, PCIE and SIO) for its size, the busiest transport's Transit Time for its cost;
// the Stage is step_trace_time.csv's (the realdata README).
func TestMegatronSmallMessagesCostLittle(t *testing.T) {
	dir := realdata.Path(t, "megatron-pp2dp2-2of4rank")
	type transport struct {
		SizeMB float64 `json:"Transit Size(MB)"`
		TimeMs float64 `json:"Transit Time(ms)"`
	}
	var small, all int
	var costMs float64
	for _, rank := range []string{"rank_0_ascend_pt", "rank_2_ascend_pt"} {
		b, err := os.ReadFile(filepath.Join(dir, rank, "ASCEND_PROFILER_OUTPUT", "communication.json"))
		require.NoError(t, err)
		var doc map[string]map[string]map[string]struct {
			Bandwidth map[string]transport `json:"Communication Bandwidth Info"`
		}
		require.NoError(t, json.Unmarshal(b, &doc))
		for _, kinds := range doc {
			for _, ops := range kinds {
				for key, op := range ops {
					if strings.HasPrefix(key, "Total") {
						continue
					}
					sizeMB := op.Bandwidth["SDMA"].SizeMB
					if sizeMB == 0 {
						sizeMB = op.Bandwidth["HCCS"].SizeMB + op.Bandwidth["PCIE"].SizeMB + op.Bandwidth["SIO"].SizeMB
					}
					if sizeMB <= 0 {
						continue
					}
					all++
					if sizeMB*1e6 < 16e6 {
						small++
						busiest := 0.0
						for _, tr := range op.Bandwidth {
							busiest = max(busiest, tr.TimeMs)
						}
						costMs += busiest
					}
				}
			}
		}
	}
	require.Equal(t, [2]int{12, 22}, [2]int{small, all})
	stageMs := 810.02225 + 809.80325
	share := costMs / stageMs
	assert.InDelta(t, 0.0010, share, 0.00005)

	_, _, adv := analyseDir(t, dir)
	var found []advisor.Finding
	for _, f := range adv.Findings {
		if f.ID == "small_messages" {
			found = append(found, f)
		}
	}
	require.Len(t, found, 1)
	f := found[0]
	assert.Equal(t, advisor.Low, f.Severity)
	assert.Contains(t, f.Title, "55% of the ops move small messages over SDMA")
	assert.Contains(t, f.Title, fmt.Sprintf("%.2f%% of the step", 100*share))
	assert.Contains(t, f.Evidence, "12 of 22")
	assert.Contains(t, f.Evidence, "moves 8 bytes over SDMA", "a scalar's size in bytes, not 0.000 MB")
	assert.Contains(t, f.Evidence, "too little to be worth changing")
	assert.NotContains(t, f.Evidence, "bigger gradient buckets")
}

// TestRealDataFindingsRepeatNothing: no finding of any real dataset says the same
// thing twice (the host-bound finding once told to profile the host in its evidence
// and again in its cure): its clauses, split at '.', ';', ':' and '(', are distinct.
func TestRealDataFindingsRepeatNothing(t *testing.T) {
	entries, err := os.ReadDir(realdata.Path(t))
	require.NoError(t, err)
	n := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		t.Run(e.Name(), func(t *testing.T) {
			dir := realdata.Path(t, e.Name())
			if _, err := parser.LoadCluster([]string{dir}, parser.LoadOptions{}); err != nil && strings.Contains(err.Error(), "no profiler output found") {
				t.Skipf("not a profile: %v", err) // torchnpu-1rank-kernels holds kernel tables only
			}
			_, _, adv := analyseDir(t, dir)
			for _, f := range adv.Findings {
				seen := map[string]bool{}
				clauses := strings.FieldsFunc(strings.ToLower(f.Title+". "+f.Evidence), func(r rune) bool { return strings.ContainsRune(".;:()", r) })
				for _, c := range clauses {
					c = strings.TrimSpace(c)
					if len(c) < 20 {
						continue
					}
					assert.False(t, seen[c], "%s says %q twice: %s", f.ID, c, f.Evidence)
					seen[c] = true
				}
				n++
			}
		})
	}
	assert.Greater(t, n, 10, "findings looked at")
}

// TestKinetoHostBoundSpeaksOfGPUs: the A100 Kineto run is host-bound too; its
// diagnosis names the GPU and its cure PyTorch's knobs, not the NPU and torch_npu's.
func TestKinetoHostBoundSpeaksOfGPUs(t *testing.T) {
	_, _, adv := analyseDir(t, realdata.Path(t, "kineto-nccl-a100-2gpu"))
	require.Equal(t, advisor.CauseHostBound, adv.Diagnosis.Cause, adv.Diagnosis.Title)
	assert.Contains(t, adv.Diagnosis.Title, "not the GPU")
	var cure *advisor.Finding
	for i, f := range adv.Findings {
		assert.NotContains(t, f.Title+f.Evidence, "NPU", f.ID)
		assert.NotContains(t, f.Title+f.Evidence, "torch_npu", f.ID)
		if f.ID == "cause_host_bound" {
			cure = &adv.Findings[i]
		}
	}
	require.NotNil(t, cure)
	assert.Contains(t, cure.Evidence, "DataLoader num_workers")

	_, _, adv = analyseDir(t, realdata.Path(t, "torchnpu-910b3-cann9-5step"))
	assert.Contains(t, adv.Diagnosis.Title, "not the NPU")
}

// The MindSpore AlexNet capture is device 0 of a 910A job, and its ops name no group
// and the profile no group size. Its HCCL tasks copy to group-local ranks 1 to 4, so
// the group has at least 5 ranks, 4 of them not profiled: the AllReduces' waits
// (34.7 ms of the warm-up's 41.5) are waits for them, not "the rest" of the op.
func TestAlexnetWaitsForTheRanksItsTasksName(t *testing.T) {
	_, res, adv := analyseDir(t, realdata.Path(t, "msprof-mindspore-alexnet"))
	require.Len(t, res.Collectives, 1)
	c := res.Collectives[0]
	assert.Equal(t, 5, c.GroupSize)
	assert.Equal(t, "task rows (at least)", c.GroupSizeSource)
	require.Len(t, res.Exposure.Unprofiled, 1)
	u := res.Exposure.Unprofiled[0]
	assert.True(t, u.AtLeast)
	assert.Equal(t, 4, u.MissingCount)
	require.NotNil(t, res.Summary.ExposedWaitShare)
	assert.InDelta(t, 0.5115, *res.Summary.ExposedWaitShare, 0.0005)
	assert.InDelta(t, res.Exposure.UnprofiledWaitShare, *res.Summary.ExposedWaitShare, 1e-12, "all of the wait is for unprofiled ranks")
	assert.Equal(t, advisor.CauseUnprofiled, adv.Diagnosis.Cause, adv.Diagnosis.Title)
	assert.Contains(t, adv.Diagnosis.Title, "waits for the ranks of group (unnamed) that were not profiled (at least 4)")
	assert.Contains(t, strings.Join(res.Warnings, "\n"), "group (unnamed): size unknown (no parallel_group_info or communication_matrix.json); its HCCL tasks name group-local ranks up to 4, so it has at least 5 ranks, 1 of them profiled")
}

// The real Level1 run with rank 1's step renumbered 40, as when the two ranks kept
// profiling cycles of different times (or dynamic profiling started them at different
// steps): each step's AllReduces are seen on one rank only. Before, the verdict read
// "waits for the 6 ranks … not profiled", though rank 1 was profiled and it is rank 0's
// step 50 it lacks, and nothing said the ranks' steps differ.
func TestImagenetRanksOfDifferentSteps(t *testing.T) {
	src := realdata.Path(t, "imagenet-2rank-level1")
	_, full, _ := analyseDir(t, src)

	dst, out := writableCopy(t, src, "rank1_ascend_pt")
	for file, edits := range map[string][2]string{
		"trace_view.json":           {"ProfilerStep#50", "ProfilerStep#40"},
		"step_trace_time.csv":       {"\n50,", "\n40,"},
		"kernel_details.csv":        {"\n50,", "\n40,"},
		"communication.json":        {`"step50"`, `"step40"`},
		"communication_matrix.json": {`"step50"`, `"step40"`},
	} {
		p := filepath.Join(out, file)
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.Contains(t, string(b), edits[0], file)
		require.NoError(t, os.Chmod(p, 0o644))
		require.NoError(t, os.WriteFile(p, []byte(strings.ReplaceAll(string(b), edits[0], edits[1])), 0o644))
	}
	_, res, adv := analyseDir(t, dst)
	require.Equal(t, []int{40, 50}, res.StepNumbers())
	for _, r := range res.Ranks {
		assert.False(t, r.Incomplete, "rank %d: each rank is whole", r.Rank)
	}
	assert.InDelta(t, full.Summary.CommShare, res.Summary.CommShare, 1e-9, "each rank's own figures do not change")
	assert.Contains(t, res.Warnings, "the ranks profiled different steps: step 40 only on rank 1, step 50 only on rank 0 (the profiler started or stopped at another step on some ranks: "+
		"dynamic profiling, or profiling cycles of different times kept for different ranks). A collective of those steps is measured on the ranks that have it only: "+
		"the time they waited for the others is counted as waiting for ranks without a profile of the step; no step is on every rank: profile the same steps on every rank "+
		"(one schedule for all, not dynamic profiling started rank by rank)")

	require.Len(t, res.Exposure.Unprofiled, 1)
	ug := res.Exposure.Unprofiled[0]
	assert.Equal(t, 6, ug.MissingCount)
	assert.Equal(t, []int{0, 1}, ug.StepGapRanks)
	assert.Equal(t, []int{40, 50}, ug.GapSteps)
	assert.Positive(t, full.Exposure.StragglerWaitShare, "with one step, rank 0 waits for rank 1")
	assert.Zero(t, res.Exposure.StragglerWaitShare, "no op is seen on both ranks")
	assert.Equal(t, advisor.CauseUnprofiled, adv.Diagnosis.Cause)
	assert.Equal(t, "73.9% of the step is exposed communication; 96.3% of it waits for the ranks of world group …080586 that were not profiled (at least 6) and ranks 0, 1, whose profiles lack steps 40, 50",
		adv.Diagnosis.Title)
	assert.Contains(t, adv.Diagnosis.Evidence, "ranks not profiled in the step 71.2%")
	assert.Contains(t, adv.Diagnosis.Evidence, "(or none of those steps: the ranks profiled different steps)")
	cure := ""
	for _, f := range adv.Findings {
		if f.ID == "cause_"+advisor.CauseUnprofiled {
			cure = f.Evidence
		}
	}
	assert.Contains(t, cure, "Profile every rank of those groups over the same steps (torch_npu: one schedule started on all ranks at once")
}

// writableCopy copies a real dataset into a temporary directory, its rank directory's
// export directory (returned) writable.
func writableCopy(t *testing.T, src, rankDir string) (dst, out string) {
	t.Helper()
	dst = t.TempDir()
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	out = filepath.Join(dst, rankDir, "ASCEND_PROFILER_OUTPUT")
	require.NoError(t, os.Chmod(out, 0o755))
	return dst, out
}
