package costmodel

import (
	"fmt"
	"math"
)

// TPComm is a run's tensor-parallel communication, from the analysis' per-kind
// figures: the step and the TP groups' op time, exposed (no compute kernel runs) and
// in all, per step.
type TPComm struct {
	StepUs, ExposedUs, TotalUs float64
	// CommShare is the run's exposed communication over the step (all kinds).
	CommShare float64
	TP        int  // the TP groups' size
	SeqPar    bool // the ops are AllGather/ReduceScatter (sequence parallelism), not AllReduce
	// ComputeUs is the step's computation: the GEMMs the collectives can run beside.
	ComputeUs float64
	// Exposed bounds ExposedUs where it is not measured (no device timeline on some
	// rank): ExposedUs is then the profiler's exposed time shared out by the ops.
	Exposed ExposedBounds
}

// ExposedBounds are a dimension's exposed time per step, at least LowUs and at most
// HighUs, where it is bounded rather than measured (Bounded).
type ExposedBounds struct {
	Bounded       bool
	LowUs, HighUs float64
}

// widen makes a prediction's interval hold the bounds: its worst case hides worst of
// the lower bound (hiddenLow of it), its best all it can of the upper (hiddenHigh),
// at low confidence, with the bounds among the assumptions. hidden caps what can be
// hidden (the computation beside it).
func (b ExposedBounds) widen(p *Prediction, stepUs, hiddenLow, hiddenHigh float64, hidden func(float64) float64, what string) {
	if !b.Bounded {
		return
	}
	p.Low = math.Min(p.Low, stepUs-hidden(hiddenHigh*b.HighUs))
	p.High = math.Max(p.High, stepUs-hidden(hiddenLow*b.LowUs))
	p.Confidence = "low"
	p.Assumptions = append(p.Assumptions, fmt.Sprintf("no device timeline on some rank: the exposed %s time is not measured but lies between %.3f and %.3f ms per step; the point takes the profiler's exposed time shared out by the ops, and the interval the bounds",
		what, b.LowUs/1e3, b.HighUs/1e3))
}

// TPOverlap prices running the TP collectives beside the GEMMs that produce and
// consume them (Megatron with Transformer Engine --tp-comm-overlap, MindSpeed's
// --use-ascend-mc2; both split each GEMM into chunks and pipeline the
// AllGather/ReduceScatter of one chunk behind the GEMM of another). With a ring of
// tp chunks the first chunk's transfer (AllGather) or the last one's reduction
// (ReduceScatter) stays exposed: about 1/tp of each op, so (1 − 1/tp) of the exposed
// TP time is hidden. The interval: at worst half of it (the overlapped GEMMs and
// transfers share the AI cores / SMs and HBM and slow each other), at best all of it.
// The hidden time cannot exceed the computation it runs beside. A TP job without
// sequence parallelism needs it first (--tp-comm-overlap requires
// --sequence-parallel in Megatron, --use-ascend-mc2 in MindSpeed): its AllReduce
// becomes a ReduceScatter and an AllGather of the same bytes, taken as the same time.
func TPOverlap(c TPComm) (Prediction, error) {
	if c.StepUs <= 0 || c.ExposedUs <= 0 {
		return Prediction{}, fmt.Errorf("no exposed tensor-parallel communication to hide")
	}
	if c.TP < 2 {
		return Prediction{}, fmt.Errorf("tensor-parallel size %d: nothing to overlap", c.TP)
	}
	hideable := c.ExposedUs
	if c.ComputeUs > 0 {
		hideable = math.Min(hideable, c.ComputeUs)
	}
	point := (1 - 1/float64(c.TP)) * hideable
	low, high := 0.5*hideable, hideable
	p := Prediction{Knob: "tp_comm_overlap", Value: "on", StepTimeUs: c.StepUs - point, Low: c.StepUs - high, High: c.StepUs - low,
		ExposedUs: math.Max(c.CommShare*c.StepUs-point, 0), Confidence: "medium"}
	p.CommShare = p.ExposedUs / p.StepTimeUs
	p.Assumptions = append(p.Assumptions,
		fmt.Sprintf("of the %.3f ms of exposed tensor-parallel communication per step, %.0f%% is hidden behind the GEMMs (a ring of %d chunks leaves about one exposed); at worst half, at best all of it",
			c.ExposedUs/1e3, 100*(1-1/float64(c.TP)), c.TP))
	c.Exposed.widen(&p, c.StepUs, 0.5, 1, func(us float64) float64 {
		if c.ComputeUs > 0 {
			return math.Min(us, c.ComputeUs)
		}
		return us
	}, "tensor-parallel")
	if !c.SeqPar {
		p.Assumptions = append(p.Assumptions, "with sequence parallelism each AllReduce becomes a ReduceScatter and an AllGather of the same bytes, taken to cost what the AllReduce costs")
	}
	return p, nil
}

// ExpertBalance prices an expert-parallel group's routing balanced (issue 37): the
// ranks no longer wait for the experts that take the most tokens. waitUs is that
// wait per step (the diagnosis' share of the step), extraMovingUs the hot rank's
// transfers beyond the group's median per step. The point is the wait gone; at best
// the hot rank's extra transfers go too, at worst half the wait (a load-balancing
// loss or a capacity factor narrows the skew without removing it).
func ExpertBalance(stepUs, waitUs, extraMovingUs, commShare float64) (Prediction, error) {
	if stepUs <= 0 || waitUs <= 0 {
		return Prediction{}, fmt.Errorf("no wait for an expert to remove")
	}
	extraMovingUs = math.Max(extraMovingUs, 0)
	p := Prediction{Knob: "expert_balance", Value: "balanced routing", StepTimeUs: stepUs - waitUs,
		Low: stepUs - waitUs - extraMovingUs, High: stepUs - 0.5*waitUs, Confidence: "medium"}
	p.ExposedUs = math.Max(commShare*stepUs-waitUs, 0)
	p.CommShare = p.ExposedUs / p.StepTimeUs
	p.Assumptions = []string{fmt.Sprintf("priced for the hot rank's experts taking the group's median tokens: the %.3f ms per step the others wait for it gone (at best also its %.3f ms of extra transfers; at worst half the wait); how far a loss coefficient or a capacity factor gets there is not modelled",
		waitUs/1e3, extraMovingUs/1e3)}
	return p, nil
}
