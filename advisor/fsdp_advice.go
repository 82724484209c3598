package advisor

import (
	"fmt"
	"math"
	"strings"

	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/analysis"
)

// fsdpExposedMin is the exposed FSDP communication, as a share of the step, from
// which prefetching is priced; fsdpGainMin the gain, as a share of the step, that a
// prefetch must be predicted to win to be recommended.
const (
	fsdpExposedMin = 0.05
	fsdpGainMin    = 0.03
)

// kindOps counts one parallel dimension's ops per rank and step by family
// (allgather, reducescatter, allreduce, alltoall, other) with their mean elapse in µs.
type kindOps struct {
	perRankStep map[string]float64
	meanUs      map[string]float64
	rankSteps   int
}

func opsOfKind(res *analysis.Result, kind string) kindOps {
	keys := map[string]bool{}
	for _, g := range res.Communication.Groups {
		if g.Parallel == kind {
			keys[g.Key] = true
		}
	}
	count, ns := map[string]int{}, map[string]int64{}
	seen := map[[2]int]bool{}
	for _, o := range res.Communication.Ops {
		if !keys[o.Group] {
			continue
		}
		f := family(o.Type, o.Name)
		count[f]++
		ns[f] += o.ElapseNs
		seen[[2]int{o.Rank, o.Step}] = true
	}
	out := kindOps{perRankStep: map[string]float64{}, meanUs: map[string]float64{}, rankSteps: len(seen)}
	for f, n := range count {
		if len(seen) > 0 {
			out.perRankStep[f] = float64(n) / float64(len(seen))
		}
		out.meanUs[f] = float64(ns[f]) / float64(n) / 1e3
	}
	return out
}

// family is an op's kind from its type or name (HCCL's hcom_allGather_…, NCCL's
// ncclDevKernel_AllGather_…).
func family(typ, name string) string {
	s := strings.ToLower(typ + " " + name)
	for _, f := range []string{"alltoall", "allgather", "reducescatter", "reduce_scatter", "allreduce"} {
		if strings.Contains(s, f) {
			return strings.ReplaceAll(f, "_", "")
		}
	}
	return "other"
}

// computeUs is the step's computation: the ranks' computing time over their stage,
// times the step.
func computeUs(res *analysis.Result) float64 {
	var computing, stage int64
	for _, r := range res.Ranks {
		for _, st := range r.Steps {
			computing += st.ComputingNs
			stage += st.StageNs
		}
	}
	if stage == 0 {
		return 0
	}
	return float64(computing) / float64(stage) * float64(res.Summary.StepTimeNs) / 1e3
}

// fsdpPrefetchPrice prices prefetching every FSDP gather (costmodel.FSDPPrefetch) from
// the FSDP dimension's exposed time (fs) and its ops.
func fsdpPrefetchPrice(res *analysis.Result, fs analysis.KindShare) (costmodel.Prediction, error) {
	stepUs := float64(res.Summary.StepTimeNs) / 1e3
	ops := opsOfKind(res, analysis.KindFSDP)
	c := costmodel.FSDPComm{StepUs: stepUs, ExposedUs: math.Min(fs.CommShare, res.Summary.CommShare) * stepUs, CommShare: res.Summary.CommShare,
		ComputeUs: computeUs(res), Gathers: int(math.Round(ops.perRankStep["allgather"])), Reductions: int(math.Round(ops.perRankStep["reducescatter"])),
		GatherUs: ops.meanUs["allgather"], ReduceUs: ops.meanUs["reducescatter"]}
	// The run's exposed waiting, in FSDP's part of the exposed time.
	if w := res.Summary.ExposedWaitShare; w != nil && res.Summary.CommShare > 0 {
		c.ExposedWaitUs = *w * stepUs * math.Min(c.ExposedUs/stepUs/res.Summary.CommShare, 1)
	}
	return costmodel.FSDPPrefetch(c)
}

// fsdpHideableShare is the share of the step prefetching would win, as priced
// (fsdpPrefetchPrice), for an FSDP dimension exposed exposedShare of the step; 0
// when nothing is to win (the forward's first gather and the last reduction stay).
func fsdpHideableShare(res *analysis.Result, fs analysis.KindShare, exposedShare float64) float64 {
	stepUs := float64(res.Summary.StepTimeNs) / 1e3
	if stepUs <= 0 {
		return 0
	}
	fs.CommShare = exposedShare
	p, err := fsdpPrefetchPrice(res, fs)
	if err != nil {
		return 0
	}
	return math.Max(stepUs-p.StepTimeUs, 0) / stepUs
}

// fsdpRecommendation prices prefetching the FSDP gathers when the FSDP groups'
// communication is exposed (issue 37, fsdp_gather_exposed): PyTorch FSDP's
// forward_prefetch and backward_prefetch=BACKWARD_PRE (limit_all_gathers keeping at
// most two layers' gathers in flight), FSDP2's set_modules_to_forward_prefetch and
// set_modules_to_backward_prefetch; for a DeepSpeed job, ZeRO-3's
// stage3_prefetch_bucket_size with overlap_comm. nil and a note when there is nothing
// to win.
func fsdpRecommendation(res *analysis.Result, facts RunFacts) (*Recommendation, string) {
	var fs *analysis.KindShare
	for i, k := range res.Summary.Kinds {
		if k.Kind == analysis.KindFSDP {
			fs = &res.Summary.Kinds[i]
		}
	}
	if fs == nil || fs.CommShare < fsdpExposedMin {
		return nil, ""
	}
	stepUs := float64(res.Summary.StepTimeNs) / 1e3
	p, err := fsdpPrefetchPrice(res, *fs)
	if err != nil {
		return nil, "no FSDP prefetch priced: " + err.Error()
	}
	gain := stepUs - p.StepTimeUs
	if gain < fsdpGainMin*stepUs {
		return nil, fmt.Sprintf("FSDP prefetch not recommended: it would win %.3f ms per step (%s), under %s", gain/1e3, pct(gain/stepUs), pct(fsdpGainMin))
	}
	r := Recommendation{ID: "fsdp_prefetch", Knob: "forward_prefetch + backward_prefetch + limit_all_gathers", Value: "True, BACKWARD_PRE, True",
		Apply: "PyTorch FSDP: FullyShardedDataParallel(model, forward_prefetch=True, backward_prefetch=BackwardPrefetch.BACKWARD_PRE, limit_all_gathers=True)" +
			"   # FSDP2 (fully_shard): layers[i].set_modules_to_forward_prefetch([layers[i+1]]) and layers[i].set_modules_to_backward_prefetch([layers[i-1]])",
		Predicted: p, GainUs: gain, Confidence: p.Confidence, Assumptions: p.Assumptions, SamplesScale: 1, TodayUs: stepUs,
		Settings: []costmodel.Setting{{Knob: "fsdp_prefetch", Value: 1}},
		Risks: []string{"a prefetched layer's parameters are held beside the current layer's: peak memory grows by one layer's unsharded parameters (limit_all_gathers=True keeps it to that)",
			"forward_prefetch assumes the same module order every step (static graph)"}}
	if facts.Framework == FrameworkDeepSpeed {
		// ZeRO-3 prefetches by bytes: at least one layer's parameters ahead.
		fsdpGroup := map[string]bool{}
		for _, g := range res.Communication.Groups {
			fsdpGroup[g.Key] = g.Parallel == analysis.KindFSDP
		}
		var gathered, n int64
		for _, o := range res.Communication.Ops {
			if fsdpGroup[o.Group] && family(o.Type, o.Name) == "allgather" && o.Bytes > 0 {
				gathered += o.Bytes
				n++
			}
		}
		elems := int64(5e7) // DeepSpeed's default
		if n > 0 {
			elems = max(elems, gathered/n/2)
		}
		r.Knob, r.Value = "stage3_prefetch_bucket_size + overlap_comm", fmt.Sprintf("%d, true", elems)
		r.Apply = fmt.Sprintf(`"zero_optimization": {"stage": 3, "overlap_comm": true, "stage3_prefetch_bucket_size": %d}   # elements: at least one layer's parameters gathered ahead (0 turns prefetch off)`, elems)
	}
	if r.GainUs <= math.Max(p.High-p.Low, 0.01*stepUs) {
		r.Hypothesis = true
	}
	return &r, ""
}
