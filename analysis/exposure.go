package analysis

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hcclprof/hcclprof/internal/stats"
	"github.com/hcclprof/hcclprof/profile"
)

// Exposure splits a run's exposed communication by what the ops spent it on: moving
// data, waiting for a peer (by whom they waited for), and the rest. It answers why the
// communication is exposed; advisor.Diagnose reads it for the leading cause.
//
// Each op's elapse E splits into
//   - moving: OpStat.MovingNs (the profiler's Transit, or its transports' time);
//   - waiting for a profiled peer: OpStat.CrossWaitNs (E less the fastest profiled
//     rank's E for the same op), capped at E − moving; it is pipeline waiting when the
//     op is point-to-point or its group joins ranks of different pipeline stages, and
//     waiting for a straggler otherwise;
//   - waiting for ranks that were not profiled: in a group some of whose members were
//     not profiled, or have no profile of the op's step (groupStepGaps), the rest of
//     E − moving. The fastest profiled rank may itself have waited for an unprofiled
//     one, and nothing measured separates that wait from the op's own
//     synchronisation, so this part is an upper bound;
//   - the rest: synchronisation, handshakes and idle time within the op (in a group
//     whose members were all profiled, or of one rank).
//
// A rank-step's exposed communication (Communication(Not Overlapped), less the receive
// time the profiler counts as Bubble) is shared among its ops' parts in proportion to
// them: the profile says how much of the step's communication was exposed, not which
// part of each op. Exposed time beyond the elapses of the step's ops is unaccounted:
// no op record covers it (a rank whose steps come from step_trace_time.csv without
// trace_view.json, communication.json or kernel_details.csv), so nothing says whether
// it moved data or waited. The parts of each rank-step sum to its exposed time, so the
// shares sum to comm_share.
type Exposure struct {
	// Shares of Σ Stage over ranks and steps (comm_share's weighting).
	TransferShare       float64
	WaitShare           float64 // StragglerWaitShare + PipelineWaitShare + UnprofiledWaitShare
	StragglerWaitShare  float64
	PipelineWaitShare   float64
	UnprofiledWaitShare float64
	OtherShare          float64 // within the ops: synchronisation, handshakes, idle
	// UnaccountedShare is exposed time no op record covers: the other shares are then
	// lower bounds.
	UnaccountedShare float64
	// OpsKnown is false when no rank had per-op records: the split is then all
	// OtherShare and says nothing.
	OpsKnown bool
	// SplitKnown is set when some op has the profiler's time split (transit, wait):
	// kernel_details.csv rows have only elapses, so moving data cannot be told from
	// the op's own waiting. SplitAll is set when every op has it: only then are
	// TransferShare and WaitShare figures rather than lower bounds.
	SplitKnown, SplitAll bool
	Ranks                []RankExposure
	// Unprofiled lists the groups some of whose members were not profiled.
	Unprofiled []UnprofiledGroup
	// StageNs and BubbleNs are Σ Stage and Σ Bubble over the ranks and steps.
	StageNs, BubbleNs int64
	// FillDrainNs is the part of the pipelines' receive time counted as Bubble that
	// their fill and drain cost: what more micro-batches would remove
	// (pipelineFillDrain). The rest of the pipeline's waiting
	// (PipelinePerMicrobatchNs) recurs every micro-batch. FillDrainKnown is false
	// where nothing tells the two apart: no Bubble (batchSendRecv's traffic). In a
	// run without step markers, whose one step holds the receives of every training
	// step (each with its own fill), the fills are told by their size.
	FillDrainNs    int64
	FillDrainKnown bool
}

// FillDrainShare is the pipelines' fill and drain over their stages' whole span,
// Σ (Stage + Bubble), PipelineShare's denominator (and the generator's truth's).
// Like PipelinePerMicrobatchNs, a figure only where FillDrainKnown (0 elsewhere:
// callers test FillDrainKnown first).
func (e Exposure) FillDrainShare() float64 {
	if d := e.StageNs + e.BubbleNs; d > 0 {
		return float64(e.FillDrainNs) / float64(d)
	}
	return 0
}

// PipelinePerMicrobatchNs is the pipeline's waiting that recurs every micro-batch:
// its waiting (PipelineWaitNs) less the fill and drain. Each point-to-point transfer
// on the critical path, and each wait for a neighbour's, adds it per micro-batch,
// and more micro-batches add more of it.
func (e Exposure) PipelinePerMicrobatchNs() int64 {
	if !e.FillDrainKnown {
		return 0 // not split: not all of it recurs
	}
	return max(e.PipelineWaitNs()-e.FillDrainNs, 0)
}

// PipelinePerMicrobatchShare is PipelinePerMicrobatchNs over Σ (Stage + Bubble).
func (e Exposure) PipelinePerMicrobatchShare() float64 {
	if d := e.StageNs + e.BubbleNs; d > 0 {
		return float64(e.PipelinePerMicrobatchNs()) / float64(d)
	}
	return 0
}

// PipelineShare is the pipeline's waiting over its stages' whole span: the exposed
// pipeline waits and the receive time the profiler counts as Bubble, over Σ (Stage +
// Bubble), since Stage excludes Bubble. 0 when the run has no pipeline waiting.
func (e Exposure) PipelineShare() float64 {
	if d := e.StageNs + e.BubbleNs; d > 0 {
		return float64(e.PipelineWaitNs()) / float64(d)
	}
	return 0
}

// PipelineWaitNs is the pipeline's waiting in ns: its exposed waits and its Bubble.
func (e Exposure) PipelineWaitNs() int64 {
	return int64(e.PipelineWaitShare*float64(e.StageNs)) + e.BubbleNs
}

// RankExposure is one rank's split, summed over its steps, in ns.
type RankExposure struct {
	Rank                                int
	StageNs, CommunicationNs, ExposedNs int64
	BubbleNs                            int64 // receive time the profiler counts outside Stage
	TransferNs, StragglerWaitNs         int64
	PipelineWaitNs, UnprofiledWaitNs    int64
	OtherNs                             int64
	UnaccountedNs                       int64 // exposed time beyond its ops' elapses
	OpsNs                               int64 // Σ elapse of the rank's ops in its steps
	PipelineStage                       int   // its stage in the first pipeline it belongs to; -1 when none
}

// WaitNs is the rank's exposed waiting, all causes.
func (r RankExposure) WaitNs() int64 {
	return r.StragglerWaitNs + r.PipelineWaitNs + r.UnprofiledWaitNs
}

// UnprofiledGroup is a communicator some of whose members were not profiled.
type UnprofiledGroup struct {
	Group   string
	Kind    string
	Size    int
	Missing []int // global ranks not profiled, when the group's members are known
	// MissingCount is Size − profiled members (len(Missing) when the members are known).
	MissingCount int
	// AtLeast says MissingCount is a lower bound: the group's size is known only from
	// the ranks its tasks name, or a profiled rank without op records may be a member.
	AtLeast bool
	// StepGapRanks are profiled members with no profile of some steps in which the
	// group's ops ran (GapSteps): its collectives of those steps may have waited for
	// them unseen (the ranks profiled different steps).
	StepGapRanks, GapSteps []int
}

// MovingCrossRank is OpStat.MovingSource of an NCCL kernel whose moving time was
// read from the ranks' arrivals (arrivalSplit).
const MovingCrossRank = "cross-rank arrival (Kineto: no NCCL task rows)"

// arrivalSplit gives the ops of ranks whose ops are opaque (profile.Traits.OpaqueOps:
// Kineto's NCCL kernels), which hold no task that moves data or waits, a moving time from the ranks' arrivals: of the kernel's elapse, its
// cross-rank wait (OpStat.CrossWaitNs: how long it waited for the group's last rank
// to arrive) is waiting, and the rest, the last rank's own elapse, moves data. Only
// where the wait is measured and every member of the op's group was profiled in its
// step: else the fastest profiled member may itself have waited for one that was
// not, and the rest is no transfer. It returns how many such kernels were left
// without a split, and why.
func arrivalSplit(ops []OpStat, ranks []RankResult, groups []Group, colls []Collective) (left int, why string) {
	opaque := map[int]bool{}
	profiled := map[int]bool{}
	for _, r := range ranks {
		profiled[r.Rank] = true
		opaque[r.Rank] = r.OpaqueOps
	}
	gaps := groupStepGaps(ops, ranks)
	incomplete := map[string]bool{}
	for _, g := range unprofiledGroups(ops, groups, colls, profiled, gaps) {
		incomplete[g.Group] = g.MissingCount > 0
	}
	var unmatched, unprofiled, total int
	for i := range ops {
		o := &ops[i]
		if !opaque[o.Rank] || o.Source != "none" || o.MovingSource != "" || o.ElapseNs <= 0 {
			continue
		}
		total++
		switch {
		case incomplete[o.Group] || len(gaps[o.Group][o.Step]) > 0:
			unprofiled++
		case !o.CrossWaitKnown:
			unmatched++
		default:
			o.MovingNs = o.ElapseNs - min(max(o.CrossWaitNs, 0), o.ElapseNs)
			o.MovingSource = MovingCrossRank
		}
	}
	var reasons []string
	if unprofiled > 0 {
		reasons = append(reasons, fmt.Sprintf("%d in groups some of whose members were not profiled (in their step)", unprofiled))
	}
	if unmatched > 0 {
		reasons = append(reasons, fmt.Sprintf("%d not matched on another rank (ran on one profiled rank, or the ranks ran different numbers of them)", unmatched))
	}
	if len(reasons) == 0 {
		return 0, ""
	}
	return unprofiled + unmatched, fmt.Sprintf("%d of %d NCCL kernels (Kineto: no task rows) have no split into moving data and waiting, so exposed_transfer_share and exposed_wait_share are null: "+
		"%s; the split is read from the ranks' arrivals, and needs every member of a kernel's group profiled", unprofiled+unmatched, total, strings.Join(reasons, ", "))
}

// exposure computes the split from the merged ops.
func exposure(ops []OpStat, ranks []RankResult, groups []Group, colls []Collective, pls []Pipeline) Exposure {
	var out Exposure
	profiled := map[int]bool{}
	for _, r := range ranks {
		profiled[r.Rank] = true
	}
	gaps := groupStepGaps(ops, ranks)
	unprofiled := unprofiledGroups(ops, groups, colls, profiled, gaps)
	incomplete := map[string]bool{}
	for _, g := range unprofiled {
		incomplete[g.Group] = g.MissingCount > 0
	}
	out.Unprofiled = unprofiled
	crossStage := crossStageGroups(groups, pls)
	stageOf := map[int]int{}
	for _, pl := range pls {
		for i, r := range pl.Ranks {
			if _, ok := stageOf[r]; !ok {
				stageOf[r] = i
			}
		}
	}
	byStep := splitOpsByStep(&out, ops, ranks, incomplete, crossStage, gaps)
	exposureOfRanks(&out, ranks, byStep, stageOf)
	out.FillDrainNs, out.FillDrainKnown = pipelineFillDrain(ops, ranks, crossStage, incomplete, gaps)
	out.FillDrainNs = min(out.FillDrainNs, out.PipelineWaitNs())
	return out
}

// pipelineFillDrain is the part of the pipelines' waiting that the fill and drain
// cost, summed over the ranks and steps. Under GPipe a stage waits for the fill once
// per direction and step: its first forward receive, for the stages before it to
// fill, and its first backward one, for the stages after it to turn around. Under
// 1F1B each of its cool-down receives waits for the next stage's forward, and the
// send opening its steady state waits for the next stage to turn around (exposed
// communication, not Bubble, where sends and receives are separate ops). Every
// other receive waits about the same, micro-batch after micro-batch: its transfer,
// and the neighbour's own transfers on the critical path. Each receive recurs for
// the rank-step's typical (typicalTransfer), or its own transfer (MovingNs) where
// that is longer; the rest of the step's receive time is fill and drain. Summed over
// the step, not receive by receive, so that the jitter of the receives below the
// typical offsets the jitter of those above it, which otherwise would read as a
// bubble growing with m. Only transfers of pipeline groups (crossStage) in steps
// with a Bubble count; a step's receives' part is within [0, its Bubble], its sends'
// within their pipeline waits (incomplete and gaps as splitOpsByStep reads them).
// known is false when no receive counted, or over a collection without step markers
// (its one step, -1, spans the collection) where some rank's receives do not tell
// their typical by size.
func pipelineFillDrain(ops []OpStat, ranks []RankResult, crossStage, incomplete map[string]bool, gaps map[string]map[int][]int) (fillDrainNs int64, known bool) {
	bubble, computing := map[exposureRankStep]int64{}, map[exposureRankStep]int64{}
	for _, r := range ranks {
		for _, st := range r.Steps {
			if st.BubbleNs > 0 {
				bubble[exposureRankStep{r.Rank, st.Step}] = st.BubbleNs
				computing[exposureRankStep{r.Rank, st.Step}] = st.ComputingNs
			}
		}
	}
	recvs, sends := map[exposureRankStep][]transferTime{}, map[exposureRankStep][]transferTime{}
	sendWaitNs := map[exposureRankStep]float64{}
	for _, o := range ops {
		k := exposureRankStep{o.Rank, o.Step}
		if o.ElapseNs <= 0 || bubble[k] == 0 || !crossStage[o.Group] || !profile.IsP2P(o.Name) {
			continue
		}
		t := transferTime{o.ElapseNs, min(max(o.MovingNs, 0), o.ElapseNs)}
		if profile.IsReceiveOp(o.Name, o.Type) {
			recvs[k] = append(recvs[k], t)
			continue
		}
		_, cw, rest := splitOp(o)
		if !o.CrossWaitKnown || incomplete[o.Group] || len(gaps[o.Group][o.Step]) > 0 {
			cw += rest // as splitOpsByStep: the wait for the other stage
		}
		sends[k] = append(sends[k], t)
		sendWaitNs[k] += cw
	}
	var total int64
	for k, ts := range recvs {
		typical, ok := typicalTransfer(ts, recurringLimitNs(computing[k], len(ts), sends[k]), k.step >= 0)
		if !ok {
			return 0, false
		}
		total += min(max(fillBeyond(ts, typical), 0), bubble[k])
	}
	// A send waits for its peer to receive: 1F1B's first steady-state call waits there
	// for the next stage to turn around (unbatched, the send goes first), its fill and
	// drain outside the Bubble, within the sends' waits. Neither a median nor a split
	// by size tells it from what recurs: a middle stage's forward and backward sends
	// recur at two levels (0.1 and 2.8 ms on a balanced GPipe job of 64
	// micro-batches), and with few micro-batches a third or half of the sends turn
	// around. A send fills where it waits recurringComputeShare of the rank's compute
	// per send or more (a turn-around waits for the next stage's compute of a
	// micro-batch or more), for what it took beyond the median of the others.
	for k, ts := range sends {
		lineNs := recurringComputeShare * float64(computing[k]) / float64(len(ts))
		var others []float64
		for _, t := range ts {
			if float64(t.elapseNs-t.movingNs) < lineNs {
				others = append(others, float64(t.elapseNs))
			}
		}
		var typical int64
		if len(others) > 0 {
			typical = int64(stats.Median(others))
		}
		var fill int64
		for _, t := range ts {
			if float64(t.elapseNs-t.movingNs) >= lineNs {
				fill += t.elapseNs - max(t.movingNs, typical)
			}
		}
		total += min(fill, int64(sendWaitNs[k]))
	}
	return total, len(recvs) > 0
}

// transferTime is a pipeline send's or receive's elapse and the part of it moving
// data.
type transferTime struct{ elapseNs, movingNs int64 }

// fillBeyond is what the transfers took beyond recurring: each recurs for the
// typical or its own transfer, whichever is longer.
func fillBeyond(ts []transferTime, typicalNs int64) int64 {
	var fill int64
	for _, t := range ts {
		fill += t.elapseNs - max(t.movingNs, typicalNs)
	}
	return fill
}

// elapsesOf is the transfers' elapses, sorted.
func elapsesOf(ts []transferTime) []float64 {
	elapses := make([]float64, len(ts))
	for i, t := range ts {
		elapses[i] = float64(t.elapseNs)
	}
	sort.Float64s(elapses)
	return elapses
}

// recurringLimitNs is the longest a recurring receive of a rank-step can be: a small
// part of the rank's compute per receive (recurringComputeShare of computingNs over
// its receives), or a few of the transfers its sends took, each moving as much as a
// receive (recurringTransfers times their median moving time): with large
// activations over RoCE a receive recurs at its transfer and its neighbour's, which
// a micro-batch's compute no longer dwarfs (32 MiB, 4 stages: the typical receive
// over 0.2 of the compute per receive, and msprof's output, where receives say no
// moving time, kept the whole waiting for the bubble).
func recurringLimitNs(computingNs int64, receives int, sends []transferTime) float64 {
	limit := recurringComputeShare * float64(computingNs) / float64(max(receives, 1))
	if len(sends) == 0 {
		return limit
	}
	moving := make([]float64, len(sends))
	for i, t := range sends {
		moving[i] = float64(t.movingNs)
	}
	return max(limit, recurringTransfers*stats.Median(moving))
}

// typicalTransfer is the typical of a rank-step's pipeline transfers: told by size
// (typicalReceive); else, in a marked step, the median with the two longest left
// out, or 0 (each its own transfer) with two or fewer. Over a collection without
// step markers whose sizes do not part (recurring receives at several levels, one a
// step: 0.05, 0.19, 1.4 and 9 ms below drains of 34–40 ms and fills of 72–242), the
// median of all where it is a recurring receive's size (at most recurringNs,
// recurringLimitNs; the fills are at most half the receives with two or more
// micro-batches); ok is false where it is not (one micro-batch, every receive a
// fill; a slower neighbour).
func typicalTransfer(ts []transferTime, recurringNs float64, marked bool) (typicalNs int64, ok bool) {
	elapses := elapsesOf(ts)
	if typical, split := typicalReceive(elapses, recurringNs); split {
		return typical, true
	}
	switch {
	case !marked:
		typical := stats.MedianSorted(elapses)
		if len(elapses) < 2 || typical > recurringNs {
			return 0, false
		}
		return int64(typical), true
	case len(elapses) > 2:
		return int64(stats.MedianSorted(elapses[:len(elapses)-2])), true
	}
	return 0, true
}

// typicalReceive is the typical receive of a rank-step's pipeline receives (elapses
// sorted ascending; recurringNs the longest a recurring one can be, recurringLimitNs),
// told by size; split is false where the sizes do not tell it. The fill and drain
// wait for a stage's
// compute of a micro-batch or more: GPipe's first receive of each direction, and
// 1F1B's cool-down receives besides, each waiting for the next stage's forward
// (p−s−1 of them, most of the receives with few micro-batches). A recurring receive
// waits for its transfer and its neighbour's, a small part of the rank's own
// compute between two receives. The receives split at the largest ratio between
// consecutive elapses (not at the best separation of all of them: the recurring
// receives of different steps without step markers sit at different levels, 0.9,
// 1.3 and 2.1 ms, whose split a fill's 47 ms outweighs only as a ratio). The lower
// class recurs, and its median is the typical, when the upper class begins at
// fillSeparation times that median or more and the median is at most recurringNs.
// Otherwise the sizes do
// not tell: every receive a fill (one micro-batch: a middle stage's forward fills,
// waiting for the stages before, and its backward ones, for the stages after to
// compute both ways, are each about a micro-batch's compute or more); a slower
// neighbour (an imbalanced stage, a straggler), whose wait recurs every
// micro-batch and is a large part of it; fills lost among slow transfers; or the
// jitter of the recurring receives alone. Over a collection without step markers,
// whose one step holds a fill of every training step, as many as it had steps,
// which it does not say, the sizes are all there is.
func typicalReceive(elapses []float64, recurringNs float64) (typicalNs int64, split bool) {
	n := len(elapses)
	if n < 2 || elapses[0] <= 0 {
		return 0, false
	}
	at := 1 // the fills are the upper class [at, n)
	for i := 2; i < n; i++ {
		if elapses[i]/elapses[i-1] > elapses[at]/elapses[at-1] {
			at = i
		}
	}
	typical := stats.MedianSorted(elapses[:at])
	if elapses[at] < fillSeparation*typical || typical > recurringNs {
		return 0, false
	}
	return int64(typical), true
}

// fillSeparation is how much longer than the typical receive the shortest fill is
// at least, and recurringComputeShare how much of the rank's compute per receive
// the typical is at most, for typicalReceive to tell the fills apart. On
// the generated jobs written as msprof's output (2 to 4 stages, 1 to 64
// micro-batches, every stage or one profiled), the fills begin at 9.5 times the
// recurring receives or more, which are at most 0.092 of the compute per receive
// (16 MiB over RoCE); with one micro-batch, where every receive fills, the backward
// fills are at most 3 times the forward ones, and the shorter ones at least 0.31 of
// the compute per receive.
const (
	fillSeparation        = 4
	recurringComputeShare = 0.2
	recurringTransfers    = 4
)

// exposureRankStep keys one rank's step.
type exposureRankStep struct{ rank, step int }

// exposureParts are one rank's step's ops (their summed time) split into moving data,
// the waits (for a straggler, the other pipeline stage, unprofiled ranks) and the
// rest.
type exposureParts struct{ ops, moving, straggler, pipeline, unprofiled, other, unaccounted float64 }

// splitOpsByStep splits each op's time into moving data and the waits, summed per
// rank and step, and says on out whether the ops, and their split, are known.
// incomplete marks the groups with members not profiled, crossStage those across
// pipeline stages; gaps the steps a group's profiled members lack.
func splitOpsByStep(out *Exposure, ops []OpStat, ranks []RankResult, incomplete, crossStage map[string]bool, gaps map[string]map[int][]int) map[exposureRankStep]*exposureParts {
	byStep := map[exposureRankStep]*exposureParts{}
	withBubble := map[exposureRankStep]bool{}
	for _, r := range ranks {
		for _, st := range r.Steps {
			if st.BubbleNs > 0 {
				withBubble[exposureRankStep{r.Rank, st.Step}] = true
			}
		}
	}
	for _, o := range ops {
		if o.ElapseNs <= 0 {
			continue
		}
		if profile.IsReceiveOp(o.Name, o.Type) && withBubble[exposureRankStep{o.Rank, o.Step}] {
			// Its time is the step's Bubble, outside the exposed communication.
			out.OpsKnown = true
			continue
		}
		if !out.OpsKnown {
			out.SplitAll = true
		}
		out.OpsKnown = true
		split := o.Source != "none" || o.MovingSource == MovingCrossRank
		out.SplitKnown = out.SplitKnown || split
		out.SplitAll = out.SplitAll && split
		p := byStep[exposureRankStep{o.Rank, o.Step}]
		if p == nil {
			p = &exposureParts{}
			byStep[exposureRankStep{o.Rank, o.Step}] = p
		}
		e := float64(o.ElapseNs)
		moving, cw, rest := splitOp(o)
		p.ops += e
		p.moving += moving
		acrossStages := crossStage[o.Group] || profile.IsP2P(o.Name)
		if acrossStages {
			p.pipeline += cw
		} else {
			p.straggler += cw
		}
		switch {
		case crossStage[o.Group] && profile.IsP2P(o.Name) && !o.CrossWaitKnown:
			// A transfer between stages whose wait no other rank's op measures
			// (NCCL's kernels; HCCL's op of a two-stage group): what is not moving
			// data waits for the other stage, a send for its receiver.
			p.pipeline += rest
		case !incomplete[o.Group] && len(gaps[o.Group][o.Step]) == 0:
			p.other += rest
		case acrossStages:
			// A peer of another stage was not profiled: what is not moving data is
			// the wait for that stage, whose lateness is the pipeline's.
			p.pipeline += rest
		default:
			p.unprofiled += rest
		}
	}
	return byStep
}

// splitOp splits an op's elapse into moving data, the wait measured against the
// group's fastest rank (CrossWaitNs) and the rest.
func splitOp(o OpStat) (moving, crossWait, rest float64) {
	moving = float64(min(max(o.MovingNs, 0), o.ElapseNs))
	rest = float64(o.ElapseNs) - moving
	crossWait = min(float64(max(o.CrossWaitNs, 0)), rest)
	return moving, crossWait, rest - crossWait
}

// exposureOfRanks scales each step's split to its exposed communication, sums it
// per rank (out.Ranks, each with its pipeline stage from stageOf) and gives the
// run's shares of the stage.
func exposureOfRanks(out *Exposure, ranks []RankResult, byStep map[exposureRankStep]*exposureParts, stageOf map[int]int) {
	var stage float64
	var sums exposureParts
	for _, r := range ranks {
		re := RankExposure{Rank: r.Rank, PipelineStage: -1}
		if s, ok := stageOf[r.Rank]; ok {
			re.PipelineStage = s
		}
		for _, st := range r.Steps {
			exposed := st.ExposedCommNs()
			re.StageNs += st.StageNs
			re.BubbleNs += st.BubbleNs
			out.StageNs += st.StageNs
			out.BubbleNs += st.BubbleNs
			re.CommunicationNs += st.CommunicationNs
			re.ExposedNs += exposed
			stage += float64(st.StageNs)
			p := byStep[exposureRankStep{r.Rank, st.Step}]
			if p == nil {
				p = &exposureParts{}
			}
			scale := 1.0
			if p.ops > float64(exposed) {
				scale = float64(exposed) / p.ops
			}
			moving, straggler := p.moving*scale, p.straggler*scale
			pipeline, unprof := p.pipeline*scale, p.unprofiled*scale
			unaccounted := max(float64(exposed)-p.ops, 0) // scale < 1 otherwise
			other := float64(exposed) - moving - straggler - pipeline - unprof - unaccounted
			re.OpsNs += int64(p.ops)
			re.TransferNs += int64(moving)
			re.StragglerWaitNs += int64(straggler)
			re.PipelineWaitNs += int64(pipeline)
			re.UnprofiledWaitNs += int64(unprof)
			re.OtherNs += int64(max(other, 0))
			re.UnaccountedNs += int64(unaccounted)
			sums.moving += moving
			sums.straggler += straggler
			sums.pipeline += pipeline
			sums.unprofiled += unprof
			sums.other += max(other, 0)
			sums.unaccounted += unaccounted
		}
		out.Ranks = append(out.Ranks, re)
	}
	if stage > 0 {
		out.TransferShare = sums.moving / stage
		out.StragglerWaitShare = sums.straggler / stage
		out.PipelineWaitShare = sums.pipeline / stage
		out.UnprofiledWaitShare = sums.unprofiled / stage
		out.WaitShare = out.StragglerWaitShare + out.PipelineWaitShare + out.UnprofiledWaitShare
		out.OtherShare = sums.other / stage
		out.UnaccountedShare = sums.unaccounted / stage
	}
}

// unprofiledGroups lists the groups with members that were not profiled: from the
// members parallel_group_info names, else from the group's size (the collectives
// table's, which reads communication_matrix.json too) against the ranks seen in it;
// and the groups with profiled members that lack some of its steps (gaps).
func unprofiledGroups(ops []OpStat, groups []Group, colls []Collective, profiled map[int]bool, gaps map[string]map[int][]int) []UnprofiledGroup {
	size := map[string]int{}
	atLeast := map[string]bool{}
	for _, c := range colls {
		if c.GroupSizeSource != profiledRanksSource {
			size[c.Group] = max(size[c.Group], c.GroupSize)
			atLeast[c.Group] = atLeast[c.Group] || IsLowerBound(c.GroupSizeSource)
		}
	}
	seen := map[string]map[int]bool{}
	withOps := map[int]bool{}
	for _, o := range ops {
		if seen[o.Group] == nil {
			seen[o.Group] = map[int]bool{}
		}
		seen[o.Group][o.Rank] = true
		withOps[o.Rank] = true
	}
	opless := 0 // profiled ranks without op records: members of any group, for all we know
	for r := range profiled {
		if !withOps[r] {
			opless++
		}
	}
	var out []UnprofiledGroup
	for _, g := range groups {
		if len(seen[g.Key]) == 0 {
			continue // no op of this rank set ran in it: nothing waited on it
		}
		ug := UnprofiledGroup{Group: g.Key, Kind: g.Kind}
		if !g.Inferred {
			ug.Size = len(g.Ranks)
			for _, r := range g.Ranks {
				if !profiled[r] {
					ug.Missing = append(ug.Missing, r)
				}
			}
			ug.MissingCount = len(ug.Missing)
		} else {
			ug.Size, ug.AtLeast = size[g.Key], atLeast[g.Key] || opless > 0
			ug.MissingCount = max(0, ug.Size-len(seen[g.Key])-opless)
		}
		for step, absent := range gaps[g.Key] {
			ug.GapSteps = append(ug.GapSteps, step)
			ug.StepGapRanks = append(ug.StepGapRanks, absent...)
		}
		slices.Sort(ug.GapSteps)
		slices.Sort(ug.StepGapRanks)
		ug.StepGapRanks = slices.Compact(ug.StepGapRanks)
		if ug.MissingCount > 0 || len(ug.GapSteps) > 0 {
			out = append(out, ug)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Group < out[j].Group })
	return out
}

// crossStageGroups are the pipeline groups and the groups all of whose members are in
// one pipeline group (two or more of its stages: Megatron's embedding group of the
// first and last stage, for instance): their collectives wait for the slower stage.
func crossStageGroups(groups []Group, pls []Pipeline) map[string]bool {
	out := map[string]bool{}
	for _, pl := range pls {
		out[pl.Group] = true
		in := map[int]bool{}
		for _, r := range pl.Ranks {
			in[r] = true
		}
		for _, g := range groups {
			if len(g.Ranks) < 2 || g.Inferred {
				continue
			}
			all := true
			for _, r := range g.Ranks {
				all = all && in[r]
			}
			if all {
				out[g.Key] = true
			}
		}
	}
	for _, g := range groups {
		if strings.EqualFold(g.Kind, "pp") {
			out[g.Key] = true
		}
	}
	return out
}
