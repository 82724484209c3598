package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/parser"
	"github.com/hcclprof/hcclprof/report"
)

func newAdviseCmd() *cobra.Command {
	var format string
	var workers int
	var skipSteps []int
	cmd := &cobra.Command{
		Use:   "advise PATH...",
		Short: "Only the advice: what is wrong (with evidence) and what to change",
		Long: `Advise analyses a run like analyze and prints only the advisor's output.

Exit codes: 0 done; 2 usage or input error.`,
		Example: `  hcclprof advise ./cluster_dir
  hcclprof advise ./cluster_dir --format json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			usage := func(err error) error { return &exitError{code: exitUsage, err: err} }
			if format != "text" && format != "json" {
				return usage(fmt.Errorf("unknown --format %q: want text or json", format))
			}
			acc := analysis.NewAccumulator(analysis.Options{Workers: workers, SkipSteps: skipSteps})
			cluster, err := parser.LoadCluster(args, parser.LoadOptions{Workers: workers, OnRank: acc.Add})
			if err != nil {
				return usage(err)
			}
			res := acc.Result(cluster)
			advice := advisor.Advise(res, advisor.EnvOf(cluster), advisor.DefaultOptions)
			doc := &report.Document{Result: res, Advice: &advice, Notes: cluster.Notes,
				Command: "hcclprof " + strings.Join(os.Args[1:], " "), Version: toolVersion()}
			if format == "json" {
				err = report.WriteAdviceJSON(cmd.OutOrStdout(), doc)
			} else {
				err = report.WriteAdviceText(cmd.OutOrStdout(), doc)
			}
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&format, "format", "text", "text or json")
	fl.IntVar(&workers, "workers", 0, "ranks parsed in parallel (0: one per CPU)")
	fl.IntSliceVar(&skipSteps, "skip-steps", nil, "leave these step numbers out (warm-up steps)")
	return cmd
}
