package analysis

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two ranks of a complete group that profiled overlapping steps (dynamic profiling
// started one step apart): the AllReduce of step 1 is seen on rank 0 only and that of
// step 3 on rank 1 only. What they spent beyond moving data is not synchronisation
// measured within a complete group, as it read before, but possibly waiting for the
// rank without a profile of the step; step 2, on both, is measured as before.
func TestExposureStepGaps(t *testing.T) {
	groups := []Group{{Key: "dp", Kind: "dp", Ranks: []int{0, 1}}}
	step := func(n int) StepBreakdown {
		return StepBreakdown{Step: n, HasStep: true, StageNs: 400, CommunicationNs: 100, CommNotOverlappedNs: 100}
	}
	ops := []OpStat{
		{Rank: 0, Step: 1, Group: "dp", Name: "ar_0", ElapseNs: 100, MovingNs: 20},
		{Rank: 0, Step: 2, Group: "dp", Name: "ar_0", ElapseNs: 100, MovingNs: 20},
		{Rank: 1, Step: 2, Group: "dp", Name: "ar_0", ElapseNs: 70, MovingNs: 20},
		{Rank: 1, Step: 3, Group: "dp", Name: "ar_0", ElapseNs: 100, MovingNs: 20},
	}
	crossRankWait(ops)
	ranks := []RankResult{
		{Rank: 0, Source: SourceTimeline, Steps: []StepBreakdown{step(1), step(2)}},
		{Rank: 1, Source: SourceTimeline, Steps: []StepBreakdown{step(2), step(3)}},
	}
	ex := exposure(ops, ranks, groups, nil, nil)
	require.Len(t, ex.Unprofiled, 1)
	ug := ex.Unprofiled[0]
	assert.Equal(t, UnprofiledGroup{Group: "dp", Kind: "dp", Size: 2, StepGapRanks: []int{0, 1}, GapSteps: []int{1, 3}}, ug)
	r0, r1 := ex.Ranks[0], ex.Ranks[1]
	// Rank 0: step 1 all 80 unseen waiting; step 2 waits 30 for rank 1, syncs 50.
	assert.Equal(t, int64(80), r0.UnprofiledWaitNs)
	assert.Equal(t, int64(30), r0.StragglerWaitNs)
	assert.Equal(t, int64(50), r0.OtherNs)
	// Rank 1: step 2 syncs 50; step 3 80 unseen waiting.
	assert.Equal(t, int64(80), r1.UnprofiledWaitNs)
	assert.Equal(t, int64(50), r1.OtherNs)
	assert.InDelta(t, 160.0/1600, ex.UnprofiledWaitShare, 1e-12)

	w := stepsNotOnEveryRank(ranks)
	assert.Equal(t, "the ranks profiled different steps: step 1 only on rank 0, step 3 only on rank 1 (the profiler started or stopped at another step on some ranks: dynamic profiling, "+
		"or profiling cycles of different times kept for different ranks). A collective of those steps is measured on the ranks that have it only: the time they waited for the others "+
		"is counted as waiting for ranks without a profile of the step; --skip-steps 1,3 keeps the steps every rank has", w)

	// The same steps on every rank: no gap, no warning, the rest is synchronisation;
	// an op before the first step's marker (Step -1) is in no analysed step, and no
	// rank lacks its step.
	ranks[1].Steps = []StepBreakdown{step(1), step(2)}
	ops[3].Step = 1
	ops = append(ops, OpStat{Rank: 1, Step: -1, Group: "dp", Name: "ar_warmup", ElapseNs: 100, MovingNs: 20})
	crossRankWait(ops)
	ex = exposure(ops, ranks, groups, nil, nil)
	assert.Empty(t, ex.Unprofiled)
	assert.Zero(t, ex.UnprofiledWaitShare)
	assert.Empty(t, stepsNotOnEveryRank(ranks))
}

// Of many ranks, the warning names a step by the side that is shorter, leaves out a
// step missing between a rank's own (a problem of that rank already), and ranks
// without steps.
func TestStepsNotOnEveryRankLists(t *testing.T) {
	steps := func(ns ...int) []StepBreakdown {
		var out []StepBreakdown
		for _, n := range ns {
			out = append(out, StepBreakdown{Step: n, HasStep: true})
		}
		return out
	}
	var ranks []RankResult
	for r := 0; r < 8; r++ {
		rr := RankResult{Rank: r, Source: SourceTimeline, Steps: steps(10, 11, 12)}
		switch {
		case r >= 6:
			rr.Steps = steps(11, 12, 13) // started a step late, stopped one later
		case r == 2:
			rr.Steps = steps(10, 12) // 11 missing between its own: flagged elsewhere
		case r == 3:
			rr.Steps = nil
		}
		ranks = append(ranks, rr)
	}
	w := stepsNotOnEveryRank(ranks)
	assert.Contains(t, w, "the ranks profiled different steps: step 10 not on ranks 6-7, step 13 only on ranks 6-7 (")
	assert.Contains(t, w, "--skip-steps 10,13 keeps the steps every rank has")
	assert.NotContains(t, w, "step 11")

	// Steps that are host windows (Kineto's) are absent, not flagged.
	ranks[2].ClipToStepWindows = true
	assert.Contains(t, stepsNotOnEveryRank(ranks), "step 11 not on rank 2")

	// A rank of a run without markers (one step, -1) beside ranks with steps.
	ranks[3].Steps = []StepBreakdown{{Step: -1}}
	w = stepsNotOnEveryRank(ranks)
	assert.Contains(t, w, "the span without step markers only on rank 3, ")
	assert.Contains(t, w, "; ranks without step markers are not compared step by step with ranks that have them: analyse each kind apart")
}
