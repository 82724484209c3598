package driver

import (
	"io"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/profile"
	"github.com/hcclprof/hcclprof/report"
)

// CalibrateFlags is calibrate's flags.
type CalibrateFlags struct {
	Format   string
	Width    int
	Analysis AnalysisFlags
}

// Calibrate is hcclprof calibrate: each link's latency and bandwidth fitted on the
// run's own transfers, and the cost model's error per op type.
func Calibrate(env Env, args []string, f CalibrateFlags) error {
	width, err := textWidth(env, f.Width, false)
	if err != nil {
		return err
	}
	run, err := f.Analysis.load(env, args)
	if err != nil {
		return err
	}
	buffer := advisor.FactsOf(advisor.EnvOf(run.cluster), "", run.advisor.DefaultBuffsizeBytes).BuffsizeBytes
	fit := costmodel.Fit(run.result, 1, buffer)
	doc := report.CalibrationDoc{Links: fit.Links, BackTest: fit.BackTest(), Width: width}
	if len(fit.Links) == 0 {
		doc.NoTransfers = noTransfers(run.cluster)
	}
	if err := write(env.Stdout, f.Format, func(w io.Writer) error { return report.WriteCalibrationText(w, doc) },
		func(w io.Writer) error { return report.WriteCalibrationJSON(w, doc) }); err != nil {
		return err
	}
	return partial(run.cluster, run.result, f.Analysis.AllowPartial)
}

// noTransfers groups the ranks of c by why they have no HCCL transfers, in the order
// the reasons first appear.
func noTransfers(c *profile.Cluster) []report.RanksReason {
	var out []report.RanksReason
	at := map[string]int{}
	for _, r := range c.Ranks {
		reason := analysis.NoTaskRows(r)
		i, ok := at[reason]
		if !ok {
			i = len(out)
			at[reason] = i
			out = append(out, report.RanksReason{Reason: reason})
		}
		out[i].Ranks = append(out[i].Ranks, r.Rank)
	}
	return out
}
