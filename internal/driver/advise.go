package driver

import (
	"io"

	"github.com/hcclprof/hcclprof/report"
)

// AdviseFlags is advise's flags.
type AdviseFlags struct {
	Format   string
	Width    int
	Analysis AnalysisFlags
}

// Advise is hcclprof advise: only the advisor's output on the runs under args.
func Advise(env Env, args []string, f AdviseFlags) error {
	width, err := textWidth(env, f.Width, false)
	if err != nil {
		return err
	}
	run, err := f.Analysis.load(env, args)
	if err != nil {
		return err
	}
	advice := run.advise()
	doc := &report.Document{Result: run.result, Advice: &advice, CommBudget: run.advisor.CommBudget, Notes: run.cluster.Notes, LeftOut: run.leftOut,
		Command: env.command(), Version: env.Version, Width: width}
	if err := write(env.Stdout, f.Format, func(w io.Writer) error { return report.WriteAdviceText(w, doc) },
		func(w io.Writer) error { return report.WriteAdviceJSON(w, doc) }); err != nil {
		return err
	}
	return partial(run.cluster, run.result, f.Analysis.AllowPartial)
}
