package main

import (
	"github.com/spf13/cobra"

	"github.com/hcclprof/hcclprof/internal/driver"
)

func newAdviseCmd(in invocation) *cobra.Command {
	var f driver.AdviseFlags
	cmd := &cobra.Command{
		Use:   "advise PATH...",
		Short: "Only the advice: what is wrong (with evidence) and what to change",
		Long: `Advise analyses a run like analyze and prints only the advisor's output.

Exit codes: 0 done; 2 usage or input error; 3 input incomplete unless --allow-partial.`,
		Example: `  hcclprof advise ./cluster_dir
  hcclprof advise ./cluster_dir --format json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return driver.Advise(in.env(cmd), args, f)
		},
	}
	fl := cmd.Flags()
	registerFormat(cmd, &f.Format)
	registerWidth(fl, &f.Width)
	registerAnalysis(fl, &f.Analysis)
	return cmd
}
