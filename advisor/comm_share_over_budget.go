package advisor

import (
	"fmt"
	"math"

	"github.com/hcclprof/hcclprof/analysis"
)

// OverlapThresholds decide exposed_comm_could_overlap: exposed communication is over
// MinExposedShare of the step while less than MaxOverlapRatio of the communication
// overlaps, and compute, over MinComputeShare of the step, is there to hide it behind.
type OverlapThresholds struct {
	MinExposedShare float64
	MaxOverlapRatio float64
	MinComputeShare float64
}

// defaultOverlapThresholds are exposed_comm_could_overlap's defaults.
var defaultOverlapThresholds = OverlapThresholds{MinExposedShare: 0.10, MaxOverlapRatio: 0.5, MinComputeShare: 0.2}

func (t *OverlapThresholds) keys() []thresholdKey {
	return []thresholdKey{{"min_exposed_share", &t.MinExposedShare, 0, 1}, {"max_overlap_ratio", &t.MaxOverlapRatio, 0, 1}, {"min_compute_share", &t.MinComputeShare, 0, 1}}
}

// budgetFindings decides comm_share_over_budget (the exposed share above the budget)
// and exposed_comm_could_overlap.
func budgetFindings(res *analysis.Result, opts Options) []Finding {
	th := opts.Thresholds.Overlap
	s := res.Summary
	if s.Ranks == 0 || s.CommTotalShare == 0 {
		return nil
	}
	var out []Finding
	worst := worstStep(res)
	if s.CommShare > opts.CommBudget {
		out = append(out, Finding{ID: "comm_share_over_budget", Severity: High,
			Title: fmt.Sprintf("Exposed communication is %.1f%% of the step, above the %.0f%% budget", 100*s.CommShare, 100*opts.CommBudget),
			Evidence: fmt.Sprintf("mean step time (Stage) %.3f ms, of which %.3f ms is communication not overlapped with compute; worst: rank %d step %s at %.1f%%",
				float64(s.StepTimeNs)/1e6, s.CommShare*float64(s.StepTimeNs)/1e6, worst.rank, analysis.StepLabel(worst.step.Step), 100*worst.step.CommShare()),
			Refs: []Ref{{Rank: worst.rank, Step: worst.step.Step}}})
	}
	// Communication that runs alone although most of it could hide behind compute.
	if s.OverlapRatio != nil && s.CommShare > th.MinExposedShare && *s.OverlapRatio < th.MaxOverlapRatio {
		var comp, stage int64
		for _, r := range res.Ranks {
			for _, st := range r.Steps {
				comp += st.ComputingNs
				stage += st.StageNs
			}
		}
		if stage > 0 && float64(comp)/float64(stage) > th.MinComputeShare {
			out = append(out, Finding{ID: "exposed_comm_could_overlap", Severity: Medium,
				Title: overlapTitle(*s.OverlapRatio),
				Evidence: fmt.Sprintf("compute is %.1f%% of the step and communication %.1f%%, but %.1f%% of the step is communication alone",
					100*float64(comp)/float64(stage), 100*s.CommTotalShare, 100*s.CommShare)})
		}
	}
	return out
}

type rankStep struct {
	rank int
	step analysis.StepBreakdown
}

func worstStep(res *analysis.Result) rankStep {
	var w rankStep
	best := -1.0
	for _, r := range res.Ranks {
		for _, st := range r.Steps {
			if sh := st.CommShare(); sh > best {
				best, w = sh, rankStep{r.Rank, st}
			}
		}
	}
	return w
}

// overlapTitle is exposed_comm_could_overlap's title: "None" rather than "Only 0%".
func overlapTitle(ratio float64) string {
	if math.Round(100*ratio) == 0 {
		return "None of the communication overlaps compute"
	}
	return fmt.Sprintf("Only %.0f%% of the communication overlaps compute", 100*ratio)
}
