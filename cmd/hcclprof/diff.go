package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/analysis/compare"
	"github.com/hcclprof/hcclprof/report"
)

func newDiffCmd() *cobra.Command {
	var format string
	var failOn []string
	var seed uint64
	var af analysisFlags
	cmd := &cobra.Command{
		Use:   "diff BASE NEW",
		Short: "Compare two runs: per metric, the change and whether it is significant",
		Long: `Diff compares two runs (profile directories, or JSON reports saved by analyze
--format json): per metric, the distributions over steps and ranks, the change, a
Mann-Whitney U test and a bootstrap interval ("~" when not significant at α = 0.05, as
benchstat prints), and the step-time change split into compute, exposed communication,
free time and bubble.

Gates name a metric with .delta, .delta_pct, .base or .p: --fail-on 'comm_share.delta>+0.05'.
The steps of one run are not independent samples, so p-values are a guide.

Exit codes: 0 gates hold; 1 a gate failed; 2 usage or input error (a damaged or
newer report, a run with no step); 3 a side incomplete unless --allow-partial.`,
		Example: "  hcclprof diff ./before ./after --fail-on 'step_time_us.delta_pct>5'",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "markdown" {
				if err := checkFormat(format); err != nil {
					return err
				}
			}
			var gates []analysis.Gate
			for _, expr := range failOn {
				g, err := analysis.ParseGate(expr, compare.GateMetricNames)
				if err != nil {
					return usageError(err)
				}
				gates = append(gates, g)
			}
			runs := make([]*compare.Run, 2)
			for i, arg := range args {
				run, err := af.loadRun(arg)
				if err != nil {
					return err
				}
				runs[i] = run
			}
			d := compare.Compare(runs[0], runs[1], compare.Options{Seed: seed})
			doc := report.DiffDoc{Diff: d}
			results := analysis.EvaluateGates(gates, d.GateValues())
			var failed []string
			for _, g := range results {
				doc.Gates = append(doc.Gates, report.GateView{Expr: g.Expr, Metric: g.Metric, Value: g.Value, Passed: g.Passed})
				if !g.Passed {
					failed = append(failed, g.Expr)
				}
			}
			text := func(w io.Writer) error { return report.WriteDiffText(w, doc) }
			if format == "markdown" {
				text = func(w io.Writer) error { return report.WriteDiffMarkdown(w, doc) }
			}
			if err := write(cmd, format, text, func(w io.Writer) error { return report.WriteDiffJSON(w, doc) }); err != nil {
				return err
			}
			// An incomplete side (a report saved from an incomplete run, or a run read
			// now) is exit 3, as in analyze.
			for _, r := range runs {
				if r.Incomplete && !af.allowPartial {
					return &exitError{code: exitIncomplete, err: fmt.Errorf("input incomplete: %s was not read in full (see its warnings); use --allow-partial to accept a partial result", r.Label)}
				}
			}
			if len(failed) > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "hcclprof: gate failed: %s\n", strings.Join(failed, "; "))
				return &exitError{code: exitGateFailed}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&format, "format", "text", "text, json or markdown")
	fl.StringArrayVar(&failOn, "fail-on", nil, "fail (exit 1) when METRIC[.delta|.delta_pct|.base|.p] OP VALUE holds; repeatable")
	fl.Uint64Var(&seed, "seed", 1, "bootstrap seed (the same seed gives the same intervals)")
	af.register(fl)
	return cmd
}

// loadRun reads one side of a diff: a saved JSON report, or profiles to analyse.
func (f *analysisFlags) loadRun(path string) (*compare.Run, error) {
	if strings.HasSuffix(strings.ToLower(path), ".json") {
		if st, err := os.Stat(path); err == nil && !st.IsDir() {
			file, err := os.Open(path)
			if err != nil {
				return nil, usageError(err)
			}
			defer file.Close()
			// A Kineto trace is .json too: try the report first, then the profile.
			run, reportErr := report.ReadReportRun(file, path)
			if reportErr == nil {
				return run, nil
			}
			loaded, err := f.load([]string{path})
			if err != nil {
				// Neither: a damaged or newer report is refused with its own reason.
				return nil, usageError(fmt.Errorf("%v; as a profile: %v", reportErr, err))
			}
			return f.fromLoaded(path, loaded), nil
		}
	}
	run, err := f.load([]string{path})
	if err != nil {
		return nil, err
	}
	return f.fromLoaded(path, run), nil
}

// fromLoaded is the diff's side of a run read now; a rank incomplete for any reason
// partial() names makes the side incomplete.
func (f *analysisFlags) fromLoaded(path string, run *loaded) *compare.Run {
	r := compare.FromResult(path, run.result)
	if partial(run.cluster, run.result, false) != nil {
		r.Incomplete = true
	}
	return r
}
