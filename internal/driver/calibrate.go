package driver

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/parser"
	"github.com/hcclprof/hcclprof/profile"
	"github.com/hcclprof/hcclprof/report"
)

// CalibrateFlags is calibrate's flags.
type CalibrateFlags struct {
	Format   string
	Width    int
	Analysis AnalysisFlags
	// Bench are benchmark outputs (nccl-tests, hccl_test, CSV) to calibrate on
	// instead of a run; BenchOp, BenchRanks and BenchSize give what they do not say;
	// Output is the calibration file to write.
	Bench      []string
	BenchOp    string
	BenchRanks int
	BenchSize  string
	Output     string
}

// Calibrate is hcclprof calibrate: each link's latency and bandwidth fitted on the
// run's own transfers, and the cost model's error per op type.
func Calibrate(env Env, args []string, f CalibrateFlags) error {
	out, err := outputOf(cmdCalibrate, f.Format)
	if err != nil {
		return err
	}
	width, err := textWidth(env, f.Width, false)
	if err != nil {
		return err
	}
	if len(f.Bench) > 0 {
		if len(args) > 0 {
			return usageError(errors.New("calibrate takes either profiles or --bench files, not both: the run's own transfers and a benchmark make different calibrations"))
		}
		return calibrateBench(env, f, out, width)
	}
	if len(args) == 0 {
		return usageError(errors.New("calibrate needs profiles (PATH...) or benchmark outputs (--bench FILE)"))
	}
	if f.Output != "" {
		return usageError(errors.New("-o writes a calibration from --bench files; a run's own link fit is applied by analyze and advise themselves"))
	}
	run, err := f.Analysis.load(env, args)
	if err != nil {
		return err
	}
	buffer := run.result.Communication.Limits.BuffsizeBytes(advisor.EnvOf(run.cluster))
	fit := costmodel.Fit(run.result, 1, buffer)
	doc := report.CalibrationDoc{Links: fit.Links, BackTest: fit.BackTest(), Width: width}
	if len(fit.Links) == 0 {
		doc.NoTransfers = noTransfers(run.cluster)
	}
	if err := doc.Write(env.Stdout, out.as); err != nil {
		return usageError(err)
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

// calibrateBench is calibrate --bench: a cost model made from benchmark sweeps,
// written with -o for --calibration.
func calibrateBench(env Env, f CalibrateFlags, out outputFormat, width int) error {
	opts := parser.BenchOptions{Op: f.BenchOp, Ranks: f.BenchRanks}
	switch f.BenchSize {
	case "", string(profile.SizeTotal), string(profile.SizePerRank):
		opts.Size = profile.BenchSizeSemantics(f.BenchSize)
	default:
		return usageError(fmt.Errorf("--bench-size %q: want total or per-rank", f.BenchSize))
	}
	if f.BenchRanks < 0 || f.BenchRanks == 1 {
		return usageError(fmt.Errorf("--ranks %d: a collective runs on two ranks or more", f.BenchRanks))
	}
	var points []profile.BenchPoint
	doc := report.BenchCalibrationDoc{Width: width}
	var sources []string
	for _, file := range f.Bench {
		pts, info, err := parser.ReadBench(file, opts)
		if err != nil {
			return usageError(err)
		}
		points = append(points, pts...)
		sources = append(sources, filepath.Base(file))
		doc.Inputs = append(doc.Inputs, report.BenchInput{File: file, Format: info.Format, Points: len(pts), Notes: info.Notes})
	}
	cal, err := costmodel.FitBench(points, sources)
	if err != nil {
		return usageError(err)
	}
	doc.Calibration = cal
	if f.Output != "" {
		if err := cal.WriteFile(f.Output); err != nil {
			return err
		}
		doc.Written = f.Output
	}
	if err := doc.Write(env.Stdout, out.as); err != nil {
		return usageError(err)
	}
	return nil
}
