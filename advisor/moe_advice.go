package advisor

import (
	"fmt"

	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/analysis"
)

// moeCapacityFactor is the capacity factor recommended with padding: every expert
// takes at most, and computes exactly, the mean tokens (Megatron's token-dropping
// configuration).
const moeCapacityFactor = 1.0

// expertCapacityRecommendation prices capping and padding every expert to its
// capacity when the diagnosis is an imbalanced expert (issue 37): Megatron-LM
// --moe-expert-capacity-factor 1.0 --moe-pad-expert-input-to-capacity, which needs
// the alltoall dispatcher. The alternative to balancing the routing by its loss: it
// evens the AlltoAll at once, but drops the tokens over the capacity.
func expertCapacityRecommendation(res *analysis.Result, d Diagnosis) (*Recommendation, string) {
	stepUs, extra, ok := hotExpertCost(res, d)
	if !ok {
		return nil, ""
	}
	// The exposed communication not moving data: what an even load could remove.
	notMoving := res.Summary.CommShare * stepUs
	if t := res.Summary.ExposedTransferShare; t != nil {
		notMoving -= *t * stepUs
	}
	p, err := costmodel.ExpertCapacity(stepUs, d.Share*stepUs, extra, notMoving, res.Summary.CommShare, moeCapacityFactor)
	if err != nil {
		return nil, "no expert capacity priced: " + err.Error()
	}
	r := Recommendation{ID: "moe_capacity", Knob: "--moe-expert-capacity-factor + --moe-pad-expert-input-to-capacity", Value: "1.0, on",
		Apply:     "Megatron-LM: --moe-expert-capacity-factor 1.0 --moe-pad-expert-input-to-capacity --moe-token-dispatcher-type alltoall   # every expert takes and computes exactly the mean tokens",
		Predicted: p, GainUs: stepUs - p.StepTimeUs, Confidence: p.Confidence, Assumptions: p.Assumptions, SamplesScale: 1, TodayUs: stepUs,
		Settings: []costmodel.Setting{{Knob: "moe_capacity", Value: moeCapacityFactor}},
		Risks: []string{"the tokens routed beyond an expert's capacity are dropped (they skip the expert layer): check the loss curve, or raise the factor (1.25) and accept part of the wait",
			"the capacity factor needs the alltoall dispatcher (--moe-token-dispatcher-type alltoall), not allgather"}}
	return &r, ""
}

// epExposedMin is the exposed expert-parallel AlltoAll, as a share of the step, from
// which overlapping it with computation is recommended.
const epExposedMin = 0.05

// epOverlappedAbove is the part of the EP AlltoAll time that, already beside
// compute, says the job overlaps it: on the compute stream an AlltoAll runs beside
// no compute, and the overlap hides at least the backward's weight-gradient
// AlltoAll, about a quarter of them.
const epOverlappedAbove = 0.15

// moeOverlapRecommendation prices issuing the MoE token dispatcher's AlltoAlls on
// their own stream, beside the compute that does not need them, when they are a
// significant share of the step and not yet overlapped (issue 37): MindSpeed's
// --moe-alltoall-overlap-comm on Ascend (the shared experts and the experts' weight
// gradients beside the dispatch and combine), Megatron-LM's
// --overlap-moe-expert-parallel-comm on NVIDIA (another micro-batch's compute beside
// them). nil and a note when there is nothing to recommend.
func moeOverlapRecommendation(res *analysis.Result) (*Recommendation, string) {
	var ep *analysis.KindShare
	for i, k := range res.Summary.Kinds {
		if k.Kind == analysis.KindEP {
			ep = &res.Summary.Kinds[i]
		}
	}
	if ep == nil || ep.CommTotalShare <= 0 {
		return nil, ""
	}
	if 1-ep.CommShare/ep.CommTotalShare >= epOverlappedAbove {
		return nil, fmt.Sprintf("expert-parallel AlltoAll is %s of the step, %.0f%% of it already beside compute: no AlltoAll overlap to add",
			pct(ep.CommTotalShare), 100*(1-ep.CommShare/ep.CommTotalShare))
	}
	if ep.CommShare < epExposedMin {
		return nil, ""
	}
	stepUs := float64(res.Summary.StepTimeNs) / 1e3
	size := largestGroup(res, analysis.KindEP)
	c := costmodel.EPComm{StepUs: stepUs, ExposedUs: ep.CommShare * stepUs, TotalUs: ep.CommTotalShare * stepUs, CommShare: res.Summary.CommShare,
		ComputeUs: computeUs(res), Exposed: exposedBounds(*ep, stepUs)}
	p, err := costmodel.AlltoAllOverlap(c)
	if err != nil {
		return nil, "no AlltoAll overlap priced: " + err.Error()
	}
	r := Recommendation{ID: "moe_alltoall_overlap", Value: "on", Predicted: p, GainUs: stepUs - p.StepTimeUs, Confidence: p.Confidence,
		Assumptions: p.Assumptions, SamplesScale: 1, TodayUs: stepUs,
		Settings: []costmodel.Setting{{Knob: "moe_alltoall_overlap", Value: 1}}}
	if res.AllNCCL() {
		r.Knob = "--overlap-moe-expert-parallel-comm"
		r.Apply = fmt.Sprintf("Megatron-LM: --overlap-moe-expert-parallel-comm --delay-wgrad-compute --moe-token-dispatcher-type alltoall   # one micro-batch's dispatch/combine beside another's compute (ep %d)", size)
		r.Risks = append(r.Risks, "--overlap-moe-expert-parallel-comm needs ep > 1, the alltoall or flex dispatcher, bf16 or fp16, PyTorch 2.6 or later, no full recomputation, a virtual pipeline when pp > 1, and at least two micro-batches per step to pair; it excludes --moe-shared-expert-overlap",
			"the pricing is checked by regenerating the job with the AlltoAlls beside the same micro-batch's independent compute (MindSpeed's form), not Megatron's pairing of micro-batches",
			"two micro-batches' activations are alive at once")
		r.Hypothesis = true
	} else {
		r.Knob = "--moe-alltoall-overlap-comm"
		r.Apply = fmt.Sprintf("MindSpeed: --moe-alltoall-overlap-comm --moe-token-dispatcher-type alltoall --moe-grouped-gemm   # the dispatch/combine beside the shared experts and the experts' weight gradients (ep %d)", size)
		r.Risks = append(r.Risks, "--moe-alltoall-overlap-comm needs the alltoall dispatcher with --moe-grouped-gemm (alltoall_seq also needs --moe-permutation-async-comm, and --moe-tp-extend-ep when tp > 1), and is not used with --use-ascend-mc2",
			"the overlap keeps more activations alive (MindSpeed's --moe-zero-memory trades part of it back for recomputation)",
			"a model without shared experts hides little more than the backward's weight-gradient AlltoAll")
	}
	r.Risks = append(r.Risks, "the compute beside an AlltoAll shares the HBM and cores with its copies, and slows")
	if stepUs-p.High <= 0.01*stepUs {
		r.Hypothesis = true // even the worst case's gain is lost in the step's noise
	}
	return &r, ""
}
