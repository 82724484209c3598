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
