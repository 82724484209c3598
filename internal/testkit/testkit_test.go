package testkit_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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

// The truth of a scenario not written is the one written beside it, in every format
// (a test comparing with the generator's figures alone may skip the writing), and
// Truth hands out Generate's when it has run.
func TestTruthWithoutWriting(t *testing.T) {
	for _, tc := range []struct {
		name   string
		format render.Format
	}{
		{"demo-2server-8rank", render.FormatText},
		{"demo-2server-8rank", render.FormatDB},
		{"demo-2server-8rank", render.FormatMsprof},
		{"warmup-outlier-8rank", render.FormatText},
		{"a100-straggler-2node", render.FormatKineto},
	} {
		sc := testkit.Builtin(t, tc.name)
		sc.Steps = 2 // an entry of this test's own
		unwritten := testkit.Truth(t, sc, tc.format)
		g := testkit.Generate(t, sc, tc.format)
		want, err := json.Marshal(g.Truth)
		require.NoError(t, err)
		got, err := json.Marshal(unwritten)
		require.NoError(t, err)
		assert.JSONEq(t, string(want), string(got), "%s as %s", tc.name, tc.format)
	}
	sc := testkit.Builtin(t, "demo-2server-8rank")
	sc.Steps = 1
	g := testkit.Generate(t, sc, render.FormatText)
	assert.True(t, g.Truth == testkit.Truth(t, sc, render.FormatText), "Generate's truth")
}

// A directory no test holds is removed beyond the budget and written again, the same
// files, when a test asks for it; one a test holds stays to the test's end.
func TestDirectoriesWrittenAgain(t *testing.T) {
	old := testkit.SetFilesBudget(0)
	defer testkit.SetFilesBudget(old)
	sc := testkit.Builtin(t, "demo-2server-8rank")
	sc.Steps = 3 // an entry of this test's own
	var dir string
	var files map[string]string
	t.Run("first", func(t *testing.T) {
		g := testkit.Generate(t, sc, render.FormatDB)
		dir, files = g.Dir, filesOf(t, g.Dir)
		other := testkit.Builtin(t, "demo-2server-8rank")
		other.Steps = 4
		testkit.Analyse(t, other, render.FormatText)
		assert.Equal(t, files, filesOf(t, dir), "held by the test, not removed")
	})
	_, err := os.Stat(dir)
	require.ErrorIs(t, err, os.ErrNotExist, "held by none and over the budget: removed")
	sc.Steps = 1 // the test's scenario changed after: the kit wrote its own copy
	t.Run("again", func(t *testing.T) {
		sc := testkit.Builtin(t, "demo-2server-8rank")
		sc.Steps = 3
		g := testkit.Generate(t, sc, render.FormatDB)
		assert.Equal(t, dir, g.Dir)
		assert.Equal(t, files, filesOf(t, g.Dir), "the same files written again")
		a := testkit.Analyse(t, sc, render.FormatDB)
		assert.Equal(t, 3, a.Result.Summary.Steps)
	})
}

// filesOf is the files under dir by path, with their contents.
func filesOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[strings.TrimPrefix(p, dir)] = string(b)
		return err
	}))
	require.NotEmpty(t, out)
	return out
}
