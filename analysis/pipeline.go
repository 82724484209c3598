package analysis

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/hcclprof/hcclprof/internal/stats"
	"github.com/hcclprof/hcclprof/profile"
)

// Pipeline is one pipeline-parallel group (its stages in pipeline order) with its
// measured bubble against the schedule's theory.
type Pipeline struct {
	Group  string // the @hash key of the pp group
	Ranks  []int  // global ranks, stage 0 first
	Stages int    // p
	// Microbatches (m) comes from Options.Microbatches when the user gave it, else
	// from the receive counts: a step of GPipe or 1F1B makes every stage boundary carry
	// m activations forward and m gradients back, so a pipeline's receives per step
	// are 2·m·(p−1). MicrobatchesSource says which.
	Microbatches       int
	MicrobatchesSource string
	// TheoryBubble is (p−1)/(m+p−1): the idle share of a GPipe/1F1B step with equal
	// stages; 0 when m is unknown.
	TheoryBubble float64
	// MeasuredBubble is the stages' Bubble/(Stage+Bubble) over the steps, where the
	// profiler's Bubble is the time spent in receive ops (torch_npu's definition).
	// BubbleUnmeasured says why it measures nothing, "" when it does: no stage has
	// steps, or the pipeline's traffic is batchSendRecv, which the profiler never
	// counts as Bubble (it reads 0 then).
	MeasuredBubble   float64
	BubbleUnmeasured string
	// StageComputingNs is each stage's mean Computing per step (0 where the stage
	// was not profiled: StageProfiled says which were); ProfiledStages counts them.
	// Imbalance is the slowest profiled stage over the fastest, less 1, known
	// (ImbalanceKnown) only when two or more stages were profiled.
	StageComputingNs []int64
	StageProfiled    []bool
	ProfiledStages   int
	Imbalance        float64
	ImbalanceKnown   bool
	// StagesAtLeast says Stages is a lower bound: one rank of the group was profiled
	// and the profile names no other member (loneStage), so no theoretical bubble.
	StagesAtLeast bool
	Note          string
}

// BubbleKnown reports whether MeasuredBubble measures the bubble.
func (p *Pipeline) BubbleKnown() bool { return p.BubbleUnmeasured == "" }

// WorstBubble is the pipeline with the largest measured bubble, else (no bubble
// measured) the first; nil for none.
func WorstBubble(pls []Pipeline) *Pipeline {
	var worst *Pipeline
	for i := range pls {
		if worst == nil || pls[i].BubbleKnown() && (!worst.BubbleKnown() || pls[i].MeasuredBubble > worst.MeasuredBubble) {
			worst = &pls[i]
		}
	}
	return worst
}

// pipelines finds the pp groups (named pp in parallel_group_info, else groups whose
// ops are all point-to-point) and measures them.
func pipelines(groups []Group, ops []OpStat, ranks []RankResult, userMicrobatches int) []Pipeline {
	byRank := map[int]RankResult{}
	for _, r := range ranks {
		byRank[r.Rank] = r
	}
	seen := countP2P(ops)
	var out []Pipeline
	for _, grp := range groups {
		g := seen[grp.Key]
		// Named pp, guessed pp ("pp?": an inferred group with only point-to-point
		// ops), or unnamed with only point-to-point ops.
		isPP := strings.EqualFold(strings.TrimSuffix(grp.Kind, "?"), "pp") || (grp.Kind == "" && g != nil && g.p2p > 0 && g.other == 0)
		// Or a group the profile names a pipeline's in its own words (Megatron's
		// PIPELINE_MODEL_PARALLEL_GROUP in Kineto's process groups) that sends and
		// receives.
		isPP = isPP || grp.Parallel == KindPP && g != nil && g.p2p > 0
		// A context-parallel ring also only sends and receives; its dimension says
		// it is no pipeline (parallelkind.go tells it by its members' alike traffic).
		if grp.Parallel == KindCP {
			isPP = false
		}
		if !isPP || g == nil {
			continue
		}
		stageRanks, partial := grp.Ranks, ""
		if len(grp.Ranks) < 2 {
			if stageRanks, partial = loneStage(grp, ops); stageRanks == nil {
				continue
			}
		}
		p := len(stageRanks)
		pl := Pipeline{Group: grp.Key, Ranks: grp.Ranks, Stages: p, StagesAtLeast: partial != ""}
		pl.inferMicrobatches(grp, g, byRank, userMicrobatches)
		if pl.Microbatches > 0 && !pl.StagesAtLeast {
			pl.TheoryBubble = float64(p-1) / float64(pl.Microbatches+p-1)
		}
		bubble := pl.measureStages(stageRanks, byRank, g.batch > 0)
		switch {
		case partial != "":
			pl.Note = partial
		case g.batch > 0 && bubble == 0:
			pl.Note = "the pipeline's traffic is batchSendRecv, which the profiler does not count as Bubble: the bubble is not measured (the profiler's reads 0) and cannot be compared with the theory"
		case pl.Microbatches == 0 && g.unmarked > 0 && len(g.receives) == 0:
			pl.Note = "the number of micro-batches is unknown: the run has no step markers, so its one step spans every training step the collection holds and its receives do not count the micro-batches of one (give it with --microbatches): no theoretical bubble"
		case pl.Microbatches == 0:
			pl.Note = "the number of micro-batches is unknown (give it with --microbatches): no theoretical bubble"
		case pl.MeasuredBubble > pl.TheoryBubble*1.2+0.02:
			pl.Note = fmt.Sprintf("the bubble is %.1f%% of the step against %.1f%% in theory for p=%d, m=%d: stage imbalance or late sends", 100*pl.MeasuredBubble, 100*pl.TheoryBubble, p, pl.Microbatches)
		}
		out = append(out, pl)
	}
	return out
}

// loneStage places the one profiled rank of an inferred pipeline group among its
// stages, where the profile names neither the group's other members nor their ranks
// (msprof's output of part of a job, a stage's ranks only), from its transfers: a
// point-to-point op's HCCL tasks name the rank and its peer by their group-local
// ranks, which are the stages' order (a group's ranks are sorted), so the op's
// PeerRanks is k+1 toward the stage before stage k and k+2 toward the one after.
//   - A first stage starts its step by sending its first micro-batch's activations
//     to the next; every other stage waits to receive one first.
//   - A middle stage receives them from the stage before and sends its own forward
//     to the stage after: its transfers name two peers, k−1 and k+1 (PeerRanks k+1
//     and k+2), and its first send goes to the higher (a first send backward
//     contradicts it: not placed).
//   - A last stage receives first and talks to the stage before only.
//
// The size is the group-local ranks its transfers name, a lower bound (a first
// stage's name only the next, a middle stage's only its neighbours). The stages it
// cannot place are -1; nil when the transfers place it nowhere (no task names a
// peer, or they contradict the order above).
func loneStage(grp Group, ops []OpStat) (stageRanks []int, note string) {
	if !grp.Inferred || len(grp.Ranks) != 1 {
		return nil, ""
	}
	rank, size, peerLo := grp.Ranks[0], 0, math.MaxInt
	var first, firstSend *OpStat
	for i := range ops {
		o := &ops[i]
		if o.Group != grp.Key || o.Rank != rank || !profile.IsP2P(o.Name) {
			continue
		}
		if first == nil || o.StartNs < first.StartNs {
			first = o
		}
		if o.PeerRanks <= 0 {
			continue // no data task: the peer moves the data (writes into a receive, or reads a send)
		}
		size, peerLo = max(size, int(o.PeerRanks)), min(peerLo, int(o.PeerRanks))
		if !profile.IsReceiveOp(o.Name, o.Type) && (firstSend == nil || o.StartNs < firstSend.StartNs) {
			firstSend = o
		}
	}
	if size < 2 || first == nil {
		return nil, ""
	}
	stage, place := -1, ""
	switch {
	case !profile.IsReceiveOp(first.Name, first.Type):
		stage, place = 0, "the first: it sends first"
	case peerLo == size:
		// One peer, the stage before: the last stage.
		stage, place = size-1, "the last: it receives first, from the stage before only"
	case peerLo == size-1 && (firstSend == nil || int(firstSend.PeerRanks) == size):
		// Two peers, one each side, and the activations go forward first (where
		// the sends name their peer: a receiver that copies the data in names
		// them in its receives only).
		stage, place = size-2, "a middle one: it receives from the stage before and sends on to the one after"
	default:
		return nil, ""
	}
	stageRanks = make([]int, size)
	for i := range stageRanks {
		stageRanks[i] = -1
	}
	stageRanks[stage] = rank
	return stageRanks, fmt.Sprintf("only stage %d (%s) of its %d or more stages was profiled (rank %d; the profile names none of the others): its Bubble is that stage's, and the stages' imbalance and the theoretical bubble are unknown", stage, place, size, rank)
}

// groupP2P counts a group's ops: point-to-point (batchSendRecv among them) and
// other, and its receives per step.
type groupP2P struct {
	p2p, other, batch int
	receives          map[int]int // step → receives over the group's ranks
	// unmarked counts receives outside any marked step: a run without step
	// markers (msprof's op-based runs) is one step spanning the whole collection,
	// however many training steps it holds, so its receives do not give m.
	unmarked int
}

// countP2P counts each group's point-to-point and other ops and its receives.
func countP2P(ops []OpStat) map[string]*groupP2P {
	seen := map[string]*groupP2P{}
	for _, o := range ops {
		g := seen[o.Group]
		if g == nil {
			g = &groupP2P{receives: map[int]int{}}
			seen[o.Group] = g
		}
		switch {
		case strings.Contains(strings.ToLower(o.Name), "batchsendrecv"):
			g.batch++
			g.p2p++
		case profile.IsP2P(o.Name):
			g.p2p++
		default:
			g.other++
		}
		if profile.IsReceiveOp(o.Name, o.Type) {
			if o.Step < 0 {
				g.unmarked++
			} else {
				g.receives[o.Step]++
			}
		}
	}
	return seen
}

// inferMicrobatches sets the pipeline's micro-batches: the user's, else from the
// receives per step over the group's ranks when every rank of it was profiled.
func (pl *Pipeline) inferMicrobatches(grp Group, g *groupP2P, byRank map[int]RankResult, userMicrobatches int) {
	p := len(grp.Ranks)
	switch {
	case userMicrobatches > 0:
		pl.Microbatches, pl.MicrobatchesSource = userMicrobatches, "given"
	case len(g.receives) > 0:
		// Per step, over the group's profiled ranks; scaled up when only some
		// ranks were profiled.
		var per []float64
		for _, n := range g.receives {
			per = append(per, float64(n))
		}
		sort.Float64s(per)
		profiled := 0
		for _, r := range grp.Ranks {
			if _, ok := byRank[r]; ok {
				profiled++
			}
		}
		if profiled == p {
			m := int(math.Round(stats.MedianSorted(per) / float64(2*(p-1))))
			if m > 0 {
				pl.Microbatches, pl.MicrobatchesSource = m, "inferred from receive counts"
			}
		}
	}
}

// measureStages measures the pipeline from its profiled stages' steps (stageRanks:
// the global rank of each stage, -1 where not known): the bubble
// (or why it is not measured; batch: its traffic is batchSendRecv), each stage's
// mean computing and the imbalance between them. It returns the summed Bubble.
func (pl *Pipeline) measureStages(stageRanks []int, byRank map[int]RankResult, batch bool) int64 {
	p := len(stageRanks)
	var bubble, span int64
	pl.StageComputingNs = make([]int64, p)
	pl.StageProfiled = make([]bool, p)
	for i, r := range stageRanks {
		rr, ok := byRank[r]
		if !ok || len(rr.Steps) == 0 {
			continue
		}
		pl.StageProfiled[i] = true
		pl.ProfiledStages++
		var comp int64
		for _, s := range rr.Steps {
			bubble += s.BubbleNs
			span += s.StageNs + s.BubbleNs
			comp += s.ComputingNs
		}
		pl.StageComputingNs[i] = comp / int64(len(rr.Steps))
	}
	pl.MeasuredBubble = ratio(bubble, span)
	switch {
	case span == 0:
		pl.BubbleUnmeasured = "no stage of it has steps"
	case batch && bubble == 0:
		pl.BubbleUnmeasured = "its traffic is batchSendRecv, which the profiler does not count as Bubble"
	}
	lo, hi, n := int64(math.MaxInt64), int64(0), 0
	for i, c := range pl.StageComputingNs {
		if pl.StageProfiled[i] && c > 0 {
			lo, hi, n = min(lo, c), max(hi, c), n+1
		}
	}
	if n >= 2 {
		pl.Imbalance, pl.ImbalanceKnown = float64(hi)/float64(lo)-1, true
	}
	return bubble
}
