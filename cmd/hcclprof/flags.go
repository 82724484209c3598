package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hcclprof/hcclprof/analysis/hardware"
	"github.com/hcclprof/hcclprof/internal/driver"
)

// registerFormat adds a command's output-format flag (export's --to, the others'
// --format) with its default and help from the driver's table of outputs, which also
// checks its value when the command runs and gives shell completion its values.
func registerFormat(cmd *cobra.Command, format *string) {
	name := cmd.Name()
	cmd.Flags().StringVar(format, driver.FormatFlag(name), driver.DefaultFormat(name), driver.FormatHelp(name))
}

const widthHelp = "lay the text output out for N columns (0: no limit; at least 40); default: $COLUMNS, else the terminal's width when stdout is a terminal, else no limit"

// registerWidth adds --width to a command with a text output.
func registerWidth(fl *pflag.FlagSet, w *int) {
	fl.IntVar(w, "width", 0, widthHelp)
}

// registerAnalysis adds the flags that tune the analysis and the advice, shared by the
// commands that analyse a run.
func registerAnalysis(fl *pflag.FlagSet, f *driver.AnalysisFlags) {
	fl.IntVar(&f.Workers, "workers", 0, "ranks parsed in parallel (0: one per CPU)")
	fl.IntSliceVar(&f.SkipSteps, "skip-steps", nil, "leave these step numbers out of every figure (warm-up steps), e.g. --skip-steps 1,2")
	fl.BoolVar(&f.KeepWarmup, "keep-warmup", false, "keep the leading steps found to be warm-up in every figure (by default they are left out, and the report says so)")
	fl.IntVar(&f.Microbatches, "microbatches", 0, "pipeline micro-batches per step, for the theoretical bubble (0: inferred from the receives)")
	fl.StringVar(&f.Config, "config", "", "YAML file of thresholds, hardware and link peaks (see hcclprof.example.yaml)")
	fl.StringVar(&f.Hardware, "hardware", "", "the product for link peaks: "+strings.Join(hardware.Names(), ", ")+" (default: detected, else A2)")
	fl.StringArrayVar(&f.Peaks, "peak", nil, "override a link peak, TRANSPORT=GBPS (e.g. RDMA=12.5); repeatable")
	fl.BoolVarP(&f.Quiet, "quiet", "q", false, "no progress on stderr (it shows only when stderr is a terminal)")
	fl.StringVar(&f.Framework, "framework", "", "how the advice is applied: ddp, megatron, deepspeed or mindspore (default: detected; DeepSpeed cannot be told from a profile)")
	fl.IntVar(&f.Accumulation, "grad-accumulation", 0, "micro-batches per optimizer step in the profiled run, for the advice's predictions (0: inferred from the backward passes in the timeline)")
	fl.BoolVar(&f.AllowPartial, "allow-partial", false, "exit 0/1 even when some input could not be read in full")
	fl.StringVar(&f.Calibration, "calibration", "", "a calibration file from 'calibrate --bench': the advice prices other bucket sizes with the benchmark's shape")
}

// finiteFloat is a float64 flag that refuses NaN and ±Inf when parsed: strconv takes
// them, every comparison with NaN is false, and a check such as "≤ 0" let it through
// into printed figures.
type finiteFloat struct{ p *float64 }

func (f finiteFloat) String() string {
	if f.p == nil {
		return "0"
	}
	return strconv.FormatFloat(*f.p, 'g', -1, 64)
}

func (f finiteFloat) Set(s string) error {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok {
			err = ne.Err
		}
		return fmt.Errorf("want a number: %w", err)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("want a finite number, not %s", s)
	}
	*f.p = v
	return nil
}

func (f finiteFloat) Type() string { return "float64" }

// finiteFloat64Var is pflag's Float64Var with a finiteFloat.
func finiteFloat64Var(fl *pflag.FlagSet, p *float64, name string, value float64, usage string) {
	*p = value
	fl.Var(finiteFloat{p}, name, usage)
}
