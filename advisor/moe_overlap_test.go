package advisor_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/fixtures/scenario"
	"github.com/hcclprof/hcclprof/internal/testkit"
)

// moeJob is moe-ep8-hot-expert-16rank without its hot expert: EP8 × DP2 on two A2
// servers whose AlltoAlls (16 layers of 4096 tokens × 4096 hidden, top-2) run on the
// compute stream, about a quarter of the step; sharedShare is the part of the MoE
// block its shared experts compute.
func moeJob(t *testing.T, sharedShare float64) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Builtin("moe-ep8-hot-expert-16rank")
	require.NoError(t, err)
	sc.Problems = nil
	sc.MoE.SharedExpertShare = sharedShare
	return sc
}

// Issue 37: exposed MoE AlltoAlls get MindSpeed's --moe-alltoall-overlap-comm, priced
// with an interval that holds the step the generator gives with the AlltoAlls on
// their own stream: with shared experts (a quarter of the MoE block) the step fell
// from 244.2 to 213.8 ms against 215.5 [186.8, 237.0] predicted; without them from
// 246.2 to 234.3 ms against 216.5 [186.8, 238.8] (only the backward's weight
// gradients run beside an AlltoAll: the interval's upper end). Once the overlap is
// on nothing more is recommended for it, and a note says so. -short replays the job
// with shared experts only.
func TestMoEAlltoAllOverlapPricedAgainstRegenerated(t *testing.T) {
	shares := []float64{0.25, 0}
	if testkit.Short(t, "the job with shared experts only; the one without is another 16-rank job") {
		shares = shares[:1]
	}
	for _, share := range shares {
		sc := moeJob(t, share)
		res, env := generate(t, sc)
		adv := advisor.Advise(res, env, advisor.DefaultOptions)
		ep := kindShare(res, analysis.KindEP)
		assert.Greater(t, ep.CommShare, 0.2, "shared %.2f: EP exposed share", share)
		r := recByID(adv, "moe_alltoall_overlap")
		require.NotNil(t, r, "shared %.2f: %v", share, adv.Notes)
		assertRealKnobs(t, adv)
		assert.Equal(t, "--moe-alltoall-overlap-comm", r.Knob)
		assert.Contains(t, r.Apply, "MindSpeed: --moe-alltoall-overlap-comm --moe-token-dispatcher-type alltoall --moe-grouped-gemm ")
		assert.False(t, r.Hypothesis)
		stepUs := float64(res.Summary.StepTimeNs) / 1e3
		assert.InDelta(t, ep.CommShare*stepUs/2, r.GainUs, 1, "half the exposed EP time")
		assert.Less(t, r.Predicted.Low, r.Predicted.StepTimeUs)
		assert.Greater(t, r.Predicted.High, r.Predicted.StepTimeUs)

		on := moeJob(t, share)
		for _, s := range r.Settings {
			require.NoError(t, on.SetKnob(s.Knob, s.Value, s.Algo))
		}
		require.True(t, on.MoE.AlltoAllOverlap)
		got, env2 := generate(t, on)
		gotUs := float64(got.Summary.StepTimeNs) / 1e3
		t.Logf("shared experts %.2f: %s predicted %.3f ms [%.3f, %.3f], regenerated %.3f ms (today %.3f ms)", share, r.Knob,
			r.Predicted.StepTimeUs/1e3, r.Predicted.Low/1e3, r.Predicted.High/1e3, gotUs/1e3, stepUs/1e3)
		assert.GreaterOrEqual(t, gotUs, r.Predicted.Low)
		assert.LessOrEqual(t, gotUs, r.Predicted.High)

		after := advisor.Advise(got, env2, advisor.DefaultOptions)
		assert.Nil(t, recByID(after, "moe_alltoall_overlap"), "already overlapped")
		assert.Contains(t, strings.Join(after.Notes, "\n"), "already beside compute: no AlltoAll overlap to add")
	}
}

// The AlltoAll overlap is not recommended where the AlltoAlls are a small part of
// the step (the same job's tokens a sixteenth, 1024 × 1024 hidden, routed evenly: EP
// 3.7% of the step, all exposed; with the routing's 1.2 imbalance the waits for the
// busiest expert in the combine kept it at 6.7%), nor on a job without experts.
func TestMoEAlltoAllOverlapNotWhenNegligible(t *testing.T) {
	small := moeJob(t, 0.25)
	small.Model.HiddenSize, small.Model.SeqLength = 1024, 1024
	small.MoE.Imbalance = 1
	res, env := generate(t, small)
	adv := advisor.Advise(res, env, advisor.DefaultOptions)
	ep := kindShare(res, analysis.KindEP)
	assert.Positive(t, ep.CommShare)
	assert.Less(t, ep.CommShare, 0.05)
	assert.Nil(t, recByID(adv, "moe_alltoall_overlap"), "EP exposed %.1f%% of the step", 100*ep.CommShare)

	dense := adviseBuiltin(t, "tp8-sp-16rank", nil)
	assert.Nil(t, recByID(dense, "moe_alltoall_overlap"))
	assert.NotContains(t, strings.Join(dense.Notes, "\n"), "AlltoAll")
}

// moeH100 is moeJob with shared experts at a quarter of the MoE block, on two H100
// nodes.
const moeH100 = `
product: h100
ranks: 16
ranks_per_server: 8
steps: 2
first_step: 10
seed: 39
model: {name: moe-16x1b, gradient_bytes: 1500000000, dtype: BFP16, forward_ms: 60, backward_ms: 120, optimizer_ms: 5, kernel_us: 800,
        layers: 16, hidden_size: 4096, seq_length: 4096, micro_batch_size: 1}
moe: {experts: 16, topk: 2, imbalance: 1.2, shared_expert_share: 0.25}
ddp: {bucket_mb: 50, overlap: 0.7}
parallel: {ep: 8}
`

// On NVIDIA the same job (H100, NVLink inside a node) gets Megatron-LM's
// --overlap-moe-expert-parallel-comm as a hypothesis (the generator replays the
// AlltoAlls beside the same micro-batch's independent compute, not Megatron's
// pairing of micro-batches); replayed so, the step fell from 214.3 to 194.3 ms against
// 201.6 [189.0, 211.1] predicted: the fast AlltoAlls hid almost whole (79% of their
// exposed time; a bound of three quarters missed it).
func TestMoEAlltoAllOverlapOnNVIDIA(t *testing.T) {
	if testkit.Short(t, "another 16-rank job; the Ascend one is priced in -short") {
		t.SkipNow()
	}
	res, env := generate(t, parsedScenario(t, moeH100))
	adv := advisor.Advise(res, env, advisor.DefaultOptions)
	r := recByID(adv, "moe_alltoall_overlap")
	require.NotNil(t, r, "%v", adv.Notes)
	assertRealKnobs(t, adv)
	assert.Equal(t, "--overlap-moe-expert-parallel-comm", r.Knob)
	assert.Contains(t, r.Apply, "Megatron-LM: --overlap-moe-expert-parallel-comm --delay-wgrad-compute --moe-token-dispatcher-type alltoall ")
	assert.True(t, r.Hypothesis)
	assert.NotContains(t, strings.Join(r.Risks, " "), "--moe-zero-memory", "MindSpeed's flags are not offered on NVIDIA")
	on := parsedScenario(t, moeH100)
	for _, s := range r.Settings {
		require.NoError(t, on.SetKnob(s.Knob, s.Value, s.Algo))
	}
	gotUs := replayed(t, on).StepTimeUs
	t.Logf("%s predicted %.3f ms [%.3f, %.3f], regenerated %.3f ms (today %.3f ms)", r.Knob,
		r.Predicted.StepTimeUs/1e3, r.Predicted.Low/1e3, r.Predicted.High/1e3, gotUs/1e3, r.TodayUs/1e3)
	assert.GreaterOrEqual(t, gotUs, r.Predicted.Low)
	assert.LessOrEqual(t, gotUs, r.Predicted.High)
}
