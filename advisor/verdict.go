package advisor

import (
	"fmt"

	"github.com/hcclprof/hcclprof/analysis"
)

// minorCostDivisor: exposed communication above budget/minorCostDivisor is a
// significant cost, below it a minor one (the verdict without a diagnosis).
const minorCostDivisor = 3

// Verdict is a report's one line (Advice.Verdict): the diagnosis' title when there
// is one (it names the cause), else the exposed share read against the budget (0:
// the default budget).
func Verdict(d Diagnosis, s analysis.Summary, budget float64) string {
	if d.Title != "" {
		return d.Title
	}
	if budget == 0 {
		budget = DefaultOptions.CommBudget
	}
	return sharesVerdict(s, budget)
}

// sharesVerdict reads the exposed communication share against a budget.
func sharesVerdict(s analysis.Summary, budget float64) string {
	switch {
	case s.Ranks == 0:
		return "no step breakdown could be computed"
	case s.CommTotalShare == 0:
		return "no communication in the profiled steps"
	case s.CommShare > budget:
		return fmt.Sprintf("communication is the bottleneck: exposed communication is above the %.0f%% budget", 100*budget)
	case s.CommShare > budget/minorCostDivisor:
		return fmt.Sprintf("communication is a significant cost, within the %.0f%% budget", 100*budget)
	default:
		return "communication is a minor cost"
	}
}
