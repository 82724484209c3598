package analysis

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/profile"
)

// TestCollectiveQuantilesAreNumpys: a collective's p50 and p95 are numpy's default
// (linear, h = (n−1)·q), the figures DuckDB's quantile_cont gives on the exports.
// Ten AllReduces of 10, 20, …, 100 ns: p95 at h = 8.55 is 90 + 0.55·10 = 95.5 ns
// (the interpolation used before gave 95), p50 at h = 4.5 is 55 ns.
func TestCollectiveQuantilesAreNumpys(t *testing.T) {
	r := &profile.Rank{HasTimeline: true}
	for i := int64(1); i <= 10; i++ {
		start := 1000 * i
		r.Timeline.CommOps = append(r.Timeline.CommOps, profile.CommOp{Type: "allreduce", Group: "0", DataType: "FP32", Count: 1000, Interval: iv(start, start+10*i)})
	}
	colls, _ := mergeCollectives(&profile.Cluster{Ranks: []*profile.Rank{r}}, [][]collPart{rankCollectives(r, nil)}, nil)
	require.Len(t, colls, 1)
	assert.Equal(t, 10, colls[0].Count)
	assert.InDelta(t, 95.5, colls[0].P95Ns, 1e-9)
	assert.InDelta(t, 55.0, colls[0].P50Ns, 1e-9)
}
