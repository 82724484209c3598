package main

import (
	"github.com/spf13/cobra"

	"github.com/hcclprof/hcclprof/internal/driver"
)

func newWhatIfCmd(in invocation) *cobra.Command {
	var f driver.WhatIfFlags
	cmd := &cobra.Command{
		Use:   "whatif PATH... --set KNOB=VALUE",
		Short: "Predict the step time and comm_share if a knob changes",
		Long: `Whatif fits the run's gradient synchronisation (bucket sizes, per-round latency and
bandwidth of its AllReduces, and the overlap window solved from the measured exposed
communication) and predicts the step time and comm_share with the knobs changed
together, with an interval from the fit's uncertainty.

Knobs: bucket=SIZE (e.g. 64MiB), accumulation=N (micro-batches per optimizer step),
buffsize=SIZE (HCCL_BUFFSIZE, e.g. 400MB), overlap=F (the share of the backward pass the
gradient buckets are launched over, 0 to 1), algo=ALG (the level-1 algorithm: ring, nhr,
rhd or H-D_R, nb, pipeline) and dp=N (data-parallel ranks, weak scaling). The algorithm
and scale what-ifs price HCCL's two-level AllReduce with the calibrated links, scaled to
the run's own fit. --grad-accumulation says how many micro-batches the measured run
accumulated; HCCL_BUFFSIZE comes from the run's environment unless --buffsize-mb is given.
Sizes are bytes or take KiB, MiB, GiB; MB means MiB (and KB, GB the binary units too), as
HCCL reads HCCL_BUFFSIZE and PyTorch bucket_cap_mb: buffsize=400MB is HCCL_BUFFSIZE=400.

Exit codes: 0 done; 2 usage or input error, or a run the model cannot fit; 3 input
incomplete unless --allow-partial.`,
		Example: "  hcclprof whatif ./cluster --set bucket=64MiB --set accumulation=4",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return driver.WhatIf(in.env(cmd), args, f)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.Sets, "set", nil, "KNOB=VALUE: bucket=64MiB, accumulation=4, buffsize=400MB (MB = MiB, as HCCL reads it), overlap=0.9, algo=nhr (algo=auto: HCCL_ALGO unset), dp=64; repeatable (applied together)")
	finiteFloat64Var(fl, &f.BackwardShare, "backward-share", 2.0/3, "share of a micro-batch's computation that is the backward pass (for overlap=)")
	// The flag's own default is 0 so that the help states one default, the run's
	// environment (HCCL's 200 MB when it is not set), not a second one of 200.
	fl.IntVar(&f.BuffsizeMB, "buffsize-mb", 0, "HCCL_BUFFSIZE of the measured run, MB = MiB (default: the run's environment, else HCCL's 200)")
	registerFormat(cmd, &f.Format)
	registerWidth(fl, &f.Width)
	registerAnalysis(fl, &f.Analysis)
	return cmd
}
