package driver

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/parallel"
	"github.com/hcclprof/hcclprof/internal/progress"
	"github.com/hcclprof/hcclprof/internal/ranksummary"
	"github.com/hcclprof/hcclprof/parser"
	"github.com/hcclprof/hcclprof/profile"
)

// SummarizeFlags is summarize's flags.
type SummarizeFlags struct {
	Output       string
	Workers      int
	Quiet        bool
	AllowPartial bool
}

// Summarize is hcclprof summarize: a small summary of each rank under args, written
// as the rank is read.
func Summarize(env Env, args []string, f SummarizeFlags) error {
	if err := os.MkdirAll(f.Output, 0o755); err != nil {
		return usageError(err)
	}
	start := time.Now()
	prog := progress.New(env.Stderr, f.Quiet)
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
	stepsOf := make([]int, len(in.Ranks))
	parallel.For(len(in.Ranks), f.Workers, func(i int) {
		r := parser.LoadRank(in.Ranks[i])
		stepsOf[i] = analysis.StepsOf(r)
		steps.Add(int64(stepsOf[i]))
		var notes []string
		if i == 0 {
			notes = in.Notes // the run's discovery notes, carried by its lowest rank
		}
		c.Ranks[i] = &profile.Rank{Rank: r.Rank, Dir: r.Dir, Problems: r.Problems}
		// r is not used past this point: the timeline Compact reduced (a big trace's
		// tens of MB) can go while the summary is written.
		compact := analysis.Compact(r)
		r = nil
		n, err := writeRankSummary(f.Output, compact, notes)
		if err != nil {
			mu.Lock()
			writeErr = errors.Join(writeErr, err)
			mu.Unlock()
		} else {
			written.Add(1)
			size.Add(n)
		}
		prog.Count("summarised ranks", int(done.Add(1)), len(in.Ranks))
	})
	if writeErr != nil {
		return usageError(writeErr)
	}
	// As analyze refuses it: ranks with no step anywhere summarise to nothing to analyse.
	if err := noSteps(c, int(steps.Load()), nil); err != nil {
		return err
	}
	// And as analyze flags it: a rank without a step beside ranks with steps is
	// incomplete (its summary is written; analyze of it says the same).
	for i, r := range c.Ranks {
		if stepsOf[i] == 0 {
			r.Problems = append(r.Problems, analysis.NoStepProblem(r.Dir))
		}
	}
	fmt.Fprintf(env.Stdout, "wrote %d rank summaries (%.1f KB) to %s in %.2f s\n",
		written.Load(), float64(size.Load())/1e3, f.Output, time.Since(start).Seconds())
	for _, n := range in.Notes {
		fmt.Fprintln(env.Stderr, "note:", n)
	}
	return partial(c, nil, f.AllowPartial)
}

// writeRankSummary writes r's summary into dir under a temporary name, then renames
// it into place, so that a reader never sees half a file and writers on other servers
// never clash. It returns the file's size.
func writeRankSummary(dir string, r *profile.Rank, notes []string) (int64, error) {
	tmp, err := os.CreateTemp(dir, ".rank*.tmp")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing is left to remove
	if err := ranksummary.Write(tmp, r, parser.SummaryClaim(r), notes); err != nil {
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
	_, err = ranksummary.Install(tmp.Name(), dir, r.Rank)
	return st.Size(), err
}
