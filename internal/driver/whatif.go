package driver

import (
	"fmt"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/report"
)

// WhatIfFlags is whatif's flags.
type WhatIfFlags struct {
	Format        string
	Sets          []string
	BuffsizeMB    int
	BackwardShare float64
	Width         int
	Analysis      AnalysisFlags
}

// WhatIf is hcclprof whatif: the step time and comm_share predicted with the knobs
// of f.Sets changed together.
func WhatIf(env Env, args []string, f WhatIfFlags) error {
	usage := usageError
	out, err := outputOf(cmdWhatIf, f.Format)
	if err != nil {
		return err
	}
	width, err := textWidth(env, f.Width, false)
	if err != nil {
		return err
	}
	if len(f.Sets) == 0 {
		return usage(fmt.Errorf("give at least one --set KNOB=VALUE (bucket, accumulation, buffsize, overlap, algo, dp)"))
	}
	if !(f.BackwardShare > 0 && f.BackwardShare <= 1) { // NaN fails both
		return usage(fmt.Errorf("--backward-share %g: want a fraction in (0, 1]", f.BackwardShare))
	}
	if env.changed("buffsize-mb") && f.BuffsizeMB <= 0 {
		return usage(fmt.Errorf("--buffsize-mb %d: want a positive size in MB", f.BuffsizeMB))
	}
	var plan []costmodel.Setting
	for _, s := range f.Sets {
		st, err := costmodel.ParseSetting(s)
		if err != nil {
			return usage(fmt.Errorf("--set %w", err))
		}
		plan = append(plan, st)
	}
	run, err := f.Analysis.load(env, args)
	if err != nil {
		return err
	}
	// HCCL_BUFFSIZE as the run's environment says (else the configured default),
	// unless given.
	facts := advisor.Facts(run.result, advisor.EnvOf(run.cluster), run.advisor)
	buffer := facts.BuffsizeBytes
	if env.changed("buffsize-mb") {
		buffer = int64(f.BuffsizeMB) << 20
	}
	acc, accNote := facts.Accumulation, facts.AccumulationNote
	bk, err := costmodel.FitBucketing(run.result, acc, buffer)
	if err != nil {
		// The fit may fail because the input is damaged: say so too.
		if perr := partial(run.cluster, run.result, f.Analysis.AllowPartial); perr != nil {
			return usage(fmt.Errorf("%v; %v", err, perr))
		}
		return usage(err)
	}
	if accNote != "" {
		bk.Notes = append([]string{accNote}, bk.Notes...)
	}
	bk.BackwardShare = f.BackwardShare
	bk.AccumulationSpan = facts.AccumulationSpan
	bk.UseCalibration(run.advisor.Calibration)
	// A forced HCCL_ALGO keeps HCCL's selector from re-choosing at new sizes.
	bk.HCCLAlgoForced = advisor.ForcedLevel1(facts.HCCLAlgo, "allreduce") != ""
	bk.Deterministic = facts.Deterministic
	pred, err := bk.WhatIfPlan(plan)
	if err != nil {
		return usage(err)
	}
	doc := report.WhatIfDoc{Bucketing: bk, Prediction: pred, Width: width}
	if err := doc.Write(env.Stdout, out.as); err != nil {
		return usage(err)
	}
	return partial(run.cluster, run.result, f.Analysis.AllowPartial)
}
