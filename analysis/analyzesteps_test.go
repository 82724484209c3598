package analysis_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/realdata"
	"github.com/hcclprof/hcclprof/parser"
)

// TestAnalyzeStepsIsAnalyzesSteps: what inspect reads instead of a whole analysis
// (each rank's steps and problems, the summary's steps and completeness) is
// Analyze's, on the bundled sample and real data with and without problems.
func TestAnalyzeStepsIsAnalyzesSteps(t *testing.T) {
	dirs := []string{"../fixtures/samples/demo-2server-8rank"}
	for _, name := range []string{"imagenet-2rank-level1", "megatron-pp2dp2-2of4rank", "msprof-mindspore-alexnet", "torchnpu-1rank-nohccl"} {
		dirs = append(dirs, realdata.Path(t, name))
	}
	for _, dir := range dirs {
		c, err := parser.LoadCluster([]string{dir}, parser.LoadOptions{})
		require.NoError(t, err)
		whole, steps := analysis.Analyze(c, analysis.Options{}), analysis.AnalyzeSteps(c, analysis.Options{})
		assert.Equal(t, whole.Ranks, steps.Ranks, dir)
		assert.Equal(t, whole.Summary.Steps, steps.Summary.Steps, dir)
		assert.Equal(t, whole.Summary.Ranks, steps.Summary.Ranks, dir)
		assert.Equal(t, whole.Summary.Incomplete, steps.Summary.Incomplete, dir)
		assert.Equal(t, whole.Summary.RanksExpected, steps.Summary.RanksExpected, dir)
	}
}
