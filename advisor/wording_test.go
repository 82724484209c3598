package advisor_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/parser"
)

// TestAlgorithmSavingAgreesWithNoTuning (issue 38 item 3): the sample has a slow RDMA
// link, so the advisor recommends no tuning; its algorithm finding used to say, on the
// line before, that pipeline "would save 8.87 ms per step". The saving is now said to
// come once the slow link is fixed, the levels are said as between servers and within
// a server (not HCCL's "level-1" beside the profiler's "Level1"), and the algorithms'
// short names are explained where they are printed.
func TestAlgorithmSavingAgreesWithNoTuning(t *testing.T) {
	c, err := parser.LoadCluster([]string{"../fixtures/samples/demo-2server-8rank"}, parser.LoadOptions{})
	require.NoError(t, err)
	res := analysis.Analyze(c, analysis.Options{})
	a := advisor.Advise(res, advisor.EnvOf(c), advisor.DefaultOptions)
	require.Empty(t, a.Recommendations)
	require.NotEmpty(t, a.Notes)
	assert.Contains(t, a.Notes[0], "no tuning is recommended while a slow rank, link or server")
	f := byID(a, "algorithm_not_best")
	require.Len(t, f, 1)
	assert.Contains(t, f[0].Title, "The between-server algorithm ring is not HCCL's own choice")
	assert.Contains(t, f[0].Title, "would save 8.87 ms per step (31% of its collectives' time) once the slow rank, link or server found is fixed")
	assert.NotContains(t, f[0].Title, "Level-1")
	assert.Contains(t, f[0].Evidence, "mesh within a server; the ops' alg_type says ring between servers (HCCL's level 1, HCCL_ALGO's \"level1\")")
	assert.Contains(t, f[0].Evidence, "H-D_R: recursive halving-doubling")
	assert.Contains(t, f[0].Evidence, "NHR: nonuniform hierarchical ring")
	assert.Contains(t, f[0].Evidence, "NB: nonuniform Bruck")
	assert.Contains(t, f[0].Evidence, "no tuning is recommended before")
}
