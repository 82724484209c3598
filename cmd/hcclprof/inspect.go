package main

import (
	"github.com/spf13/cobra"

	"github.com/hcclprof/hcclprof/internal/driver"
)

func newInspectCmd(in invocation) *cobra.Command {
	var f driver.InspectFlags
	cmd := &cobra.Command{
		Use:   "inspect PATH...",
		Short: "Say what was found per rank and which analyses the data supports",
		Long: `Inspect the same arguments as analyze: per rank, the format, profiler level and
versions, the steps, the files used and ignored, which analyses the data supports, and
for each missing one the collection setting that would enable it (for example: Level0 has
no HCCL task rows, so no link bandwidth; collect with profiler_level Level1).

Exit codes: 0 done; 2 usage or input error; 3 input incomplete unless --allow-partial.`,
		Example: `  hcclprof inspect ./cluster_dir
  hcclprof inspect ./cluster_dir --format json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return driver.Inspect(in.env(cmd), args, f)
		},
	}
	registerFormat(cmd, &f.Format)
	cmd.Flags().IntVar(&f.Workers, "workers", 0, "ranks parsed in parallel (0: one per CPU)")
	registerWidth(cmd.Flags(), &f.Width)
	cmd.Flags().BoolVar(&f.AllowPartial, "allow-partial", false, "exit 0 even when some input could not be read in full")
	return cmd
}
