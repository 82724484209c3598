package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/report"
)

func newWhatIfCmd() *cobra.Command {
	var format string
	var sets []string
	var buffsizeMB int
	var backwardShare float64
	var af analysisFlags
	var widthN int
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
			usage := usageError
			if err := checkFormat(format); err != nil {
				return err
			}
			width, err := textWidth(cmd, widthN, false)
			if err != nil {
				return err
			}
			if len(sets) == 0 {
				return usage(fmt.Errorf("give at least one --set KNOB=VALUE (bucket, accumulation, buffsize, overlap, algo, dp)"))
			}
			if backwardShare <= 0 || backwardShare > 1 {
				return usage(fmt.Errorf("--backward-share %g: want a fraction in (0, 1]", backwardShare))
			}
			if cmd.Flags().Changed("buffsize-mb") && buffsizeMB <= 0 {
				return usage(fmt.Errorf("--buffsize-mb %d: want a positive size in MB", buffsizeMB))
			}
			var plan []costmodel.Setting
			for _, s := range sets {
				st, err := costmodel.ParseSetting(s)
				if err != nil {
					return usage(fmt.Errorf("--set %w", err))
				}
				plan = append(plan, st)
			}
			run, err := af.load(args)
			if err != nil {
				return err
			}
			// HCCL_BUFFSIZE as the run's environment says, unless given.
			facts := advisor.FactsOf(advisor.EnvOf(run.cluster), "")
			buffer := facts.BuffsizeBytes
			if cmd.Flags().Changed("buffsize-mb") {
				buffer = int64(buffsizeMB) << 20
			}
			acc, accNote := af.accumulation, ""
			if acc == 0 {
				acc, accNote = advisor.InferAccumulation(run.result)
			}
			bk, err := costmodel.FitBucketing(run.result, max(acc, 1), buffer)
			if err != nil {
				// The fit may fail because the input is damaged: say so too.
				if perr := partial(run.cluster, run.result, af.allowPartial); perr != nil {
					return usage(fmt.Errorf("%v; %v", err, perr))
				}
				return usage(err)
			}
			if accNote != "" {
				bk.Notes = append([]string{accNote}, bk.Notes...)
			}
			bk.BackwardShare = backwardShare
			// A forced HCCL_ALGO keeps HCCL's selector from re-choosing at new sizes.
			bk.HCCLAlgoForced = advisor.ForcedLevel1(facts.HCCLAlgo, "allreduce") != ""
			bk.Deterministic = facts.Deterministic
			pred, err := bk.WhatIfPlan(plan)
			if err != nil {
				return usage(err)
			}
			doc := report.WhatIfDoc{Bucketing: bk, Prediction: pred, Width: width}
			if err := write(cmd, format, func(w io.Writer) error { return report.WriteWhatIfText(w, doc) },
				func(w io.Writer) error { return report.WriteWhatIfJSON(w, doc) }); err != nil {
				return err
			}
			return partial(run.cluster, run.result, af.allowPartial)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&sets, "set", nil, "KNOB=VALUE: bucket=64MiB, accumulation=4, buffsize=400MB (MB = MiB, as HCCL reads it), overlap=0.9, algo=nhr (algo=auto: HCCL_ALGO unset), dp=64; repeatable (applied together)")
	fl.Float64Var(&backwardShare, "backward-share", 2.0/3, "share of a micro-batch's computation that is the backward pass (for overlap=)")
	// The flag's own default is 0 so that the help states one default, the run's
	// environment (HCCL's 200 MB when it is not set), not a second one of 200.
	fl.IntVar(&buffsizeMB, "buffsize-mb", 0, "HCCL_BUFFSIZE of the measured run, MB = MiB (default: the run's environment, else HCCL's 200)")
	fl.StringVar(&format, "format", "text", "text or json")
	registerWidth(fl, &widthN)
	af.register(fl)
	return cmd
}
