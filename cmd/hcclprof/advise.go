package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/report"
)

func newAdviseCmd() *cobra.Command {
	var format string
	var af analysisFlags
	var widthN int
	cmd := &cobra.Command{
		Use:   "advise PATH...",
		Short: "Only the advice: what is wrong (with evidence) and what to change",
		Long: `Advise analyses a run like analyze and prints only the advisor's output.

Exit codes: 0 done; 2 usage or input error; 3 input incomplete unless --allow-partial.`,
		Example: `  hcclprof advise ./cluster_dir
  hcclprof advise ./cluster_dir --format json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			width, err := textWidth(cmd, widthN, false)
			if err != nil {
				return err
			}
			run, err := af.load(args)
			if err != nil {
				return err
			}
			advice := advisor.Advise(run.result, advisor.EnvOf(run.cluster), run.advisor)
			doc := &report.Document{Result: run.result, Advice: &advice, CommBudget: run.advisor.CommBudget, Notes: run.cluster.Notes,
				Command: recordedCommand(), Version: toolVersion(), Width: width}
			if err := write(cmd, format, func(w io.Writer) error { return report.WriteAdviceText(w, doc) },
				func(w io.Writer) error { return report.WriteAdviceJSON(w, doc) }); err != nil {
				return err
			}
			return partial(run.cluster, run.result, af.allowPartial)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&format, "format", "text", "text or json")
	registerWidth(fl, &widthN)
	af.register(fl)
	return cmd
}
