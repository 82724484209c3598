package advisor

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/analysis"
)

// expertSkewMin is the hot rank's AlltoAll(v) bytes over its expert-parallel group's
// median from which the waiting for it is the routing's, not a slow rank's: a rank
// whose experts take more tokens receives and sends more in every dispatch and
// combine, and computes more between them. A straggler with a balanced routing moves
// what the others move (within a few percent).
const expertSkewMin = 1.2

// skewedExperts is the expert-parallel group whose routing is the most skewed beyond
// expertSkewMin, its hot rank waiting least (the others wait for it); nil when none.
func skewedExperts(res *analysis.Result) *analysis.ExpertGroup {
	var best *analysis.ExpertGroup
	for _, g := range analysis.ExpertImbalance(res) {
		if g.HotRank >= 0 && g.BytesSkew >= expertSkewMin && g.HotWaitsLeast && (best == nil || g.BytesSkew > best.BytesSkew) {
			best = &g
		}
	}
	return best
}

// expertImbalance tells an imbalanced expert from a straggler: where the ranks wait
// for a slower rank and that rank is the one whose AlltoAll(v) moves the most bytes in
// a skewed expert-parallel group, the cause is the routing (issue 37). A slow rank
// the detectors named elsewhere stays a straggler.
func expertImbalance(res *analysis.Result, det Detections, d Diagnosis) Diagnosis {
	if d.Cause != CauseStraggler {
		return d
	}
	g := skewedExperts(res)
	if g == nil {
		return d
	}
	if len(det.SlowRanks) > 0 && det.SlowRanks[0].Rank != g.HotRank {
		return d
	}
	hot := g.Ranks[0]
	for _, r := range g.Ranks {
		if r.Rank == g.HotRank {
			hot = r
		}
	}
	var others []string
	for _, r := range g.Ranks {
		if r.Rank != hot.Rank {
			others = append(others, fmt.Sprintf("%d: %.2f GB", r.Rank, float64(r.Bytes)/1e9))
		}
	}
	exposed := pct(res.Summary.CommShare)
	out := Diagnosis{Cause: CauseExpertImbalance, Share: d.Share,
		Title: fmt.Sprintf("%s of the step is exposed communication; %s of the step waits for the experts on rank %d, whose AlltoAll(v) moves %.2f× its expert-parallel group's median: the routing is imbalanced, not the rank slow",
			exposed, pct(d.Share), hot.Rank, g.BytesSkew),
		Evidence: fmt.Sprintf("expert-parallel group %s (ranks %s): rank %d moved %.2f GB in %d AlltoAll(v) (%.3f ms moving data, %.2f× the median; %.3f ms waiting, the least of the group), the others %s; %s",
			shortGroup(g.Group), expertRanks(g), hot.Rank, float64(hot.Bytes)/1e9, hot.Ops, float64(hot.MovingNs)/1e6, g.MovingSkew,
			float64(hot.WaitNs)/1e6, strings.Join(others, ", "), d.Evidence)}
	return out
}

func expertRanks(g *analysis.ExpertGroup) string {
	rs := make([]int, len(g.Ranks))
	for i, r := range g.Ranks {
		rs[i] = r.Rank
	}
	return intsText(rs)
}

// expertCure is what to do about an imbalanced routing, with Megatron-LM's and
// MindSpeed's own switches (each checked in their argument parsers: Megatron-LM's
// megatron/training/arguments.py and TransformerConfig, MindSpeed's
// mindspeed/arguments.py and features_manager/moe/moe_alltoall_overlap.py).
func expertCure(res *analysis.Result) string {
	return "Balance the routing: raise the load-balancing loss (Megatron --moe-aux-loss-coeff, e.g. 1e-2, with --moe-router-load-balancing-type aux_loss or seq_aux_loss; " +
		"or bias-based balancing with --moe-router-enable-expert-bias), or cap each expert's tokens with --moe-expert-capacity-factor (tokens over the capacity are dropped: check the loss). " +
		"With --moe-token-dispatcher-type alltoall, overlap the AlltoAll with computation (Megatron --overlap-moe-expert-parallel-comm, one micro-batch's AlltoAll beside another's compute: PyTorch ≥ 2.6, bf16/fp16, no full recomputation; MindSpeed --moe-alltoall-overlap-comm, which needs --moe-grouped-gemm, and with the alltoall_seq dispatcher --moe-permutation-async-comm, and --moe-tp-extend-ep when tp > 1): it hides the wait, the imbalance stays. " +
		"No HCCL or bucket setting shortens the wait for the busiest expert."
}

// expertRecommendation prices balancing the routing when the diagnosis is an
// imbalanced expert: the knob is the load-balancing loss (Megatron-LM
// --moe-aux-loss-coeff), the others in the cure.
func expertRecommendation(res *analysis.Result, d Diagnosis) (*Recommendation, string) {
	stepUs, extra, ok := hotExpertCost(res, d)
	if !ok {
		return nil, ""
	}
	p, err := costmodel.ExpertBalance(stepUs, d.Share*stepUs, extra, res.Summary.CommShare)
	if err != nil {
		return nil, "no routing balance priced: " + err.Error()
	}
	r := Recommendation{ID: "moe_load_balance", Knob: "--moe-aux-loss-coeff", Value: "raise (e.g. 1e-2)",
		Apply:     "Megatron-LM: --moe-aux-loss-coeff 1e-2 --moe-router-load-balancing-type aux_loss   # or seq_aux_loss; or --moe-router-enable-expert-bias; or cap with --moe-expert-capacity-factor",
		Predicted: p, GainUs: stepUs - p.StepTimeUs, Confidence: p.Confidence, Assumptions: p.Assumptions, SamplesScale: 1, TodayUs: stepUs,
		Settings: []costmodel.Setting{{Knob: "expert_balance", Value: 1}},
		Risks: []string{"a larger load-balancing loss pulls the router away from the task loss: check the loss curve",
			"a capacity factor drops the tokens over it: the model sees less of the batch"}}
	return &r, ""
}

// hotExpertCost is what pricing an imbalanced expert needs: the mean step and the hot
// rank's transfers beyond its expert-parallel group's median, per step, in µs; ok is
// false unless the diagnosis is an imbalanced expert with a skewed group.
func hotExpertCost(res *analysis.Result, d Diagnosis) (stepUs, extraMovingUs float64, ok bool) {
	if d.Cause != CauseExpertImbalance {
		return 0, 0, false
	}
	g := skewedExperts(res)
	if g == nil {
		return 0, 0, false
	}
	var moving []float64
	var hotMoving float64
	for _, r := range g.Ranks {
		moving = append(moving, float64(r.MovingNs))
		if r.Rank == g.HotRank {
			hotMoving = float64(r.MovingNs)
		}
	}
	steps := float64(max(res.Summary.Steps, 1))
	return float64(res.Summary.StepTimeNs) / 1e3, (hotMoving - medianOf(moving)) / steps / 1e3, true
}

func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	}
	n := len(s)
	return (s[n/2-1] + s[n/2]) / 2
}
