package driver

import "github.com/hcclprof/hcclprof/report"

// AdviseFlags is advise's flags.
type AdviseFlags struct {
	Format   string
	Width    int
	Analysis AnalysisFlags
}

// Advise is hcclprof advise: only the advisor's output on the runs under args.
func Advise(env Env, args []string, f AdviseFlags) error {
	out, err := outputOf(cmdAdvise, f.Format)
	if err != nil {
		return err
	}
	width, err := textWidth(env, f.Width, false)
	if err != nil {
		return err
	}
	run, err := f.Analysis.load(env, args)
	if err != nil {
		return err
	}
	advice := run.advise()
	doc := &report.AdviceDoc{Result: run.result, Advice: &advice, Notes: run.cluster.Notes, LeftOut: run.leftOut,
		Command: env.command(), Version: env.Version, Width: width}
	if err := doc.Write(env.Stdout, out.as); err != nil {
		return usageError(err)
	}
	return partial(run.cluster, run.result, f.Analysis.AllowPartial)
}
