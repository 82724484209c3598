package main

import (
	"github.com/spf13/cobra"

	"github.com/hcclprof/hcclprof/internal/driver"
)

func newDiffCmd(in invocation) *cobra.Command {
	var f driver.DiffFlags
	cmd := &cobra.Command{
		Use:   "diff BASE NEW",
		Short: "Compare two runs: per metric, the change and whether it is significant",
		Long: `Diff compares two runs (profile directories, or JSON reports saved by analyze
--format json): per metric, the distributions over steps and ranks, the change,
benchstat's Mann-Whitney U test (golang.org/x/perf/benchmath: the same p-values; "~"
when not significant at α = 0.05, as benchstat prints) and a bootstrap interval of the
change of the mean, and the step-time change split into compute, exposed
communication, free time and bubble.

Gates name a metric with .delta, .delta_pct, .base or .p: --fail-on 'comm_share.delta>+0.05'.
The steps of one run are not independent samples, so p-values are a guide.

Exit codes: 0 gates hold; 1 a gate failed; 2 usage or input error (a damaged or
newer report, a run with no step); 3 a side incomplete unless --allow-partial.`,
		Example: `  hcclprof diff ./before ./after --fail-on 'step_time_us.delta_pct>5'
  hcclprof diff base.json new.json --fail-on 'comm_share.delta>+0.05' --junit diff.xml --github -o diff.txt`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return driver.Diff(in.env(cmd), args, f)
		},
	}
	fl := cmd.Flags()
	registerFormat(cmd, &f.Format)
	fl.StringArrayVar(&f.FailOn, "fail-on", nil, "fail (exit 1) when METRIC[.delta|.delta_pct|.base|.p] OP VALUE holds; repeatable")
	fl.Uint64Var(&f.Seed, "seed", 1, "bootstrap seed (the same seed gives the same intervals)")
	fl.StringVarP(&f.Output, "output", "o", "", "write the diff to this file instead of stdout")
	fl.StringVar(&f.JUnit, "junit", "", "also write the gates as JUnit XML to this file (for CI test reports; with no --fail-on, one skipped case that says so)")
	fl.BoolVar(&f.GitHub, "github", false, "print GitHub Actions annotations to stderr (an error per failed gate, a warning per warning) and append the Markdown diff to $GITHUB_STEP_SUMMARY when it is set")
	registerWidth(fl, &f.Width)
	registerAnalysis(fl, &f.Analysis)
	return cmd
}
