package analysis

import (
	"github.com/hcclprof/hcclprof/internal/parallel"
	"github.com/hcclprof/hcclprof/profile"
)

// AnalyzeSteps measures only what says whether a run can be read whole: each rank's
// step breakdown with the problems the analysis finds in it (a recomputation the
// profiler's own figures contradict, a rank without a step beside ranks that have
// steps, a marker other ranks have missing between steps of its own) and the
// summary of the steps. It is Analyze's Ranks and Summary, found the same way
// (analyzeSummaries), without the communication, links and collectives: inspect
// reads it to flag the ranks and choose its exit code, analysing the run once.
func AnalyzeSteps(c *profile.Cluster, opts Options) *Result {
	res := &Result{Ranks: make([]RankResult, len(c.Ranks))}
	warnings := make([][]string, len(c.Ranks))
	parallel.For(len(c.Ranks), opts.Workers, func(i int) {
		res.Ranks[i], warnings[i] = analyzeRank(c.Ranks[i])
	})
	for _, w := range warnings {
		res.Warnings = append(res.Warnings, w...)
	}
	flagRanksWithoutSteps(res.Ranks)
	flagRanksMissingSteps(res.Ranks)
	res.Summary = summarize(res.Ranks)
	res.Summary.RanksExpected = worldSize(c)
	return res
}
