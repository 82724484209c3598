package report

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/analysis/compare"
)

// TestCollectivesKeepGroupAt80: two AllReduces of two groups whose sizes and bytes are
// unknown. At 80 columns the table used to leave out Group and keep MB/op, algbw and
// busbw, "-" in every row, so the two rows read as the same op; now the columns that
// say nothing go first (said once below) and Group, which tells the rows apart, stays.
// At 200 columns the table is whole.
func TestCollectivesKeepGroupAt80(t *testing.T) {
	r := manyRanks(2)
	for i, g := range []string{"dp", "tp"} {
		r.Collectives = append(r.Collectives, analysis.Collective{Op: "reduce_scatter_v", Group: "1234567890" + strings.Repeat(string(rune('a'+i)), 6),
			GroupName: g, Count: 6400 + 100*i, TotalNs: 7_132_154_417_000 + int64(i)*1e9, MeanNs: 11_143_991.5 + float64(i)*1e5,
			P50Ns: 13_277_645 + float64(i)*1e5, P95Ns: 13_640_896 + float64(i)*1e5, MaxNs: 13_900_857 + int64(i)*1e5})
	}
	render := func(width int) string {
		var b strings.Builder
		require.NoError(t, writeText(&b, &Document{Result: r, Width: width}))
		out := b.String()
		i := strings.Index(out, "Collectives (")
		require.GreaterOrEqual(t, i, 0, out)
		return out[i:]
	}
	narrow := render(80)
	for _, l := range strings.Split(narrow, "\n") {
		assert.LessOrEqual(t, utf8.RuneCountInString(l), 80, l)
	}
	head := strings.SplitN(narrow, "\n", 4)[2]
	assert.Contains(t, head, "Group", narrow)
	assert.NotContains(t, head, "algbw", narrow)
	assert.NotContains(t, head, "busbw", narrow)
	assert.NotContains(t, head, "MB/op", narrow)
	assert.Contains(t, narrow, "dp …aaaaaa")
	assert.Contains(t, narrow, "tp …bbbbbb")
	assert.Contains(t, narrow, "(in every row: Size = -, MB/op = -, algbw = -, busbw = -)")

	wide := render(200)
	head = strings.SplitN(wide, "\n", 4)[2]
	for _, name := range []string{"Op", "Group", "Size", "Count", "MB/op", "Total", "Mean", "p50", "p95", "Max", "algbw", "busbw"} {
		assert.Contains(t, head, " "+name+" ", wide)
	}
	assert.NotContains(t, wide, "in every row")
}

// TestDiffHeaderCounts: a run of one rank-step sample is "1 sample", not "1 samples".
func TestDiffHeaderCounts(t *testing.T) {
	d := &compare.Diff{Alpha: 0.05}
	d.Base.Label, d.Base.Samples = "a", 1
	d.New.Label, d.New.Samples = "b", 2
	var b strings.Builder
	require.NoError(t, writeDiffText(&b, DiffDoc{Diff: d}))
	assert.True(t, strings.HasPrefix(b.String(), "hcclprof diff: a (1 sample) → b (2 samples); α = 0.05\n"), b.String())
}
