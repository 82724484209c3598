package costmodel

import (
	"fmt"
	"math"
)

// FSDPComm is a fully sharded job's communication per step, from one rank's view:
// its FSDP gathers and gradient reductions and what of them is exposed.
type FSDPComm struct {
	StepUs float64
	// ExposedUs is the FSDP groups' exposed time per step (no compute kernel runs).
	ExposedUs float64
	// CommShare is the run's exposed communication over the step (all kinds).
	CommShare float64
	// ComputeUs is the step's computation, beside which prefetched gathers run.
	ComputeUs float64
	// Gathers and Reductions are the AllGathers and ReduceScatters per rank and step;
	// GatherUs and ReduceUs one op's mean elapse.
	Gathers, Reductions int
	GatherUs, ReduceUs  float64
	// ExposedWaitUs is the part of ExposedUs spent waiting for a later peer: the
	// ranks' lag, on which the collectives synchronise whether or not their gathers
	// are issued early.
	ExposedWaitUs float64
}

// FSDPPrefetch prices issuing every layer's parameter gather while the layer before
// it computes (PyTorch FSDP forward_prefetch and backward_prefetch=BACKWARD_PRE;
// FSDP2's explicit prefetch lists). The gathers and reductions share one
// communicator, so they queue on one stream; prefetched, that stream runs beside
// the compute and only what nothing computes beside stays exposed: the first
// gather of the forward, the first of the backward when the layers are gathered
// again for it (more gathers than reductions per step), and the last reduction,
// which the optimizer waits for. When the stream is longer than the compute, the
// excess stays exposed too. The point is today's step less its exposed FSDP time
// plus that residue. At best only the forward's first gather stays; at worst the
// residue doubles (the ops left exposed run slower beside compute that shares their
// memory bandwidth, and the ranks' jitter, which the serial gathers absorbed, shows
// at every layer) and the stream runs half as slow again beside the compute.
func FSDPPrefetch(c FSDPComm) (Prediction, error) {
	if c.StepUs <= 0 || c.ExposedUs <= 0 {
		return Prediction{}, fmt.Errorf("no exposed FSDP communication to prefetch")
	}
	if c.Gathers < 1 || c.GatherUs <= 0 {
		return Prediction{}, fmt.Errorf("no FSDP AllGather measured")
	}
	residue := c.GatherUs + c.ReduceUs
	if c.Gathers > c.Reductions {
		residue += c.GatherUs
	}
	stream := float64(c.Gathers)*c.GatherUs + float64(c.Reductions)*c.ReduceUs
	excess := func(slow float64) float64 {
		if c.ComputeUs <= 0 {
			return 0
		}
		return math.Max(slow*stream-c.ComputeUs, 0)
	}
	// The ranks' lag stays: a prefetched gather still completes when the last rank
	// issues it (a job without prefetch, 11.5% of its step exposed, 3.0% of it
	// waiting: priced 442.9 ms with the wait taken away, regenerated 456.7 ms).
	wait := math.Min(math.Max(c.ExposedWaitUs, 0), c.ExposedUs)
	left := residue + excess(1) + wait
	if c.ExposedUs <= left {
		return Prediction{}, fmt.Errorf("the exposed FSDP time (%.3f ms per step) is no more than what prefetching leaves (%.3f ms): the gathers are already prefetched",
			c.ExposedUs/1e3, left/1e3)
	}
	base := c.StepUs - c.ExposedUs
	p := Prediction{Knob: "fsdp_prefetch", Value: "on", StepTimeUs: base + left,
		Low: base + c.GatherUs + excess(1) + wait/2, High: base + 2*residue + excess(1.5) + wait, Confidence: "medium"}
	p.ExposedUs = math.Max(c.CommShare*c.StepUs-c.ExposedUs+left, 0)
	p.CommShare = p.ExposedUs / p.StepTimeUs
	p.Assumptions = []string{fmt.Sprintf("of the %.3f ms of exposed FSDP communication per step, %.3f ms stays: the forward's first gather, the backward's first (when it gathers again), the last gradient reduction (%.3f ms gathers, %.3f ms reductions on one stream beside %.3f ms of compute) and the %.3f ms of waiting for later ranks; at best only the first gather and half the waiting, at worst twice the rest and the stream 1.5× slower beside compute",
		c.ExposedUs/1e3, left/1e3, float64(c.Gathers)*c.GatherUs/1e3, float64(c.Reductions)*c.ReduceUs/1e3, c.ComputeUs/1e3, wait/1e3)}
	return p, nil
}
