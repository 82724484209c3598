package main

import (
	"github.com/spf13/cobra"

	"github.com/hcclprof/hcclprof/internal/driver"
)

func newCalibrateCmd(in invocation) *cobra.Command {
	var f driver.CalibrateFlags
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
		RunE: withFormat(&f.Format, func(cmd *cobra.Command, args []string) error {
			return driver.Calibrate(in.env(cmd), args, f)
		}),
	}
	cmd.Flags().StringVar(&f.Format, "format", "text", "text or json")
	registerWidth(cmd.Flags(), &f.Width)
	registerAnalysis(cmd.Flags(), &f.Analysis)
	return cmd
}
