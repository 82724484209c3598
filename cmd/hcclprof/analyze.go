package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/driver"
)

func newAnalyzeCmd(in invocation) *cobra.Command {
	var f driver.AnalyzeFlags
	cmd := &cobra.Command{
		Use:   "analyze PATH...",
		Short: "Report the step breakdown and communication of a profiled run",
		Long: `Analyze a cluster root, rank directories (./*_ascend_pt) or single files, and rank
summaries written by 'hcclprof summarize' (alone or mixed with raw ranks).

Exit codes: 0 all gates hold; 1 a --fail-on gate failed (the report still prints);
2 usage or input error; 3 input incomplete (a rank unreadable) unless --allow-partial.`,
		Example: `  hcclprof analyze ./cluster_dir
  hcclprof analyze ./cluster_dir --format json > report.json
  hcclprof analyze ./cluster_dir --fail-on 'comm_share>30%'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.TimelineRankSet = cmd.Flags().Changed("timeline-rank")
			return driver.Analyze(in.env(cmd), args, f)
		},
	}
	fl := cmd.Flags()
	registerFormat(cmd, &f.Format)
	fl.StringVarP(&f.Output, "output", "o", "", "write the report to this file instead of stdout")
	fl.StringArrayVar(&f.FailOn, "fail-on", nil, "fail (exit 1) when METRIC OP VALUE holds, e.g. 'comm_share>30%'; repeatable. Metrics: "+strings.Join(analysis.MetricNames, ", "))
	fl.IntVar(&f.TimelineRank, "timeline-rank", 0, "with --format html: the rank whose longest step is drawn with its compute lanes")
	fl.StringVar(&f.JUnit, "junit", "", "also write the gates as JUnit XML to this file (for CI test reports; with no --fail-on, one skipped case that says so)")
	fl.BoolVar(&f.GitHub, "github", false, "print GitHub Actions annotations to stderr (an error per failed gate, a warning per high finding) and append the Markdown report to $GITHUB_STEP_SUMMARY when it is set")
	registerWidth(fl, &f.Width)
	registerAnalysis(fl, &f.Analysis)
	return cmd
}
