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
	var af analysisFlags
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
			opts, advOpts, err := af.options()
			if err != nil {
				return usage(err)
			}
			acc := analysis.NewAccumulator(opts)
			cluster, err := parser.LoadCluster(args, parser.LoadOptions{Workers: opts.Workers, OnRank: acc.Add})
			if err != nil {
				return usage(err)
			}
			res := acc.Result(cluster)
			advice := advisor.Advise(res, advisor.EnvOf(cluster), withFramework(advOpts, cluster))
			doc := &report.Document{Result: res, Advice: &advice, CommBudget: advOpts.CommBudget, Notes: cluster.Notes,
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
	af.register(fl)
	return cmd
}
