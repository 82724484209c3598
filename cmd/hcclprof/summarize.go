package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/parallel"
	"github.com/hcclprof/hcclprof/internal/progress"
	"github.com/hcclprof/hcclprof/parser"
	"github.com/hcclprof/hcclprof/profile"
)

type summarizeFlags struct {
	output       string
	workers      int
	quiet        bool
	allowPartial bool
}

func newSummarizeCmd() *cobra.Command {
	var f summarizeFlags
	cmd := &cobra.Command{
		Use:   "summarize PATH... -o DIR",
		Short: "Write a small summary of each rank, to analyse where the data is not",
		Long: `Summarize reads the ranks under PATH (anything analyze reads) and writes, for each,
DIR/rank<N>` + parser.RankSummarySuffix + `: what the analysis reads of the rank, usually
a few hundredths of its traces or less. analyze, advise, diff, export and inspect read
summaries as they read rank directories, alone or mixed with raw ranks, and report the
same figures. Run it on every node over that node's profiler output, into one shared
directory (or gather the files), then analyze that directory once.

Each file is written under a temporary name and renamed, so processes on several nodes
can write into the same directory at once; a rank summarised twice keeps the last.

Exit codes: 0 done; 2 usage or input error (nothing found, DIR not writable);
3 some rank could not be read in full (its summary is written and says what is
missing) unless --allow-partial.`,
		Example: `  hcclprof summarize /local/prof -o /shared/summaries
  hcclprof analyze /shared/summaries`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSummarize(cmd, args, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.output, "output", "o", "", "directory to write the summaries into (created if needed)")
	fl.IntVar(&f.workers, "workers", 0, "ranks parsed in parallel (0: one per CPU)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress on stderr (it shows only when stderr is a terminal)")
	fl.BoolVar(&f.allowPartial, "allow-partial", false, "exit 0 even when some rank could not be read in full")
	_ = cmd.MarkFlagRequired("output")
	return cmd
}

func runSummarize(cmd *cobra.Command, args []string, f summarizeFlags) error {
	if err := os.MkdirAll(f.output, 0o755); err != nil {
		return usageError(err)
	}
	start := time.Now()
	prog := progress.New(os.Stderr, f.quiet)
	var (
		mu       sync.Mutex
		writeErr error
		written  atomic.Int64
		size     atomic.Int64
	)
	prog.Phase("discovering ranks")
	in, err := parser.Discover(args)
	if err != nil {
		return usageError(err)
	}
	defer in.Release()
	// Each rank is written as soon as it is read and then let go: memory holds one
	// trace per worker, whatever the number of ranks. What the report needs of the
	// ranks' problems is kept for the exit code.
	c := &profile.Cluster{Ranks: make([]*profile.Rank, len(in.Ranks))}
	var done, steps atomic.Int64
	parallel.For(len(in.Ranks), f.workers, func(i int) {
		r := parser.LoadRank(in.Ranks[i])
		steps.Add(int64(analysis.StepsOf(r)))
		var notes []string
		if i == 0 {
			notes = in.Notes // the run's discovery notes, carried by its lowest rank
		}
		n, err := writeRankSummary(f.output, analysis.Compact(r), notes)
		if err != nil {
			mu.Lock()
			writeErr = errors.Join(writeErr, err)
			mu.Unlock()
		} else {
			written.Add(1)
			size.Add(n)
		}
		c.Ranks[i] = &profile.Rank{Rank: r.Rank, Dir: r.Dir, Problems: r.Problems}
		prog.Count("summarised ranks", int(done.Add(1)), len(in.Ranks))
	})
	if writeErr != nil {
		return usageError(writeErr)
	}
	// As analyze refuses it: ranks with no step anywhere summarise to nothing to analyse.
	if err := noSteps(c, int(steps.Load()), nil); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %d rank summaries (%.1f KB) to %s in %.2f s\n",
		written.Load(), float64(size.Load())/1e3, f.output, time.Since(start).Seconds())
	for _, n := range in.Notes {
		fmt.Fprintln(cmd.ErrOrStderr(), "note:", n)
	}
	return partial(c, nil, f.allowPartial)
}

// writeRankSummary writes r's summary into dir under a temporary name, then renames
// it into place, so that a reader never sees half a file and writers on other nodes
// never clash. It returns the file's size.
func writeRankSummary(dir string, r *profile.Rank, notes []string) (int64, error) {
	tmp, err := os.CreateTemp(dir, ".rank*.tmp")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing is left to remove
	if err := parser.WriteRankSummary(tmp, r, notes); err != nil {
		tmp.Close()
		return 0, fmt.Errorf("%s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return 0, err
	}
	st, err := tmp.Stat()
	if err != nil {
		tmp.Close()
		return 0, err
	}
	if err := tmp.Close(); err != nil {
		return 0, err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return 0, err
	}
	return st.Size(), os.Rename(tmp.Name(), filepath.Join(dir, parser.RankSummaryName(r.Rank)))
}
