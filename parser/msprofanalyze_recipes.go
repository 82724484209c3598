package parser

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/hcclprof/hcclprof/internal/table"
	"github.com/hcclprof/hcclprof/internal/units"
	"github.com/hcclprof/hcclprof/profile"
)

// msprof-analyze's recipes (`msprof-analyze -m RECIPE -d CLUSTER`, 8.2 and later)
// write their results into the same cluster_analysis.db as `-m all`'s tables, each
// recipe its own table (checked against the recipes' sources in the Ascend mstt
// repository, profiler/msprof_analyze/cluster_analyse/recipes):
//
//   - cluster_time_summary: ClusterTimeSummary, a row per rank and step. Its
//     computation, communicationNotOverlapComputation, communicationOverlapComputation
//     and communication are the rank's StepTraceTime figures unchanged; its free is
//     StepTraceTime's free less memoryNotOverlapComputationCommunication (memory
//     copies inside Free); its stepTime is the STEP_TIME row's span (the host's step
//     marker), not the profiler's Stage. So the profiler's Free and Stage come back
//     exactly: Free = free + memoryNotOverlap, Stage = computation +
//     communicationNotOverlap + Free (the profiler's own identity). Bubble and
//     Preparing are not carried. Rows are outer-joined and NaN filled with 0, so a
//     rank whose StepTraceTime lacked the step reads as all zeros.
//   - communication_time_sum: ClusterCommunicationTime and ClusterCommunicationBandwidth
//     (the tables `-m all` writes on db input), read by readClusterDBComm.
//   - communication_matrix_sum: ClusterCommunicationMatrix, read by readClusterDBMatrix.
//   - hccl_sum: HcclAllRankStats, HcclPerRankStats (per op type and rank: Count and
//     SumNs over the steps collected, ns), HcclTopOpStats, HcclGroupNameMap; with
//     --export_type notebook the same as HcclSum/rank_stats.csv and its siblings.
//     Per op type only, no step and no op: it checks the per-rank Communication of a
//     step table beside it, and alone gives nothing to analyse.

// Tables of msprof-analyze's recipes.
const (
	clusterTimeSummaryTable = "ClusterTimeSummary"
	hcclPerRankStatsTable   = "HcclPerRankStats"
)

// readClusterDBTimeSummary reads ClusterTimeSummary as the ranks' step tables, for a
// db without ClusterStepTraceTime.
func readClusterDBTimeSummary(d *table.DB, p *summaryParts) error {
	if !d.Has(clusterTimeSummaryTable) {
		return nil
	}
	const (
		colComputing = "computation"
		colNotOvl    = "communicationNotOverlapComputation"
		colOvl       = "communicationOverlapComputation"
		colComm      = "communication"
		colFree      = "free"
		colMemNotOvl = "memoryNotOverlapComputationCommunication"
		colStepTime  = "stepTime"
	)
	t, err := d.SelectAll(clusterTimeSummaryTable, "rank", "step", colComputing, colNotOvl, colComm, colFree)
	if err != nil {
		return err
	}
	defer t.Close()
	p.stepsFrom = clusterTimeSummaryTable
	for err := range table.Each(t) {
		if err != nil {
			return err
		}
		n, err := t.Int("rank")
		if err != nil {
			return err
		}
		if n < 0 || n > maxLocalRank {
			p.steps = append(p.steps, summaryStepRow{Rank: -1, Problem: t.Errf("rank %d is not a global rank: the row is not read, and whose it is is unknown", n).Error()})
			continue
		}
		rank := int(n)
		row, problem := timeSummaryRowOf(t, colComputing, colNotOvl, colOvl, colComm, colFree, colMemNotOvl, colStepTime)
		if problem != "" {
			p.steps = append(p.steps, summaryStepRow{Rank: rank, Problem: problem})
			continue
		}
		p.steps = append(p.steps, summaryStepRow{Rank: rank, Row: row})
	}
	return nil
}

// timeSummaryRowOf reads one ClusterTimeSummary row as the profiler's step table row;
// problem says why it cannot be.
func timeSummaryRowOf(t *table.Rows, colComputing, colNotOvl, colOvl, colComm, colFree, colMemNotOvl, colStepTime string) (profile.StepTraceRow, string) {
	var row profile.StepTraceRow
	step, has, err := stepOf(t, "step")
	if err != nil {
		return row, err.Error()
	}
	row.Step, row.HasStep = step, has
	figure := func(col string, required bool) (float64, error) {
		v, ok, err := t.Float(col)
		if err != nil {
			return 0, err
		}
		if !ok && required {
			return 0, t.Errf("column %s: no value", col)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, t.Errf("column %s: %v is not a time", col, v)
		}
		return v, nil
	}
	var vals [7]float64
	cols := [7]string{colComputing, colNotOvl, colOvl, colComm, colFree, colMemNotOvl, colStepTime}
	for i, c := range cols {
		v, err := figure(c, i < 5)
		if err != nil {
			return row, err.Error()
		}
		vals[i] = v
	}
	computing, notOvl, ovl, comm, free, memNotOvl, stepTime := vals[0], vals[1], vals[2], vals[3], vals[4], vals[5], vals[6]
	if computing == 0 && notOvl == 0 && ovl == 0 && comm == 0 && free == 0 && memNotOvl == 0 {
		// msprof-analyze outer-joins the rank's STEP_TIME and StepTraceTime rows and
		// fills what is missing with 0: this step's breakdown was not in its analysis.db.
		return row, t.Errf("rank %s step %s has no step breakdown (every figure 0, stepTime %s µs): msprof-analyze found no StepTraceTime row for it and wrote zeros",
			t.Text("rank"), t.Text("step"), strconv.FormatFloat(stepTime, 'f', -1, 64)).Error()
	}
	for i, c := range cols[:6] {
		if vals[i] < 0 {
			return row, t.Errf("column %s: %v µs is negative", c, vals[i]).Error()
		}
	}
	profilerFree := free + memNotOvl
	row.ComputingNs = units.NsFromUsFigure(computing)
	row.CommNotOverlappedNs = units.NsFromUsFigure(notOvl)
	row.OverlappedNs = units.NsFromUsFigure(ovl)
	row.CommunicationNs = units.NsFromUsFigure(comm)
	row.FreeNs = units.NsFromUsFigure(profilerFree)
	row.StageNs = units.NsFromUsFigure(computing + notOvl + profilerFree)
	row.CommNotOverlappedExclRecvNs = row.CommNotOverlappedNs
	for _, f := range []struct {
		name string
		ns   int64
		us   float64
	}{
		{colComputing, row.ComputingNs, computing}, {colNotOvl, row.CommNotOverlappedNs, notOvl},
		{colOvl, row.OverlappedNs, ovl}, {colComm, row.CommunicationNs, comm},
		{colFree, row.FreeNs, profilerFree}, {"Stage", row.StageNs, computing + notOvl + profilerFree},
	} {
		units.NoteSaturated(&row.OutOfRange, f.name, f.ns, strconv.FormatFloat(f.us, 'g', -1, 64))
	}
	return row, ""
}

// hasP2PGroups tells whether the groups read include a pipeline's (p2p) group: then
// torch_npu's Bubble, which ClusterTimeSummary does not carry, may not be 0.
func (p *summaryParts) hasP2PGroups() bool {
	for _, g := range p.groups {
		if g.P2P || strings.Contains(strings.ToLower(g.PGName), "pp") {
			return true
		}
	}
	for _, o := range p.ops {
		if o.Op.P2P {
			return true
		}
	}
	return false
}

// readClusterDBHcclSum reads hccl_sum's HcclPerRankStats: each rank's communication
// time summed over op types and the steps collected.
func readClusterDBHcclSum(d *table.DB, p *summaryParts) error {
	if !d.Has(hcclPerRankStatsTable) {
		return nil
	}
	t, err := d.SelectAll(hcclPerRankStatsTable, "Rank", "SumNs")
	if err != nil {
		return err
	}
	defer t.Close()
	for err := range table.Each(t) {
		if err != nil {
			return err
		}
		r, err := t.Int("Rank")
		if err != nil {
			return err
		}
		sum, err := t.MustFloat("SumNs")
		if err != nil {
			return err
		}
		if r < 0 || r > maxLocalRank || sum < 0 || math.IsNaN(sum) || sum > math.MaxInt64/2 {
			return t.Errf("rank %d with SumNs %v is not a rank's communication time", r, sum)
		}
		if p.hcclSumNs == nil {
			p.hcclSumNs = map[int]int64{}
		}
		p.hcclSumNs[int(r)] += int64(math.Round(sum))
	}
	return nil
}

// checkHcclSum holds each rank's hccl_sum total against the Communication of its
// steps read beside it. They are two views of the same op records (hccl_sum sums the
// ops, the step table their union), so a difference is the profiler's tables
// disagreeing, or hccl_sum run on other steps: a note, the step table reported.
func checkHcclSum(p *summaryParts, rank func(int) *profile.Rank) {
	if len(p.hcclSumNs) == 0 {
		return
	}
	commNs := map[int]int64{}
	for _, s := range p.steps {
		if s.Rank >= 0 && s.Problem == "" {
			commNs[s.Rank] += s.Row.CommunicationNs
		}
	}
	for r, sum := range p.hcclSumNs {
		c, ok := commNs[r]
		if !ok {
			continue
		}
		if diff := math.Abs(float64(sum - c)); diff > 1e3 && diff > 0.01*float64(max(c, 1)) {
			pr := rank(r)
			pr.Notes = append(pr.Notes, fmt.Sprintf("hccl_sum's HcclPerRankStats sums this rank's communication to %s ms, its step table to %s ms: the step table is reported (hccl_sum may cover other steps, or sum ops that overlap)",
				units.FormatMs(float64(sum)), units.FormatMs(float64(c))))
		}
	}
}
