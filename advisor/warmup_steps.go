package advisor

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/stats"
)

// warmupFindings flags steps much longer than the run's median step. Only the
// leading run of them, from the first profiled step, is warm-up (the first
// iterations compile graphs and build communicators): averages that include them
// mislead, and --skip-steps leaves them out. A long step later in the run is not
// warm-up: it is reported as an outlier with what the profile shows in it (an RDMA
// retransmission and its link), since skipping it would hide a fault. The median
// over ranks of each step's Stage is compared with the median of all steps.
func warmupFindings(res *analysis.Result, th StepThresholds) []Finding {
	steps, stepMedian, byStep := stepMedians(res)
	if len(steps) < 2 {
		return nil
	}
	typical := typicalStep(stepMedian, th)
	var warm, late []string
	var warmRefs, lateRefs []Ref
	leading := true
	for _, st := range steps {
		if stepMedian[st] <= th.LongStepRatio*typical {
			leading = false
			continue
		}
		text := fmt.Sprintf("step %d %.3f ms (%.1f×)", st, stepMedian[st]/1e6, stepMedian[st]/typical)
		retransmitted := false
		for _, rt := range res.Communication.Retransmissions {
			if rt.Step == st {
				text += fmt.Sprintf(": an RDMA retransmission %s in %s waits %.3f s", rt.Link(), rt.Op, float64(rt.TimeNs)/1e9)
				retransmitted = true
				break
			}
		}
		// A retransmission is a fault even in the first step.
		if leading && !retransmitted {
			warm, warmRefs = append(warm, text), append(warmRefs, Ref{Rank: -1, Step: st})
			continue
		}
		leading = false
		late, lateRefs = append(late, text), append(lateRefs, Ref{Rank: -1, Step: st})
	}
	var out []Finding
	if len(warm) > 0 {
		out = append(out, Finding{ID: "warmup_steps", Severity: th.skewSeverity(byStep, warmRefs),
			Title:    fmt.Sprintf("the first %d step(s) are a warm-up far longer than the typical %.3f ms: they skew the averages", len(warm), typical/1e6),
			Evidence: strings.Join(warm, "; ") + ". Leave them out with --skip-steps " + joinSteps(warmRefs) + ".",
			Refs:     warmRefs})
	}
	if len(late) > 0 {
		out = append(out, Finding{ID: "outlier_steps", Severity: th.skewSeverity(byStep, lateRefs),
			Title: fmt.Sprintf("%d step(s) far longer than the typical %.3f ms are outliers, not warm-up", len(late), typical/1e6),
			Evidence: strings.Join(late, "; ") + ". A long step after the run has settled is an event (a retransmission, a checkpoint, a host stall), not warm-up: " +
				"find its cause before leaving it out; every average here includes it.",
			Refs: lateRefs})
	}
	return out
}

// stepMedians is each step's median Stage over the ranks, the steps in order, and
// the Stages behind each.
func stepMedians(res *analysis.Result) ([]int, map[int]float64, map[int][]float64) {
	byStep := map[int][]float64{}
	for _, r := range res.Ranks {
		for _, st := range r.Steps {
			if st.HasStep && st.StageNs > 0 {
				byStep[st.Step] = append(byStep[st.Step], float64(st.StageNs))
			}
		}
	}
	steps := make([]int, 0, len(byStep))
	stepMedian := map[int]float64{}
	for st, v := range byStep {
		sort.Float64s(v)
		stepMedian[st] = stats.MedianSorted(v)
		steps = append(steps, st)
	}
	sort.Ints(steps)
	return steps, stepMedian, byStep
}

// typicalStep is the step the run settles to: the median of the step medians, and
// with two steps the shorter, so a warm-up first step stands out (the median of two
// lies halfway to the warm-up); with more, one short step (a last step cut by the profiler's
// stop) does not become the measure the others are long against.
func typicalStep(stepMedian map[int]float64, th StepThresholds) float64 {
	meds := slices.Collect(maps.Values(stepMedian))
	sort.Float64s(meds)
	if len(meds) == 2 {
		return meds[0]
	}
	return stats.MedianSorted(meds)
}

// WarmupSteps are the leading steps of the run far longer than its typical step
// (LongStepRatio), from the first profiled step on, that no RDMA retransmission
// explains: the warm-up (graph compilation, communicator set-up, allocator growth).
// hcclprof leaves them out of every figure by default (analysis.Options.WarmupSteps).
// At least one typical step must remain.
func WarmupSteps(res *analysis.Result, th StepThresholds) []int {
	steps, stepMedian, _ := stepMedians(res)
	if len(steps) < 2 {
		return nil
	}
	typical := typicalStep(stepMedian, th)
	var warm []int
	for _, st := range steps {
		if stepMedian[st] <= th.LongStepRatio*typical {
			break
		}
		if slices.ContainsFunc(res.Communication.Retransmissions, func(rt analysis.Retransmission) bool { return rt.Step == st }) {
			break
		}
		warm = append(warm, st)
	}
	if len(warm) == len(steps) {
		return nil
	}
	return warm
}

// WarmupText names warm-up steps with their length: "step 1 (Stage 152.300 ms, 2.5×
// the typical 61.000 ms)".
func WarmupText(res *analysis.Result, warm []int, th StepThresholds) string {
	_, stepMedian, _ := stepMedians(res)
	typical := typicalStep(stepMedian, th)
	parts := make([]string, len(warm))
	for i, st := range warm {
		parts[i] = fmt.Sprintf("%d (Stage %.3f ms, %.1f×)", st, stepMedian[st]/1e6, stepMedian[st]/typical)
	}
	word := "step "
	if len(warm) > 1 {
		word = "steps "
	}
	return fmt.Sprintf("%s%s of a typical %.3f ms", word, strings.Join(parts, ", "), typical/1e6)
}

// StepThresholds decide warmup_steps and outlier_steps: a step whose median Stage
// over ranks is above LongStepRatio × the median step is long; the finding is Medium
// when leaving the long steps out moves the mean step by over SkewShare (a skew that
// misleads every average), else Low.
type StepThresholds struct {
	LongStepRatio float64
	SkewShare     float64
}

// DefaultStepThresholds are warmup_steps' and outlier_steps' defaults.
var DefaultStepThresholds = StepThresholds{LongStepRatio: 1.5, SkewShare: 0.1}

func (t *StepThresholds) keys() []thresholdKey {
	return []thresholdKey{{"long_step_ratio", &t.LongStepRatio, 1, 1e3}, {"skew_share", &t.SkewShare, 0, 1}}
}

// skewSeverity is Medium when leaving the steps out moves the mean step by over
// SkewShare, else Low.
func (th StepThresholds) skewSeverity(byStep map[int][]float64, refs []Ref) Severity {
	var all, kept float64
	var nAll, nKept int
	outlier := map[int]bool{}
	for _, r := range refs {
		outlier[r.Step] = true
	}
	for st, v := range byStep {
		for _, x := range v {
			all += x
			nAll++
			if !outlier[st] {
				kept += x
				nKept++
			}
		}
	}
	if nKept > 0 && (all/float64(nAll)-kept/float64(nKept))/(all/float64(nAll)) > th.SkewShare {
		return Medium
	}
	return Low
}

func joinSteps(refs []Ref) string {
	parts := make([]string, len(refs))
	for i, r := range refs {
		parts[i] = strconv.Itoa(r.Step)
	}
	return strings.Join(parts, ",")
}
