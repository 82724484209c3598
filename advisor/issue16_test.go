package advisor_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/fixtures/scenario"
)

// parsedScenario reads a scenario written in the test.
func parsedScenario(t *testing.T, yaml string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Parse([]byte(yaml))
	require.NoError(t, err)
	return sc
}

// adviseScenario generates a scenario and advises on it.
func adviseScenario(t *testing.T, yaml string, opts advisor.Options) (advisor.Advice, *analysis.Result) {
	t.Helper()
	res, c := generate(t, parsedScenario(t, yaml))
	return advisor.Advise(res, advisor.EnvOf(c), opts), res
}

// regenerated runs the scenario with a plan's settings applied and analyses it.
func regenerated(t *testing.T, yaml string, settings []costmodel.Setting) analysis.Summary {
	t.Helper()
	sc := parsedScenario(t, yaml)
	for _, s := range settings {
		require.NoError(t, sc.SetKnob(s.Knob, s.Value, s.Algo))
	}
	res, _ := generate(t, sc)
	return res.Summary
}

const smallPacketStorm = `
product: a2
ranks: 8
ranks_per_node: 8
steps: 3
first_step: 5
seed: 16
model:
  gradient_bytes: 200000000
  dtype: FP32
  forward_ms: 10
  backward_ms: 20
  optimizer_ms: 3
  kernel_us: 1000
ddp:
  bucket_mb: 25
  overlap: 0.8
problems:
  - kind: small_packets
    count: 300
    bytes: 16384
`

// TestSmallCollectiveStormIsNotBuckets: 300 × 16 KiB AllReduces a step beside
// 25 MiB gradient buckets are a storm to fuse, not buckets to resize; the fusion's
// prediction is confirmed by the generator run with them fused.
func TestSmallCollectiveStormIsNotBuckets(t *testing.T) {
	a, res := adviseScenario(t, smallPacketStorm, advisor.DefaultOptions)
	f := byID(a, "small_collectives")
	require.Len(t, f, 1, "%+v", a.Findings)
	assert.Equal(t, advisor.High, f[0].Severity)
	assert.Contains(t, f[0].Title, "300 small allreduce ops per step (16 KiB each)")
	assert.Contains(t, f[0].Evidence, "hcom_allReduce_")
	require.NotEmpty(t, a.Recommendations, "%v", a.Notes)
	r := a.Recommendations[0]
	assert.Equal(t, "fuse_small_collectives", r.ID)
	assert.Equal(t, "fuse collectives", r.Knob)
	assert.False(t, r.Hypothesis)
	assert.Contains(t, r.Apply, "300 small allreduce ops")
	assert.Nil(t, recommendationByID(a, "bucket_size"), "the storm is not buckets: %+v", a.Recommendations)
	assertRealKnobs(t, a)
	got := regenerated(t, smallPacketStorm, r.Settings)
	before := float64(res.Summary.StepTimeNs) / 1e3
	t.Logf("step %.0f µs; fused: predicted %.0f µs, regenerated %.0f µs", before, r.Predicted.StepTimeUs, float64(got.StepTimeNs)/1e3)
	assert.InEpsilon(t, float64(got.StepTimeNs)/1e3, r.Predicted.StepTimeUs, 0.1)
	assert.Less(t, float64(got.StepTimeNs)/1e3, 0.85*before, "fusing saves what the storm exposed")
}

const lateRetransmission = `
product: a2
ranks: 4
ranks_per_node: 2
steps: 5
first_step: 17
seed: 21
model:
  gradient_bytes: 100000000
  dtype: BFP16
  forward_ms: 10
  backward_ms: 20
  optimizer_ms: 2
  kernel_us: 2000
ddp:
  bucket_mb: 25
  overlap: 0.8
problems:
  - kind: warmup
    factor: 3
  - kind: retransmission
    src: 1
    dst: 3
    step: 21
    wait_ms: 4000
`

// TestLateRetransmissionIsNotWarmup: the first step is the warm-up; step 21, with
// a 4 s RDMA retransmission, is an outlier with its link, never a step to skip as
// warm-up; and no knob is offered for a fault.
func TestLateRetransmissionIsNotWarmup(t *testing.T) {
	a, _ := adviseScenario(t, lateRetransmission, advisor.DefaultOptions)
	warm := byID(a, "warmup_steps")
	require.Len(t, warm, 1, "%+v", a.Findings)
	require.Len(t, warm[0].Refs, 1)
	assert.Equal(t, 17, warm[0].Refs[0].Step)
	assert.Contains(t, warm[0].Evidence, "--skip-steps 17.")
	out := byID(a, "outlier_steps")
	require.Len(t, out, 1, "%+v", a.Findings)
	assert.Equal(t, 21, out[0].Refs[0].Step)
	assert.Contains(t, out[0].Evidence, "step 21 ")
	assert.Contains(t, out[0].Evidence, "RDMA retransmission 1→3")
	for _, f := range a.Findings {
		assert.NotContains(t, f.Evidence, "--skip-steps 21", f.ID)
		assert.NotContains(t, f.Evidence, "--skip-steps 17,21", f.ID)
	}
	require.Len(t, byID(a, "rdma_retransmission"), 1)
	assert.Empty(t, a.Recommendations)
	require.NotEmpty(t, a.Notes)
	assert.Contains(t, a.Notes[0], "fix it first")
}
