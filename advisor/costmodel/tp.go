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
	if !c.SeqPar {
		p.Assumptions = append(p.Assumptions, "with sequence parallelism each AllReduce becomes a ReduceScatter and an AllGather of the same bytes, taken to cost what the AllReduce costs")
	}
	return p, nil
}
