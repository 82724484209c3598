package advisor_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/fixtures/render"
	"github.com/hcclprof/hcclprof/fixtures/scenario"
	"github.com/hcclprof/hcclprof/fixtures/sim"
	"github.com/hcclprof/hcclprof/internal/testkit"
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
		a := adviseBuiltin(t, "small-buffsize-16rank", nil) // its 3 steps: the cluster of TestOverlapAndAlgorithmRecommendations
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
		// HCCL_ALGO pipeline gains about as much here; forcing an algorithm is the
		// last resort, so the buffer comes first.
		for _, r := range a.Recommendations {
			if r.Knob == "HCCL_ALGO" {
				assert.Fail(t, "HCCL_ALGO ranked above HCCL_BUFFSIZE", "%+v", a.Recommendations)
			}
			if r.Knob == "HCCL_BUFFSIZE" {
				break
			}
		}
	})
	for _, broken := range []string{"straggler-64rank", "slow-link-2server"} {
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
	gen := testkit.AnalysisOf(t, sc, render.FormatText)
	got, truth := gen.Result.Summary, gen.Truth
	t.Logf("plan %s = %s: predicted step %.0f µs share %.3f; generated %.0f µs share %.3f (truth %.3f)",
		plan.Knob, plan.Value, plan.Predicted.StepTimeUs, plan.Predicted.CommShare, float64(got.StepTimeNs)/1e3, got.CommShare, truth.Summary.CommShare)
	assert.Less(t, got.CommShare, 0.30)
	assert.InDelta(t, got.CommShare, plan.Predicted.CommShare, 0.1*got.CommShare)
	assert.InDelta(t, float64(got.StepTimeNs)/1e3, plan.Predicted.StepTimeUs, 0.1*float64(got.StepTimeNs)/1e3)
}

// generatedSummary is a built-in scenario replayed with a recommendation's settings
// applied: the generator's summary (replayed).
func generatedSummary(t *testing.T, name string, edit func(*scenario.Scenario), settings []costmodel.Setting) sim.Summary {
	t.Helper()
	sc, err := scenario.Builtin(name)
	require.NoError(t, err)
	edit(sc)
	for _, s := range settings {
		require.NoError(t, sc.SetKnob(s.Knob, s.Value, s.Algo))
	}
	return replayed(t, sc)
}

// TestOverlapAndAlgorithmRecommendations: a Megatron job whose buckets overlap little
// of the backward pass gets --overlap-grad-reduce; a job whose level-1 algorithm the
// calibrated model prices well above another gets a per-op HCCL_ALGO; the generator
// run with each confirms the predicted step time within 10%.
func TestOverlapAndAlgorithmRecommendations(t *testing.T) {
	edit := func(sc *scenario.Scenario) { sc.Steps = 3 }
	t.Run("overlap", func(t *testing.T) {
		opts := advisor.DefaultOptions
		opts.Framework = advisor.FrameworkMegatron
		a := adviseBuiltinWith(t, "seed-8card-bert", edit, opts)
		r := recByID(a, "overlap_grad_reduce")
		require.NotNil(t, r, "%+v", a.Recommendations)
		assert.Equal(t, "--overlap-grad-reduce", r.Knob)
		assert.False(t, r.Hypothesis)
		assertRealKnobs(t, a)
		got := generatedSummary(t, "seed-8card-bert", edit, r.Settings)
		t.Logf("predicted %.0f µs share %.3f; generated %.0f µs share %.3f", r.Predicted.StepTimeUs, r.Predicted.CommShare, got.StepTimeUs, got.CommShare)
		assert.InEpsilon(t, got.StepTimeUs, r.Predicted.StepTimeUs, 0.1)
		assert.InDelta(t, got.CommShare, r.Predicted.CommShare, 0.1*got.CommShare)

		// The top plan adds a bucket size to the overlap: confirmed too.
		top := a.Recommendations[0]
		require.Len(t, top.Settings, 2, "%+v", top)
		assert.Equal(t, "overlap", top.Settings[0].Knob)
		assert.Equal(t, "bucket", top.Settings[1].Knob)
		assert.Contains(t, top.Risks, r.Risks[0], "a plan carries the risks of what it builds on")
		got = generatedSummary(t, "seed-8card-bert", edit, top.Settings)
		t.Logf("plan %s: predicted %.0f µs share %.3f; generated %.0f µs share %.3f", top.Value, top.Predicted.StepTimeUs, top.Predicted.CommShare, got.StepTimeUs, got.CommShare)
		assert.InEpsilon(t, got.StepTimeUs, top.Predicted.StepTimeUs, 0.1)
		assert.InDelta(t, got.CommShare, top.Predicted.CommShare, 0.1*got.CommShare)

		// Plain DDP has no switch for it: the same prediction is only a hypothesis.
		ddp := recByID(adviseBuiltin(t, "seed-8card-bert", edit), "overlap_grad_reduce")
		require.NotNil(t, ddp)
		assert.True(t, ddp.Hypothesis)
		assert.Contains(t, ddp.Apply, "static_graph=True")
	})
	t.Run("algorithm", func(t *testing.T) {
		a := adviseBuiltin(t, "small-buffsize-16rank", edit)
		r := recByID(a, "hccl_algo")
		require.NotNil(t, r, "%+v", a.Recommendations)
		// Priced after the bucket change before it (issue 16 case 9a): the plan carries it.
		assert.Equal(t, "bucket_cap_mb + HCCL_ALGO", r.Knob)
		assert.Equal(t, "bucket", r.Settings[0].Knob)
		assert.Equal(t, costmodel.Setting{Knob: "algo", Algo: "pipeline"}, r.Settings[len(r.Settings)-1])
		assert.Contains(t, r.Apply, "\nexport HCCL_ALGO=\"allreduce=level0:NA;level1:pipeline\"")
		assert.Contains(t, strings.Join(r.Assumptions, " "), "HCCL's own choice for a 16 MiB AllReduce on A2, 2 servers × 8 NPUs")
		assertRealKnobs(t, a)
		f := byID(a, "algorithm_not_best")
		require.Len(t, f, 1)
		assert.Equal(t, advisor.Medium, f[0].Severity)
		assert.Contains(t, f[0].Title, "HCCL picks pipeline for these sizes")
		got := generatedSummary(t, "small-buffsize-16rank", edit, r.Settings)
		t.Logf("predicted %.0f µs share %.3f; generated %.0f µs share %.3f", r.Predicted.StepTimeUs, r.Predicted.CommShare, got.StepTimeUs, got.CommShare)
		assert.InEpsilon(t, got.StepTimeUs, r.Predicted.StepTimeUs, 0.1)
	})
	t.Run("hidden communication: no algorithm alarm", func(t *testing.T) {
		a := adviseBuiltin(t, "healthy-2server-16rank", edit)
		assert.Nil(t, recByID(a, "hccl_algo"))
		for _, f := range byID(a, "algorithm_not_best") {
			assert.Equal(t, advisor.Info, f.Severity)
		}
	})
}
