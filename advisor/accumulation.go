package advisor

import (
	"fmt"
	"maps"
	"slices"

	"github.com/hcclprof/hcclprof/analysis"
)

// accumulationAgreement is the share of rank-steps that must show the same number of
// backward passes for it to be taken as the run's accumulation.
const accumulationAgreement = 0.8

// InferAccumulation reads the micro-batches per optimizer step from the compute
// pattern: the backward passes each rank-step shows (analysis.StepBreakdown
// MicroBatches), the most common count when at least 80% of the rank-steps agree.
// The note says the count used when it is 2 or more, or warns when the count is
// ambiguous (0 is then returned). 0 without a note: the profile cannot say (no
// kernel names that mark a backward pass) or the run is pipeline-parallel, whose
// micro-batches are the pipeline's schedule.
func InferAccumulation(res *analysis.Result) (int, string) {
	if len(res.Communication.Pipelines) > 0 {
		return 0, ""
	}
	count := map[int]int{}
	total := 0
	for _, r := range res.Ranks {
		for _, st := range r.Steps {
			if st.HasStep && st.MicroBatches > 0 {
				count[st.MicroBatches]++
				total++
			}
		}
	}
	if total == 0 {
		return 0, "" // nothing says otherwise: one micro-batch, as before
	}
	best := 0
	for _, n := range slices.Sorted(maps.Keys(count)) {
		if count[n] > count[best] {
			best = n
		}
	}
	share := float64(count[best]) / float64(total)
	if share < accumulationAgreement {
		return 0, fmt.Sprintf("micro-batches per step ambiguous: %d backward passes per step on %.0f%% of the rank-steps, other counts on the rest; the predictions assume 1: give --grad-accumulation N",
			best, 100*share)
	}
	if best == 1 {
		return 1, "" // no accumulation: nothing to say
	}
	return best, fmt.Sprintf("micro-batches per step: %d, inferred from the compute pattern (%d backward passes before the gradient synchronisation on %.0f%% of %d rank-steps); the predictions use it (--grad-accumulation overrides)",
		best, best, 100*share, total)
}
