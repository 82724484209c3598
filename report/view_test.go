package report

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/analysis/hardware"
)

// manyRanks is a run of n ranks with one step each: rank i's Stage is (i+1) ms, its
// exposed communication i×0.1 ms.
func manyRanks(n int) *analysis.Result {
	r := &analysis.Result{}
	for i := range n {
		st := analysis.StepBreakdown{Step: 3, StageNs: int64(i+1) * 1e6, ComputingNs: 5e5, CommNotOverlappedNs: int64(i) * 1e5}
		r.Ranks = append(r.Ranks, analysis.RankResult{Rank: i, Steps: []analysis.StepBreakdown{st}})
	}
	r.Summary.Ranks, r.Summary.Steps = n, 1
	return r
}

// TestViewFigures checks the figures the renderers share: each computed as its
// renderers printed it before the view.
func TestViewFigures(t *testing.T) {
	r := manyRanks(maxRankRows + 2) // 18 ranks: Stage 1..18 ms
	c := &r.Communication
	c.Hardware = hardware.Profile{Name: "X", PeakGBps: map[string]float64{"HCCS": 50}}
	// Four HCCS links of 10, 20, 30, 40 GB/s (1e4 bytes over 1000, 500, 333, 250 ns)
	// and one RDMA link.
	for i, ns := range []int64{1000, 500, 250, 333} {
		c.Links = append(c.Links, analysis.Link{Src: i, Dst: i + 1, Transport: "HCCS", Bytes: 1e4, TimeNs: ns})
	}
	c.Links = append(c.Links, analysis.Link{Src: 0, Dst: 9, Transport: "RDMA", Bytes: 2e4, TimeNs: 1000})
	// Six ops that ranks waited in, of which five are kept, longest first; in "a"
	// rank 2 waited for nobody: it arrived last.
	for i, name := range []string{"a", "b", "c", "d", "e", "f"} {
		c.Ops = append(c.Ops, analysis.OpStat{Rank: 1, Step: 3, Group: "g", Name: name, CrossWaitNs: int64(10-i) * 1e6})
	}
	c.Ops = append(c.Ops, analysis.OpStat{Rank: 2, Step: 3, Group: "g", Name: "a"})
	adv := &advisor.Advice{Verdict: "no communication in the profiled steps",
		Gates:      []advisor.GateResult{{Gate: advisor.Gate{Expr: "steps<1", Metric: "steps"}, Passed: true, Value: 1}},
		Detections: advisor.Detections{Checks: []advisor.Check{{Title: "fired", Fired: true, Total: 4, Count: 2}, {Title: "quiet", Total: 4}, {Title: "blind"}}}}
	d := &Document{Result: r, Advice: adv}

	v := d.view()
	assert.Equal(t, "no communication in the profiled steps", v.Verdict)
	require.True(t, v.ManyRanks)
	require.Len(t, v.StepDists, 1)
	sd := v.StepDists[0]
	assert.Equal(t, 18, sd.Ranks)
	assert.Equal(t, 1e6, sd.StageMinNs)
	assert.Equal(t, 9.5e6, sd.StageP50Ns, "an even count: the mean of the middle two")
	assert.Equal(t, 18e6, sd.StageMaxNs)
	assert.InDelta(t, 0.1*17/18, sd.ShareMax, 1e-12)
	require.Len(t, v.LongestSteps, maxLongestSteps)
	assert.Equal(t, 17, v.LongestSteps[0].Rank)

	require.Len(t, v.Links, 2)
	h := v.Links[0]
	assert.Equal(t, "HCCS", h.Transport)
	assert.Equal(t, 4, h.Links)
	assert.Equal(t, int64(4e4), h.Bytes)
	assert.Equal(t, 10.0, h.MinGBps)
	assert.InDelta(t, (20+30.03)/2, h.MedianGBps, 0.01, "an even count: the mean of the two middle links (20 and 30.03)")
	assert.Equal(t, 40.0, h.MaxGBps)
	assert.True(t, h.HasPeak)
	assert.Equal(t, 50.0, h.PeakGBps)
	assert.False(t, v.Links[1].HasPeak, "RDMA has no peak in this profile")

	require.Len(t, v.TopWaits, maxTopWaits)
	assert.Equal(t, waitRow{Name: "a", Step: 3, WaitNs: 10e6, Waiting: 1, Last: 2}, v.TopWaits[0])
	assert.Equal(t, "e", v.TopWaits[4].Name)
	assert.Equal(t, -1, v.TopWaits[4].Last, "every rank waited")

	require.Len(t, v.FiredChecks, 1)
	assert.Equal(t, "fired", v.FiredChecks[0].Title)
	assert.Equal(t, []string{"blind"}, v.UnevaluatedChecks)
	require.Len(t, v.Gates, 1)
	assert.Equal(t, "1", v.Gates[0].Value)
	assert.Empty(t, v.failedGates())
}

// TestViewBuiltOnce: the renderers of one document share one view, and a document
// changed after it was rendered gets a new one.
func TestViewBuiltOnce(t *testing.T) {
	d := &Document{Result: manyRanks(2)}
	v := d.view()
	assert.Same(t, v, d.view())
	assert.False(t, v.ManyRanks)
	assert.Empty(t, v.StepDists)

	d.Advice = &advisor.Advice{Gates: []advisor.GateResult{{Gate: advisor.Gate{Expr: "steps<1", Metric: "steps"}, Value: 1}}}
	v2 := d.view()
	assert.NotSame(t, v, v2)
	assert.Len(t, v2.failedGates(), 1)
	d.Result = manyRanks(maxRankRows + 1)
	assert.True(t, d.view().ManyRanks)
}
