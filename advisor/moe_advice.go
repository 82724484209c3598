package advisor

import (
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
