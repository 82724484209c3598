package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/report"
)

func newCalibrateCmd() *cobra.Command {
	var format string
	var af analysisFlags
	cmd := &cobra.Command{
		Use:   "calibrate PATH...",
		Short: "Fit each link's latency and bandwidth on the run's own transfers",
		Long: `Calibrate fits α (latency per transfer) and bandwidth per transport from the HCCL
task rows of a run: per transfer size, the median time over ranks, then least squares of
time against size. It reports the uncertainty and the back-test error, and says when the
data cannot support a fit (one size, a narrow range).

Exit codes: 0 done; 2 usage or input error.`,
		Example: "  hcclprof calibrate ./cluster_dir --format json",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			run, err := af.load(args)
			if err != nil {
				return err
			}
			fits := costmodel.Calibrate(run.result.Communication.TransferSamples)
			return write(cmd, format, func(w io.Writer) error { return report.WriteCalibrationText(w, fits) },
				func(w io.Writer) error { return report.WriteCalibrationJSON(w, fits) })
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "text or json")
	af.register(cmd.Flags())
	return cmd
}
