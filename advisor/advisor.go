package advisor

import (
	"github.com/hcclprof/hcclprof/analysis"
)

// Advice is the advisor's output: what is wrong and what to change.
type Advice struct {
	Findings        []Finding
	Recommendations []Recommendation
	// Notes say why a recommendation is missing or what the model could not fit.
	Notes []string
}

// Advise reads an analysis (and the run's environment variables) for findings and
// recommendations. facts says what the analysis cannot: the framework, the
// micro-batches per step and HCCL_BUFFSIZE.
func Advise(res *analysis.Result, env Env, opts Options) Advice {
	if opts.CommBudget == 0 {
		opts.CommBudget = DefaultOptions.CommBudget
	}
	a := Advice{Findings: findings(res, env, opts)}
	framework := opts.Framework
	if framework == "" {
		framework = FrameworkDDP
	}
	facts := FactsOf(env, framework)
	facts.Accumulation = max(opts.Accumulation, 1)
	a.Recommendations, a.Notes = recommend(res, facts, opts)
	return a
}
