package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/report"
)

func newCalibrateCmd() *cobra.Command {
	var format string
	var af analysisFlags
	var widthN int
	cmd := &cobra.Command{
		Use:   "calibrate PATH...",
		Short: "Fit each link's latency and bandwidth on the run's own transfers",
		Long: `Calibrate fits α (latency per transfer) and bandwidth per transport from the HCCL
task rows of a run: per transfer size, the median time over ranks, then least squares of
time against size, with γ (the reduction's cost) where Reduce_Inline transfers show
beside copies. It reports the uncertainty and the back-test error per link, then prices
every op with the fitted links and HCCL's algorithm for its group (HCCL_BUFFSIZE from the
run's environment) and reports the error per op type against the op's time once every
rank arrived. It says when the data cannot support a fit (one size, a narrow range).

Exit codes: 0 done; 2 usage or input error; 3 input incomplete unless --allow-partial.`,
		Example: "  hcclprof calibrate ./cluster_dir --format json",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			width, err := textWidth(cmd, widthN, false)
			if err != nil {
				return err
			}
			run, err := af.load(args)
			if err != nil {
				return err
			}
			buffer := advisor.FactsOf(advisor.EnvOf(run.cluster), "", run.advisor.DefaultBuffsizeBytes).BuffsizeBytes
			fit := costmodel.Fit(run.result, 1, buffer)
			doc := report.CalibrationDoc{Links: fit.Links, BackTest: fit.BackTest(), Width: width}
			if err := write(cmd, format, func(w io.Writer) error { return report.WriteCalibrationText(w, doc) },
				func(w io.Writer) error { return report.WriteCalibrationJSON(w, doc) }); err != nil {
				return err
			}
			return partial(run.cluster, run.result, af.allowPartial)
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "text or json")
	registerWidth(cmd.Flags(), &widthN)
	af.register(cmd.Flags())
	return cmd
}
