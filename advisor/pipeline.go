package advisor

import (
	"fmt"
	"slices"

	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/analysis"
)

// Micro-batches per stage the advice aims at: with m ≥ 4p the GPipe/1F1B bubble,
// (p−1)/(m+p−1), is under a fifth of the step.
const microbatchesPerStage = 4

// pipelineRecommendation cures a pipeline bubble with more micro-batches per step.
// A step of GPipe or 1F1B with p balanced stages and m micro-batches spans
// (m+p−1)·t + rest, t the slowest stage's compute per micro-batch and rest what
// does not repeat per micro-batch (the optimizer, the gradient synchronisation):
// both are read from the run, and the step with m' micro-batches is priced the same
// way. The gain is for the same samples: m' micro-batches now take m'/m steps.
func pipelineRecommendation(res *analysis.Result, d Diagnosis, framework string) (*Recommendation, string) {
	if d.Cause != CausePipelineBubble {
		return nil, ""
	}
	pl := analysis.WorstBubble(res.Communication.Pipelines)
	if pl == nil || pl.Microbatches < 1 || pl.Stages < 2 || len(pl.StageComputingNs) == 0 {
		return nil, "no micro-batch advice: the pipeline's micro-batches per step are not known (give --microbatches)"
	}
	if !pl.BubbleKnown() {
		return nil, "no micro-batch advice: the pipeline's bubble is not measured: " + pl.BubbleUnmeasured
	}
	if framework == FrameworkMindSpore {
		return nil, "no micro-batch advice for MindSpore: its pipeline's micro_size is not a knob the advisor names"
	}
	p, m := pl.Stages, pl.Microbatches
	target := m
	for target < microbatchesPerStage*p {
		target *= 2
	}
	if target == m {
		return nil, ""
	}
	// The pipeline's ranks: their span (Stage + Bubble) and optimizer per step.
	in := map[int]bool{}
	for _, r := range pl.Ranks {
		in[r] = true
	}
	var span, tail, bubbleUs, n float64
	for _, r := range res.Ranks {
		if !in[r.Rank] {
			continue
		}
		for _, st := range r.Steps {
			span += float64(st.StageNs + st.BubbleNs)
			tail += float64(st.TailComputeNs)
			bubbleUs += float64(st.BubbleNs)
			n++
		}
	}
	if n == 0 {
		return nil, ""
	}
	span, tail, bubbleUs = span/n/1e3, tail/n/1e3, bubbleUs/n/1e3
	perMicro := (float64(slices.Max(pl.StageComputingNs))/1e3 - tail) / float64(m)
	if perMicro <= 0 {
		return nil, ""
	}
	rest := span - float64(m+p-1)*perMicro
	// The step time reported (Stage) leaves the Bubble out. The bubble's length,
	// (p−1) micro-batch times of the stages before, does not grow with m: the step
	// with m' micro-batches is the new span less the bubble measured now.
	predicted := float64(target+p-1)*perMicro + rest - bubbleUs
	gain := (span-bubbleUs)*float64(target)/float64(m) - predicted
	if gain <= 0 || predicted <= 0 {
		return nil, ""
	}
	bubble := func(m int) float64 { return float64(p-1) / float64(m+p-1) }
	// The model's own error: how far the measured bubble is from the theory's at m,
	// carried to the new step in proportion.
	errUs := abs(pl.MeasuredBubble-bubble(m)) * span * float64(target+p-1) / float64(m+p-1)
	// and the bubble's length, taken as unchanged with more micro-batches: it shifts
	// with the stages' waits for each other (the generator's runs: within half of it).
	errUs += bubbleUs / 2
	// The exposed communication outside the bubble does not repeat per micro-batch.
	exposedUs := res.Summary.CommShare * float64(res.Summary.StepTimeNs) / 1e3
	stageUs := predicted
	knob, how := Apply(Setting{Knob: "microbatches", Microbatches: target}, framework)
	r := &Recommendation{ID: "pipeline_microbatches", Knob: knob, Value: fmt.Sprint(target), Apply: how, GainUs: gain,
		Confidence: "medium",
		Predicted: costmodel.Prediction{Knob: "microbatches", Value: fmt.Sprint(target), StepTimeUs: predicted,
			Low: predicted - errUs, High: predicted + errUs, CommShare: exposedUs / stageUs, ExposedUs: exposedUs, Confidence: "medium"},
		Assumptions: []string{
			fmt.Sprintf("GPipe/1F1B with %d balanced stages: a step spans (m+p−1) micro-batch times of the slowest stage (%.3f ms, its compute per micro-batch) plus %.3f ms that does not repeat per micro-batch (the optimizer, the gradient synchronisation), as measured at m = %d", p, perMicro/1e3, rest/1e3, m),
			fmt.Sprintf("the bubble falls from %.0f%% to %.0f%% ((p−1)/(m+p−1)); a micro-batch then takes %.3f ms of the step instead of %.3f ms (%.0f%% less)",
				100*bubble(m), 100*bubble(target), predicted/float64(target)/1e3, (span-bubbleUs)/float64(m)/1e3, 100*(1-predicted/float64(target)/((span-bubbleUs)/float64(m)))),
			fmt.Sprintf("the step time is the Stage the profiler reports, without the Bubble (%.3f ms now, the same length with more micro-batches); the predicted step holds %d micro-batches instead of %d", bubbleUs/1e3, target, m),
		},
		Risks: []string{
			"with the micro-batch size kept, the global batch grows: retune the learning rate; lowering the micro-batch size instead keeps it but each smaller micro-batch may compute less efficiently",
			"interleaving (--num-layers-per-virtual-pipeline-stage) also shrinks the bubble, by the virtual stages per rank, at the cost of more point-to-point traffic: not priced here",
		},
		Settings: []costmodel.Setting{{Knob: "microbatches", Value: float64(target)}},
	}
	return r, ""
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
