package advisor_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
)

// diagnosisRun is a one-rank, two-step run with the given per-step figures (ns) and
// exposure split (shares of Stage).
func diagnosisRun(stage, computing, notOv, free int64, ex analysis.Exposure, pls ...analysis.Pipeline) *analysis.Result {
	st := analysis.StepBreakdown{StageNs: stage, ComputingNs: computing, CommunicationNs: notOv, CommNotOverlappedNs: notOv, FreeNs: free}
	steps := []analysis.StepBreakdown{st, st}
	steps[1].Step = 1
	share := float64(notOv) / float64(stage)
	ex.StageNs = 2 * stage
	res := &analysis.Result{
		Ranks:    []analysis.RankResult{{Rank: 0, Steps: steps}},
		Summary:  analysis.Summary{Ranks: 1, Steps: 2, StepTimeNs: stage, CommShare: share, CommTotalShare: share},
		Exposure: ex,
	}
	res.Communication.Pipelines = pls
	return res
}

func TestDiagnoseCauses(t *testing.T) {
	known := func(transfer, straggler, pipeline, unprofiled float64) analysis.Exposure {
		return analysis.Exposure{OpsKnown: true, SplitKnown: true, TransferShare: transfer, StragglerWaitShare: straggler,
			PipelineWaitShare: pipeline, UnprofiledWaitShare: unprofiled, WaitShare: straggler + pipeline + unprofiled}
	}
	imbalanced := analysis.Pipeline{Group: "pp", Ranks: []int{0, 1}, Stages: 2, StageComputingNs: []int64{100e6, 150e6}, StageProfiled: []bool{true, true}, ProfiledStages: 2, Imbalance: 0.5, ImbalanceKnown: true}
	balanced := analysis.Pipeline{Group: "pp", Ranks: []int{0, 1}, Stages: 2, StageComputingNs: []int64{100e6, 102e6}, StageProfiled: []bool{true, true}, ProfiledStages: 2, Imbalance: 0.02, ImbalanceKnown: true,
		Microbatches: 2, MicrobatchesSource: "given", TheoryBubble: 1.0 / 3}
	cases := []struct {
		name      string
		res       *analysis.Result
		cause     string
		share     float64
		titleHas  string
		noFinding bool
	}{
		{"nothing measured", &analysis.Result{}, advisor.CauseUnknown, 0, "no step breakdown", true},
		{"the device idles", diagnosisRun(100, 2, 0, 98, analysis.Exposure{}), advisor.CauseHostBound, 0.98, "waits for the host 98.0% of the step: it idles inside the step (Free)", false},
		{"within budget", diagnosisRun(100, 80, 20, 0, known(0.15, 0.05, 0, 0)), advisor.CauseComputeBound, 0.8, "within the 30.0% budget", true},
		// Waiting for a slower rank that no detector names (a different rank each
		// time: jitter) is not a fault within the budget; the judge's launch-gap and
		// input-pipeline jobs read as stragglers without a rank.
		{"within budget, a straggler no detector names", diagnosisRun(100, 75, 25, 0, known(0.02, 0.12, 0, 0)), advisor.CauseComputeBound, 0.75, "within the 30.0% budget", true},
		{"moving data", diagnosisRun(100, 50, 50, 0, known(0.30, 0.10, 0, 0)), advisor.CauseTransfer, 0.30, "60.0% of it moves data", true},
		{"unprofiled ranks", diagnosisRun(100, 20, 80, 0, known(0.03, 0.02, 0, 0.70)), advisor.CauseUnprofiled, 0.70, "waits for ranks that were not profiled", false},
		{"stage imbalance", diagnosisRun(100, 40, 60, 0, known(0.10, 0, 0.45, 0), imbalanced), advisor.CauseStageImbalance, 0.45,
			"stage 1 computes 50.000 ms more per step than stage 0", false},
		{"bubble", diagnosisRun(100, 40, 60, 0, known(0.10, 0, 0.45, 0), balanced), advisor.CausePipelineBubble, 0.45, "the bubble", false},
		{"no per-op records", diagnosisRun(100, 40, 60, 0, analysis.Exposure{}), advisor.CauseUnknown, 0.6, "no per-op records", true},
		{"elapses only (kernel_details)", diagnosisRun(100, 40, 60, 0, analysis.Exposure{OpsKnown: true, StragglerWaitShare: 0.1, WaitShare: 0.1}),
			advisor.CauseUnknown, 0.6, "do not say how much of it moves data", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := advisor.Advise(c.res, advisor.Env{}, advisor.DefaultOptions)
			d := a.Diagnosis
			assert.Equal(t, c.cause, d.Cause, d.Title)
			assert.InDelta(t, c.share, d.Share, 1e-9)
			assert.Contains(t, d.Title, c.titleHas)
			var found bool
			for _, f := range a.Findings {
				found = found || f.ID == "cause_"+c.cause
				assert.Empty(t, advisor.UnknownVariables(f.Title+" "+f.Evidence))
			}
			assert.Equal(t, !c.noFinding, found, "a finding with the cure for %s", c.cause)
			if c.cause == advisor.CauseStageImbalance {
				assert.Contains(t, findingByID(a, "cause_stage_imbalance").Evidence, "--decoder-first-pipeline-num-layers")
			}
			if c.cause == advisor.CausePipelineBubble {
				assert.Contains(t, findingByID(a, "cause_pipeline_bubble").Evidence, "--global-batch-size")
			}
		})
	}
}

func findingByID(a advisor.Advice, id string) advisor.Finding {
	for _, f := range a.Findings {
		if f.ID == id {
			return f
		}
	}
	return advisor.Finding{}
}
