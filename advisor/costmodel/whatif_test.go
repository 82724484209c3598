package costmodel_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/fixtures/render"
	"github.com/hcclprof/hcclprof/fixtures/scenario"
	"github.com/hcclprof/hcclprof/fixtures/sim"
	"github.com/hcclprof/hcclprof/parser"
)

// generated runs a built-in scenario (changed by edit), writes it as text and
// analyses it; it returns the analysis and the generator's own summary.
func generated(t *testing.T, name string, edit func(*scenario.Scenario)) (*analysis.Result, sim.Summary) {
	t.Helper()
	sc, err := scenario.Builtin(name)
	require.NoError(t, err)
	edit(sc)
	run, err := sim.Simulate(sc)
	require.NoError(t, err)
	dir := t.TempDir()
	truth, _, err := render.WriteCluster(run, dir, render.Options{Format: render.FormatText})
	require.NoError(t, err)
	c, err := parser.LoadCluster([]string{dir}, parser.LoadOptions{})
	require.NoError(t, err)
	return analysis.Analyze(c, analysis.Options{}), truth.Summary
}

// TestWhatIfAgainstTheGenerator predicts a knob's change from one run and compares it
// with the generator's own run with the knob changed.
func TestWhatIfAgainstTheGenerator(t *testing.T) {
	for _, tc := range []struct {
		scenario string
		knob     string
		value    int64
		apply    func(*scenario.Scenario)
	}{
		{"seed-8card-bert", "bucket", 64 << 20, func(sc *scenario.Scenario) { sc.DDP.BucketMB = 64 }},
		{"seed-8card-bert", "bucket", 4 << 20, func(sc *scenario.Scenario) { sc.DDP.BucketMB = 4 }},
		{"seed-8card-bert", "accumulation", 4, func(sc *scenario.Scenario) { sc.DDP.Accumulation = 4 }},
		{"small-buffsize-16rank", "buffsize", 200 << 20, func(sc *scenario.Scenario) { sc.HCCLBuffsizeMB = 200 }},
	} {
		t.Run(tc.scenario+"/"+tc.knob, func(t *testing.T) {
			base := func(sc *scenario.Scenario) { sc.Steps = 3 }
			res, before := generated(t, tc.scenario, base)
			sc, _ := scenario.Builtin(tc.scenario)
			bk, err := costmodel.FitBucketing(res, max(sc.DDP.Accumulation, 1), int64(sc.HCCLBuffsizeMB)<<20)
			require.NoError(t, err)
			p, err := bk.WhatIf(tc.knob, tc.value)
			require.NoError(t, err)
			_, after := generated(t, tc.scenario, func(sc *scenario.Scenario) { base(sc); tc.apply(sc) })
			t.Logf("before: step %.0f µs share %.3f; predicted %.0f µs [%.0f, %.0f] share %.3f; generator %.0f µs share %.3f; α %.1f µs, %.2f GB/s, T %.0f µs",
				before.StepTimeUs, before.CommShare, p.StepTimeUs, p.Low, p.High, p.CommShare, after.StepTimeUs, after.CommShare,
				bk.AlphaUs, 1e-3/bk.BetaUsPerB, bk.WindowUs)
			assert.InDelta(t, after.StepTimeUs, p.StepTimeUs, 0.1*after.StepTimeUs, "step time within 10%%")
			assert.InDelta(t, after.CommShare, p.CommShare, 0.1*after.CommShare+0.01, "comm_share within 10%%")
		})
	}
}
