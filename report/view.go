package report

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/analysis/hardware"
	"github.com/hcclprof/hcclprof/internal/stats"
)

// reportView is what the report says, computed once from a Document: the text,
// Markdown, HTML, JUnit and GitHub renderers read their figures here instead of each
// deriving them from the analysis, so a figure two formats show is the same figure.
// It holds numbers; each renderer formats them its own way.
type reportView struct {
	Verdict string
	Summary analysis.Summary // the headline: shares, mean step, ranks × steps
	Steps   []int            // the run's step numbers, in order
	// Advice is the advisor's findings (most severe first) and recommendations, as
	// it gave them; nil when not asked for.
	Advice *advisor.Advice
	// ManyRanks: more ranks than a table of rank steps can show (maxRankRows); then
	// StepDists and LongestSteps stand in for the rows.
	ManyRanks    bool
	StepDists    []stepDist
	LongestSteps []rankStep
	Collectives  []collectiveRow
	Links        []transportLinks // sorted by transport name
	TopWaits     []waitRow        // the ops waited in longest, at most maxTopWaits
	// Detections are the advisor's slow ranks, links and nodes and its checks (none
	// without advice); FiredChecks those of its checks that fired.
	Detections  advisor.Detections
	FiredChecks []advisor.Check
	// UnevaluatedChecks are the titles of the checks that had nothing to examine.
	UnevaluatedChecks []string
	Gates             []gateRow
}

// stepDist is one step over the ranks: the spread of Stage and comm_share, the
// medians of Computing and exposed communication. Times are ns. The medians are
// stats.Median's (the mean of the two middle values for an even count).
type stepDist struct {
	Step, Ranks                        int
	StageMinNs, StageP50Ns, StageMaxNs float64
	ComputingP50Ns, ExposedP50Ns       float64
	ShareMin, ShareP50, ShareMax       float64
}

// rankStep is one step of one rank.
type rankStep struct {
	Rank int
	Step analysis.StepBreakdown
}

// collectiveRow is a collective with its mean size per op (MB, decimal), which is
// only known when the op moved bytes (HasBytes).
type collectiveRow struct {
	analysis.Collective
	Label    string // the group's name and the end of its hash
	HasBytes bool
	MBPerOp  float64
}

// collectiveCells are a collective's figures that need a byte count or a group size,
// as every table prints them: "-" where that is not known, never 0.
type collectiveCells struct{ Size, MBPerOp, AlgBw, BusBw string }

// Cells are the row's collectiveCells.
func (c collectiveRow) Cells() collectiveCells {
	out := collectiveCells{"-", "-", "-", "-"}
	if c.GroupSize > 0 {
		out.Size = strconv.Itoa(c.GroupSize)
		if strings.HasSuffix(c.GroupSizeSource, "(at least)") {
			// No file states the size: the ranks a matrix or msprof-analyze's rank
			// sets name, which may be fewer (group_size_source says which).
			out.Size = "≥" + out.Size
		}
	}
	if c.HasBytes {
		out.MBPerOp = fmt.Sprintf("%.2f", c.MBPerOp)
		out.AlgBw = fmt.Sprintf("%.2f", c.AlgBwGBps)
		out.BusBw = fmt.Sprintf("%.2f", c.BusBwGBps)
	}
	return out
}

// transportLinks is the spread of the src→dst links' bandwidth over one transport.
// The median is stats.Median's (the mean of the two middle links for an even count).
type transportLinks struct {
	Transport                    string
	Links                        int
	Bytes                        int64
	MinGBps, MedianGBps, MaxGBps float64
	PeakGBps                     float64 // the hardware's peak for the transport
	HasPeak                      bool    // the hardware profile names the transport
}

// abovePeakNotes say, for each transport whose median link runs above the hardware's
// peak, that the peak is an effective figure (HCCL's own), which a machine may beat:
// a use above 100% is not an error of the measure.
func abovePeakNotes(hw hardware.Profile, links []transportLinks) []string {
	var out []string
	for _, l := range links {
		if !l.HasPeak || l.MedianGBps <= l.PeakGBps {
			continue
		}
		source := ""
		if s := hw.Sources[l.Transport]; s != "" {
			source = " (" + s + ")"
		}
		out = append(out, fmt.Sprintf("%s: the links run above %s's peak%s, an effective figure, not the wire's: set --peak %s=GB/s to judge use against this machine's",
			l.Transport, hw.Name, source, l.Transport))
	}
	return out
}

// waitRow is one op (a group's op by name), summed over the ranks that waited in it
// for the last to arrive.
type waitRow struct {
	Name    string
	Step    int
	WaitNs  int64
	Waiting int // ranks that waited
	Last    int // the rank that did not wait (the last to arrive); -1 when none
}

// gateRow is a gate and its measured value as printed (or why there is none).
type gateRow struct {
	advisor.GateResult
	Value string
}

// maxTopWaits is the number of ops the top waits list.
const maxTopWaits = 5

// maxLongestSteps is the number of rank steps listed when the ranks are too many for
// a row each.
const maxLongestSteps = 8

// viewKey is what a cached view was built from: a Document changed since gets a
// new view.
type viewKey struct {
	result   *analysis.Result
	advice   *advisor.Advice
	gates    int
	gateHead *advisor.GateResult
}

func (d *Document) key() viewKey {
	gates := d.gates()
	k := viewKey{result: d.Result, advice: d.Advice, gates: len(gates)}
	if len(gates) > 0 {
		k.gateHead = &gates[0]
	}
	return k
}

// view is the document's view, built on the first call and kept: analyze renders
// the same document as its report, the job summary, the JUnit file and the
// annotations.
func (d *Document) view() *reportView {
	if d.cached != nil && d.cachedKey == d.key() {
		return d.cached
	}
	d.cached, d.cachedKey = buildView(d), d.key()
	return d.cached
}

func buildView(d *Document) *reportView {
	r := d.Result
	v := &reportView{Verdict: d.verdict(), Summary: r.Summary, Steps: r.StepNumbers(), Advice: d.Advice,
		ManyRanks: len(r.Ranks) > maxRankRows}
	if v.ManyRanks {
		v.StepDists = stepDists(r, v.Steps)
		v.LongestSteps = longestSteps(r)
	}
	for _, c := range r.Collectives {
		row := collectiveRow{Collective: c, Label: groupLabel(c), HasBytes: c.Bytes > 0}
		if row.HasBytes {
			row.MBPerOp = float64(c.Bytes) / float64(c.Count) / 1e6
		}
		v.Collectives = append(v.Collectives, row)
	}
	v.Links = linksPerTransport(r.Communication)
	v.TopWaits = topWaits(r.Communication.Ops)
	if d.Advice != nil {
		v.Detections = d.Advice.Detections
	}
	for _, ch := range v.Detections.Checks {
		if ch.Fired {
			v.FiredChecks = append(v.FiredChecks, ch)
		}
		if !ch.Evaluated() {
			v.UnevaluatedChecks = append(v.UnevaluatedChecks, ch.Title)
		}
	}
	for _, g := range d.gates() {
		v.Gates = append(v.Gates, gateRow{GateResult: g, Value: gateValue(g)})
	}
	return v
}

// failedGates are the gates that did not hold.
func (v *reportView) failedGates() []gateRow {
	var out []gateRow
	for _, g := range v.Gates {
		if !g.Passed {
			out = append(out, g)
		}
	}
	return out
}

func stepDists(r *analysis.Result, steps []int) []stepDist {
	out := make([]stepDist, 0, len(steps))
	for _, step := range steps {
		var stage, comp, exposed, share []float64
		for _, rr := range r.Ranks {
			for _, st := range rr.Steps {
				if st.Step == step {
					stage = append(stage, float64(st.StageNs))
					comp = append(comp, float64(st.ComputingNs))
					exposed = append(exposed, float64(st.CommNotOverlappedNs))
					share = append(share, st.CommShare())
				}
			}
		}
		for _, xs := range [][]float64{stage, comp, exposed, share} {
			sort.Float64s(xs)
		}
		out = append(out, stepDist{Step: step, Ranks: len(stage),
			StageMinNs: stage[0], StageP50Ns: stats.MedianSorted(stage), StageMaxNs: stage[len(stage)-1],
			ComputingP50Ns: stats.MedianSorted(comp), ExposedP50Ns: stats.MedianSorted(exposed),
			ShareMin: share[0], ShareP50: stats.MedianSorted(share), ShareMax: share[len(share)-1]})
	}
	return out
}

// longestSteps are the rank steps with the longest Stage, longest first.
func longestSteps(r *analysis.Result) []rankStep {
	var all []rankStep
	for _, rr := range r.Ranks {
		for _, st := range rr.Steps {
			all = append(all, rankStep{rr.Rank, st})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Step.StageNs > all[j].Step.StageNs })
	if len(all) > maxLongestSteps {
		all = all[:maxLongestSteps]
	}
	return all
}

func linksPerTransport(c analysis.Communication) []transportLinks {
	byTransport := map[string][]float64{}
	bytes := map[string]int64{}
	for _, l := range c.Links {
		byTransport[l.Transport] = append(byTransport[l.Transport], l.BandwidthGBps())
		bytes[l.Transport] += l.Bytes
	}
	names := make([]string, 0, len(byTransport))
	for n := range byTransport {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]transportLinks, 0, len(names))
	for _, n := range names {
		bw := byTransport[n]
		sort.Float64s(bw)
		t := transportLinks{Transport: n, Links: len(bw), Bytes: bytes[n],
			MinGBps: bw[0], MedianGBps: stats.MedianSorted(bw), MaxGBps: bw[len(bw)-1]}
		t.PeakGBps, t.HasPeak = c.Hardware.Peak(n)
		out = append(out, t)
	}
	return out
}

// topWaits are the ops whose ranks waited longest for the others.
func topWaits(ops []analysis.OpStat) []waitRow {
	byOp := map[[2]string]*waitRow{}
	for _, o := range ops {
		k := [2]string{o.Group, o.Name}
		w := byOp[k]
		if w == nil {
			w = &waitRow{Name: o.Name, Step: o.Step, Last: -1}
			byOp[k] = w
		}
		w.WaitNs += o.CrossWaitNs
		if o.CrossWaitNs > 0 {
			w.Waiting++
		} else {
			w.Last = o.Rank
		}
	}
	rows := make([]waitRow, 0, len(byOp))
	for _, w := range byOp {
		if w.Waiting > 0 {
			rows = append(rows, *w)
		}
	}
	// Ties (ops of several groups waiting alike, common in generated and real
	// runs) are broken by step, name and rank, so a run prints the same rows each
	// time, and its summaries the same as its raw ranks.
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.WaitNs != b.WaitNs {
			return a.WaitNs > b.WaitNs
		}
		if a.Step != b.Step {
			return a.Step < b.Step
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Last < b.Last
	})
	return rows[:min(maxTopWaits, len(rows))]
}
