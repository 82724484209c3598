// Package compare computes the run-to-run diff of `hcclprof diff`: for each step
// metric and each collective, the distributions over steps × ranks of a base and a new
// run, the change, a Mann-Whitney U test and a bootstrap interval of it, and the
// step-time change attributed to computation, exposed communication, free time and
// bubble. It works on Run, a flat record of what an analysis found, which either an
// analysis.Result or a saved JSON report (decoded by package report) fills, so both
// give the same diff.
//
// The steps of one run are not independent samples (the ranks of a step wait for
// each other), so the p-values are a guide, as benchstat's are, not a proof.
package compare

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/ranklist"
	"github.com/hcclprof/hcclprof/internal/units"
	"github.com/hcclprof/hcclprof/profile"
)

// StepSample is one rank's figures for one step, in ns (analysis.StepBreakdown).
type StepSample struct {
	Rank, Step                                                 int
	StageNs, ComputingNs, CommunicationNs, CommNotOverlappedNs int64
	OverlappedNs, FreeNs, BubbleNs                             int64
	// ExposedNs is the step's exposed communication as analyze's comm_share counts it
	// (analysis.StepBreakdown.ExposedCommNs): measured on a timeline, which the
	// figures above cannot rebuild when receives overlap computation.
	ExposedNs int64
}

func (s StepSample) exposedNs() int64 { return s.ExposedNs }

// OpSample is one collective op of one rank.
type OpSample struct {
	Rank, Step         int
	Group, Type        string
	ElapseNs, BytesTot int64 // BytesTot 0: unknown
}

// CollectiveInfo is the aggregate of one op type in one group (analysis.Collective).
type CollectiveInfo struct {
	Op, Group, GroupName string
	GroupSize, Count     int
	MeanNs, BusBwGBps    float64
	// Members are the group's global ranks as the run knows them (parallel_group_info's,
	// else the ranks seen with its ops); nil when the run does not say.
	Members []int
}

// Run is what a diff compares of one analysed run.
type Run struct {
	Label       string // the path it was read from
	Ranks       int
	Steps       int
	Incomplete  bool
	Samples     []StepSample
	Ops         []OpSample
	Collectives []CollectiveInfo
	Warnings    []string
}

// FromResult takes a Run out of an analysis.
func FromResult(label string, r *analysis.Result) *Run {
	run := &Run{Label: label, Ranks: r.Summary.Ranks, Steps: r.Summary.Steps, Incomplete: r.Summary.Incomplete,
		Warnings: append([]string(nil), r.Warnings...)}
	for _, rr := range r.Ranks {
		for _, s := range rr.Steps {
			run.Samples = append(run.Samples, StepSample{Rank: rr.Rank, Step: s.Step, StageNs: s.StageNs,
				ComputingNs: s.ComputingNs, CommunicationNs: s.CommunicationNs, CommNotOverlappedNs: s.CommNotOverlappedNs,
				OverlappedNs: s.OverlappedNs, FreeNs: s.FreeNs, BubbleNs: s.BubbleNs, ExposedNs: s.ExposedCommNs()})
		}
	}
	for _, o := range r.Communication.Ops {
		run.Ops = append(run.Ops, OpSample{Rank: o.Rank, Step: o.Step, Group: o.Group, Type: o.Type, ElapseNs: o.ElapseNs, BytesTot: o.Bytes})
	}
	members := map[string][]int{}
	for _, g := range r.Communication.Groups {
		members[g.Key] = g.Ranks
	}
	for _, c := range r.Collectives {
		run.Collectives = append(run.Collectives, CollectiveInfo{Op: c.Op, Group: c.Group, GroupName: c.GroupName,
			GroupSize: c.GroupSize, Count: c.Count, MeanNs: c.MeanNs, BusBwGBps: c.BusBwGBps, Members: members[c.Group]})
	}
	return run
}

// Options tune a diff.
type Options struct {
	Alpha          float64 // significance level; 0 means 0.05
	BootstrapIters int     // bootstrap rounds; 0 means 2000
	Seed           uint64  // bootstrap seed; the same seed gives the same intervals
}

func (o Options) alpha() float64 {
	if o.Alpha <= 0 || o.Alpha >= 1 {
		return 0.05
	}
	return o.Alpha
}

func (o Options) iters() int {
	if o.BootstrapIters <= 0 {
		return 2000
	}
	return o.BootstrapIters
}

// Metric definitions: the step metrics, in report order. Times are µs per rank and
// step; shares per rank and step.
type metricDef struct {
	name, unit string
	value      func(StepSample) float64
	// share metrics compare Σ numerator / Σ Stage (as analyze's summary does), time
	// metrics the mean.
	num func(StepSample) int64
}

var metricDefs = []metricDef{
	{name: "step_time_us", unit: "us", value: func(s StepSample) float64 { return units.Us(s.StageNs) }},
	{name: "computing_us", unit: "us", value: func(s StepSample) float64 { return units.Us(s.ComputingNs) }},
	{name: "communication_us", unit: "us", value: func(s StepSample) float64 { return units.Us(s.CommunicationNs) }},
	{name: "communication_not_overlapped_us", unit: "us", value: func(s StepSample) float64 { return units.Us(s.CommNotOverlappedNs) }},
	{name: "overlapped_us", unit: "us", value: func(s StepSample) float64 { return units.Us(s.OverlappedNs) }},
	{name: "free_us", unit: "us", value: func(s StepSample) float64 { return units.Us(s.FreeNs) }},
	{name: "bubble_us", unit: "us", value: func(s StepSample) float64 { return units.Us(s.BubbleNs) }},
	{name: "comm_share", unit: "share", num: func(s StepSample) int64 { return s.exposedNs() }},
	{name: "comm_total_share", unit: "share", num: func(s StepSample) int64 { return s.CommunicationNs }},
}

// MetricNames lists the step metrics a diff compares, in report order.
var MetricNames = func() []string {
	out := make([]string, len(metricDefs))
	for i, m := range metricDefs {
		out[i] = m.name
	}
	return out
}()

// gateSuffixes are the figures of a metric a --fail-on gate of diff can name:
// METRIC alone is the new run's value, .base the base run's, .delta new − base,
// .delta_pct the change in percent of base, .p the test's p-value.
var gateSuffixes = []string{"", ".base", ".delta", ".delta_pct", ".p"}

// GateMetricNames lists every name a diff gate accepts (advisor.ParseGate's known).
var GateMetricNames = func() []string {
	var out []string
	for _, m := range MetricNames {
		for _, s := range gateSuffixes {
			out = append(out, m+s)
		}
	}
	return out
}()

// MetricDiff is the change of one metric.
type MetricDiff struct {
	Name string
	Unit string // us, share or GB/s
	// Base and New describe the samples (one per rank and step, or per rank and step
	// with the op for collectives).
	Base, New Dist
	// BaseValue and NewValue are what is compared: the mean, or for shares Σ part /
	// Σ Stage (analyze's comm_share).
	BaseValue, NewValue float64
	Delta               float64 // NewValue − BaseValue
	DeltaPct            float64 // 100 · Delta / BaseValue; NaN when BaseValue is 0
	Test                MannWhitney
	CI                  Interval // bootstrap interval of the difference of the sample means
	Significant         bool     // Test.P < alpha
	// Note says why no test was possible or why it is weak.
	Note string
}

// Part is one term of the step-time attribution.
type Part struct {
	Name    string
	Metric  string  // the metric whose mean change it is
	DeltaUs float64 // its contribution to the step-time change
}

// Attribution splits the change of the mean step time (Stage) into the changes of
// the means of its terms: Stage = Computing + Communication(Not Overlapped) + Free −
// Bubble, per rank and step (the profiler counts the pipeline bubble, receive time,
// in the exposed communication and takes it out of Stage). Residue is what the terms
// leave unexplained: zero for figures recomputed from a timeline, small where the
// profiler's own step_trace_time.csv was read.
type Attribution struct {
	StepTimeDeltaUs float64
	Parts           []Part
	ResidueUs       float64
}

// CollectiveDiff compares one op type in one group: its mean duration and bus
// bandwidth per rank and step.
type CollectiveDiff struct {
	Op    string
	Group string // the group's name (dp, tp, ...) when known, else its members (membersLabel), else its key
	// InBase and InNew say which runs have it; a collective in one run only has no
	// test.
	InBase, InNew bool
	MeanUs        MetricDiff
	BusBwGBps     MetricDiff
}

// RunInfo describes one side of the diff.
type RunInfo struct {
	Label      string
	Ranks      int
	Steps      int
	Samples    int
	Incomplete bool
}

// Diff is the comparison of two runs.
type Diff struct {
	Base, New   RunInfo
	Alpha       float64
	Metrics     []MetricDiff
	Attribution Attribution
	Collectives []CollectiveDiff
	// Warnings are about the comparison itself (different cluster shapes, small
	// samples); the runs' own warnings are in BaseWarnings and NewWarnings.
	Warnings                  []string
	BaseWarnings, NewWarnings []string
}

// minSamplesForSignificance is the smallest sample size at which the two-sided test
// can reach p < 0.05: with 3 + 3 samples the exact p is at least 0.1.
const minSamplesForSignificance = 4

// Compare diffs base against new.
func Compare(base, new *Run, opts Options) *Diff {
	d := &Diff{
		Base:         info(base),
		New:          info(new),
		Alpha:        opts.alpha(),
		BaseWarnings: base.Warnings,
		NewWarnings:  new.Warnings,
	}
	for i, m := range metricDefs {
		bx, nx := sampleValues(base.Samples, m), sampleValues(new.Samples, m)
		md := compareSamples(m.name, m.unit, bx, nx, opts, uint64(i))
		if m.num != nil {
			md.BaseValue, md.NewValue = shareOf(base.Samples, m.num), shareOf(new.Samples, m.num)
			md.setDelta()
		}
		d.Metrics = append(d.Metrics, md)
	}
	d.Attribution = attribute(d)
	d.Collectives = compareCollectives(base, new, opts)
	if base.Ranks != new.Ranks {
		d.Warnings = append(d.Warnings, fmt.Sprintf("the runs have different rank counts (%d and %d): the distributions are compared as they are", base.Ranks, new.Ranks))
	}
	if n := min(len(base.Samples), len(new.Samples)); n > 0 && n < minSamplesForSignificance {
		d.Warnings = append(d.Warnings, fmt.Sprintf("only %d rank-step sample(s) in a run: no change can be significant at α=%.2g; profile more steps", n, d.Alpha))
	}
	if base.Incomplete || new.Incomplete {
		d.Warnings = append(d.Warnings, "an input is incomplete (see its warnings): the diff covers what could be read")
	}
	return d
}

func info(r *Run) RunInfo {
	return RunInfo{Label: r.Label, Ranks: r.Ranks, Steps: r.Steps, Samples: len(r.Samples), Incomplete: r.Incomplete}
}

func sampleValues(ss []StepSample, m metricDef) []float64 {
	out := make([]float64, len(ss))
	for i, s := range ss {
		if m.num != nil {
			out[i] = ratio(m.num(s), s.StageNs)
		} else {
			out[i] = m.value(s)
		}
	}
	return out
}

func ratio(a, b int64) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func shareOf(ss []StepSample, num func(StepSample) int64) float64 {
	var n, stage int64
	for _, s := range ss {
		n += num(s)
		stage += s.StageNs
	}
	return ratio(n, stage)
}

// compareSamples fills a MetricDiff from two samples, comparing their means; stream
// picks an independent bootstrap stream per metric.
func compareSamples(name, unit string, bx, nx []float64, opts Options, stream uint64) MetricDiff {
	md := MetricDiff{Name: name, Unit: unit, Base: Describe(bx), New: Describe(nx)}
	md.BaseValue, md.NewValue = md.Base.Mean, md.New.Mean
	md.setDelta()
	md.Test = mannWhitneyU(bx, nx)
	md.CI = bootstrapMeanDiff(bx, nx, opts.iters(), opts.alpha(), opts.Seed*1000003+stream)
	md.Significant = md.Test.Method != "none" && md.Test.P < opts.alpha()
	switch {
	case len(bx) == 0 || len(nx) == 0:
		md.Note = "no samples in a run"
	case md.Test.Method == "none":
		md.Note = "every value equal"
	case min(len(bx), len(nx)) < minSamplesForSignificance:
		md.Note = "too few samples for a significant change"
	}
	return md
}

func (md *MetricDiff) setDelta() {
	md.Delta = md.NewValue - md.BaseValue
	md.DeltaPct = math.NaN()
	if md.BaseValue != 0 {
		md.DeltaPct = 100 * md.Delta / math.Abs(md.BaseValue)
	}
}

// Metric returns the diff of a step metric by name.
func (d *Diff) Metric(name string) (MetricDiff, bool) {
	for _, m := range d.Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return MetricDiff{}, false
}

func attribute(d *Diff) Attribution {
	delta := func(name string) float64 {
		m, _ := d.Metric(name)
		return m.Delta
	}
	a := Attribution{StepTimeDeltaUs: delta("step_time_us"), Parts: []Part{
		{Name: "compute", Metric: "computing_us", DeltaUs: delta("computing_us")},
		{Name: "exposed communication", Metric: "communication_not_overlapped_us", DeltaUs: delta("communication_not_overlapped_us")},
		{Name: "free (idle device)", Metric: "free_us", DeltaUs: delta("free_us")},
		{Name: "bubble (taken out of the step)", Metric: "bubble_us", DeltaUs: -delta("bubble_us")},
	}}
	sum := 0.0
	for _, p := range a.Parts {
		sum += p.DeltaUs
	}
	a.ResidueUs = a.StepTimeDeltaUs - sum
	if math.Abs(a.ResidueUs) < 1e-6 { // float noise of exact ns figures
		a.ResidueUs = 0
	}
	return a
}

// GateValues returns the figures diff gates read, by name (GateMetricNames).
func (d *Diff) GateValues() map[string]float64 {
	out := map[string]float64{}
	for _, m := range d.Metrics {
		out[m.Name] = m.NewValue
		out[m.Name+".base"] = m.BaseValue
		out[m.Name+".delta"] = m.Delta
		// A change in percent of a zero base is not a number: the gate that reads it
		// is unmeasured (and fails), as analyze's gates on a figure the run lacks.
		if !math.IsNaN(m.DeltaPct) {
			out[m.Name+".delta_pct"] = m.DeltaPct
		}
		out[m.Name+".p"] = m.Test.P
	}
	return out
}

// collKey names a collective across runs (see collectiveLabels).
type collKey struct{ op, group string }

// collectiveLabels names each collective of r (by op and group key) as another run of
// the same job names it too. A group's key is a hash of its HCCL name, which carries
// the rendezvous address and time, so it changes from run to run (the real db and
// text runs of one ImageNet job show two). A group is named by its framework name (dp,
// tp) when the profile recorded one, else by its members ("ranks 0-7"), without its
// size: a Level0 run knows only the profiled ranks of a group its Level1 run sizes
// from the matrix. When two groups of one op share their members (two communicators
// over the same ranks), they keep their keys, since nothing tells which one of the
// other run each is.
func collectiveLabels(r *Run) map[collKey]string {
	labels := map[collKey]string{}
	keysOf := map[collKey]map[string]bool{} // the group keys behind each members label
	for _, c := range r.Collectives {
		k := collKey{c.Op, c.Group}
		switch {
		case c.GroupName != "":
			labels[k] = c.GroupName
		case len(c.Members) > 0:
			l := membersLabel(c.Members, 0)
			labels[k] = l
			lk := collKey{c.Op, l}
			if keysOf[lk] == nil {
				keysOf[lk] = map[string]bool{}
			}
			keysOf[lk][c.Group] = true
		}
	}
	for k, l := range labels {
		if len(keysOf[collKey{k.op, l}]) > 1 {
			labels[k] = k.group
		}
	}
	return labels
}

// membersLabel writes a group's global ranks ("ranks 0-3, 8-11"), with the group's
// size when fewer ranks than that are known ("ranks 0-1 of 8").
func membersLabel(members []int, size int) string {
	label := "ranks " + ranklist.Format(members)
	if n := len(slices.Compact(slices.Sorted(slices.Values(members)))); size > n {
		label += fmt.Sprintf(" of %d", size)
	}
	return label
}

type collRun struct {
	info     CollectiveInfo // the first group's, for the aggregate fallback
	meanUs   []float64      // per rank and step
	busbw    []float64      // per rank and step with every byte count known
	totalNs  float64
	fallback bool // no per-op figures (no timeline): the aggregate only
}

func collectivesOf(r *Run) map[collKey]*collRun {
	labels := collectiveLabels(r)
	size := map[[2]string]int{}
	out := map[collKey]*collRun{}
	keyOf := func(op, group string) collKey {
		if l := labels[collKey{op, group}]; l != "" {
			return collKey{op, l}
		}
		return collKey{op, group}
	}
	for _, c := range r.Collectives {
		size[[2]string{c.Op, c.Group}] = c.GroupSize
	}
	for _, c := range r.Collectives {
		k := keyOf(c.Op, c.Group)
		cr := out[k]
		if cr == nil {
			cr = &collRun{info: c, fallback: true}
			out[k] = cr
		}
		cr.totalNs += c.MeanNs * float64(c.Count)
	}
	type rs struct {
		k          collKey
		rank, step int
	}
	type acc struct {
		n            int
		elapse       int64
		busBytes     float64 // Σ bytes × bus factor
		busElapse    int64
		unknownBytes bool
	}
	groups := map[rs]*acc{}
	var order []rs
	for _, o := range r.Ops {
		k := keyOf(o.Type, o.Group)
		key := rs{k, o.Rank, o.Step}
		a := groups[key]
		if a == nil {
			a = &acc{}
			groups[key] = a
			order = append(order, key)
		}
		a.n++
		a.elapse += o.ElapseNs
		f := profile.BusBandwidthFactor(o.Type, size[[2]string{o.Type, o.Group}])
		if o.BytesTot <= 0 || f == 0 {
			a.unknownBytes = true
		} else {
			a.busBytes += float64(o.BytesTot) * f
			a.busElapse += o.ElapseNs
		}
	}
	sort.Slice(order, func(i, j int) bool { // a stable sample order, whatever the input's
		a, b := order[i], order[j]
		if a.k != b.k {
			return a.k.op < b.k.op || (a.k.op == b.k.op && a.k.group < b.k.group)
		}
		if a.rank != b.rank {
			return a.rank < b.rank
		}
		return a.step < b.step
	})
	for _, key := range order {
		a := groups[key]
		cr := out[key.k]
		if cr == nil { // an op without a collective row: cannot happen with analyze's output
			cr = &collRun{}
			out[key.k] = cr
		}
		cr.fallback = false
		cr.meanUs = append(cr.meanUs, units.Us(a.elapse)/float64(a.n))
		if !a.unknownBytes && a.busElapse > 0 {
			cr.busbw = append(cr.busbw, a.busBytes/float64(a.busElapse))
		}
	}
	for _, cr := range out {
		if cr.fallback {
			cr.meanUs = []float64{cr.info.MeanNs / 1000}
			if cr.info.BusBwGBps > 0 {
				cr.busbw = []float64{cr.info.BusBwGBps}
			}
		}
	}
	return out
}

// matchSubsets pairs the collectives that one run has and the other lacks when they
// are the same communicator profiled on other ranks: the same op over a group of the
// same known size, the ranks seen in one a subset of the other's (the real ImageNet
// job's db run profiled rank 0 of the 8, its text run ranks 0 and 1). A pair must be
// the only candidate of each; nc's entry then takes bc's key.
func matchSubsets(bc, nc map[collKey]*collRun) {
	alone := func(in, other map[collKey]*collRun) []collKey {
		var out []collKey
		for k, cr := range in {
			if other[k] == nil && len(cr.info.Members) > 0 && cr.info.GroupSize > 0 && membersLabel(cr.info.Members, 0) == k.group {
				out = append(out, k)
			}
		}
		return out
	}
	baseOnly, newOnly := alone(bc, nc), alone(nc, bc)
	candidates := func(k collKey, in map[collKey]*collRun, keys []collKey, from map[collKey]*collRun) []collKey {
		var out []collKey
		for _, o := range keys {
			a, b := in[k].info, from[o].info
			if o.op == k.op && a.GroupSize == b.GroupSize && (subset(a.Members, b.Members) || subset(b.Members, a.Members)) {
				out = append(out, o)
			}
		}
		return out
	}
	pairs := map[collKey]collKey{} // base key → new key, decided before any is moved
	for _, bk := range baseOnly {
		if c := candidates(bk, bc, newOnly, nc); len(c) == 1 && len(candidates(c[0], nc, baseOnly, bc)) == 1 {
			pairs[bk] = c[0]
		}
	}
	for bk, nk := range pairs {
		nc[bk] = nc[nk]
		delete(nc, nk)
	}
}

// subset reports whether every rank of a is in b.
func subset(a, b []int) bool {
	for _, r := range a {
		if !slices.Contains(b, r) {
			return false
		}
	}
	return true
}

// groupLabel is how a diff names a collective's group: its key's label, with the
// group's size when the label is its members and either run knows more ranks than
// those ("ranks 0-1 of 8").
func groupLabel(label string, runs ...*collRun) string {
	size := 0
	var members []int
	for _, cr := range runs {
		if cr != nil && len(cr.info.Members) > 0 && membersLabel(cr.info.Members, 0) == label {
			members, size = cr.info.Members, max(size, cr.info.GroupSize)
		}
	}
	if members == nil {
		return label
	}
	return membersLabel(members, size)
}

func compareCollectives(base, new *Run, opts Options) []CollectiveDiff {
	bc, nc := collectivesOf(base), collectivesOf(new)
	matchSubsets(bc, nc)
	keys := map[collKey]bool{}
	for k := range bc {
		keys[k] = true
	}
	for k := range nc {
		keys[k] = true
	}
	weight := func(k collKey) float64 {
		w := 0.0
		if c := bc[k]; c != nil {
			w = c.totalNs
		}
		if c := nc[k]; c != nil {
			w = math.Max(w, c.totalNs)
		}
		return w
	}
	sorted := make([]collKey, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Slice(sorted, func(i, j int) bool {
		wi, wj := weight(sorted[i]), weight(sorted[j])
		if wi != wj {
			return wi > wj
		}
		if sorted[i].op != sorted[j].op {
			return sorted[i].op < sorted[j].op
		}
		return sorted[i].group < sorted[j].group
	})
	var out []CollectiveDiff
	for i, k := range sorted {
		b, n := bc[k], nc[k]
		cd := CollectiveDiff{Op: k.op, Group: groupLabel(k.group, b, n), InBase: b != nil, InNew: n != nil}
		var bm, nm, bb, nb []float64
		fallback := false
		if b != nil {
			bm, bb = b.meanUs, b.busbw
			fallback = b.fallback
		}
		if n != nil {
			nm, nb = n.meanUs, n.busbw
			fallback = fallback || n.fallback
		}
		stream := uint64(100 + 2*i)
		cd.MeanUs = compareSamples("mean_us", "us", bm, nm, opts, stream)
		cd.BusBwGBps = compareSamples("busbw_gbps", "GB/s", bb, nb, opts, stream+1)
		if fallback {
			// One aggregate per run (no timeline): the figures compare, the test cannot.
			for _, md := range []*MetricDiff{&cd.MeanUs, &cd.BusBwGBps} {
				md.Test, md.Significant, md.CI = MannWhitney{P: 1, Method: "none"}, false, Interval{math.NaN(), math.NaN()}
				md.Note = "run-level aggregate only (no per-op timeline): no test"
			}
		}
		out = append(out, cd)
	}
	return out
}
