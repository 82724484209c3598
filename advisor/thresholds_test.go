package advisor_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/fixtures/render"
	"github.com/hcclprof/hcclprof/internal/config"
	"github.com/hcclprof/hcclprof/internal/testkit"
	"github.com/hcclprof/hcclprof/parser"
)

// TestFindingThresholdsFromConfig: a threshold from the configuration decides its
// finding. 20% of the sample's communication overlaps compute, under the default 50%
// (exposed_comm_could_overlap); with max_overlap_ratio at 0.1 it is enough.
func TestFindingThresholdsFromConfig(t *testing.T) {
	c, err := parser.LoadCluster([]string{"../fixtures/samples/demo-2server-8rank"}, parser.LoadOptions{})
	require.NoError(t, err)
	res := analysis.Analyze(c, analysis.Options{})
	def := advisor.Advise(res, advisor.EnvOf(c), advisor.DefaultOptions)
	assert.NotEmpty(t, byID(def, "exposed_comm_could_overlap"))
	cfg, err := config.Parse(strings.NewReader("findings:\n  exposed_comm_could_overlap: {max_overlap_ratio: 0.1}\n"), "c.yaml")
	require.NoError(t, err)
	opts := cfg.Advisor
	assert.Empty(t, byID(advisor.Advise(res, advisor.EnvOf(c), opts), "exposed_comm_could_overlap"))
	// Options without thresholds keep the defaults.
	assert.Equal(t, def, advisor.Advise(res, advisor.EnvOf(c), advisor.Options{}))
}

// TestRecommendThresholdsFromConfig: the recommendations' own thresholds come from the
// configuration file too. With nothing worth less than 90% of the step listed, a run
// whose small buckets get advice gets none, and the notes count what was left out.
func TestRecommendThresholdsFromConfig(t *testing.T) {
	a := testkit.AnalysisOf(t, testkit.Builtin(t, "small-buckets-32rank"), render.FormatText)
	def := advisor.Advise(a.Result, a.Env, advisor.DefaultOptions)
	require.NotEmpty(t, def.Recommendations)
	cfg, err := config.Parse(strings.NewReader("findings:\n  recommendations: {negligible_share: 0.9}\n"), "c.yaml")
	require.NoError(t, err)
	opts := cfg.Advisor
	got := advisor.Advise(a.Result, a.Env, opts)
	assert.Empty(t, got.Recommendations)
	assert.Contains(t, strings.Join(got.Notes, "\n"), fmt.Sprintf("%d change(s) worth under 90.0%% of the step", len(def.Recommendations)))
}
