package advisor_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/fixtures/render"
	"github.com/hcclprof/hcclprof/fixtures/sim"
	"github.com/hcclprof/hcclprof/internal/testkit"
)

// Issue 37: an FSDP job with every layer prefetched but the first (the judge's
// fsdp-no-prefetch-layer family, seed 11) had 13.9% of its step in FSDP's exposed
// gathers and reductions and was diagnosed fsdp_gather_exposed; prefetching the one
// layer wins far less (the forward's first gather and the last reduction stay
// exposed whatever the setting) and the truth, which plays the job again with every
// gather prefetched, is compute_bound. The cause now counts what prefetching would
// win as the cost model prices it. Without any prefetch (the built-in) it is still
// named, with that priced share.
func TestFSDPCauseIsWhatPrefetchWins(t *testing.T) {
	const oneLayer = `
product: a2
ranks: 16
ranks_per_server: 8
steps: 3
first_step: 1
seed: 4247902106
model: {gradient_bytes: 3799230777, dtype: BFP16, forward_ms: 65.877, backward_ms: 118.945, optimizer_ms: 7.904, jitter: 0.0162, kernel_us: 4000, layers: 8, hidden_size: 2048, seq_length: 2048, micro_batch_size: 1}
ddp: {bucket_mb: 100, overlap: 0.7876}
fsdp: {shard_size: 16, prefetch: true, no_prefetch_layers: [0], reshard_after_forward: true}
host: {preparing_ms: 1.745, sync_ms: 0.543, launch_gap_us: 2.865}
`
	sc := parsedScenario(t, oneLayer)
	truth := testkit.Truth(t, sc, render.DefaultFormat(sc))
	require.Equal(t, sim.CauseComputeBound, truth.Diagnosis.Cause, "the truth: prefetching the one layer wins little")
	adv, res := adviseScenario(t, oneLayer, advisor.DefaultOptions)
	var fsdp float64
	for _, k := range res.Summary.Kinds {
		if k.Kind == analysis.KindFSDP {
			fsdp = k.CommShare
		}
	}
	assert.Greater(t, fsdp, 0.10, "FSDP's exposed time alone would lead")
	assert.NotEqual(t, advisor.CauseFSDPGatherExposed, adv.Diagnosis.Cause, adv.Diagnosis.Title)
	assert.Equal(t, advisor.CauseComputeBound, adv.Diagnosis.Cause, adv.Diagnosis.Title)

	none := testkit.AnalysisOf(t, testkit.Builtin(t, "fsdp16-no-prefetch-16rank"), render.FormatText)
	d := advisor.Advise(none.Result, none.Env, advisor.DefaultOptions).Diagnosis
	require.Equal(t, advisor.CauseFSDPGatherExposed, d.Cause, d.Title)
	assert.InDelta(t, none.Truth.Diagnosis.Share, d.Share, 0.03, "what prefetching wins: priced against the job played again")
	assert.Contains(t, d.Title, "prefetching would win")
}

// Issue 37: prefetching keeps the ranks' lag. An FSDP job without prefetch (the
// judge's fsdp-no-prefetch-72, seed 21: 11.5% of its step exposed, 3.0% of it
// waiting for later ranks) was priced 442.9 ms [440.3, 446.4] with prefetch, every
// exposed millisecond but the first gather and the last reduction won back;
// regenerated with prefetch it runs 456.7 ms: a prefetched gather still completes
// when the last rank issues it. Priced with the waiting kept, the interval holds the
// regenerated step, and what prefetching wins (under 10% of the step) is not the
// cause, as in the truth.
func TestFSDPPrefetchKeepsTheRanksLag(t *testing.T) {
	const job = `
product: a2
ranks: 16
ranks_per_server: 8
steps: 3
first_step: 1
seed: 4141587015
model: {gradient_bytes: 1307053396, dtype: BFP16, forward_ms: 144.163, backward_ms: 293.245, optimizer_ms: 6.392, jitter: 0.0193, kernel_us: 4000, layers: 16, hidden_size: 2048, seq_length: 2048, micro_batch_size: 1}
ddp: {bucket_mb: 25, overlap: 0.5959}
fsdp: {shard_size: 16, prefetch: false, reshard_after_forward: true}
host: {preparing_ms: 0.869, sync_ms: 0.448, launch_gap_us: 5.857}
`
	adv, res := adviseScenario(t, job, advisor.DefaultOptions)
	require.NotNil(t, res.Summary.ExposedWaitShare)
	assert.Greater(t, *res.Summary.ExposedWaitShare, 0.02, "the ranks wait for each other in the gathers")
	r := recByID(adv, "fsdp_prefetch")
	require.NotNil(t, r, "%v", adv.Notes)
	got := regenerated(t, job, r.Settings).StepTimeUs
	t.Logf("predicted %.3f ms [%.3f, %.3f], regenerated %.3f ms (today %.3f ms)", r.Predicted.StepTimeUs/1e3, r.Predicted.Low/1e3, r.Predicted.High/1e3, got/1e3, r.TodayUs/1e3)
	assert.GreaterOrEqual(t, got, r.Predicted.Low)
	assert.LessOrEqual(t, got, r.Predicted.High)
	assert.InEpsilon(t, got, r.Predicted.StepTimeUs, 0.01)
	sc := parsedScenario(t, job)
	truth := testkit.Truth(t, sc, render.DefaultFormat(sc))
	assert.Equal(t, truth.Diagnosis.Cause, adv.Diagnosis.Cause, adv.Diagnosis.Title)
}
