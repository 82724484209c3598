package testkit_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/fixtures/render"
	"github.com/hcclprof/hcclprof/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// A scenario and format is generated and analysed once; an edited scenario or another
// format is its own cluster; the cluster is the generator's output with its truth.
func TestSharedByContent(t *testing.T) {
	a := testkit.AnalyseBuiltin(t, "demo-2server-8rank", render.FormatText)
	again := testkit.Analyse(t, testkit.Builtin(t, "demo-2server-8rank"), render.FormatText)
	assert.Same(t, a.Result, again.Result)
	assert.Same(t, a.Cluster, again.Cluster, "the cluster is among the recent ones")
	assert.Same(t, a.Generated, testkit.GenerateBuiltin(t, "demo-2server-8rank", render.FormatText))
	require.Len(t, a.Cluster.Ranks, 8)
	assert.Equal(t, a.Truth.Summary.Ranks, a.Result.Summary.Ranks)
	_, err := os.Stat(filepath.Join(a.Dir, "ground_truth.json"))
	assert.NoError(t, err)

	db := testkit.GenerateBuiltin(t, "demo-2server-8rank", render.FormatDB)
	assert.NotEqual(t, a.Dir, db.Dir)
	edited := testkit.Builtin(t, "demo-2server-8rank")
	edited.Steps = 1
	one := testkit.Analyse(t, edited, render.FormatText)
	assert.NotEqual(t, a.Dir, one.Dir)
	assert.Equal(t, 1, one.Result.Summary.Steps)
	assert.Equal(t, 2, a.Result.Summary.Steps, "the shared cluster is not the edited one")

	// Other options read the shared cluster without changing its analysis.
	base := a.Result.Summary
	skipped, shared := testkit.AnalyseWith(t, testkit.Builtin(t, "demo-2server-8rank"), render.FormatText, analysis.Options{SkipSteps: []int{a.Result.Ranks[0].Steps[0].Step}})
	assert.Same(t, a.Result, shared.Result)
	assert.Equal(t, 1, skipped.Summary.Steps)
	assert.Equal(t, base, a.Result.Summary)
}
