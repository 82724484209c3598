package main

import (
	"github.com/spf13/cobra"

	"github.com/hcclprof/hcclprof/internal/driver"
	"github.com/hcclprof/hcclprof/internal/ranksummary"
)

func newSummarizeCmd(in invocation) *cobra.Command {
	var f driver.SummarizeFlags
	cmd := &cobra.Command{
		Use:   "summarize PATH... -o DIR",
		Short: "Write a small summary of each rank, to analyse where the data is not",
		Long: `Summarize reads the ranks under PATH (anything analyze reads) and writes, for each,
DIR/rank<N>` + ranksummary.Suffix + `: what the analysis reads of the rank, usually
a few hundredths of its traces or less. analyze, advise, diff, export and inspect read
summaries as they read rank directories, alone or mixed with raw ranks, and report the
same figures. Run it on every server over that server's profiler output, into one shared
directory (or gather the files), then analyze that directory once.

Each file is written under a temporary name and renamed, so processes on several servers
can write into the same directory at once; a rank summarised twice keeps the last.

Exit codes: 0 done; 2 usage or input error (nothing found, DIR not writable);
3 some rank could not be read in full (its summary is written and says what is
missing) unless --allow-partial.`,
		Example: `  hcclprof summarize /local/prof -o /shared/summaries
  hcclprof analyze /shared/summaries`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return driver.Summarize(in.env(cmd), args, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.Output, "output", "o", "", "directory to write the summaries into (created if needed)")
	fl.IntVar(&f.Workers, "workers", 0, "ranks parsed in parallel (0: one per CPU)")
	fl.BoolVarP(&f.Quiet, "quiet", "q", false, "no progress on stderr (it shows only when stderr is a terminal)")
	fl.BoolVar(&f.AllowPartial, "allow-partial", false, "exit 0 even when some rank could not be read in full")
	_ = cmd.MarkFlagRequired("output")
	return cmd
}
