package advisor

import (
	"github.com/hcclprof/hcclprof/analysis"
)

// Advice is the advisor's output: what is wrong and what to change.
type Advice struct {
	Findings []Finding
}

// Advise reads an analysis (and the run's environment variables) for findings.
func Advise(res *analysis.Result, env Env, opts Options) Advice {
	if opts.CommBudget == 0 {
		opts.CommBudget = DefaultOptions.CommBudget
	}
	return Advice{Findings: findings(res, env, opts)}
}
