package driver

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/atomicfile"
	"github.com/hcclprof/hcclprof/profile"
	"github.com/hcclprof/hcclprof/report"
)

// AnalyzeFlags is analyze's flags.
type AnalyzeFlags struct {
	Format       string
	Output       string
	FailOn       []string
	JUnit        string
	TimelineRank int
	// TimelineRankSet says --timeline-rank was given: a rank the run does not hold
	// is then refused, not replaced.
	TimelineRankSet bool
	GitHub          bool
	Width           int
	Analysis        AnalysisFlags
}

// Analyze is hcclprof analyze: the report of the runs under args, its gates and
// its CI outputs.
func Analyze(env Env, args []string, f AnalyzeFlags) error {
	usage := usageError
	out, err := outputOf(cmdAnalyze, f.Format)
	if err != nil {
		return err
	}
	width, err := textWidth(env, f.Width, f.Output != "")
	if err != nil {
		return err
	}
	gates := make([]advisor.Gate, 0, len(f.FailOn))
	for _, expr := range f.FailOn {
		g, err := advisor.ParseGate(expr, analysis.MetricNames)
		if err != nil {
			return usage(err)
		}
		gates = append(gates, g)
	}
	// Each rank is summarised as soon as it is read and its timeline dropped, so memory
	// follows the summaries, not the traces.
	keepRank := -1
	if out.as == report.HTML {
		keepRank = f.TimelineRank
		f.Analysis.keep = func(rank int) bool { return rank == keepRank }
	}
	run, err := f.Analysis.load(env, args)
	if err != nil {
		return err
	}
	cluster, res := run.cluster, run.result
	run.advisor.Gates = gates
	// The job summary is only written with --github, so a local run with the variable
	// left over in its environment does not touch the file.
	var stepSummary string
	if f.GitHub {
		stepSummary = os.Getenv("GITHUB_STEP_SUMMARY")
	}
	if err := checkOutputs(args, cluster, output{"-o", f.Output}, output{"--junit", f.JUnit}, output{"$GITHUB_STEP_SUMMARY", stepSummary}); err != nil {
		return err
	}
	var shown *profile.Rank
	if out.as == report.HTML {
		if shown, err = timelineRank(cluster, keepRank, f.TimelineRankSet); err != nil {
			return usage(err)
		}
	}
	advice := run.advise()
	doc := &report.Document{
		TimelineRank: shown,
		Result:       res,
		Advice:       &advice,
		Notes:        append(cluster.Notes, skippedNote(withoutSteps(res.SkippedSteps, run.warmup))...),
		LeftOut:      run.leftOut,
		Command:      env.command(),
		Version:      env.Version,
		Width:        width,
	}
	err = writeOutput(env, f.Output, func(w io.Writer) error { return doc.Write(w, out.as) })
	if err != nil {
		return usage(err)
	}
	if f.GitHub {
		// stderr, so that stdout stays the report alone (valid JSON with --format json);
		// the Actions runner reads workflow commands from both streams.
		if err := doc.Write(env.Stderr, report.GitHub); err != nil {
			return usage(err)
		}
		if stepSummary != "" {
			if err := appendFile(stepSummary, func(w io.Writer) error { return doc.Write(w, report.Markdown) }); err != nil {
				return usage(fmt.Errorf("$GITHUB_STEP_SUMMARY: %w", err))
			}
		}
	}
	if f.JUnit != "" {
		if err := createFile(f.JUnit, func(w io.Writer) error { return doc.Write(w, report.JUnit) }); err != nil {
			return usage(err)
		}
	}
	if err := partial(cluster, res, f.Analysis.AllowPartial); err != nil {
		return err
	}
	if failed := advisor.FailedGates(advice.Gates); len(failed) > 0 {
		names := make([]string, len(failed))
		for i, g := range failed {
			names[i] = g.Expr
		}
		fmt.Fprintf(env.Stderr, "hcclprof: gate failed: %s\n", strings.Join(names, "; "))
		return &exitError{code: ExitGateFailed}
	}
	return nil
}

// appendFile appends what write writes to the file at path, creating it: the job
// summary file of GitHub Actions, which shows its Markdown on the run's summary page
// and to which other steps append too.
func appendFile(path string, write func(io.Writer) error) error {
	return writeFileWith(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644, write)
}

// createFile writes what write writes to a new file at path (a JUnit report), under
// a temporary name renamed into place once whole: a reader never sees half of it, and
// a failed write leaves nothing.
func createFile(path string, write func(io.Writer) error) error {
	return atomicfile.Write(path, write)
}

// writeOutput writes a command's report to -o's path as createFile does, or to
// stdout when there is no -o.
func writeOutput(env Env, path string, write func(io.Writer) error) error {
	if path == "" {
		return write(env.Stdout)
	}
	return createFile(path, write)
}

// writeFileWith opens path with flag and perm and writes to it; a failed close is the
// error when the write did not fail first.
func writeFileWith(path string, flag int, perm os.FileMode, write func(io.Writer) error) error {
	file, err := os.OpenFile(path, flag, perm)
	if err != nil {
		return err
	}
	err = write(file)
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	return err
}

// withoutSteps is steps less drop.
func withoutSteps(steps, drop []int) []int {
	var out []int
	for _, s := range steps {
		if !slices.Contains(drop, s) {
			out = append(out, s)
		}
	}
	return out
}

// skippedNote says which steps --skip-steps left out, so a report never hides it.
func skippedNote(steps []int) []string {
	if len(steps) == 0 {
		return nil
	}
	parts := make([]string, len(steps))
	for i, s := range steps {
		parts[i] = strconv.Itoa(s)
	}
	return []string{"steps " + strings.Join(parts, ", ") + " left out of every figure (--skip-steps)"}
}

// timelineRank is the rank --timeline-rank names (its timeline kept when the run has
// one; the report says when it has none). A rank the run does not hold is an error
// naming the ranks it does when the flag was given, and nil when it is the default.
func timelineRank(c *profile.Cluster, rank int, given bool) (*profile.Rank, error) {
	if rank < 0 && !given {
		return nil, nil
	}
	ranks := make([]int, 0, len(c.Ranks))
	for _, r := range c.Ranks {
		if r.Rank == rank {
			return r, nil
		}
		ranks = append(ranks, r.Rank)
	}
	if !given {
		return nil, nil
	}
	return nil, fmt.Errorf("--timeline-rank %d: the run has no rank %d; its ranks are %s", rank, rank, rankRanges(ranks))
}

// rankRanges writes ranks as runs: "0-7", "0, 2, 4-6".
func rankRanges(ranks []int) string {
	ranks = slices.Clone(ranks)
	slices.Sort(ranks)
	ranks = slices.Compact(ranks)
	if len(ranks) == 0 {
		return "none"
	}
	var parts []string
	for i := 0; i < len(ranks); {
		j := i
		for j+1 < len(ranks) && ranks[j+1] == ranks[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(ranks[i]))
		} else {
			parts = append(parts, strconv.Itoa(ranks[i])+"-"+strconv.Itoa(ranks[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}
