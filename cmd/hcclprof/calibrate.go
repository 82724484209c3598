package main

import (
	"github.com/spf13/cobra"

	"github.com/hcclprof/hcclprof/internal/driver"
)

func newCalibrateCmd(in invocation) *cobra.Command {
	var f driver.CalibrateFlags
	cmd := &cobra.Command{
		Use:   "calibrate PATH... | calibrate --bench FILE...",
		Short: "Fit each link's latency and bandwidth on the run's own transfers",
		Long: `Calibrate fits α (latency per transfer) and bandwidth per transport from the HCCL
task rows of a run: per transfer size, the median time over ranks, then least squares of
time against size, with γ (the reduction's cost) where Reduce_Inline transfers show
beside copies. It reports the uncertainty and the back-test error per link, then prices
every op with the fitted links and HCCL's algorithm for its group (HCCL_BUFFSIZE from the
run's environment) and reports the error per op type against the op's time once every
rank arrived. It says when the data cannot support a fit (one size, a narrow range).

With --bench it makes the cost model the cluster's own instead: it reads benchmark
sweeps (nccl-tests' output, hccl_test's output, or a CSV of op, ranks, bytes and time),
prices each (op, ranks) between its measured sizes, reports each sweep's error out of
sample (every size left out and priced from the others) per size band, and with -o
writes a calibration file that model takes with --calibration. hccl_test's output
names neither its op nor its rank count: give --op and --ranks.

Exit codes: 0 done; 2 usage or input error; 3 input incomplete unless --allow-partial.`,
		Example: `  hcclprof calibrate ./cluster_dir --format json
  hcclprof calibrate --bench all_reduce_perf.log --bench all_gather_perf.log -o cluster.calib.json
  hcclprof calibrate --bench hccl_allreduce_16p.txt --op allreduce --ranks 16 -o cluster.calib.json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return driver.Calibrate(in.env(cmd), args, f)
		},
	}
	registerFormat(cmd, &f.Format)
	cmd.Flags().StringArrayVar(&f.Bench, "bench", nil, "a benchmark output to calibrate on (nccl-tests, hccl_test or CSV); repeatable")
	cmd.Flags().StringVar(&f.BenchOp, "op", "", "with --bench: the collective of outputs that do not name it (allreduce, allgather, reducescatter, broadcast, reduce, alltoall)")
	cmd.Flags().IntVar(&f.BenchRanks, "ranks", 0, "with --bench: the rank count of outputs that do not list their ranks")
	cmd.Flags().StringVar(&f.BenchSize, "bench-size", "", "with --bench: how an AllGather's or ReduceScatter's size is counted, total or per-rank (default: nccl-tests and CSV total, hccl_test per rank)")
	cmd.Flags().StringVarP(&f.Output, "output", "o", "", "with --bench: write the calibration to this file")
	registerWidth(cmd.Flags(), &f.Width)
	registerAnalysis(cmd.Flags(), &f.Analysis)
	return cmd
}
