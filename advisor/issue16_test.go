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
