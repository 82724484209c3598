package costmodel_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/fixtures/scenario"
)

// TestAdviseFitsOnce: the advice of a run calibrates its links once and fits its
// gradient synchronisation once, whichever findings and recommendations read them
// (it calibrated three times and built the cluster's shape twice before).
func TestAdviseFitsOnce(t *testing.T) {
	res, _ := generated(t, "small-buckets-32rank", func(sc *scenario.Scenario) { sc.Steps = 2 })
	c0, b0 := costmodel.FitsMade()
	a := advisor.Advise(res, advisor.Env{}, advisor.DefaultOptions)
	c1, b1 := costmodel.FitsMade()
	require.NotEmpty(t, a.Recommendations, "the bucketing was fitted and used: %v", a.Notes)
	assert.Equal(t, int64(1), c1-c0, "link calibrations")
	assert.Equal(t, int64(1), b1-b0, "bucketing fits")
}
