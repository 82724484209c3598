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
// When fewer agree (small micro-batches make a forward pass too short to tell the
// passes apart on some rank-steps), the median count is taken and span holds the
// 10th to 90th percentile of the counts: predictions widen their intervals to hold
// both ends. The note says the count used when it is 2 or more, or that it is
// uncertain. 0 without a note: the profile cannot say (no kernel names that mark a
// backward pass) or the run is pipeline-parallel, whose micro-batches are the
// pipeline's schedule.
func InferAccumulation(res *analysis.Result) (n int, span [2]int, note string) {
	if len(res.Communication.Pipelines) > 0 {
		return 0, span, ""
	}
	count := map[int]int{}
	var counts []int
	for _, r := range res.Ranks {
		for _, st := range r.Steps {
			if st.HasStep && st.MicroBatches > 0 {
				count[st.MicroBatches]++
				counts = append(counts, st.MicroBatches)
			}
		}
	}
	total := len(counts)
	if total == 0 {
		return 0, span, "" // nothing says otherwise: one micro-batch, as before
	}
	best := 0
	for _, c := range slices.Sorted(maps.Keys(count)) {
		if count[c] > count[best] {
			best = c
		}
	}
	share := float64(count[best]) / float64(total)
	if share < accumulationAgreement {
		// Passes are only ever merged (a forward pass too short to tell apart), never
		// split: the highest count that recurs is the best reading, the median the
		// low end of what the run may hold.
		slices.Sort(counts)
		median, highest := counts[(total-1)/2], counts[total-1]
		n = median
		for _, c := range slices.Backward(slices.Sorted(maps.Keys(count))) {
			if count[c] >= 2 {
				n = c
				break
			}
		}
		span = [2]int{min(median, n), max(highest, n)}
		return n, span, fmt.Sprintf("micro-batches per step uncertain: the rank-steps show from %d to %d backward passes (%d on %.0f%% of %d); a short forward pass can hide a boundary, never add one, so the predictions take %d, the highest count seen more than once, and their intervals hold %d to %d: give --grad-accumulation N",
			counts[0], highest, best, 100*share, total, n, span[0], span[1])
	}
	if best == 1 {
		return 1, span, "" // no accumulation: nothing to say
	}
	return best, span, fmt.Sprintf("micro-batches per step: %d, inferred from the compute pattern (%d backward passes before the gradient synchronisation on %.0f%% of %d rank-steps); the predictions use it (--grad-accumulation overrides)",
		best, best, 100*share, total)
}
