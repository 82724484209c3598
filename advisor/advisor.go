package advisor

import (
	"fmt"
	"slices"

	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/analysis"
)

// Advice is the advisor's output: what is wrong and what to change, the report's
// verdict and the --fail-on gates, all decided here; the report renders them and the
// driver reads the exit code from Gates.
type Advice struct {
	// Verdict is the report's one line (Verdict): the diagnosis' title, else the
	// exposed share read against the budget.
	Verdict string
	// Gates are opts.Gates evaluated on the run's summary metrics (FailedGates
	// lists those that did not hold).
	Gates []GateResult
	// Diagnosis is what holds the step back most (Diagnose).
	Diagnosis Diagnosis
	// Detections are the slow ranks, links and nodes and the checks that fired
	// (Detect), which the findings and the diagnosis read.
	Detections      Detections
	Findings        []Finding
	Recommendations []Recommendation
	// Notes say why a recommendation is missing or what the model could not fit.
	Notes []string
}

// Advise reads an analysis and the run's environment variables for the diagnosis,
// findings and recommendations. opts says what the profile cannot: the framework ("":
// PyTorch DDP) and the micro-batches per optimizer step; HCCL_BUFFSIZE and the other
// run facts come from env (Facts).
func Advise(res *analysis.Result, env Env, opts Options) Advice {
	opts = opts.withDefaults()
	facts := Facts(res, env, opts)
	// The cost model is fitted once: the findings and the recommendations price with it.
	fit := costmodel.Fit(res, facts.Accumulation, facts.BuffsizeBytes)
	det := detect(res, opts.Detect, func() []costmodel.LinkFit { return fit.Links })
	diag := Diagnose(res, det, opts)
	a := Advice{Verdict: Verdict(diag, res.Summary, opts.CommBudget), Gates: EvaluateGates(opts.Gates, res.Summary.Metrics()),
		Diagnosis: diag, Detections: det, Findings: findings(res, det, env, facts, fit, opts)}
	if waitingCause(diag.Cause) {
		// The diagnosis says whom the collectives wait for: the generic "mostly
		// waiting" finding would only repeat it less precisely.
		a.Findings = slices.DeleteFunc(a.Findings, func(f Finding) bool { return f.ID == "comm_mostly_waiting" })
	}
	a.Findings = append(causeFindings(res, det, diag, opts.Thresholds.Diagnosis), a.Findings...)
	a.Findings = append(a.Findings, distributedOptimizerFindings(res, opts.Thresholds.Stake)...)
	a.Findings = append(a.Findings, tpPlacementFindings(res)...)
	a.Findings = append(a.Findings, tpPlacementUnknown(res)...)
	sortFindings(a.Findings)
	var more []Finding
	a.Recommendations, a.Notes, more = recommend(res, det, facts, fit, opts)
	if facts.AccumulationNote != "" {
		a.Notes = append([]string{facts.AccumulationNote}, a.Notes...)
	}
	if len(more) > 0 {
		a.Findings = append(a.Findings, more...)
		sortFindings(a.Findings)
	}
	if waitingCause(diag.Cause) && len(a.Recommendations) > 0 {
		// Faster data movement does not shorten waiting: buckets, algorithms and
		// buffers are priced on the transfer part only, which is not what leads.
		a.Notes = append(a.Notes, fmt.Sprintf("%d cost-model change(s) not proposed: the exposed communication is mostly waiting (%s), which moving data faster does not shorten",
			len(a.Recommendations), diag.Cause))
		a.Recommendations = nil
	}
	// Tensor-parallel collectives on the critical path: hidden behind the GEMMs
	// (issue 37), priced and ranked with the others.
	// (Not while a slow rank, link or server is found: recommend says so.)
	if !waitingCause(diag.Cause) {
		r, note := tpRecommendation(res, facts)
		switch {
		case r != nil && !det.faulty(res.Communication):
			a.Recommendations = insertByGain(a.Recommendations, *r)
		case r == nil && note != "":
			a.Notes = append(a.Notes, note)
		}
	}
	// FSDP prefetch, the MoE capacity factor, TP inside a server (issue 37).
	a.Recommendations, a.Notes = settingRecommendations(res, det, diag, facts, a.Recommendations, a.Notes)
	// The bubble's own cure comes first: more micro-batches per step; uneven
	// stages', an even layer split.
	if r, note := expertRecommendation(res, diag); r != nil {
		a.Recommendations = append([]Recommendation{*r}, a.Recommendations...)
	} else if note != "" {
		a.Notes = append(a.Notes, note)
	}
	for _, cure := range []func(*analysis.Result, Diagnosis, string) (*Recommendation, string){pipelineRecommendation, layerSplitRecommendation} {
		if r, note := cure(res, diag, facts.Framework); r != nil {
			a.Recommendations = append([]Recommendation{*r}, a.Recommendations...)
		} else if note != "" {
			a.Notes = append(a.Notes, note)
		}
	}
	return a
}
