package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/parser"
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
			usage := func(err error) error { return &exitError{code: exitUsage, err: err} }
			if format != "text" && format != "json" {
				return usage(fmt.Errorf("unknown --format %q: want text or json", format))
			}
			opts, _, err := af.options()
			if err != nil {
				return usage(err)
			}
			acc := analysis.NewAccumulator(opts)
			cluster, err := parser.LoadCluster(args, parser.LoadOptions{Workers: opts.Workers, OnRank: acc.Add})
			if err != nil {
				return usage(err)
			}
			fits := costmodel.Calibrate(acc.Result(cluster).Communication.TransferSamples)
			if format == "json" {
				err = report.WriteCalibrationJSON(cmd.OutOrStdout(), fits)
			} else {
				err = report.WriteCalibrationText(cmd.OutOrStdout(), fits)
			}
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "text or json")
	af.register(cmd.Flags())
	return cmd
}
