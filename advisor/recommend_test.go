package advisor_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/fixtures/render"
	"github.com/hcclprof/hcclprof/fixtures/scenario"
	"github.com/hcclprof/hcclprof/fixtures/sim"
	"github.com/hcclprof/hcclprof/parser"
)

// assertRealKnobs checks every recommendation names only allowlisted settings.
func assertRealKnobs(t *testing.T, a advisor.Advice) {
	t.Helper()
	for _, r := range a.Recommendations {
		for _, k := range strings.Split(r.Knob, " + ") {
			_, ok := advisor.LookupKnob(k)
			assert.True(t, ok, "%s names %q", r.ID, k)
		}
		assert.Empty(t, advisor.UnknownVariables(r.Apply+strings.Join(r.Assumptions, " ")+strings.Join(r.Risks, " ")), r.ID)
	}
}

func TestRecommendations(t *testing.T) {
	t.Run("small buckets: a bucket change first", func(t *testing.T) {
		a := adviseBuiltin(t, "small-buckets-32rank", func(sc *scenario.Scenario) { sc.Steps = 2 })
		require.NotEmpty(t, a.Recommendations, "%v", a.Notes)
		assert.Equal(t, "bucket_size", a.Recommendations[0].ID)
		assert.Equal(t, "bucket_cap_mb", a.Recommendations[0].Knob)
		assert.Positive(t, a.Recommendations[0].GainUs)
		assertRealKnobs(t, a)
	})
	t.Run("small HCCL_BUFFSIZE: raise it", func(t *testing.T) {
		a := adviseBuiltin(t, "small-buffsize-16rank", func(sc *scenario.Scenario) { sc.Steps = 2 })
		var found bool
		for _, r := range a.Recommendations {
			if r.Knob == "HCCL_BUFFSIZE" {
				found = true
				assert.Contains(t, r.Apply, "export HCCL_BUFFSIZE=100")
				assert.Less(t, r.Predicted.StepTimeUs, r.Predicted.StepTimeUs+r.GainUs)
			}
		}
		assert.True(t, found, "%+v", a.Recommendations)
		assertRealKnobs(t, a)
	})
	for _, broken := range []string{"straggler-64rank", "slow-link-2node"} {
		t.Run(broken+": no knob pretends to fix a broken node", func(t *testing.T) {
			a := adviseBuiltin(t, broken, nil)
			assert.Empty(t, a.Recommendations)
			require.NotEmpty(t, a.Notes)
			assert.Contains(t, a.Notes[0], "fix it first")
		})
	}
}

// TestSeedPlanConfirmedByTheGenerator: the seed article's case gets a plan predicted
// under the 30% budget, and the generator run with that plan confirms it within 10%.
func TestSeedPlanConfirmedByTheGenerator(t *testing.T) {
	edit := func(sc *scenario.Scenario) { sc.Steps = 3 }
	a := adviseBuiltin(t, "seed-8card-bert", edit)
	require.NotEmpty(t, a.Recommendations)
	var plan *advisor.Recommendation
	for i := range a.Recommendations {
		if !a.Recommendations[i].Hypothesis && a.Recommendations[i].Predicted.CommShare < 0.30 {
			plan = &a.Recommendations[i]
			break
		}
	}
	require.NotNil(t, plan, "%+v", a.Recommendations)
	assertRealKnobs(t, a)

	sc, err := scenario.Builtin("seed-8card-bert")
	require.NoError(t, err)
	edit(sc)
	for _, s := range plan.Settings {
		require.NoError(t, sc.SetKnob(s.Knob, s.Value, s.Algo))
	}
	run, err := sim.Simulate(sc)
	require.NoError(t, err)
	dir := t.TempDir()
	truth, _, err := render.WriteCluster(run, dir, render.Options{Format: render.FormatText})
	require.NoError(t, err)
	c, err := parser.LoadCluster([]string{dir}, parser.LoadOptions{})
	require.NoError(t, err)
	got := analysis.Analyze(c, analysis.Options{}).Summary
	t.Logf("plan %s = %s: predicted step %.0f µs share %.3f; generated %.0f µs share %.3f (truth %.3f)",
		plan.Knob, plan.Value, plan.Predicted.StepTimeUs, plan.Predicted.CommShare, float64(got.StepTimeNs)/1e3, got.CommShare, truth.Summary.CommShare)
	assert.Less(t, got.CommShare, 0.30)
	assert.InDelta(t, got.CommShare, plan.Predicted.CommShare, 0.1*got.CommShare)
	assert.InDelta(t, float64(got.StepTimeNs)/1e3, plan.Predicted.StepTimeUs, 0.1*float64(got.StepTimeNs)/1e3)
}
