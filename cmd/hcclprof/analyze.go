package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/profile"
	"github.com/hcclprof/hcclprof/report"
)

type analyzeFlags struct {
	format       string
	output       string
	failOn       []string
	junit        string
	timelineRank int
	github       bool
	width        int
	analysis     analysisFlags
}

func newAnalyzeCmd() *cobra.Command {
	var f analyzeFlags
	cmd := &cobra.Command{
		Use:   "analyze PATH...",
		Short: "Report the step breakdown and communication of a profiled run",
		Long: `Analyze a cluster root, rank directories (./*_ascend_pt) or single files, and rank
summaries written by 'hcclprof summarize' (alone or mixed with raw ranks).

Exit codes: 0 all gates hold; 1 a --fail-on gate failed (the report still prints);
2 usage or input error; 3 input incomplete (a rank unreadable) unless --allow-partial.`,
		Example: `  hcclprof analyze ./cluster_dir
  hcclprof analyze ./cluster_dir --format json > report.json
  hcclprof analyze ./cluster_dir --fail-on 'comm_share>30%'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAnalyze(cmd, args, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.format, "format", "text", "report format: text, json, markdown or html (one self-contained file: -o report.html)")
	fl.StringVarP(&f.output, "output", "o", "", "write the report to this file instead of stdout")
	fl.StringArrayVar(&f.failOn, "fail-on", nil, "fail (exit 1) when METRIC OP VALUE holds, e.g. 'comm_share>30%'; repeatable. Metrics: "+strings.Join(analysis.MetricNames, ", "))
	fl.IntVar(&f.timelineRank, "timeline-rank", 0, "with --format html: the rank whose longest step is drawn with its compute lanes")
	fl.StringVar(&f.junit, "junit", "", "also write the gates as JUnit XML to this file (for CI test reports; with no --fail-on, one skipped case that says so)")
	fl.BoolVar(&f.github, "github", false, "print GitHub Actions annotations to stderr (an error per failed gate, a warning per high finding) and append the Markdown report to $GITHUB_STEP_SUMMARY when it is set")
	registerWidth(fl, &f.width)
	f.analysis.register(fl)
	return cmd
}

func runAnalyze(cmd *cobra.Command, args []string, f analyzeFlags) error {
	usage := func(err error) error { return &exitError{code: exitUsage, err: err} }
	if f.format != "text" && f.format != "json" && f.format != "markdown" && f.format != "html" {
		return usage(fmt.Errorf("unknown --format %q: want text, json, markdown or html", f.format))
	}
	width, err := textWidth(cmd, f.width, f.output != "")
	if err != nil {
		return err
	}
	gates := make([]analysis.Gate, 0, len(f.failOn))
	for _, expr := range f.failOn {
		g, err := analysis.ParseGate(expr, analysis.MetricNames)
		if err != nil {
			return usage(err)
		}
		gates = append(gates, g)
	}
	// Each rank is summarised as soon as it is read and its timeline dropped, so memory
	// follows the summaries, not the traces.
	if f.format == "html" {
		f.analysis.keepRank = f.timelineRank
	}
	run, err := f.analysis.load(args)
	if err != nil {
		return err
	}
	cluster, res, advOpts := run.cluster, run.result, run.advisor
	// The job summary is only written with --github, so a local run with the variable
	// left over in its environment does not touch the file.
	var stepSummary string
	if f.github {
		stepSummary = os.Getenv("GITHUB_STEP_SUMMARY")
	}
	if err := checkOutputs(args, cluster, output{"-o", f.output}, output{"--junit", f.junit}, output{"$GITHUB_STEP_SUMMARY", stepSummary}); err != nil {
		return err
	}
	opts := analysis.Options{SkipSteps: f.analysis.skipSteps}
	advice := advisor.Advise(res, advisor.EnvOf(cluster), advOpts)
	doc := &report.Document{
		TimelineRank: timelineRank(cluster, f.analysis.keepRank),
		Result:       res,
		Advice:       &advice,
		CommBudget:   advOpts.CommBudget,
		Gates:        analysis.EvaluateGates(gates, res.Summary.Metrics()),
		Notes:        append(cluster.Notes, skippedNote(opts.SkipSteps)...),
		Command:      recordedCommand(),
		Version:      toolVersion(),
		Width:        width,
	}
	var w io.Writer = cmd.OutOrStdout()
	if f.output != "" {
		file, err := os.Create(f.output)
		if err != nil {
			return usage(err)
		}
		defer file.Close()
		w = file
	}
	switch f.format {
	case "json":
		err = report.WriteJSON(w, doc)
	case "markdown":
		err = report.WriteMarkdown(w, doc)
	case "html":
		err = report.WriteHTML(w, doc)
	default:
		err = report.WriteText(w, doc)
	}
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	if f.github {
		// stderr, so that stdout stays the report alone (valid JSON with --format json);
		// the Actions runner reads workflow commands from both streams.
		if err := report.WriteGitHubAnnotations(cmd.ErrOrStderr(), doc); err != nil {
			return &exitError{code: exitUsage, err: err}
		}
		if stepSummary != "" {
			if err := appendFile(stepSummary, func(w io.Writer) error { return report.WriteMarkdown(w, doc) }); err != nil {
				return usage(fmt.Errorf("$GITHUB_STEP_SUMMARY: %w", err))
			}
		}
	}
	if f.junit != "" {
		if err := createFile(f.junit, func(w io.Writer) error { return report.WriteJUnit(w, doc) }); err != nil {
			return usage(err)
		}
	}
	if err := partial(cluster, res, f.analysis.allowPartial); err != nil {
		return err
	}
	if failed := doc.FailedGates(); len(failed) > 0 {
		names := make([]string, len(failed))
		for i, g := range failed {
			names[i] = g.Expr
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "hcclprof: gate failed: %s\n", strings.Join(names, "; "))
		return &exitError{code: exitGateFailed}
	}
	return nil
}

// appendFile appends what write writes to the file at path, creating it: the job
// summary file of GitHub Actions, which shows its Markdown on the run's summary page
// and to which other steps append too.
func appendFile(path string, write func(io.Writer) error) error {
	return writeFileWith(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644, write)
}

// createFile writes what write writes to a new file at path (a JUnit report).
func createFile(path string, write func(io.Writer) error) error {
	return writeFileWith(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666, write) // as os.Create
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

// timelineRank is the rank whose timeline was kept, or nil.
func timelineRank(c *profile.Cluster, rank int) *profile.Rank {
	if rank < 0 {
		return nil
	}
	for _, r := range c.Ranks {
		if r.Rank == rank && len(r.Compute) > 0 {
			return r
		}
	}
	return nil
}
