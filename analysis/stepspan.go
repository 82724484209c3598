package analysis

import (
	"math"

	"github.com/hcclprof/hcclprof/profile"
)

// StepSpan is the device-time span of one step of a rank's timeline, cut as the step
// breakdown cuts it: from the first compute task or collective that starts in the
// step's device window to the end of the last (the host step itself where device and
// host share a clock). ok is false when the rank has no timeline or no such step (step -1 is
// the whole timeline of a rank without step markers).
func StepSpan(r *profile.Rank, step int) (startNs, endNs int64, ok bool) {
	steps, noMarkers := stepsOrSpan(r)
	for _, w := range deviceWindows(steps, r.Flows) {
		if w.step.Step != step && !noMarkers {
			continue
		}
		lo, hi := w.startNs, w.endNs
		if r.ClipToStepWindows && !noMarkers {
			return w.step.StartNs, w.step.EndNs, w.step.EndNs > w.step.StartNs
		}
		first, last := int64(math.MaxInt64), int64(math.MinInt64)
		for _, iv := range inWindow(r.Compute, lo, hi) {
			first, last = min(first, iv.StartNs), max(last, iv.EndNs)
		}
		for _, op := range opsInWindow(r.CommOps, lo, hi) {
			first, last = min(first, op.StartNs), max(last, op.EndNs)
		}
		if last <= first {
			return 0, 0, false
		}
		return first, last, true
	}
	return 0, 0, false
}
