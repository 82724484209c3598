package costmodel

import (
	"fmt"
	"math"
)

// ExpertCapacity prices capping every expert's tokens at its capacity and padding
// each expert's input to it (Megatron --moe-expert-capacity-factor 1.0 with
// --moe-pad-expert-input-to-capacity): every expert then computes, and every rank's
// AlltoAll moves, exactly one capacity, so no rank waits for a busier expert.
// waitUs is the wait per step for the busiest expert's rank (the diagnosis' share
// of the step), extraMovingUs that rank's transfers beyond its group's median per
// step, notMovingUs the step's exposed communication that is not moving data (waiting
// for peers, synchronisation), factor the capacity factor. The point is the wait
// for the hot expert gone; at best every rank computes the same between its
// collectives, so none of them waits (the padding evens the routing's ordinary
// spread as well), and the hot rank's extra transfers go too; at
// worst half the wait (a factor above 1 lets the hot expert keep up to factor times
// the mean, and the padded experts compute that much).
func ExpertCapacity(stepUs, waitUs, extraMovingUs, notMovingUs, commShare, factor float64) (Prediction, error) {
	if stepUs <= 0 || waitUs <= 0 {
		return Prediction{}, fmt.Errorf("no wait for an expert to remove")
	}
	extraMovingUs, notMovingUs = math.Max(extraMovingUs, 0), math.Max(notMovingUs, waitUs)
	p := Prediction{Knob: "moe_capacity", Value: fmt.Sprintf("%.2g", factor), StepTimeUs: stepUs - waitUs,
		Low: stepUs - notMovingUs - extraMovingUs, High: stepUs - 0.5*waitUs, Confidence: "medium"}
	p.ExposedUs = math.Max(commShare*stepUs-waitUs, 0)
	p.CommShare = p.ExposedUs / p.StepTimeUs
	p.Assumptions = []string{fmt.Sprintf("priced for every expert capped and padded to %.2g× the mean tokens: the %.3f ms per step the others wait for the busiest expert's rank gone (at best all %.3f ms of exposed communication not moving data, and its %.3f ms of extra transfers; at worst half the wait); the tokens dropped are not priced, their effect on the loss is not modelled",
		factor, waitUs/1e3, notMovingUs/1e3, extraMovingUs/1e3)}
	return p, nil
}

// EPComm is a run's expert-parallel AlltoAll per step, from the analysis' per-kind
// figures: the step, the EP groups' op time exposed (no compute kernel runs) and in
// all, and the step's computation.
type EPComm struct {
	StepUs, ExposedUs, TotalUs float64
	// CommShare is the run's exposed communication over the step (all kinds).
	CommShare float64
	// ComputeUs is the step's computation, which bounds what can run beside the
	// AlltoAlls.
	ComputeUs float64
	// Exposed bounds ExposedUs where it is not measured (TPComm.Exposed).
	Exposed ExposedBounds
}

// Fractions of the exposed EP AlltoAll time that issuing the AlltoAlls on their own
// stream hides (MindSpeed --moe-alltoall-overlap-comm, Megatron
// --overlap-moe-expert-parallel-comm). A layer moves its tokens four times per
// micro-batch: dispatch and combine in forward, their gradients in backward. An
// AlltoAll hides only behind compute that does not need its data. The backward's
// second AlltoAll (the input gradients going home) always has the experts' weight
// gradients, about half their backward, beside it; the other three have only what
// the model computes apart from the routed experts (shared experts) or, in
// Megatron's form, the other micro-batch's layer.
const (
	// epHiddenLow: the backward's second AlltoAll alone, half of it hidden (weight
	// gradients shorter than the transfer, and slowed by it: the copies take HBM
	// bandwidth and cores).
	epHiddenLow = 1.0 / 8
	// epHiddenPoint: two of the four (the backward's second, and about one more
	// behind shared experts or the other micro-batch).
	epHiddenPoint = 1.0 / 2
	// epHiddenHigh: all four, when the compute beside each (shared experts at least
	// as long as the AlltoAlls, or the other micro-batch's layer) outlasts it: a fast
	// network's AlltoAlls (NVLink inside a node) hide almost whole.
	epHiddenHigh = 1.0
)

// AlltoAllOverlap prices running the MoE dispatch and combine AlltoAlls beside the
// compute that does not need them (epHidden*): the step shortens by that part of
// the exposed EP time, never by more than the step's computation.
func AlltoAllOverlap(c EPComm) (Prediction, error) {
	if c.StepUs <= 0 || c.ExposedUs <= 0 {
		return Prediction{}, fmt.Errorf("no exposed expert-parallel AlltoAll to hide")
	}
	hide := func(f float64) float64 {
		h := f * c.ExposedUs
		if c.ComputeUs > 0 {
			h = math.Min(h, c.ComputeUs)
		}
		return h
	}
	point := hide(epHiddenPoint)
	p := Prediction{Knob: "moe_alltoall_overlap", Value: "on", StepTimeUs: c.StepUs - point,
		Low: c.StepUs - hide(epHiddenHigh), High: c.StepUs - hide(epHiddenLow),
		ExposedUs: math.Max(c.CommShare*c.StepUs-point, 0), Confidence: "medium"}
	p.CommShare = p.ExposedUs / p.StepTimeUs
	p.Assumptions = []string{fmt.Sprintf("of the %.3f ms of exposed expert-parallel AlltoAll per step, half is hidden (the backward's input gradients beside the experts' weight gradients, and about one more of a layer's four AlltoAlls beside the compute that does not need it); at worst an eighth (the weight gradients' AlltoAll only, half of it), at best all of it (compute beside every AlltoAll at least as long as it)",
		c.ExposedUs/1e3)}
	c.Exposed.widen(&p, c.StepUs, epHiddenLow, epHiddenHigh, func(us float64) float64 {
		if c.ComputeUs > 0 {
			return math.Min(us, c.ComputeUs)
		}
		return us
	}, "expert-parallel AlltoAll")
	return p, nil
}
