package report_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/report"
	"github.com/hcclprof/hcclprof/report/contract"
)

// kindsDoc is a TP8 × DP8 job's result as the reports see it: 8 tp groups and 8 dp
// groups, two op types each, 32 collective rows; tp group 5 is the slowest.
func kindsDoc() *report.Document {
	res := &analysis.Result{}
	for i := range 8 {
		tp, dp := fmt.Sprintf("10%d", i), fmt.Sprintf("20%d", i)
		res.Communication.Groups = append(res.Communication.Groups,
			analysis.Group{Key: tp, Kind: "tp", Parallel: analysis.KindSP, ParallelSource: `profile ("tp")`},
			analysis.Group{Key: dp, Kind: "dp", Parallel: analysis.KindDP, ParallelSource: `profile ("dp")`})
		mean := 400e3
		if i == 5 {
			mean = 700e3
		}
		for _, op := range []string{"allgather", "reducescatter"} {
			res.Collectives = append(res.Collectives, analysis.Collective{Op: op, Group: tp, GroupName: "tp", GroupSize: 8, Count: 100,
				Bytes: 100 << 20, TotalNs: int64(100 * mean), MeanNs: mean, MaxNs: int64(mean), BusBwGBps: 80})
		}
		res.Collectives = append(res.Collectives, analysis.Collective{Op: "allreduce", Group: dp, GroupName: "dp", GroupSize: 8, Count: 10,
			Bytes: 1 << 30, TotalNs: 10 * 6e6, MeanNs: 6e6, MaxNs: 6e6, BusBwGBps: 20},
			analysis.Collective{Op: "allgather", Group: dp, GroupName: "dp", GroupSize: 8, Count: 10,
				Bytes: 1 << 30, TotalNs: 10 * 3e6, MeanNs: 3e6, MaxNs: 3e6, BusBwGBps: 20})
	}
	res.Summary = analysis.Summary{Ranks: 64, Steps: 1, StepTimeNs: 100e6, CommShare: 0.2, CommTotalShare: 0.3,
		Kinds: []analysis.KindShare{{Kind: analysis.KindSP, Groups: 8, CommShare: 0.12, CommTotalShare: 0.15, Sources: []string{`profile ("tp")`}},
			// Bounded, not measured: some rank has no timeline.
			{Kind: analysis.KindDP, Groups: 8, CommShare: 0.05, CommTotalShare: 0.09, Sources: []string{"inferred from strided ranks with AllReduce per gradient bucket"},
				ExposedMinNs: 3e6, ExposedMaxNs: 20e6, CommShareMin: 0.03, CommShareMax: 0.2}}}
	return &report.Document{Result: res, Version: "test"}
}

// Issue 37 and 38 item 7: the reports speak in parallel dimensions, and a long
// collectives table is rolled up by dimension with the worst group named.
func TestReportsByParallelKind(t *testing.T) {
	var txt, md, js bytes.Buffer
	require.NoError(t, kindsDoc().Write(&txt, report.Text))
	require.NoError(t, kindsDoc().Write(&md, report.Markdown))
	require.NoError(t, kindsDoc().Write(&js, report.JSON))

	assert.Contains(t, txt.String(), "by parallel dimension: tensor/sequence parallel (sp) 15.00% of the step, exposed 12.00%; data parallel (dp) 9.00%, exposed 3.00-20.00% (bounded: not every rank has a device timeline) (dp inferred from the ranks and ops")
	assert.Contains(t, txt.String(), "Collectives per parallel dimension (32 rows")
	assert.NotContains(t, txt.String(), "Collectives (over all ranks", "the per-group table gives way to the rollup")
	assert.Regexp(t, `sp +│ +allgather +│ +8 +│ +8 +│ +800 +│ +1\.05 .*│ +0\.400 +│ +tp 105 +│ +0\.700 +│`, txt.String())
	assert.Contains(t, md.String(), "| tensor/sequence parallel groups (`sp`): all (exposed) | 15.00% (12.00%) |")
	assert.Contains(t, md.String(), "| data parallel groups (`dp`): all (exposed) | 9.00% (3.00-20.00%, bounded: not every rank has a device timeline) |")
	assert.Contains(t, md.String(), "| sp | allgather | 8 | 8 | 800 | 1.05 |")

	var rep contract.Report
	require.NoError(t, json.Unmarshal(js.Bytes(), &rep))
	require.Len(t, rep.Summary.ParallelKinds, 2)
	assert.Equal(t, "sp", rep.Summary.ParallelKinds[0].Kind)
	sp, dp := rep.Summary.ParallelKinds[0], rep.Summary.ParallelKinds[1]
	require.NotNil(t, sp.CommShare)
	assert.InDelta(t, 0.12, *sp.CommShare, 1e-9)
	assert.Nil(t, sp.CommShareMin, "measured: no bounds")
	assert.Nil(t, dp.CommShare, "bounded, not measured: null")
	require.NotNil(t, dp.CommShareMin)
	require.NotNil(t, dp.CommShareMax)
	assert.Equal(t, [2]float64{0.03, 0.2}, [2]float64{*dp.CommShareMin, *dp.CommShareMax})
	require.Len(t, rep.CollectiveKinds, 4)
	first := rep.CollectiveKinds[0]
	assert.Equal(t, "sp", first.Kind)
	assert.Equal(t, 8, first.Groups)
	assert.Equal(t, "105", first.WorstGroup)
	assert.InDelta(t, 700, first.WorstGroupMeanUs, 1e-9)
	assert.InDelta(t, 400, first.MedianGroupMeanUs, 1e-9)
	assert.Len(t, rep.Collectives, 32, "the JSON keeps every per-group row")
	assert.Equal(t, "sp", rep.Collectives[0].ParallelKind)
	require.NoError(t, validate(schema(t, ""), js.Bytes()))
}

// Issue 37: an expert-parallel group's AlltoAll(v) per rank in the reports: the
// rank moving the most bytes named with its skew (text, markdown), every rank's
// bytes and times in the JSON.
func TestReportsExpertImbalance(t *testing.T) {
	res := &analysis.Result{}
	res.Communication.Groups = []analysis.Group{{Key: "5862276101805416206", Kind: "ep", Ranks: []int{0, 1, 2, 3},
		Parallel: analysis.KindEP, ParallelSource: `profile ("ep")`}}
	for r := range 4 {
		bytes, moving, wait := int64(100e6), int64(1e6), int64(3e6)
		if r == 2 {
			bytes, moving, wait = 150e6, 2e6, 0
		}
		res.Communication.Ops = append(res.Communication.Ops, analysis.OpStat{Rank: r, Step: 1, Group: "5862276101805416206",
			Name: "hcom_alltoallv__206_0_1", Type: "alltoallv", ElapseNs: moving + wait, MovingNs: moving, CrossWaitNs: wait,
			Transports: analysis.Transports{{Transport: "HCCS", Bytes: bytes}, {Transport: "SDMA", Bytes: bytes}}})
	}
	res.Summary = analysis.Summary{Ranks: 4, Steps: 1, StepTimeNs: 100e6}
	doc := &report.Document{Result: res, Version: "test"}
	var txt, md, js bytes.Buffer
	require.NoError(t, doc.Write(&txt, report.Text))
	require.NoError(t, doc.Write(&md, report.Markdown))
	require.NoError(t, doc.Write(&js, report.JSON))
	line := "expert parallel group …416206: AlltoAll(v) 0.10–0.15 GB per rank; rank 2 moves the most, 1.50× the median bytes and 2.00× the time moving data, and waits least"
	assert.Contains(t, txt.String(), line)
	assert.Contains(t, md.String(), "| AlltoAll(v) per rank | "+line+" |")
	var rep contract.Report
	require.NoError(t, json.Unmarshal(js.Bytes(), &rep))
	require.Len(t, rep.Communication.ExpertGroups, 1)
	g := rep.Communication.ExpertGroups[0]
	require.NotNil(t, g.HotRank)
	assert.Equal(t, 2, *g.HotRank)
	assert.InDelta(t, 1.5, g.BytesSkew, 1e-9)
	assert.True(t, g.HotWaitsLeast)
	require.Len(t, g.Ranks, 4)
	assert.Equal(t, int64(150e6), g.Ranks[2].Bytes, "SDMA counted once, not with the HCCS link it sums")
	assert.InDelta(t, 3000, g.Ranks[0].WaitUs, 1e-9)
	require.NoError(t, validate(schema(t, ""), js.Bytes()))
}
