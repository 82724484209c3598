package driver

import (
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/parser"
	"github.com/hcclprof/hcclprof/report"
)

// InspectFlags is inspect's flags.
type InspectFlags struct {
	Format       string
	Workers      int
	AllowPartial bool
	Width        int
}

// Inspect is hcclprof inspect: per rank, what was found and which analyses the data
// supports.
func Inspect(env Env, args []string, f InspectFlags) error {
	out, err := outputOf(cmdInspect, f.Format)
	if err != nil {
		return err
	}
	width, err := textWidth(env, f.Width, false)
	if err != nil {
		return err
	}
	cluster, err := parser.LoadCluster(args, parser.LoadOptions{Workers: f.Workers})
	if err != nil {
		return usageError(err)
	}
	// The ranks' steps and their problems, as the other commands find them (not
	// their communication), first so that the table names the ranks the analysis
	// finds incomplete, and the exit code is the other commands'.
	res := analysis.AnalyzeSteps(cluster, analysis.Options{Workers: f.Workers})
	doc := &report.InspectDocument{Ranks: analysis.WithAnalysis(analysis.Inspect(cluster), res), Notes: cluster.Notes,
		Command: env.command(), Version: env.Version, Width: width}
	if err := doc.Write(env.Stdout, out.as); err != nil {
		return usageError(err)
	}
	// A run without a step to measure is refused, a rank without one is incomplete.
	if err := nothingToAnalyse(cluster, res, nil); err != nil {
		return err
	}
	return partial(cluster, res, f.AllowPartial)
}
