package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/realdata"
	"github.com/hcclprof/hcclprof/parser"
)

// TestActionableFindingsNotFolded: the Markdown report folds its findings after five
// and the terminal after eight, but never a finding that names a change worth making.
func TestActionableFindingsNotFolded(t *testing.T) {
	var fs []advisor.Finding
	for i := range 7 {
		fs = append(fs, advisor.Finding{ID: "a", Severity: advisor.Medium, Title: "act " + string(rune('A'+i)), Saving: 0.1 - 0.01*float64(i)})
	}
	fs = append(fs, advisor.Finding{ID: "r", Severity: advisor.Low, Title: "remark"})
	assert.Equal(t, 7, foldAfter(fs, 5))
	assert.Equal(t, 8, foldAfter(fs, 8))
	assert.Equal(t, 5, foldAfter(fs[7:], 5))

	r := manyRanks(2)
	var b strings.Builder
	require.NoError(t, writeMarkdown(&b, &Document{Result: r, Advice: &advisor.Advice{Findings: fs}}))
	md := b.String()
	fold := strings.Index(md, "<details><summary>1 more finding</summary>")
	require.Greater(t, fold, 0, md)
	assert.Greater(t, fold, strings.Index(md, "act G"), "the seventh change is shown")
	assert.Less(t, fold, strings.Index(md, "remark"), "the remark is folded")
}

// TestMegatronOverlapFindingShown: on the real Megatron run the one change to make
// in the data-parallel traffic (--overlap-grad-reduce, 7.4% of the step) was folded
// under "2 more findings", below two remarks the report calls not worth changing; it
// now comes second, after the stage imbalance, and is shown.
func TestMegatronOverlapFindingShown(t *testing.T) {
	dir := realdata.Path(t, "megatron-pp2dp2-2of4rank")
	c, err := parser.LoadCluster([]string{dir}, parser.LoadOptions{})
	require.NoError(t, err)
	res := analysis.Analyze(c, analysis.Options{})
	a := advisor.Advise(res, advisor.EnvOf(c), advisor.DefaultOptions)
	require.GreaterOrEqual(t, len(a.Findings), 2)
	assert.Equal(t, "cause_stage_imbalance", a.Findings[0].ID)
	assert.Equal(t, "distributed_optimizer_exposed", a.Findings[1].ID)
	var b bytes.Buffer
	require.NoError(t, writeMarkdown(&b, &Document{Result: res, Advice: &a}))
	md := b.String()
	i := strings.Index(md, "--overlap-grad-reduce")
	require.Greater(t, i, 0)
	if fold := strings.Index(md, "<details><summary>"); fold > 0 && strings.Contains(md[fold:], "more finding") {
		assert.Less(t, i, fold, "the change to make is not folded")
	}
	b.Reset()
	require.NoError(t, writeText(&b, &Document{Result: res, Advice: &a}))
	assert.Contains(t, b.String(), "Findings (changes worth making first, the largest saving first; then the rest, most severe first)")
}
