package report

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/ranklist"
	"github.com/hcclprof/hcclprof/internal/stats"
	"github.com/hcclprof/hcclprof/internal/units"
	"github.com/hcclprof/hcclprof/report/internal/sanitize"
)

// writeText writes the terminal report: the verdict, the per-rank step table, the
// per-collective table, gates, warnings and notes.
func writeText(w io.Writer, d *Document) error {
	sanitize.Value(d) // names come from untrusted profiles
	r := d.Result
	v := d.view()
	s := v.Summary
	p := newPrinter(w, d.Width)
	p.printf("hcclprof: %s rank(s), %d step(s) %s\n", ranksOfExpected(s), s.Steps, stepList(v.Steps))
	if d.LeftOut != "" {
		p.printf("(%s)\n", d.LeftOut)
	}
	p.printf("Verdict: %s.\n", v.Verdict)
	if s.Ranks > 0 {
		p.printf("  exposed communication (comm_share)   %6.2f%% of step time\n", 100*s.CommShare)
		if s.ExposedTransferShare != nil {
			// Shares of the step, like comm_share: the verdict's "of it" is of the
			// exposed communication.
			p.printf("    %-39s %6.2f%% of step time\n", "moving data (exposed_transfer_share)", 100**s.ExposedTransferShare)
			p.printf("    %-39s %6.2f%% of step time\n", "waiting for a peer (exposed_wait_share)", 100**s.ExposedWaitShare)
		}
		p.printf("  all communication (comm_total_share) %6.2f%%\n", 100*s.CommTotalShare)
		if k := kindsPhrase(s.Kinds); k != "" {
			p.printf("    by parallel dimension: %s\n", strings.TrimSpace(k+" "+kindsInferred(s.Kinds)))
		}
		for _, e := range expertLines(r) {
			p.printf("    %s\n", e)
		}
		if s.AllReduceShare != nil {
			p.printf("  AllReduce (allreduce_share)          %6.2f%%\n", 100**s.AllReduceShare)
		} else {
			p.printf("  AllReduce (allreduce_share)               - (a rank without a timeline has no op records for its steps)\n")
		}
		if s.OverlapRatio != nil {
			p.printf("  overlapped with compute (overlap_ratio) %.2f%% of communication\n", 100**s.OverlapRatio)
		} else {
			p.printf("  overlapped with compute (overlap_ratio) - (no communication)\n")
		}
		p.printf("  mean step time (Stage)               %.3f ms\n", float64(s.StepTimeNs)/1e6)
	}
	if s.Incomplete {
		p.printf("  INCOMPLETE: some input could not be read in full (see warnings)\n")
	}
	writeAdvice(p, v.Advice, false)

	if v.ManyRanks {
		writeStepDistribution(p, v, len(r.Ranks))
	} else {
		p.printf("\nSteps per rank (times in ms)\n")
		writeRankSteps(p, r.Ranks)
	}

	if rolled := rolledCollectives(r); rolled != nil {
		writeKindCollectives(p, rolled, len(r.Collectives))
	} else if len(v.Collectives) > 0 {
		p.printf("\nCollectives (over all ranks and steps; times in ms, bandwidth in GB/s)\n")
		t := newTextTable(column{name: "Op", cut: true, key: true}, column{name: "Group", cut: true, drop: 7, key: true}, column{name: "Size", drop: 5},
			column{name: "Count", drop: 6}, col("MB/op"), column{name: "Total", drop: 8}, col("Mean"), column{name: "p50", drop: 1},
			col("p95"), column{name: "Max", drop: 2}, column{name: "algbw", drop: 3}, col("busbw"))
		for _, c := range v.Collectives {
			cells := c.Cells()
			t.Append(c.Op, c.Label, cells.Size, strconv.Itoa(c.Count), cells.MBPerOp, ms(c.TotalNs),
				msf(c.MeanNs), msf(c.P50Ns), msf(c.P95Ns), ms(c.MaxNs), cells.AlgBw, cells.BusBw)
		}
		p.table(t)
	}

	writeCommunication(p, r.Communication, v, r.AllNCCL())
	writeGroupsAndPipelines(p, r.Communication)

	if len(v.Gates) > 0 {
		p.printf("\nGates\n")
		for _, g := range v.Gates {
			status := "PASS"
			if !g.Passed {
				status = "FAIL"
			}
			p.printf("  %s  %s (%s = %s)\n", status, g.Expr, g.Metric, g.Value)
		}
	}
	if len(r.Warnings) > 0 {
		p.printf("\nWarnings\n")
		for _, w := range r.Warnings {
			p.printf("  - %s\n", w)
		}
	}
	if len(d.Notes) > 0 {
		p.printf("\nNotes\n")
		for _, n := range d.Notes {
			p.printf("  - %s\n", n)
		}
	}
	return p.done()
}

// printer writes a text output, keeping the first error. With a width, it holds
// each line until it is complete and wraps it (see layout.go); tables go through
// table(), which lays them out for the width instead.
type printer struct {
	w        io.Writer
	width    int // 0: no limit
	firstErr error
	pending  []byte // with a width: the line not yet complete
}

func newPrinter(w io.Writer, width int) *printer {
	if width > 0 {
		width = max(width, MinWidth)
	}
	return &printer{w: w, width: width}
}

func (p *printer) printf(format string, args ...any) {
	if p.firstErr != nil {
		return
	}
	if p.width <= 0 {
		_, p.firstErr = fmt.Fprintf(p.w, format, args...)
		return
	}
	p.pending = fmt.Appendf(p.pending, format, args...)
	for {
		i := bytes.IndexByte(p.pending, '\n')
		if i < 0 {
			return
		}
		p.writeWrapped(string(p.pending[:i]))
		p.pending = p.pending[i+1:]
	}
}

func (p *printer) writeWrapped(line string) {
	for _, l := range wrap(line, p.width) {
		if p.firstErr == nil {
			_, p.firstErr = io.WriteString(p.w, l+"\n")
		}
	}
}

// flush writes a line left incomplete.
func (p *printer) flush() {
	if len(p.pending) > 0 {
		line := string(p.pending)
		p.pending = nil
		ls := wrap(line, p.width)
		for i, l := range ls {
			if i < len(ls)-1 {
				l += "\n"
			}
			if p.firstErr == nil {
				_, p.firstErr = io.WriteString(p.w, l)
			}
		}
	}
}

// done flushes and returns the first error.
func (p *printer) done() error {
	p.flush()
	return p.firstErr
}

func newTable(w io.Writer) *tablewriter.Table {
	return tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAlignment(tw.AlignRight),
		tablewriter.WithHeaderAlignment(tw.AlignCenter),
	)
}

func ms(ns int64) string    { return units.FormatMs(float64(ns)) }
func msf(ns float64) string { return units.FormatMs(ns) }
func pct(x float64) string  { return fmt.Sprintf("%.2f%%", 100*x) }

// gateValue is a gate's measured value, or why there is none.
func gateValue(g advisor.GateResult) string {
	if g.Unmeasured {
		return "not measured in this run"
	}
	return formatMetric(g.Metric, g.Value)
}

func formatMetric(name string, v float64) string {
	if strings.HasSuffix(name, "share") || strings.HasSuffix(name, "ratio") {
		return fmt.Sprintf("%.4f (%.2f%%)", v, 100*v)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func groupLabel(c analysis.Collective) string {
	g := c.Group
	if len(g) > 8 {
		g = "…" + g[len(g)-6:]
	}
	g = analysis.GroupKeyText(g) // after the cut: "(unnamed)" is not a hash to shorten
	return namedGroup(c.GroupName, g)
}

// namedGroup is a group's label: its name before its key, once when they are the same
// (a Kineto process group named "world" whose key is "world").
func namedGroup(name, key string) string {
	if name == "" || strings.EqualFold(name, key) {
		return key
	}
	return name + " " + key
}

func stepList(steps []int) string {
	if len(steps) == 0 {
		return ""
	}
	if len(steps) == 1 && steps[0] < 0 {
		return "(no step markers)"
	}
	if len(steps) <= 8 {
		parts := make([]string, len(steps))
		for i, s := range steps {
			parts[i] = analysis.StepLabel(s)
		}
		return "(" + strings.Join(parts, ", ") + ")"
	}
	return fmt.Sprintf("(%d…%d)", steps[0], steps[len(steps)-1])
}

// maxRankRows is the number of ranks above which the per-rank step table gives way to
// per-step distributions and the slowest ranks: nobody reads 8,000 rows in a terminal
// (the JSON report keeps every rank).
const maxRankRows = 16

func writeRankSteps(p *printer, ranks []analysis.RankResult) {
	t := newTextTable(col("Rank"), col("Step"), col("Stage"), column{name: "Computing", drop: 7}, column{name: "Comm", drop: 6},
		column{name: "Comm not overlapped", short: "Comm not\noverlapped"}, column{name: "Overlapped", drop: 3}, column{name: "Free", drop: 4},
		column{name: "Bubble", drop: 5}, column{name: "Preparing", drop: 2}, col("comm_share"), column{name: "Source", drop: 1})
	for _, rr := range ranks {
		if len(rr.Steps) == 0 {
			t.Append(strconv.Itoa(rr.Rank), "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", string(rr.Source))
		}
		for _, st := range rr.Steps {
			t.Append(strconv.Itoa(rr.Rank), analysis.StepLabel(st.Step), ms(st.StageNs), ms(st.ComputingNs),
				ms(st.CommunicationNs), ms(st.CommNotOverlappedNs), ms(st.OverlappedNs), ms(st.FreeNs),
				ms(st.BubbleNs), preparingMs(st), pct(st.CommShare()), string(rr.Source))
		}
	}
	p.table(t)
}

// writeStepDistribution summarises many ranks: per step, the spread of Stage and
// comm_share over the ranks, then the ranks whose steps were longest.
func writeStepDistribution(p *printer, v *reportView, ranks int) {
	p.printf("\nSteps over %d ranks (times in ms; min / median / max over the ranks)\n", ranks)
	t := newTextTable(col("Step"), column{name: "Ranks", drop: 5}, column{name: "Stage min", short: "Stage\nmin", drop: 1},
		column{name: "Stage p50", short: "Stage\np50"}, column{name: "Stage max", short: "Stage\nmax", drop: 4},
		column{name: "Computing p50", short: "Computing\np50", drop: 3}, column{name: "Comm not overlapped p50", short: "Comm not\noverlapped\np50"},
		column{name: "comm_share min", short: "comm_share\nmin", drop: 2}, column{name: "comm_share p50", short: "comm_share\np50"},
		column{name: "comm_share max", short: "comm_share\nmax", drop: 6})
	for _, sd := range v.StepDists {
		t.Append(analysis.StepLabel(sd.Step), strconv.Itoa(sd.Ranks), msf(sd.StageMinNs), msf(sd.StageP50Ns), msf(sd.StageMaxNs),
			msf(sd.ComputingP50Ns), msf(sd.ExposedP50Ns), pct(sd.ShareMin), pct(sd.ShareP50), pct(sd.ShareMax))
	}
	p.table(t)
	p.printf("\nLongest rank steps (all %d ranks are in --format json)\n", ranks)
	tt := newTextTable(col("Rank"), col("Step"), col("Stage"), column{name: "Computing", drop: 3},
		column{name: "Comm not overlapped", short: "Comm not\noverlapped"}, column{name: "Free", drop: 2}, column{name: "Preparing", drop: 1}, col("comm_share"))
	for _, x := range v.LongestSteps {
		tt.Append(strconv.Itoa(x.Rank), analysis.StepLabel(x.Step.Step), ms(x.Step.StageNs), ms(x.Step.ComputingNs),
			ms(x.Step.CommNotOverlappedNs), ms(x.Step.FreeNs), preparingMs(x.Step), pct(x.Step.CommShare()))
	}
	p.table(tt)
}

// writeGroupsAndPipelines prints the exposed communication per step of each kind of
// communicator (dp, tp, pp, ...; groups of one kind averaged, unnamed groups alone)
// when the run has more than one kind, and the pipelines' bubble against theory.
func writeGroupsAndPipelines(p *printer, c analysis.Communication) {
	type key struct {
		label string
		step  int
	}
	type acc struct {
		groups             map[string]bool
		ranks              int
		comm, exp, stageNs int64
	}
	byKey := map[key]*acc{}
	var order []key
	labels := map[string]bool{}
	for _, g := range c.GroupSteps {
		label := g.Kind
		if label == "" {
			label = g.Group
			if len(label) > 8 {
				label = "…" + label[len(label)-6:]
			}
		}
		labels[label] = true
		k := key{label, g.Step}
		a := byKey[k]
		if a == nil {
			a = &acc{groups: map[string]bool{}}
			byKey[k] = a
			order = append(order, k)
		}
		a.groups[g.Group] = true
		a.ranks += g.Ranks
		// Weighted by ranks, so the mean is over the ranks of all groups of the kind.
		a.comm += g.CommunicationNs * int64(g.Ranks)
		a.exp += g.CommNotOverlappedNs * int64(g.Ranks)
		a.stageNs += g.StageNs * int64(g.Ranks)
	}
	if len(labels) > 1 {
		sort.SliceStable(order, func(i, j int) bool {
			if order[i].label != order[j].label {
				return order[i].label < order[j].label
			}
			return order[i].step < order[j].step
		})
		p.printf("\nCommunication per kind of group (mean per rank; ms per step)\n")
		t := newTextTable(column{name: "Group", cut: true}, col("Step"), column{name: "Groups", drop: 1}, column{name: "Comm", drop: 2},
			column{name: "Comm not overlapped", short: "Comm not\noverlapped"}, column{name: "share of Stage", short: "share of\nStage"})
		for _, k := range order {
			a := byKey[k]
			n := int64(max(a.ranks, 1))
			t.Append(k.label, analysis.StepLabel(k.step), strconv.Itoa(len(a.groups)), ms(a.comm/n),
				ms(a.exp/n), pct(float64(a.exp)/float64(max(a.stageNs, 1))))
		}
		p.table(t)
	}
	if len(c.Pipelines) == 0 {
		return
	}
	var bubbles []float64 // of the pipelines whose bubble is measured
	for _, pl := range c.Pipelines {
		if pl.BubbleKnown() {
			bubbles = append(bubbles, pl.MeasuredBubble)
		}
	}
	worst := analysis.WorstBubble(c.Pipelines)
	sort.Float64s(bubbles)
	theory := "unknown"
	if worst.Microbatches > 0 {
		theory = fmt.Sprintf("%.1f%% for p=%d, m=%d (%s)", 100*worst.TheoryBubble, worst.Stages, worst.Microbatches, worst.MicrobatchesSource)
	}
	bubble, worstBubble := "not measured", "not measured"
	if len(bubbles) > 0 {
		bubble = fmt.Sprintf("%.1f%% of the step (median; %.1f%%–%.1f%%)", 100*stats.MedianSorted(bubbles), 100*bubbles[0], 100*bubbles[len(bubbles)-1])
		if len(bubbles) < len(c.Pipelines) {
			bubble += fmt.Sprintf(", measured on %d of the %d", len(bubbles), len(c.Pipelines))
		}
		worstBubble = fmt.Sprintf("%.1f%%", 100*worst.MeasuredBubble)
	}
	p.printf("\nPipelines: %s; bubble %s; theory %s\n", pipelinesPhrase(c.Pipelines), bubble, theory)
	imbalance := "unknown (fewer than two of its stages profiled)"
	if worst.ImbalanceKnown {
		imbalance = fmt.Sprintf("%.1f%%", 100*worst.Imbalance)
	}
	p.printf("  largest: ranks %s, bubble %s, stage imbalance %s\n", ranklist.Format(worst.Ranks), worstBubble, imbalance)
	if worst.Note != "" {
		p.printf("  %s\n", worst.Note)
	}
}

// preparingMs is a step's Preparing cell: "-" when the profile does not say.
func preparingMs(st analysis.StepBreakdown) string {
	if !st.HasPreparing {
		return "-"
	}
	return ms(st.PreparingNs)
}

// ranksOfExpected is the number of ranks read, and of the job's world size when the
// profiles state a larger one: "2 of 8", so a report of part of a job says so at the
// top.
func ranksOfExpected(s analysis.Summary) string {
	if s.RanksExpected > s.Ranks {
		return fmt.Sprintf("%d of %d", s.Ranks, s.RanksExpected)
	}
	return strconv.Itoa(s.Ranks)
}

// pipelinesPhrase counts the pipelines, their stages and the stages profiled: "2
// pipelines of 4 stages, 1 of 4 stages profiled in each"; "4 or more stages" where
// the count is a lower bound (one stage profiled, its groups naming no other).
func pipelinesPhrase(pls []analysis.Pipeline) string {
	stages, lo, hi, atLeast := 0, -1, 0, ""
	for _, p := range pls {
		stages = max(stages, p.Stages)
		if p.StagesAtLeast {
			atLeast = " or more"
		}
		if lo < 0 || p.ProfiledStages < lo {
			lo = p.ProfiledStages
		}
		hi = max(hi, p.ProfiledStages)
	}
	noun := "pipelines"
	if len(pls) == 1 {
		noun = "pipeline"
	}
	out := fmt.Sprintf("%d %s of %d%s stages", len(pls), noun, stages, atLeast)
	switch {
	case lo == stages && atLeast == "":
		out += ", every stage profiled"
	case lo == hi:
		out += fmt.Sprintf(", %d of %d%s stages profiled in each", lo, stages, atLeast)
	default:
		out += fmt.Sprintf(", %d to %d of %d%s stages profiled", lo, hi, stages, atLeast)
	}
	return out
}
