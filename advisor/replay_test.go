package advisor_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hcclprof/hcclprof/fixtures/render"
	"github.com/hcclprof/hcclprof/fixtures/scenario"
	"github.com/hcclprof/hcclprof/fixtures/sim"
	"github.com/hcclprof/hcclprof/internal/testkit"
)

// replayed is the generator's own summary of a scenario (a job replayed with a
// recommendation's settings), which a prediction is held to: the ground truth of
// testkit.Truth, simulated in the scenario's default format with nothing written or
// parsed. The analysis of the written cluster reads the same figures back (the
// parser and the analysis are held to the truth elsewhere, testkit.AssertMatchesTruth);
// the full run checks that here too for every replayed job, -short trusts it.
func replayed(t *testing.T, sc *scenario.Scenario) sim.Summary {
	t.Helper()
	if testing.Short() {
		return testkit.Truth(t, sc, render.DefaultFormat(sc)).Summary
	}
	res, _ := generate(t, sc) // first: the truth is then the one generated, not simulated again
	truth := testkit.Truth(t, sc, render.DefaultFormat(sc)).Summary
	assert.InEpsilon(t, truth.StepTimeUs, stepUs(res.Summary), 0.001, "the analysis of the replayed job reads the truth's step back")
	assert.InDelta(t, truth.CommShare, res.Summary.CommShare, 0.001, "the analysis of the replayed job reads the truth's share back")
	return truth
}
