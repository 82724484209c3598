// Package analysis computes hcclprof's metrics from the data model (package profile):
// the per-rank, per-step breakdown of step time into computation, communication and
// idle time, the communication shares and why the exposed part is exposed (Exposure),
// per-collective and per-link statistics, each link's bandwidth against its peers',
// the servers, the samples msprof-analyze's checks count, and the metrics the CI
// gates read (Summary.Metrics). It measures; which ranks, links and servers are slow,
// which checks fire and which gates fail is the advisor's decision. It reads profile
// types and no file (the configuration file is internal/config's, which hands it
// Options).
package analysis

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/hcclprof/hcclprof/analysis/hardware"
	"github.com/hcclprof/hcclprof/internal/parallel"
	"github.com/hcclprof/hcclprof/internal/ranklist"
	"github.com/hcclprof/hcclprof/internal/units"
	"github.com/hcclprof/hcclprof/profile"
)

// Result is everything one analysis computes.
type Result struct {
	Summary       Summary
	Ranks         []RankResult
	Collectives   []Collective
	Communication Communication
	// Exposure splits the exposed communication by cause (moving data, waiting).
	Exposure Exposure
	// SkippedSteps are the steps of Options.SkipSteps some rank had, so that they
	// were left out; a step no rank had is a warning instead.
	SkippedSteps []int
	Warnings     []string
	// ComputeDType is the data type the compute kernels take as input for most of
	// their time over the ranks that say (kernel_details.csv): BF16, FP16, FP32;
	// "" when no rank says. ComputeDTypeShare is its share of that time.
	ComputeDType      string
	ComputeDTypeShare float64
}

// Summary holds the run-level metrics. Shares are time-weighted over ranks and steps:
// Σ numerator / Σ Stage.
type Summary struct {
	Ranks          int
	Steps          int // distinct step numbers
	StepTimeNs     int64
	CommShare      float64 // exposed communication / Stage (StepBreakdown.ExposedCommNs)
	CommTotalShare float64 // Communication / (Stage + Bubble): receives counted as Bubble lie outside Stage
	// AllReduceShare is the union of AllReduce intervals / Stage; nil when a step's
	// AllReduce time is not known (StepBreakdown.AllReduceUnknown: a rank without a
	// timeline or op records), where it read 0 and a gate on it passed.
	AllReduceShare *float64
	// OverlapRatio is Overlapped / Communication; nil when the run has no
	// communication, where the ratio is not a number (it read 0: "none overlaps").
	OverlapRatio *float64
	// ExposedTransferShare and ExposedWaitShare are the parts of CommShare spent moving
	// data and waiting for a peer (Exposure); with the rest they sum to CommShare.
	// Absent (nil) unless every op has its time split (Exposure.SplitAll) and ops
	// cover all the exposed time (Exposure.UnaccountedShare 0): ops read from
	// kernel_details.csv (Level0) have only elapses, and the split would read 0 for
	// moving data and a lower bound for waiting; a rank without op records left its
	// exposed time out of both, and a gate passed on half the real wait. NCCL kernels
	// (Kineto) count as split where their moving time was read from the ranks'
	// arrivals (MovingCrossRank).
	ExposedTransferShare, ExposedWaitShare *float64
	// RanksExpected is the job's world size as the profiles state it
	// (distributed_args.world_size, else the largest parallel_group_info group); 0
	// when unknown.
	RanksExpected int
	Incomplete    bool // some rank could not be read in full
	// Kinds is the communication per parallel dimension (tp, sp, cp, ep, fsdp, dp,
	// pp, unknown: Group.Parallel), in KindNames' order; a dimension without
	// communication is left out.
	Kinds []KindShare
}

// Metrics returns the summary metrics by name, as --fail-on names them.
func (s Summary) Metrics() map[string]float64 {
	m := map[string]float64{
		"ranks":            float64(s.Ranks),
		"steps":            float64(s.Steps),
		"step_time_us":     float64(s.StepTimeNs) / 1000,
		"comm_share":       s.CommShare,
		"comm_total_share": s.CommTotalShare,
	}
	if s.AllReduceShare != nil {
		m["allreduce_share"] = *s.AllReduceShare
	}
	if s.OverlapRatio != nil {
		m["overlap_ratio"] = *s.OverlapRatio
	}
	if s.ExposedTransferShare != nil {
		m["exposed_transfer_share"] = *s.ExposedTransferShare
		m["exposed_wait_share"] = *s.ExposedWaitShare
	}
	return m
}

// MetricNames lists the summary metrics in a stable order: the names analyze's
// --fail-on gates accept (advisor.ParseGate).
var MetricNames = []string{"ranks", "steps", "step_time_us", "comm_share", "comm_total_share", "allreduce_share", "overlap_ratio",
	"exposed_transfer_share", "exposed_wait_share"}

// RankResult is one rank's breakdown.
type RankResult struct {
	Rank int
	Dir  string
	// Format names the format the rank was read as, for the reports; what the
	// analysis needs of it is in Traits.
	Format string
	// Traits and ClipToStepWindows are the rank's (profile.Rank).
	profile.Traits
	ClipToStepWindows bool
	Source            Source
	// OpsSource is where the rank's per-op records came from (profile.Rank.CommOpsSource:
	// timeline, communication.json, analysis.db, ..., kernel_details.csv), "" when none.
	OpsSource  string
	Incomplete bool
	// Problems say why the rank's figures are not what hcclprof computed (its
	// recomputation disagreed with the profiler's own figures); they make it
	// incomplete.
	Problems []string
	Steps    []StepBreakdown
}

// Options tune an analysis.
type Options struct {
	// Workers bounds the ranks analysed at once; 0 means GOMAXPROCS.
	Workers int
	// Limits are where the measurements cut (retransmissions, the checks' sizes);
	// zero means DefaultLimits.
	Limits Limits
	// Hardware gives the link peaks for utilisation; nil detects the product from the
	// data (hardware.Detect), falling back to A2 with Communication.Hardware.Assumed.
	Hardware *hardware.Profile
	// PeaksGBps override link peaks by transport, on the named or detected profile.
	PeaksGBps map[string]float64
	// KeepTimeline, when set, names the ranks whose timelines the Accumulator keeps
	// (for a report that draws one rank's step).
	KeepTimeline func(rank int) bool
	// SkipSteps are left out of every figure (warm-up steps, for instance).
	SkipSteps []int
	// Microbatches is the pipeline's micro-batches per step when the user knows it;
	// 0 infers it from the receive counts.
	Microbatches int
}

// Analyze computes the metrics of a cluster. Ranks are analysed in parallel.
func Analyze(c *profile.Cluster, opts Options) *Result {
	sums := make([]*RankSummary, len(c.Ranks))
	parallel.For(len(c.Ranks), opts.Workers, func(i int) {
		sums[i] = summarizeRank(c.Ranks[i], opts)
	})
	return analyzeSummaries(c, sums, opts)
}

// RankSummary is what the analysis keeps of one rank: everything that needs the
// rank's timeline (its step breakdown, its ops' statistics and transfers) computed
// once, so that the timeline can be dropped before the next ranks are read.
type RankSummary struct {
	result   RankResult
	warnings []string
	comm     rankComm
	checks   CheckSamples
	skipOps  []bool            // by CommOps index: ops of skipped steps
	skipped  []int             // the steps of Options.SkipSteps the rank had
	hw       hardware.Evidence // what the profile says of its hardware
	colls    []collPart        // its part of the collectives table
	dtypeNs  map[string]int64  // its compute time by input data type
}

// summarizeRank computes a rank's summary. It only reads the rank.
func summarizeRank(r *profile.Rank, opts Options) *RankSummary {
	s := &RankSummary{dtypeNs: r.ComputeDTypeNs}
	s.result, s.warnings = analyzeRank(r)
	skip := map[int]bool{}
	for _, st := range opts.SkipSteps {
		skip[st] = true
	}
	if len(skip) > 0 {
		kept := s.result.Steps[:0]
		for _, st := range s.result.Steps {
			if !skip[st.Step] {
				kept = append(kept, st)
			} else if !slices.Contains(s.skipped, st.Step) {
				s.skipped = append(s.skipped, st.Step)
			}
		}
		s.result.Steps = kept
	}
	idx := indexRank(r)
	s.comm = rankCommunication(r, idx, opts.limits(), skip)
	s.checks = rankCheckSamples(r, idx, s.comm.ops, opts.limits(), skip)
	if w := unknownDataTypes(r); w != "" {
		s.warnings = append(s.warnings, w)
	}
	for _, n := range r.Notes {
		s.warnings = append(s.warnings, fmt.Sprintf("rank %d: %s", r.Rank, n))
	}
	s.warnings = append(s.warnings, dataTaskWarnings(r)...)
	if w := missingTaskRows(r); w != "" {
		s.warnings = append(s.warnings, w)
	}
	if w := opsWithoutProfilerRows(r, s.comm.ops); w != "" {
		s.warnings = append(s.warnings, w)
	}
	if _, _, bad := BuffsizeMB(r.Metadata.Env); bad != "" {
		s.warnings = append(s.warnings, fmt.Sprintf("rank %d: HCCL_BUFFSIZE=%q in its environment is not a whole number of MB ≥ 1: the checks use the default, %d MB",
			r.Rank, bad, opts.limits().DefaultBuffsizeMB))
	}
	s.hw = hardware.EvidenceOf(r)
	if len(skip) > 0 {
		s.skipOps = make([]bool, len(r.CommOps))
		for i, st := range idx.steps {
			s.skipOps[i] = skip[st]
		}
	}
	s.colls = rankCollectives(r, func(op int) bool { return op < len(s.skipOps) && s.skipOps[op] })
	return s
}

// Accumulator analyses a cluster as its ranks are read: Add summarises a rank and drops
// its timeline, so memory grows with the summaries kept, not with the traces. It is
// safe for concurrent Adds (parser.LoadOptions.OnRank calls it from the workers).
type Accumulator struct {
	opts   Options
	mu     sync.Mutex
	sums   map[*profile.Rank]*RankSummary
	groups profile.RankListInterner
}

// NewAccumulator returns an empty accumulator.
func NewAccumulator(opts Options) *Accumulator {
	return &Accumulator{opts: opts, sums: map[*profile.Rank]*RankSummary{}}
}

// Add summarises r and drops what only the summary needed (profile.Rank.DropTimeline).
func (a *Accumulator) Add(r *profile.Rank) {
	s := summarizeRank(r, a.opts)
	if a.opts.KeepTimeline == nil || !a.opts.KeepTimeline(r.Rank) {
		r.DropTimeline()
	}
	a.groups.Intern(r)
	a.mu.Lock()
	a.sums[r] = s
	a.mu.Unlock()
}

// OpIndices gives, for a rank that was Added, the CommOps index of each of its ops the
// analysis keeps (ops of skipped steps are left out), in the order Result's
// Communication.Ops lists them after the ops of the ranks before r; nil before r is
// Added. A writer that streams the rank's tasks uses it to point them at their op's
// row.
func (a *Accumulator) OpIndices(r *profile.Rank) []int {
	a.mu.Lock()
	s := a.sums[r]
	a.mu.Unlock()
	if s == nil {
		return nil
	}
	out := make([]int, len(s.comm.ops))
	for i, o := range s.comm.ops {
		out[i] = o.OpIndex
	}
	return out
}

// Result completes the analysis of c, whose ranks were all Added. A rank that was not
// (a caller's mistake) is summarised now from what it still holds.
func (a *Accumulator) Result(c *profile.Cluster) *Result {
	sums := make([]*RankSummary, len(c.Ranks))
	for i, r := range c.Ranks {
		a.mu.Lock()
		s := a.sums[r]
		a.mu.Unlock()
		if s == nil {
			s = summarizeRank(r, a.opts)
		}
		sums[i] = s
	}
	return analyzeSummaries(c, sums, a.opts)
}

func (o Options) limits() Limits {
	if o.Limits == (Limits{}) {
		return DefaultLimits
	}
	return o.Limits
}

// analyzeSummaries computes the cross-rank metrics from the ranks' summaries and what
// the (possibly dropped) ranks still hold: metadata, ops, directories.
func analyzeSummaries(c *profile.Cluster, sums []*RankSummary, opts Options) *Result {
	res := &Result{Ranks: make([]RankResult, len(sums))}
	comms := make([]rankComm, len(sums))
	checks := make([]CheckSamples, len(sums))
	evidence := make([]hardware.Evidence, 0, len(sums))
	for i, s := range sums {
		res.Ranks[i] = s.result
		res.Warnings = append(res.Warnings, s.warnings...)
		comms[i] = s.comm
		checks[i] = s.checks
		evidence = append(evidence, s.hw)
	}
	res.noteSkippedSteps(sums, opts.SkipSteps)
	flagRanksWithoutSteps(res.Ranks)
	flagRanksMissingSteps(res.Ranks)
	if w := stepsNotOnEveryRank(res.Ranks); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	res.Summary = summarize(res.Ranks)
	res.Summary.RanksExpected = worldSize(c)
	var collWarnings []string
	parts := make([][]collPart, len(sums))
	for i, s := range sums {
		parts[i] = s.colls
	}
	res.Collectives, collWarnings = mergeCollectives(c, parts, taskGroupSizes(comms))
	res.Warnings = append(res.Warnings, collWarnings...)
	res.Communication = mergeCommunication(c, comms, opts.limits().RetransmissionNs)
	res.Communication.Groups = inferGroups(res.Communication.Groups, res.Communication.Ops, len(c.Ranks))
	if w := unmappedLinksWarning(res.Communication); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	if w := groupMembersConflict(c); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	if w := runsApartWarning(res.Ranks, res.Communication.Ops); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	setParallelKinds(res.Communication.Groups, res.Communication.Ops, res.Communication.ServerOf, max(len(c.Ranks), res.Summary.RanksExpected),
		groupOverlap(res.Ranks))
	if ring := flagRingReceivesInSummaries(res.Ranks, res.Communication.Ops, res.Communication.Groups); len(ring) > 0 {
		res.Summary.Incomplete = true
		res.Warnings = append(res.Warnings, ring...)
	}
	res.Summary.Kinds = kindShares(res.Ranks, res.Communication.Groups)
	res.Communication.GroupSteps = groupSteps(res.Ranks, res.Communication.Groups)
	res.Communication.Pipelines = pipelines(res.Communication.Groups, res.Communication.Ops, res.Ranks, opts.Microbatches)
	if opts.Microbatches > 0 && len(res.Communication.Pipelines) == 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("--microbatches %d: the run has no pipeline group (no pp group in parallel_group_info, no group of only point-to-point ops): not used", opts.Microbatches))
	}
	res.Communication.CheckSamples = mergeCheckSamples(checks)
	cs := &res.Communication.CheckSamples
	cs.SmallSDMANs, cs.SmallRDMANs = smallMessageCosts(res.Communication.Ops, opts.limits())
	res.Communication.Limits = opts.limits()
	hw := opts.Hardware
	if hw == nil {
		d := hardware.Detect(evidence, transportsSeen(res.Communication.Links))
		hw = &d
	}
	res.Communication.Hardware = hw.WithPeaks(opts.PeaksGBps)
	applyPeaks(&res.Communication, res.Collectives)
	if n, why := arrivalSplit(res.Communication.Ops, res.Ranks, res.Communication.Groups, res.Collectives); n > 0 {
		res.Warnings = append(res.Warnings, why)
	}
	res.Exposure = exposure(res.Communication.Ops, res.Ranks, res.Communication.Groups, res.Collectives, res.Communication.Pipelines)
	res.Warnings = append(res.Warnings, unlistedProblems(res.Ranks, res.Warnings)...)
	res.ComputeDType, res.ComputeDTypeShare = computeDType(sums)
	if res.Exposure.OpsKnown && res.Exposure.SplitAll && res.Exposure.UnaccountedShare == 0 {
		t, w := res.Exposure.TransferShare, res.Exposure.WaitShare
		res.Summary.ExposedTransferShare, res.Summary.ExposedWaitShare = &t, &w
	}
	return res
}

// StepsOf is the number of steps the analysis finds in one rank (0: nothing to
// analyse there), for commands that read ranks without analysing the cluster.
func StepsOf(r *profile.Rank) int {
	rr, _ := analyzeRank(r)
	return len(rr.Steps)
}

func analyzeRank(r *profile.Rank) (RankResult, []string) {
	rr := RankResult{Rank: r.Rank, Dir: r.Dir, Format: string(r.Format), Traits: r.Traits, ClipToStepWindows: r.ClipToStepWindows,
		OpsSource: r.CommOpsSource, Incomplete: r.Incomplete()}
	var warnings []string
	for _, p := range r.Problems {
		warnings = append(warnings, fmt.Sprintf("rank %d: %s", r.Rank, p))
	}
	switch {
	case r.HasTimeline && (len(r.Compute) > 0 || len(r.CommOps) > 0):
		rr.Source = SourceTimeline
		var overlapRows []profile.StepTraceRow
		rr.Steps, overlapRows = timelineSteps(r)
		warnings = append(warnings, checkWithProfiler(r, &rr, overlapRows)...)
	case len(r.StepTrace) > 0:
		rr.Source = SourceStepTrace
		if r.ClusterOutput {
			rr.Source = SourceClusterStepTrace
		}
		if r.StepTraceFrom != "" {
			rr.Source = Source(r.StepTraceFrom)
		}
		rr.Steps = stepTraceSteps(r.StepTrace)
		if p := receivesBesideCompute(r.StepTraceFile(), rr.Steps); p != "" {
			for i := range rr.Steps {
				if st := &rr.Steps[i]; st.BubbleNs > st.CommNotOverlappedNs {
					st.ExposedLowerBound = true // between 0 (as read) and Not Overlapped
				}
			}
			rr.Incomplete = true
			rr.Problems = append(rr.Problems, p)
			warnings = append(warnings, fmt.Sprintf("rank %d: %s", r.Rank, p))
		}
		// Level0's kernel_details.csv times each op's kernel; else the profiler's per-op
		// analysis (communication.json, analysis.db) gives each op's start and elapse.
		warnings = append(warnings, addOpsAllReduceOf(r.Rank, rr.Steps, r.KernelCommOps, r.CommOps)...)
		addGroupsFromOps(rr.Steps, r.CommOps)
		from := "step_trace_time.csv"
		if r.ClusterOutput {
			from = "msprof-analyze's cluster_step_trace_time.csv"
		}
		if r.StepTraceFrom != "" {
			from = "msprof-analyze's " + r.StepTraceFrom
		}
		warnings = append(warnings, fmt.Sprintf("rank %d: no device timeline (profiler level %s); step figures taken from %s",
			r.Rank, orUnknown(r.Info.ProfilerLevel), from))
	default:
		rr.Source = SourceNone
		warnings = append(warnings, fmt.Sprintf("rank %d: neither a device timeline nor step_trace_time.csv: no step breakdown", r.Rank))
	}
	return rr, warnings
}

// receivesBesideCompute is the problem of a rank's summary steps whose Bubble (the
// receives' time) is more than their communication not overlapped, "" when none is:
// receives overlapped computation (a context-parallel ring's, beside the attention,
// not a pipeline stage waiting for its input), so the profiler's arithmetic for the
// exposed communication, Not Overlapped − Bubble, goes negative and reads 0 where a
// timeline measures more (cp4-tp4-16rank: 0 against 3.6% of the step). The exposed
// communication of those steps is then not known from the summaries.
func receivesBesideCompute(file string, steps []StepBreakdown) string {
	// (receivesBesideComputeText marks the problem for flagRingReceivesInSummaries.)
	var bad []int
	var first StepBreakdown
	for _, st := range steps {
		if st.BubbleNs > st.CommNotOverlappedNs {
			if len(bad) == 0 {
				first = st
			}
			bad = append(bad, st.Step)
		}
	}
	if len(bad) == 0 {
		return ""
	}
	return fmt.Sprintf("%s: step(s) %s: Bubble (the receives' time, %.3f µs in step %d) is more than Communication(Not Overlapped) (%.3f µs): "+receivesBesideComputeText+", as a context-parallel ring's do, so the exposed communication is not Not Overlapped − Bubble (%.3f µs, read as 0): it lies between 0 and %.3f µs, and a device timeline measures it",
		file, ranklist.Format(bad), units.Us(first.BubbleNs), first.Step, units.Us(first.CommNotOverlappedNs),
		units.Us(first.CommNotOverlappedNs-first.BubbleNs), units.Us(first.CommNotOverlappedNs))
}

// flagRingReceivesInSummaries makes incomplete the ranks without a timeline whose
// steps have Bubble and whose receives belong to a context-parallel group, and
// reports whether it did. The profiler counts every receive's time as Bubble and
// takes it off the exposed communication (Not Overlapped − Bubble), as if the rank
// waited in it; a ring's receives run beside the attention, so the exposed time is
// more than that: a TP2 × CP4 job read 34.1% of the step from its summaries against
// 50.1% measured. Where the arithmetic goes negative, receivesBesideCompute has
// already said so. It returns the problems as warnings ("rank N: ...").
func flagRingReceivesInSummaries(ranks []RankResult, ops []OpStat, groups []Group) (warnings []string) {
	ring := map[string]string{} // group key → name
	for _, g := range groups {
		if g.Parallel == KindCP {
			ring[g.Key] = g.Name
			if ring[g.Key] == "" {
				ring[g.Key] = g.Key
			}
		}
	}
	if len(ring) == 0 {
		return nil
	}
	ringOf := map[int]string{} // rank → a ring group it receives in
	for _, o := range ops {
		if _, ok := ring[o.Group]; ok && profile.IsReceiveOp(o.Name, o.Type) {
			ringOf[o.Rank] = ring[o.Group]
		}
	}
	for i := range ranks {
		rr := &ranks[i]
		group, ok := ringOf[rr.Rank]
		if !ok || rr.Source == SourceTimeline || rr.Source == SourceNone {
			continue
		}
		var steps []int
		var first StepBreakdown
		for j := range rr.Steps {
			if st := &rr.Steps[j]; st.BubbleNs > 0 {
				st.ExposedLowerBound = true
				if len(steps) == 0 {
					first = *st
				}
				steps = append(steps, st.Step)
			}
		}
		// A rank whose Bubble passed its Not Overlapped has its problem already
		// (receivesBesideCompute); its other steps' figures are lower bounds too.
		if len(steps) == 0 || slices.ContainsFunc(rr.Problems, func(p string) bool { return strings.Contains(p, receivesBesideComputeText) }) {
			continue
		}
		rr.Incomplete = true
		p := fmt.Sprintf("%s (%s): step(s) %s: its receives belong to the context-parallel group %s, whose ring runs them beside the attention, yet the profiler counts their time as Bubble (%.3f µs in step %d) and takes it off the exposed communication: Not Overlapped − Bubble (%.3f µs) is then only a lower bound of the exposed time, which is at most %.3f µs; a device timeline measures it",
			rr.Dir, rr.Source, ranklist.Format(steps), group, units.Us(first.BubbleNs), first.Step,
			units.Us(first.ExposedCommNs()), units.Us(min(first.CommNotOverlappedNs, first.StageNs)))
		rr.Problems = append(rr.Problems, p)
		warnings = append(warnings, fmt.Sprintf("rank %d: %s", rr.Rank, p))
	}
	return warnings
}

// unlistedProblems are the ranks' problems that the warnings do not list yet ("rank
// N: ..."), those the analysis found itself (a step marker missing, no step at all):
// the reports point to the warnings for what made the input incomplete.
func unlistedProblems(ranks []RankResult, warnings []string) []string {
	listed := map[string]bool{}
	for _, w := range warnings {
		listed[w] = true
	}
	var out []string
	for _, rr := range ranks {
		for _, p := range rr.Problems {
			if w := fmt.Sprintf("rank %d: %s", rr.Rank, p); !listed[w] {
				listed[w] = true
				out = append(out, w)
			}
		}
	}
	return out
}

// receivesBesideComputeText is the words of receivesBesideCompute's problem that
// flagRingReceivesInSummaries looks for, not to say it twice.
const receivesBesideComputeText = "receives ran beside computation"

// unknownDataTypes says which data types of a rank's ops have no element size that
// hcclprof knows, "" when none: those ops' sizes, bandwidths and checks are unknown,
// which a data type newer than this hcclprof would otherwise leave unexplained.
func unknownDataTypes(r *profile.Rank) string {
	var ops map[string]int
	for _, op := range r.CommOps {
		if dt := strings.TrimSpace(op.DataType); dt != "" && profile.DataTypeSize(dt) == 0 {
			if ops == nil {
				ops = map[string]int{}
			}
			ops[dt]++
		}
	}
	if len(ops) == 0 {
		return ""
	}
	return fmt.Sprintf("rank %d: data type %s has no element size hcclprof knows: those ops' sizes and bandwidths are unknown",
		r.Rank, byName(ops, func(n int) string { return fmt.Sprintf("%d ops", n) }))
}

// dataTaskWarnings reads a rank's HCCL tasks once for what the links and the time
// split would miss without a word:
//
//   - task names that carry bytes but are not a type read as moving data: in every
//     real profile only Memcpy, Reduce_Inline and RDMASend carry bytes, and a type a
//     newer HCCL adds would drop out of the links and the split;
//   - data tasks (Memcpy, Reduce_Inline, RDMASend) without a size or a transport: every
//     real profile gives both, and a profiler that names them otherwise (a renamed
//     size(Byte) or transport type argument) left every transfer out of the links and
//     the size checks, which then read "nothing to examine".
func dataTaskWarnings(r *profile.Rank) []string {
	type seen struct {
		tasks int
		bytes int64
	}
	var unread map[string]seen
	var dataTasks, noSize, noTransport int
	for i := range r.CommTasks {
		t := &r.CommTasks[i]
		switch taskKindOf(t.Name) {
		case kindMemcpy, kindReduceInline, kindRDMASend:
			dataTasks++
			if t.SizeBytes <= 0 {
				noSize++
			}
			if t.TransportType == "" {
				noTransport++
			}
		case kindOther:
			if t.SizeBytes <= 0 {
				continue
			}
			if unread == nil {
				unread = map[string]seen{}
			}
			n := unread[t.Name]
			n.tasks++
			n.bytes += t.SizeBytes
			unread[t.Name] = n
		}
	}
	var out []string
	if len(unread) > 0 {
		out = append(out, fmt.Sprintf("rank %d: HCCL tasks %s carry bytes but are not a type hcclprof reads as moving data (Memcpy, Reduce_Inline, RDMASend): they are not in the links or the time split",
			r.Rank, byName(unread, func(n seen) string { return fmt.Sprintf("%d tasks, %d bytes", n.tasks, n.bytes) })))
	}
	var missing []string
	if noSize > 0 {
		missing = append(missing, fmt.Sprintf("%d have no size", noSize))
	}
	if noTransport > 0 {
		missing = append(missing, fmt.Sprintf("%d have no transport type", noTransport))
	}
	if len(missing) > 0 {
		out = append(out, fmt.Sprintf("rank %d: of its %d HCCL data tasks (Memcpy, Reduce_Inline, RDMASend), %s: those are in no link, no bandwidth and no size check",
			r.Rank, dataTasks, strings.Join(missing, " and ")))
	}
	return out
}

// missingTaskRows says when a rank profiled at Level1 or Level2 has HCCL ops on its
// timeline but no HCCL task rows, "" otherwise: those levels record the tasks (both
// real Level1 samples, text and db, have them), so their absence is data lost (a db
// without its COMMUNICATION_TASK_INFO table read as a Level0 run, without a word).
func missingTaskRows(r *profile.Rank) string {
	level := r.Info.ProfilerLevel
	if level != "Level1" && level != "Level2" || !r.HasTimeline || r.CommOpsSource != "timeline" || len(r.CommOps) == 0 || len(r.CommTasks) > 0 {
		return ""
	}
	return fmt.Sprintf("rank %d: profiled at %s, its timeline has %d HCCL ops but no HCCL task rows, which that level records: links, transfer times and size checks come from the profiler's per-op totals only",
		r.Rank, level, len(r.CommOps))
}

// opsWithoutProfilerRows says how many of a rank's ops its profiler's per-op analysis
// (communication.json, analysis.db) has no row for, when it has rows for others, ""
// otherwise. In every real profile it lists every op of the timeline: a file cut
// short, or one from another run, would otherwise give some ops the recomputed split
// and the rest the profiler's without a word.
func opsWithoutProfilerRows(r *profile.Rank, ops []OpStat) string {
	if len(r.CommStats) == 0 || r.CommOpsSource != "timeline" {
		return "" // no per-op analysis, or the ops are its own rows
	}
	missing := 0
	example := ""
	for i := range ops {
		if ops[i].Source != "profiler" {
			if missing++; missing == 1 {
				example = ops[i].Name
			}
		}
	}
	if missing == 0 {
		return ""
	}
	return fmt.Sprintf("rank %d: %d of its %d timeline ops (the first %s) have no row in the profiler's per-op analysis (communication.json or analysis.db), which has %d: their time split is recomputed from the HCCL tasks where it can be; the files may be cut or from different runs",
		r.Rank, missing, len(ops), example, len(r.CommStats))
}

// byName lists what m counts, by name in order: "a" (what), "b" (what).
func byName[V any](m map[string]V, what func(V) string) string {
	parts := make([]string, 0, len(m))
	for _, name := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%q (%s)", name, what(m[name])))
	}
	return strings.Join(parts, ", ")
}

// flagRanksWithoutSteps makes incomplete a rank read without error but with no step
// to measure (or none left by SkipSteps) beside ranks that have steps: its figures are
// missing from every average, which the report must say as the exit code does (the
// JSON read "incomplete": false while the command exited 3).
// flagRanksMissingSteps makes incomplete a rank whose timeline has no marker for a step
// that other ranks have, between two steps of its own: a device window runs from one
// marker to the next, so the step before took in the missing one's work (a rank whose
// trace lost ProfilerStep#11 read a step 10 of twice its length, and where the
// profiler's own step figures were absent nothing said so). Steps that are their host
// windows (ClipToStepWindows: Kineto) are not stretched by a missing marker.
func flagRanksMissingSteps(ranks []RankResult) {
	var all []int
	for _, rr := range ranks {
		for _, st := range rr.Steps {
			all = append(all, st.Step)
		}
	}
	slices.Sort(all)
	all = slices.Compact(all)
	for i := range ranks {
		rr := &ranks[i]
		lo, hi, ok := missingStepRange(*rr)
		if !ok {
			continue
		}
		have := make(map[int]bool, len(rr.Steps))
		for _, st := range rr.Steps {
			have[st.Step] = true
		}
		var missing []int
		for _, step := range all {
			if step > lo && step < hi && !have[step] {
				missing = append(missing, step)
			}
		}
		if len(missing) > 0 {
			rr.Incomplete = true
			rr.Problems = append(rr.Problems, fmt.Sprintf("%s: no ProfilerStep marker for step(s) %s, which other ranks have, between steps of its own: the step before each took in its work",
				rr.Dir, ranklist.Format(missing)))
		}
	}
}

// missingStepRange is the span of a rank's steps in which flagRanksMissingSteps looks
// for missing markers, exclusive; ok is false for a rank it does not look at.
func missingStepRange(rr RankResult) (lo, hi int, ok bool) {
	if rr.Source != SourceTimeline || rr.ClipToStepWindows || len(rr.Steps) < 2 {
		return 0, 0, false
	}
	lo, hi = rr.Steps[0].Step, rr.Steps[0].Step
	for _, st := range rr.Steps {
		lo, hi = min(lo, st.Step), max(hi, st.Step)
	}
	return lo, hi, true
}

// NoStepProblem is the problem of a rank without a step beside ranks that have steps,
// for commands that read ranks without analysing the cluster (summarize) to say it as
// analyze does.
func NoStepProblem(dir string) string {
	return fmt.Sprintf("%s: no step could be measured from its files", dir)
}

func flagRanksWithoutSteps(ranks []RankResult) {
	if !slices.ContainsFunc(ranks, func(rr RankResult) bool { return len(rr.Steps) > 0 }) {
		return // no rank has a step: nothing to analyse, not a partial run
	}
	for i := range ranks {
		if rr := &ranks[i]; len(rr.Steps) == 0 {
			rr.Incomplete = true
			rr.Problems = append(rr.Problems, NoStepProblem(rr.Dir))
		}
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func summarize(ranks []RankResult) Summary {
	var s Summary
	var stage, bubble, notOv, comm, ar, ov int64
	var n int64
	arKnown := true
	stepSet := map[int]bool{}
	for _, r := range ranks {
		if r.Incomplete {
			s.Incomplete = true
		}
		if len(r.Steps) == 0 {
			continue
		}
		s.Ranks++
		for _, st := range r.Steps {
			stepSet[st.Step] = true
			stage += st.StageNs
			bubble += st.BubbleNs
			notOv += st.ExposedCommNs()
			comm += st.CommunicationNs
			ar += st.AllReduceNs
			arKnown = arKnown && !st.AllReduceUnknown
			ov += st.OverlappedNs
			n++
		}
	}
	s.Steps = len(stepSet)
	if n > 0 {
		s.StepTimeNs = stage / n
	}
	s.CommShare = ratio(notOv, stage)
	s.CommTotalShare = ratio(comm, stage+bubble)
	if arKnown {
		r := ratio(ar, stage)
		s.AllReduceShare = &r
	}
	if comm > 0 {
		r := ratio(ov, comm)
		s.OverlapRatio = &r
	}
	return s
}

// AllNCCL reports whether every rank ran NCCL on NVIDIA GPUs (profile.Traits.NCCL):
// what the findings and reports call the devices, and whether HCCL's checks could
// apply.
func (r *Result) AllNCCL() bool {
	for _, rr := range r.Ranks {
		if !rr.NCCL {
			return false
		}
	}
	return len(r.Ranks) > 0
}

// StepNumbers returns the sorted distinct step numbers of a result.
func (r *Result) StepNumbers() []int {
	set := map[int]bool{}
	for _, rr := range r.Ranks {
		for _, s := range rr.Steps {
			set[s.Step] = true
		}
	}
	out := make([]int, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

// StepLabel formats a step number for display ("-" when the run has no steps).
func StepLabel(step int) string {
	if step < 0 {
		return "-"
	}
	return strconv.Itoa(step)
}

// The Sources of msprof-analyze's group records that list the group's members (taken
// from parallel_group_info): the parser's names of the files.
const (
	MsprofAnalyzeGroupsSource   = "communication_group.json"
	MsprofAnalyzeDBGroupsSource = "cluster_analysis.db"
)

// worldSize is the job's world size as the ranks' metadata state it: the
// distributed_args' world_size, else the largest communicator of
// parallel_group_info; 0 when no rank says.
func worldSize(c *profile.Cluster) int {
	n := 0
	for _, r := range c.Ranks {
		if v, ok := r.Metadata.DistributedArgs["world_size"].(float64); ok && v > 0 && v < 1<<31 {
			n = max(n, int(v))
		}
	}
	if n > 0 {
		return n
	}
	for _, r := range c.Ranks {
		for _, g := range r.Metadata.ParallelGroups {
			// Ascend's parallel_group_info lists every member, and so does
			// msprof-analyze's group record that took its members from it.
			if g.Key == "" || g.Source == MsprofAnalyzeGroupsSource || g.Source == MsprofAnalyzeDBGroupsSource {
				n = max(n, len(g.GlobalRanks))
			}
		}
	}
	return n
}

// addGroupsFromOps splits the steps of a rank without a timeline by communicator from
// its ops (the profiler's per-op records): each group's communication is the union of
// its ops' intervals in the step. Without compute intervals the profile does not say
// which op was overlapped: the exposed part is bounded (GroupComm.ExposedMinNs and
// ExposedMaxNs), and ExposedNs takes the step's exposed fraction within the bounds.
func addGroupsFromOps(steps []StepBreakdown, ops []profile.CommOp) {
	for i := range steps {
		st := &steps[i]
		byGroup := map[string][]profile.Interval{}
		var order []string
		var all []profile.Interval
		for _, op := range ops {
			if op.Step != st.Step || op.Step < 0 {
				continue
			}
			if _, ok := byGroup[op.Group]; !ok {
				order = append(order, op.Group)
			}
			byGroup[op.Group] = append(byGroup[op.Group], op.Interval)
			all = append(all, op.Interval)
		}
		sort.Strings(order)
		frac := ratio(st.CommNotOverlappedNs, st.CommunicationNs)
		allNs, stepExposedNs := totalNs(union(all)), st.ExposedCommNs()
		// The step's exposed time is Not Overlapped − Bubble only where the receives
		// (Bubble) ran while nothing computed; beside computation (a context-parallel
		// ring's) it is more, up to Not Overlapped.
		stepExposedMaxNs := stepExposedNs
		if st.BubbleNs > 0 {
			stepExposedMaxNs = min(max(st.CommNotOverlappedNs, 0), max(st.StageNs, 0))
		}
		for _, g := range order {
			comm := totalNs(union(byGroup[g]))
			// What the other groups can add to the exposed time: their ops' time
			// outside this group's, or the profiler's communication outside it where
			// the op records cover less of it.
			othersNs := max(allNs-comm, st.CommunicationNs-comm)
			lo, hi := max(0, stepExposedNs-othersNs), min(comm, stepExposedMaxNs)
			exposed := int64(float64(comm) * frac)
			st.Groups = append(st.Groups, GroupComm{Group: g, CommunicationNs: comm, CommNotOverlappedNs: exposed,
				ExposedNs: min(max(exposed, lo), hi), ExposedMinNs: lo, ExposedMaxNs: hi})
		}
	}
}

// noteSkippedSteps sets SkippedSteps to the steps of skip that some rank had; each
// step of skip that no rank had is a warning, since a note that it was left out
// would be untrue and the step the user meant (a warm-up, numbered otherwise) is
// still in every figure. res.Ranks must be set.
func (res *Result) noteSkippedSteps(sums []*RankSummary, skip []int) {
	if len(skip) == 0 {
		return
	}
	had := map[int]bool{}
	for _, s := range sums {
		for _, st := range s.skipped {
			had[st] = true
		}
	}
	res.SkippedSteps = slices.Sorted(maps.Keys(had))
	steps := "none"
	if kept := res.StepNumbers(); len(kept) > 0 {
		steps = ranklist.Format(kept)
	}
	for _, st := range skip {
		if !had[st] {
			res.Warnings = append(res.Warnings, fmt.Sprintf("--skip-steps %d: no rank has step %d (the steps analysed: %s): nothing was left out for it", st, st, steps))
		}
	}
}

// computeDType is the input data type of most compute time over the ranks, and its
// share of the time whose type is known.
func computeDType(sums []*RankSummary) (string, float64) {
	byType := map[string]int64{}
	var total int64
	for _, s := range sums {
		if s == nil {
			continue
		}
		for dt, ns := range s.dtypeNs {
			byType[dt] += ns
			total += ns
		}
	}
	best := ""
	for _, dt := range slices.Sorted(maps.Keys(byType)) {
		if best == "" || byType[dt] > byType[best] {
			best = dt
		}
	}
	if total <= 0 {
		return "", 0
	}
	return best, float64(byType[best]) / float64(total)
}
