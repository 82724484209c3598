package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/parser"
	"github.com/hcclprof/hcclprof/report"
)

func newInspectCmd() *cobra.Command {
	var format string
	var workers int
	var allowPartial bool
	var widthN int
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
			if format != "text" && format != "json" {
				return &exitError{code: exitUsage, err: fmt.Errorf("unknown --format %q: want text or json", format)}
			}
			width, err := textWidth(cmd, widthN, false)
			if err != nil {
				return err
			}
			cluster, err := parser.LoadCluster(args, parser.LoadOptions{Workers: workers})
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			doc := &report.InspectDocument{Ranks: analysis.Inspect(cluster), Notes: cluster.Notes,
				Command: recordedCommand(), Version: toolVersion(), Width: width}
			if format == "json" {
				err = report.WriteInspectJSON(cmd.OutOrStdout(), doc)
			} else {
				err = report.WriteInspectText(cmd.OutOrStdout(), doc)
			}
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			// The same verdict as the other commands: a run without a step to measure
			// is refused, a rank without one is incomplete.
			res := analysis.Analyze(cluster, analysis.Options{Workers: workers})
			if err := nothingToAnalyse(cluster, res, nil); err != nil {
				return err
			}
			return partial(cluster, res, allowPartial)
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	cmd.Flags().IntVar(&workers, "workers", 0, "ranks parsed in parallel (0: one per CPU)")
	registerWidth(cmd.Flags(), &widthN)
	cmd.Flags().BoolVar(&allowPartial, "allow-partial", false, "exit 0 even when some input could not be read in full")
	return cmd
}
