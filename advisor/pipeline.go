package advisor

import (
	"fmt"
	"math"
	"slices"

	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/profile"
)

// Micro-batches per stage the advice aims at: with m ≥ 4p the GPipe/1F1B bubble,
// (p−1)/(m+p−1), is under a fifth of the step.
const microbatchesPerStage = 4

// pipelineRecommendation cures a pipeline bubble with more micro-batches per step.
// A step of GPipe or 1F1B with p balanced stages and m micro-batches spans
// (m+p−1)·t + rest, t the slowest stage's compute per micro-batch and rest what
// does not repeat per micro-batch (the optimizer, the gradient synchronisation):
// both are read from the run, and the step with m' micro-batches is priced the same
// way. The gain is for today's samples: m micro-batches take m/m' of the new step.
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
	in, span, tail, bubbleUs := pipelineSteps(res, pl)
	if span == 0 {
		return nil, ""
	}
	// A micro-batch's time on the slowest stage: its compute, and its sends and
	// receives moving data (the activations and their gradients each micro-batch
	// carries; the waits in them are the bubble, not work).
	perMicro := (float64(slices.Max(pl.StageComputingNs))/1e3 - tail + p2pMovingUs(res, in)) / float64(m)
	if perMicro <= 0 {
		return nil, ""
	}
	rest := span - float64(m+p-1)*perMicro
	// The step is the pipeline's span, Stage + Bubble: the profiler's Stage leaves the
	// Bubble (the time in receives) out, but a rank waits through it, and the bubble
	// is what more micro-batches shrink. A step of m' micro-batches spans (m'+p−1)
	// micro-batch times and what does not repeat.
	predicted := float64(target+p-1)*perMicro + rest
	// For today's samples: m micro-batches take m/m' of the new step.
	scale := float64(target) / float64(m)
	gain := span - predicted/scale
	if gain <= 0 || predicted <= 0 {
		return nil, ""
	}
	bubble := func(m int) float64 { return float64(p-1) / float64(m+p-1) }
	// The model's own error: how far the measured bubble is from the theory's at m,
	// carried to the new step in proportion.
	errUs := abs(pl.MeasuredBubble-bubble(m)) * span * float64(target+p-1) / float64(m+p-1)
	// and the stages' waits for each other, which shift the bubble (the generator's
	// runs: within a quarter of it).
	errUs += bubbleUs / 4
	// The exposed communication outside the bubble does not repeat per micro-batch.
	exposedUs := res.Summary.CommShare * float64(res.Summary.StepTimeNs) / 1e3
	stageUs := predicted
	knob, how := Apply(Setting{Knob: "microbatches", Microbatches: target}, framework)
	r := &Recommendation{ID: "pipeline_microbatches", Knob: knob, Value: fmt.Sprint(target), Apply: how, GainUs: gain,
		Confidence: "medium", SamplesScale: scale, TodayUs: span,
		Predicted: costmodel.Prediction{Knob: "microbatches", Value: fmt.Sprint(target), StepTimeUs: predicted,
			Low: predicted - errUs, High: predicted + errUs, CommShare: exposedUs / stageUs, ExposedUs: exposedUs, Confidence: "medium", Span: true},
		Assumptions: []string{
			fmt.Sprintf("GPipe/1F1B with %d balanced stages: a step spans (m+p−1) micro-batch times of the slowest stage (%.3f ms, its compute per micro-batch) plus %.3f ms that does not repeat per micro-batch (the optimizer, the gradient synchronisation), as measured at m = %d", p, perMicro/1e3, rest/1e3, m),
			fmt.Sprintf("the bubble falls from %.0f%% to %.0f%% ((p−1)/(m+p−1)); a micro-batch then takes %.3f ms of the step instead of %.3f ms (%.0f%% less)",
				100*bubble(m), 100*bubble(target), predicted/float64(target)/1e3, span/float64(m)/1e3, 100*(1-predicted/float64(target)/(span/float64(m)))),
			fmt.Sprintf("the step is the pipeline's span, the Stage the profiler reports and its Bubble (%.3f ms of receives now): the bubble is time the ranks wait through, and what this cure shrinks; the predicted step holds %d micro-batches instead of %d", bubbleUs/1e3, target, m),
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

// layerSplitRecommendation prices the cure of uneven stages: the layers moved so
// that every stage computes the same per micro-batch. A step of GPipe or 1F1B spans
// (m+p−1) micro-batch times of the slowest stage; balanced, of the mean stage, the
// work being the same. The step is the pipeline's span (Stage + Bubble: the faster
// stages' waiting is the Bubble this shortens), and the samples are today's.
func layerSplitRecommendation(res *analysis.Result, d Diagnosis, framework string) (*Recommendation, string) {
	if d.Cause != CauseStageImbalance {
		return nil, ""
	}
	pl, _ := mostImbalanced(res.Communication.Pipelines)
	if pl == nil || pl.Microbatches < 1 {
		return nil, "no layer-split price: the pipeline's micro-batches per step are not known (give --microbatches)"
	}
	if framework == FrameworkMindSpore {
		return nil, "no layer-split advice for MindSpore: its pipeline's stage split is not a knob the advisor names"
	}
	p, m := pl.Stages, pl.Microbatches
	_, span, tail, _ := pipelineSteps(res, pl)
	if span == 0 {
		return nil, ""
	}
	var perMicro []float64 // each profiled stage's compute per micro-batch, µs
	for i, c := range pl.StageComputingNs {
		if pl.StageProfiled[i] {
			perMicro = append(perMicro, (float64(c)/1e3-tail)/float64(m))
		}
	}
	if len(perMicro) < p {
		return nil, fmt.Sprintf("no layer-split price: %d of the pipeline's %d stages were profiled", len(perMicro), p)
	}
	slowest, mean := slices.Max(perMicro), 0.0
	for _, c := range perMicro {
		mean += c / float64(len(perMicro))
	}
	saved := float64(m+p-1) * (slowest - mean)
	predicted := span - saved
	if saved <= 0 || predicted <= 0 {
		return nil, ""
	}
	slow := slices.Index(perMicro, slowest)
	value := fmt.Sprintf("fewer layers on stage %d (about %.0f%% fewer), more on the others", slow, 100*(1-mean/slowest))
	how := fmt.Sprintf("split the layers so that every stage computes about %.3f ms per micro-batch (stage %d computes %.3f ms): %s", mean/1e3, slow, slowest/1e3, splitFlags(framework, slow, p))
	knob := "--decoder-first-pipeline-num-layers + --decoder-last-pipeline-num-layers"
	// The model's error: the stages' own per-micro-batch noise is in their means;
	// the schedule's (m+p−1) is the theory's, off by the measured bubble's distance
	// from it when m is known.
	errUs := saved / 4
	if pl.Microbatches > 0 {
		theory := float64(p-1) / float64(m+p-1)
		errUs += math.Abs(pl.MeasuredBubble-theory) * span
	}
	exposedUs := res.Summary.CommShare * float64(res.Summary.StepTimeNs) / 1e3
	r := &Recommendation{ID: "pipeline_layer_split", Knob: knob, Value: value, Apply: how, GainUs: saved,
		Confidence: "medium", SamplesScale: 1, TodayUs: span,
		Predicted: costmodel.Prediction{Knob: "layer_split", Value: value, StepTimeUs: predicted, Low: predicted - errUs, High: predicted + errUs,
			CommShare: exposedUs / predicted, ExposedUs: exposedUs, Confidence: "medium", Span: true},
		Assumptions: []string{
			fmt.Sprintf("GPipe/1F1B: a step spans (m+p−1) = %d micro-batch times of the slowest stage; balanced, of the mean stage (%.3f ms instead of %.3f ms), the layers' work being the same", m+p-1, mean/1e3, slowest/1e3),
			fmt.Sprintf("the step is the pipeline's span, the Stage the profiler reports and its Bubble (the faster stages waiting in receives): %.3f ms now", span/1e3),
			"layers move whole: the split reachable is the nearest whole-layer one, and the first and last stages also carry the embedding and the loss (Megatron: --account-for-embedding-in-pipeline-split, --account-for-loss-in-pipeline-split)",
		},
		Risks:    []string{"a stage given more layers holds more activations and parameters: check its memory"},
		Settings: []costmodel.Setting{{Knob: "even_stages", Value: 1}},
	}
	return r, ""
}

// splitFlags says how to move layers off stage slow of p.
func splitFlags(framework string, slow, p int) string {
	const mindspeed = " (MindSpeed-LLM: --num-layer-list, one count per stage)"
	switch slow {
	case 0:
		return "lower --decoder-first-pipeline-num-layers (the other stages share the rest)" + mindspeed
	case p - 1:
		return "lower --decoder-last-pipeline-num-layers (the other stages share the rest)" + mindspeed
	}
	return "the middle stages share what --decoder-first-pipeline-num-layers and --decoder-last-pipeline-num-layers leave: raise those two to thin the middle" + mindspeed
}

// p2pMovingUs is the most any of ranks spends moving data in point-to-point ops
// per step (the activations and gradients a pipeline passes each micro-batch), µs.
func p2pMovingUs(res *analysis.Result, ranks map[int]bool) float64 {
	type rankStep struct{ rank, step int }
	moving := map[rankStep]float64{}
	steps := map[int]map[int]bool{}
	for _, o := range res.Communication.Ops {
		if !ranks[o.Rank] || !profile.IsP2P(o.Name) {
			continue
		}
		moving[rankStep{o.Rank, o.Step}] += float64(o.MovingNs) / 1e3
		if steps[o.Rank] == nil {
			steps[o.Rank] = map[int]bool{}
		}
		steps[o.Rank][o.Step] = true
	}
	most := 0.0
	for r, ss := range steps {
		var sum float64
		for st := range ss {
			sum += moving[rankStep{r, st}]
		}
		most = max(most, sum/float64(len(ss)))
	}
	return most
}

// pipelineSteps is a pipeline's ranks and their means per step, µs: the span (Stage
// + Bubble), the compute after the last collective (the optimizer) and the Bubble;
// a span of 0 when none of its ranks has steps.
func pipelineSteps(res *analysis.Result, pl *analysis.Pipeline) (in map[int]bool, span, tail, bubble float64) {
	in = map[int]bool{}
	for _, r := range pl.Ranks {
		in[r] = true
	}
	var n float64
	for _, r := range res.Ranks {
		if !in[r.Rank] {
			continue
		}
		for _, st := range r.Steps {
			span += float64(st.StageNs + st.BubbleNs)
			tail += float64(st.TailComputeNs)
			bubble += float64(st.BubbleNs)
			n++
		}
	}
	if n == 0 {
		return in, 0, 0, 0
	}
	return in, span / n / 1e3, tail / n / 1e3, bubble / n / 1e3
}
