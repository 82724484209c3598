package advisor

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/units"
)

// Recommendation is one change to make, with how to make it and what the calibrated
// model predicts. A recommendation the model cannot back is a Hypothesis.
type Recommendation struct {
	ID        string
	Knob      string // the setting's name, from Knobs
	Value     string
	Apply     string // the exact way to set it for the framework
	Predicted costmodel.Prediction
	GainUs    float64 // step time saved for the same samples
	// SamplesScale is the samples of a step after the change over today's (more
	// micro-batches per step: 16/4 = 4); 1 when a step holds the same samples.
	// TodayUs is today's step time, for the report to set the two side by side.
	SamplesScale float64
	TodayUs      float64
	Confidence   string
	Hypothesis   bool
	Assumptions  []string
	Risks        []string
	Settings     []costmodel.Setting // the plan, for replaying it (the generator, whatif)
}

// RecommendThresholds decide which changes are recommended and in what order, as
// shares of the step: the configuration file's findings.recommendations section.
type RecommendThresholds struct {
	// NegligibleShare: a change worth less is not listed at all (the notes count them).
	NegligibleShare float64
	// MinGainShare: the smallest gain the model backs (beyond its own uncertainty);
	// under it a change is a hypothesis, a bucket size is not changed, and a forced
	// HCCL_ALGO is not unset.
	MinGainShare float64
	// OverlapBelow and OverlapExposedShare: overlap is recommended when buckets are
	// launched over less of the backward pass than OverlapBelow and their exposed
	// communication is over OverlapExposedShare of the step.
	OverlapBelow, OverlapExposedShare float64
	// ForceAlgoShare: forcing a level-1 algorithm must beat HCCL's own choice by this
	// much (and beyond the model's uncertainty).
	ForceAlgoShare float64
	// LastResortRatio: a forced algorithm goes below the changes that gain this part
	// of its gain or more.
	LastResortRatio float64
}

// defaultRecommendThresholds are the recommendations' defaults.
var defaultRecommendThresholds = RecommendThresholds{NegligibleShare: 0.005, MinGainShare: 0.01,
	OverlapBelow: 0.5, OverlapExposedShare: 0.05, ForceAlgoShare: 0.03, LastResortRatio: 0.8}

func (t *RecommendThresholds) keys() []thresholdKey {
	return []thresholdKey{{"negligible_share", &t.NegligibleShare, 0, 1}, {"min_gain_share", &t.MinGainShare, 0, 1},
		{"overlap_below", &t.OverlapBelow, 0, 1}, {"overlap_exposed_share", &t.OverlapExposedShare, 0, 1},
		{"force_algo_share", &t.ForceAlgoShare, 0, 1}, {"last_resort_ratio", &t.LastResortRatio, 0, 1}}
}

// recommend builds the recommendations from the fitted gradient synchronisation:
// a better bucket size, an HCCL_BUFFSIZE that removes rounds, and, when exposed
// communication stays above the budget, gradient accumulation; ranked by gain.
// Nothing is tuned while a rank, link or node is broken: the findings say which.
func recommend(res *analysis.Result, det Detections, facts RunFacts, fit *costmodel.RunFit, opts Options) ([]Recommendation, []string, []Finding) {
	c := res.Communication
	th := opts.Thresholds.Recommend
	if det.faulty(c) {
		return nil, []string{"no tuning is recommended while a slow rank, link or server or a retransmission is found: fix it first (see the findings); no setting makes a broken server faster"}, nil
	}
	bk, err := fit.Bucketing()
	if err != nil {
		return nil, []string{"no recommendation from the cost model: " + err.Error()}, nil
	}
	bk.HCCLAlgoForced = ForcedLevel1(facts.HCCLAlgo, "allreduce") != ""
	bk.Deterministic = facts.Deterministic
	bk.AccumulationSpan = facts.AccumulationSpan
	bk.UseCalibration(opts.Calibration)
	rp := &recommender{bk: bk, facts: facts, th: th, risksOf: map[string][]string{}}
	var notes []string
	var found []Finding
	if f, ok := stormFinding(bk, opts.Thresholds.Storm); ok {
		found = append(found, f)
		if r := rp.add("fuse_small_collectives", []costmodel.Setting{{Knob: "fuse", Value: 1}}, facts.Accumulation,
			"fusing changes the code that issues them: one flat buffer holds every tensor, its memory is allocated once"); r != nil {
			r.Apply = fuseApply(bk.Storm)
		}
	}
	plan := rp.overlap()
	plan = rp.bucketSize(plan)
	rp.buffsize()
	// A model that computes in 16 bits whose gradients are reduced in fp32: reduce
	// them in its own type, half the bytes (DDP's bf16_compress_hook, Megatron's
	// --grad-reduce-in-bf16, DeepSpeed's communication_data_type).
	if dt := res.ComputeDType; bk.ElementBytes == 4 && (dt == "BF16" || dt == "FP16") && res.ComputeDTypeShare >= 0.5 {
		rp.add("grad_reduce_16bit", append(slices.Clone(plan), costmodel.Setting{Knob: "grad_bytes", Value: 2}), facts.Accumulation,
			fmt.Sprintf("gradients summed in %s lose precision over many ranks: check the loss curve against an fp32-reduced run (Megatron keeps the main gradients and the optimizer in fp32)", strings.ToLower(dt)))
	}
	// The level-1 algorithm: priced after the plan so far (its gain is what it adds
	// to the changes before it), against HCCL's own choice for the new sizes; a
	// forced HCCL_ALGO that HCCL's own choice beats is unset; forcing another is a
	// last resort (docs/costmodel.md §7), only when it beats HCCL's choice beyond the
	// model's uncertainty and 3% of the step.
	if r := algorithmAdvice(bk, plan, facts, th); r != nil {
		if rec := rp.add(r.id, r.plan, facts.Accumulation, r.risks...); rec != nil {
			rec.Assumptions = append(rec.Assumptions, r.assumptions...)
			if r.id == "unset_hccl_algo" {
				rec.Value = "unset"
			}
		}
	}
	notes = rp.accumulation(plan, len(res.Communication.Pipelines) > 0, opts.CommBudget, notes)
	kept, notes := rp.ranked(notes)
	return kept, append(notes, bk.Notes...), found
}

// recommender collects the recommendations priced on the fitted gradient
// synchronisation.
type recommender struct {
	bk    *costmodel.Bucketing
	facts RunFacts
	th    RecommendThresholds
	out   []Recommendation
	// risksOf are the risks of each knob recommended so far, which a plan that
	// builds on it carries.
	risksOf map[string][]string
}

// gain is what a prediction saves per step of today's samples, at acc micro-batches.
func (rp *recommender) gain(p costmodel.Prediction, acc int) float64 {
	return rp.bk.StepUs - p.StepTimeUs*float64(rp.facts.Accumulation)/float64(acc)
}

// add prices a plan at acc micro-batches and, when the model predicts a gain,
// recommends it (how to apply each knob in the run's framework; a hypothesis when
// the gain is within the model's uncertainty) and returns it; else nil.
func (rp *recommender) add(id string, plan []costmodel.Setting, acc int, risks ...string) *Recommendation {
	bk, facts := rp.bk, rp.facts
	p, err := bk.WhatIfPlan(plan)
	if err != nil {
		return nil
	}
	// A plan carries the risks of the changes it builds on.
	var all []string
	for _, s := range plan[:len(plan)-1] {
		all = append(all, rp.risksOf[s.Knob]...)
	}
	rp.risksOf[plan[len(plan)-1].Knob] = risks
	for _, rk := range risks {
		if !slices.Contains(all, rk) {
			all = append(all, rk)
		}
	}
	r := Recommendation{ID: id, Predicted: p, GainUs: rp.gain(p, acc), Confidence: p.Confidence, Assumptions: p.Assumptions,
		Risks: all, Settings: append([]costmodel.Setting(nil), plan...),
		SamplesScale: float64(acc) / float64(facts.Accumulation), TodayUs: bk.StepUs}
	if r.GainUs <= 0 {
		return nil // the model predicts no gain: nothing to recommend
	}
	var knobs, applies, values []string
	for _, s := range plan {
		st := settingOf(s)
		st.ElementBytes = bk.ElementBytes
		k, how := Apply(st, facts.Framework)
		knobs, applies, values = append(knobs, k), append(applies, how), append(values, valueOf(s))
	}
	r.Knob, r.Apply, r.Value = strings.Join(knobs, " + "), strings.Join(applies, "\n"), strings.Join(values, " + ")
	// Below the interval's width or 1% of the step, the model does not back a gain.
	if r.GainUs <= math.Max(p.High-p.Low, rp.th.MinGainShare*bk.StepUs) || r.Confidence == "low" {
		r.Hypothesis = true
	}
	rp.out = append(rp.out, r)
	return &rp.out[len(rp.out)-1]
}

// overlap recommends launching the buckets over more of the backward pass when they
// are launched over little of it, and returns the plan later changes build on (the
// overlap when the framework has a switch for it and the model backs it).
// MindSpore overlaps its fused AllReduces by itself and has no switch for it.
func (rp *recommender) overlap() []costmodel.Setting {
	bk, facts, th := rp.bk, rp.facts, rp.th
	plan := []costmodel.Setting{}
	if f := bk.OverlapFraction(); !bk.WindowBound && f < th.OverlapBelow && bk.GroupExposedUs > th.OverlapExposedShare*bk.StepUs && facts.Framework != FrameworkMindSpore {
		risks := []string{"overlapped communication can slow the backward kernels it runs beside (shared HBM and SDMA bandwidth): the gain may be smaller"}
		switch facts.Framework {
		case FrameworkMegatron:
			risks = append(risks, "--overlap-param-gather also needs --use-distributed-optimizer")
		case FrameworkDeepSpeed:
			risks = append(risks, "overlap_comm keeps extra gradient buffers: more device memory (reduce_bucket_size × 4.5 bytes by DeepSpeed's estimate)")
		case FrameworkDDP:
			risks = append(risks, "static_graph=True requires the same graph every step (no data-dependent branches)")
		}
		if r := rp.add("overlap_grad_reduce", []costmodel.Setting{{Knob: "overlap", Value: 0.9}}, facts.Accumulation, risks...); r != nil {
			if facts.Framework == FrameworkDDP {
				// No switch turns it on: DDP already launches each bucket when ready.
				r.Value, r.Hypothesis = "False (static_graph=True)", true
				r.Assumptions = append(r.Assumptions, "DDP launches a bucket as soon as its gradients are ready: a low overlap means something delays them (find_unused_parameters=True, a large first bucket, gradient hooks, or a model whose last layers hold most parameters)")
			} else if !r.Hypothesis {
				// A switch the framework has: later plans build on it.
				plan = append(plan, r.Settings...)
			}
		}
	}
	return plan
}

// bucketSize recommends the best of a ladder of bucket sizes, on top of the plan so
// far (smaller buckets pay off once they overlap), when it gains beyond the
// threshold, and returns the plan with it.
func (rp *recommender) bucketSize(plan []costmodel.Setting) []costmodel.Setting {
	bk := rp.bk
	base := bk.StepUs
	if len(plan) > 0 {
		if p, err := bk.WhatIfPlan(plan); err == nil {
			base = p.StepTimeUs
		}
	}
	var best *costmodel.Prediction
	var bestSize int64
	current := bk.Buckets[0]
	for _, mib := range []int64{1, 2, 4, 8, 16, 25, 32, 64, 128, 256, 512} {
		size := mib << 20
		if size == current || size > bk.GradientBytes*2 {
			continue
		}
		p, err := bk.WhatIfPlan(append(append([]costmodel.Setting{}, plan...), costmodel.Setting{Knob: "bucket", Value: float64(size)}))
		if err == nil && (best == nil || p.StepTimeUs < best.StepTimeUs) {
			best, bestSize = &p, size
		}
	}
	if best != nil && best.StepTimeUs < base-rp.th.MinGainShare*bk.StepUs {
		plan = append(plan, costmodel.Setting{Knob: "bucket", Value: float64(bestSize)})
		rp.add("bucket_size", plan, rp.facts.Accumulation,
			"larger buckets start communication later in the backward pass; smaller ones add ops")
	}
	return plan
}

// buffsize recommends an HCCL_BUFFSIZE enough for the largest bucket in one round.
func (rp *recommender) buffsize() {
	bk, facts := rp.bk, rp.facts
	maxBucket := int64(0)
	for _, b := range bk.Buckets {
		maxBucket = max(maxBucket, b)
	}
	if t := bk.Topology; t.AllReduceRounds(maxBucket, t.Level1, facts.BuffsizeBytes) > 1 {
		// One round for the largest bucket: the buffer itself, or for HCCL's
		// pipeline executor, which loops over (B − 16 KiB)·p, the bucket's share of
		// it.
		need := maxBucket
		if p := int64(t.RanksPerServer * t.Servers); t.Level1 == "pipeline" && p > 1 {
			need = (maxBucket+p-1)/p + 16<<10
		}
		mb := (need + (1 << 20) - 1) >> 20
		rp.add("hccl_buffsize", []costmodel.Setting{{Knob: "buffsize", Value: float64(mb << 20)}}, facts.Accumulation,
			fmt.Sprintf("each communicator reserves 2 × %d MB of device memory (count every group: dp, tp, pp, ...)", mb))
	}
}

// accumulation recommends gradient accumulation on top of the plan when exposed
// communication stays above the budget (a note instead for a pipeline-parallel run),
// and returns the notes with it.
func (rp *recommender) accumulation(plan []costmodel.Setting, pipelined bool, budget float64, notes []string) []string {
	bk, facts := rp.bk, rp.facts
	share := bk.ExposedUs / bk.StepUs
	if len(plan) > 0 {
		if p, err := bk.WhatIfPlan(plan); err == nil {
			share = p.CommShare
		}
	}
	if share > budget && pipelined {
		notes = append(notes, "no accumulation advice for a pipeline-parallel run: its micro-batches are the pipeline's schedule (more of them shrink the bubble, (p−1)/(m+p−1), at the cost of activation memory)")
	} else if share > budget {
		for _, a := range []int{2, 4, 8, 16} {
			if a <= facts.Accumulation {
				continue
			}
			accPlan := append(append([]costmodel.Setting{}, plan...), costmodel.Setting{Knob: "accumulation", Value: float64(a)})
			p, err := bk.WhatIfPlan(accPlan)
			if err != nil {
				continue
			}
			if p.CommShare <= budget || a == 16 {
				rp.add("gradient_accumulation", accPlan, a,
					fmt.Sprintf("the effective batch grows %d×: retune the learning rate and check convergence", a/facts.Accumulation),
					"memory per micro-batch is unchanged (activations are freed between micro-batches); results are not bit-identical to the unaccumulated run")
				break
			}
		}
	}
	return notes
}

// ranked orders the recommendations (backed ones first, by gain), marks the last
// resorts and leaves out those worth a negligible part of the step (a pipeline
// run's top plan was worth 0.009 ms), with a note that says how many.
func (rp *recommender) ranked(notes []string) ([]Recommendation, []string) {
	out, th, bk := rp.out, rp.th, rp.bk
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Hypothesis != out[j].Hypothesis {
			return !out[i].Hypothesis
		}
		return out[i].GainUs > out[j].GainUs
	})
	lastResort(out, th.LastResortRatio)
	kept := out[:0]
	for _, r := range out {
		if r.GainUs >= th.NegligibleShare*bk.StepUs {
			kept = append(kept, r)
		}
	}
	if dropped := len(out) - len(kept); dropped > 0 {
		notes = append(notes, fmt.Sprintf("%d change(s) worth under %.1f%% of the step (%.3f ms) left out", dropped, 100*th.NegligibleShare, th.NegligibleShare*bk.StepUs/1e3))
	}
	return kept, notes
}

// StormThresholds grade small_collectives by what fusing the small collectives saves,
// as a share of the step: High from HighSaving, Medium from MediumSaving, else Low.
type StormThresholds struct {
	HighSaving, MediumSaving float64
}

// defaultStormThresholds are small_collectives' defaults.
var defaultStormThresholds = StormThresholds{HighSaving: 0.1, MediumSaving: 0.02}

func (t *StormThresholds) keys() []thresholdKey {
	return []thresholdKey{{"high_saving_share", &t.HighSaving, 0, 1}, {"medium_saving_share", &t.MediumSaving, 0, 1}}
}

// stormFinding describes the gradient group's small collectives that are not
// gradient buckets: who issues them, how many, and what fusing them saves.
func stormFinding(bk *costmodel.Bucketing, th StormThresholds) (Finding, bool) {
	st := bk.Storm
	if st == nil || st.PerStep == 0 {
		return Finding{}, false
	}
	sizes := make([]string, len(st.SizesBytes))
	for i, n := range st.SizesBytes {
		sizes[i] = units.FormatBytes(n)
	}
	saving := bk.StepUs
	if p, err := bk.WhatIf(costmodel.Setting{Knob: "fuse", Value: 1}); err == nil {
		saving -= p.StepTimeUs
	}
	sev := Low
	switch share := saving / bk.StepUs; {
	case share >= th.HighSaving:
		sev = High
	case share >= th.MediumSaving:
		sev = Medium
	}
	where := "among the gradient buckets"
	if st.AfterBuckets {
		where = "after the last gradient bucket, exposed"
	}
	return Finding{ID: "small_collectives", Severity: sev, Saving: saving / bk.StepUs,
		Title: fmt.Sprintf("%d small %s ops per step (%s each) are not gradient buckets: fusing them into one would save %.2f ms (%.0f%% of the step)",
			st.PerStep, st.Type, strings.Join(sizes, ", "), saving/1e3, 100*saving/bk.StepUs),
		Evidence: fmt.Sprintf("in group %s, %s to %s, %s per step in all, run %s; they take %.2f ms a step (%.2f ms exposed), one op of the same bytes %.2f ms. A bucket size does not change them: the code that issues them does (the profile has no call stacks: rerun the profiler with with_stack=True to see the caller)",
			bk.Group, st.FirstName, st.LastName, units.FormatBytes(st.BytesPerStep), where, st.MeasuredUs/1e3, st.ExposedUs/1e3, st.FusedUs/1e3),
		Refs: []Ref{{Rank: -1, Step: -1, Op: st.FirstName}}}, true
}

// fuseApply says how to issue the small collectives as one.
func fuseApply(st *costmodel.SmallCollectives) string {
	return fmt.Sprintf("issue the %d small %s ops of a step (%s … %s) as one: flatten the tensors into one buffer (torch._utils._flatten_dense_tensors), reduce it once, copy the results back; or batch them under torch.distributed's coalescing",
		st.PerStep, st.Type, st.FirstName, st.LastName)
}

// lastResort moves an HCCL_ALGO recommendation below the ones after it that gain
// nearly as much (ratio of its gain, 80% by default, or more) at the same footing:
// forcing an algorithm turns off HCCL's own choice at every size, so it is the last
// resort (docs/costmodel.md §7).
func lastResort(out []Recommendation, ratio float64) {
	for i := len(out) - 2; i >= 0; i-- {
		if out[i].ID != "hccl_algo" {
			continue
		}
		for j := i; j+1 < len(out) && out[j+1].Hypothesis == out[j].Hypothesis && out[j+1].GainUs >= ratio*out[j].GainUs; j++ {
			out[j], out[j+1] = out[j+1], out[j]
		}
	}
}

func settingOf(s costmodel.Setting) Setting {
	switch s.Knob {
	case "bucket":
		return Setting{Knob: "bucket", BucketBytes: int64(s.Value)}
	case "buffsize":
		return Setting{Knob: "buffsize", BuffsizeMB: int(int64(s.Value) >> 20)}
	case "accumulation":
		return Setting{Knob: "accumulation", Accumulation: int(s.Value)}
	case "algo":
		if s.Algo == "auto" {
			return Setting{Knob: "algorithm", Op: "allreduce"}
		}
		return Setting{Knob: "algorithm", Op: "allreduce", Algorithm: costmodel.HCCLAlgoName(s.Algo)}
	case "fuse":
		return Setting{Knob: "fuse"}
	case "grad_bytes":
		return Setting{Knob: "grad_dtype"}
	}
	return Setting{Knob: s.Knob}
}

func valueOf(s costmodel.Setting) string {
	switch s.Knob {
	case "bucket":
		return units.FormatBytes(int64(s.Value))
	case "buffsize":
		return fmt.Sprintf("%d MB", int64(s.Value)>>20)
	case "algo":
		if s.Algo == "auto" {
			return "unset"
		}
		return "level1 " + costmodel.HCCLAlgoName(s.Algo)
	case "overlap":
		return fmt.Sprintf("on (buckets over ~%.0f%% of backward)", 100*s.Value)
	case "fuse":
		return "one op per step"
	case "grad_bytes":
		return fmt.Sprintf("gradients reduced in %d bytes per element", int(s.Value))
	}
	return strconv.FormatFloat(s.Value, 'g', -1, 64)
}

// algoAdvice is the level-1 algorithm change the model backs, as a plan.
type algoAdvice struct {
	id          string
	plan        []costmodel.Setting
	risks       []string
	assumptions []string
}

// algorithmAdvice compares, after plan, HCCL's own choice (HCCL_ALGO unset) and every
// level-1 algorithm the shape has, and returns the change worth making: unsetting a
// forced HCCL_ALGO that HCCL's own choice beats, or forcing an algorithm that beats
// HCCL's choice beyond the model's uncertainty and 3% of the step (th's shares); nil
// otherwise.
func algorithmAdvice(bk *costmodel.Bucketing, plan []costmodel.Setting, facts RunFacts, th RecommendThresholds) *algoAdvice {
	t := bk.Topology
	if t.Servers < 2 || t.NCCL {
		return nil
	}
	with := func(s costmodel.Setting) []costmodel.Setting {
		return append(append([]costmodel.Setting{}, plan...), s)
	}
	baseUs := bk.StepUs
	if len(plan) > 0 {
		p, err := bk.WhatIfPlan(plan)
		if err != nil {
			return nil
		}
		baseUs = p.StepTimeUs
	}
	margin := func(p costmodel.Prediction) float64 { return math.Max(th.ForceAlgoShare*bk.StepUs, 2*(p.High-p.Low)) }
	// HCCL's own choice for the plan's largest AllReduce, said in the advice.
	auto, errAuto := bk.WhatIfPlan(with(costmodel.Setting{Knob: "algo", Algo: "auto"}))
	largest := bk.GradientBytes
	if sz := planBucket(plan); sz > 0 {
		largest = min(sz, bk.GradientBytes)
	} else if len(bk.Buckets) > 0 {
		largest = slices.Max(bk.Buckets)
	}
	choice, errChoice := t.HCCLChoice("allreduce", largest, bk.BufferBytes, facts.Deterministic)
	defaultSays := ""
	if errChoice == nil {
		defaultSays = fmt.Sprintf("HCCL's own choice for a %s AllReduce on %s, %d servers × %d NPUs (level 0 %s), with HCCL_ALGO unset: %s (%s)",
			units.FormatBytes(largest), t.Product, t.Servers, t.RanksPerServer, t.Level0, costmodel.HCCLAlgoName(choice.Algo), choice.Reason)
	}
	forced := ForcedLevel1(facts.HCCLAlgo, "allreduce")
	// Unset a forced HCCL_ALGO when HCCL's own choice is faster.
	autoUs := baseUs
	if forced != "" && errAuto == nil {
		autoUs = auto.StepTimeUs
	}
	var best *costmodel.Prediction
	bestAlgo := ""
	for _, a := range t.Level1Options(facts.Deterministic) {
		if forced != "" && a == forced {
			continue
		}
		p, err := bk.WhatIfPlan(with(costmodel.Setting{Knob: "algo", Algo: a}))
		if err == nil && (best == nil || p.StepTimeUs < best.StepTimeUs) {
			best, bestAlgo = &p, a
		}
	}
	if best != nil && autoUs-best.StepTimeUs > margin(*best) {
		risks := []string{"HCCL_ALGO turns off HCCL's automatic choice for AllReduce at every size: re-check small and large messages",
			"set it per op (allreduce=...) so the other collectives keep HCCL's choice"}
		if bestAlgo == "pipeline" {
			risks = append(risks, "A2's pipeline does not work with HCCL_DETERMINISTIC=true")
		}
		var as []string
		if defaultSays != "" {
			as = append(as, defaultSays)
		}
		against, why := "HCCL's own choice", fmt.Sprintf("HCCL's selector prices with fixed figures (δ = 60 µs per step, 20 GiB/s), the model with this run's calibrated links (%s, %s)", t.IntraSource, t.InterSource)
		switch {
		case forced != "":
			against = fmt.Sprintf("HCCL_ALGO=%s as set (replace it), and HCCL's own choice", facts.HCCLAlgo)
		case !bk.AutoLevel1():
			// The run is not at HCCL's choice, and nothing recorded says why.
			against = "the run's level-1 " + costmodel.HCCLAlgoName(t.Level1)
			if errChoice == nil {
				why = fmt.Sprintf("the profile shows level-1 %s where HCCL's selector picks %s for these sizes: something forces it that the profile does not record (HCCL_ALGO set outside the recorded environment, or a per-communicator hcclAlgo)",
					costmodel.HCCLAlgoName(t.Level1), costmodel.HCCLAlgoName(choice.Algo))
			}
		}
		as = append(as, fmt.Sprintf("forcing level-1 %s beats %s by %.2f ms per step after the changes before it (%.1f%% of the step): %s",
			costmodel.HCCLAlgoName(bestAlgo), against, (autoUs-best.StepTimeUs)/1e3, 100*(autoUs-best.StepTimeUs)/bk.StepUs, why))
		return &algoAdvice{id: "hccl_algo", plan: with(costmodel.Setting{Knob: "algo", Algo: bestAlgo}), risks: risks, assumptions: as}
	}
	// Unsetting returns to HCCL's default, which needs no measured gain to be safe:
	// 1% of the step beyond the model's uncertainty is enough.
	if forced != "" && errAuto == nil && baseUs-autoUs > math.Max(th.MinGainShare*bk.StepUs, 2*(auto.High-auto.Low)) {
		as := []string{fmt.Sprintf("HCCL_ALGO=%s forces level-1 %s; unset, HCCL chooses per op and size and saves %.2f ms per step after the changes before it",
			facts.HCCLAlgo, costmodel.HCCLAlgoName(forced), (baseUs-autoUs)/1e3)}
		if defaultSays != "" {
			as = append(as, defaultSays)
		}
		return &algoAdvice{id: "unset_hccl_algo", plan: with(costmodel.Setting{Knob: "algo", Algo: "auto"}),
			risks: []string{"other collectives forced by the same HCCL_ALGO return to HCCL's choice too"}, assumptions: as}
	}
	return nil
}

// planBucket is the bucket size a plan sets (0: none).
func planBucket(plan []costmodel.Setting) int64 {
	for _, s := range plan {
		if s.Knob == "bucket" {
			return int64(s.Value)
		}
	}
	return 0
}

// ForcedLevel1 is the level-1 algorithm HCCL_ALGO forces for op: the op's own clause
// ("allreduce=level0:NA;level1:ring/..."), else the "others" clause, else the common
// form ("level0:NA;level1:ring"); "" when it forces none.
func ForcedLevel1(hcclAlgo, op string) string {
	v := strings.TrimSpace(strings.Trim(strings.TrimSpace(hcclAlgo), `"'`))
	if v == "" {
		return ""
	}
	level1 := func(clause string) string {
		for _, part := range strings.Split(clause, ";") {
			k, a, ok := strings.Cut(strings.TrimSpace(part), ":")
			if ok && strings.EqualFold(strings.TrimSpace(k), "level1") {
				if a = costmodel.NormaliseAlgo(strings.TrimSpace(a)); a != "na" && a != "" {
					return a
				}
			}
		}
		return ""
	}
	if !strings.Contains(v, "=") {
		return level1(v)
	}
	byOp := map[string]string{}
	for _, clause := range strings.Split(v, "/") {
		if name, rest, ok := strings.Cut(clause, "="); ok {
			byOp[costmodel.NormaliseOp(strings.TrimSpace(name))] = rest
		}
	}
	if c, ok := byOp[costmodel.NormaliseOp(op)]; ok {
		return level1(c)
	}
	return level1(byOp["others"])
}
