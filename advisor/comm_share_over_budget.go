package advisor

import (
	"fmt"

	"github.com/hcclprof/hcclprof/analysis"
)

func budgetFindings(res *analysis.Result, opts Options) []Finding {
	s := res.Summary
	if s.Ranks == 0 || s.CommTotalShare == 0 {
		return nil
	}
	var out []Finding
	worst := worstStep(res)
	if s.CommShare > opts.CommBudget {
		out = append(out, Finding{ID: "comm_share_over_budget", Severity: High,
			Title: fmt.Sprintf("Exposed communication is %.1f%% of the step, above the %.0f%% budget", 100*s.CommShare, 100*opts.CommBudget),
			Evidence: fmt.Sprintf("mean Stage %.3f ms of which %.3f ms is communication not overlapped with compute; worst: rank %d step %s at %.1f%%",
				float64(s.StepTimeNs)/1e6, s.CommShare*float64(s.StepTimeNs)/1e6, worst.rank, analysis.StepLabel(worst.step.Step), 100*worst.step.CommShare()),
			Refs: []Ref{{Rank: worst.rank, Step: worst.step.Step}}})
	}
	// Communication that runs alone although most of it could hide behind compute:
	// exposed communication is over 10% of the step while less than half of the
	// communication overlaps, and there is compute to hide it behind.
	if s.CommShare > 0.10 && s.OverlapRatio < 0.5 {
		var comp, stage int64
		for _, r := range res.Ranks {
			for _, st := range r.Steps {
				comp += st.ComputingNs
				stage += st.StageNs
			}
		}
		if stage > 0 && float64(comp)/float64(stage) > 0.2 {
			out = append(out, Finding{ID: "exposed_comm_could_overlap", Severity: Medium,
				Title: fmt.Sprintf("Only %.0f%% of the communication overlaps compute", 100*s.OverlapRatio),
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
