package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/analysis/compare"
	"github.com/hcclprof/hcclprof/profile"
	"github.com/hcclprof/hcclprof/report"
)

func newDiffCmd() *cobra.Command {
	var format string
	var failOn []string
	var seed uint64
	var af analysisFlags
	var outPath, junit string
	var github bool
	var widthN int
	cmd := &cobra.Command{
		Use:   "diff BASE NEW",
		Short: "Compare two runs: per metric, the change and whether it is significant",
		Long: `Diff compares two runs (profile directories, or JSON reports saved by analyze
--format json): per metric, the distributions over steps and ranks, the change, a
Mann-Whitney U test and a bootstrap interval ("~" when not significant at α = 0.05, as
benchstat prints), and the step-time change split into compute, exposed communication,
free time and bubble.

Gates name a metric with .delta, .delta_pct, .base or .p: --fail-on 'comm_share.delta>+0.05'.
The steps of one run are not independent samples, so p-values are a guide.

Exit codes: 0 gates hold; 1 a gate failed; 2 usage or input error (a damaged or
newer report, a run with no step); 3 a side incomplete unless --allow-partial.`,
		Example: `  hcclprof diff ./before ./after --fail-on 'step_time_us.delta_pct>5'
  hcclprof diff base.json new.json --fail-on 'comm_share.delta>+0.05' --junit diff.xml --github -o diff.txt`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "markdown" {
				if err := checkFormat(format); err != nil {
					return err
				}
			}
			width, err := textWidth(cmd, widthN, outPath != "")
			if err != nil {
				return err
			}
			var gates []analysis.Gate
			for _, expr := range failOn {
				g, err := analysis.ParseGate(expr, compare.GateMetricNames)
				if err != nil {
					return usageError(err)
				}
				gates = append(gates, g)
			}
			runs := make([]*compare.Run, 2)
			read := &profile.Cluster{} // the ranks read from profiles, whose files are inputs
			for i, arg := range args {
				run, cluster, err := af.loadRun(arg)
				if err != nil {
					return err
				}
				runs[i] = run
				if cluster != nil {
					read.Ranks = append(read.Ranks, cluster.Ranks...)
				}
			}
			var stepSummary string
			if github {
				stepSummary = os.Getenv("GITHUB_STEP_SUMMARY")
			}
			if err := checkOutputs(args, read, output{"-o", outPath}, output{"--junit", junit}, output{"$GITHUB_STEP_SUMMARY", stepSummary}); err != nil {
				return err
			}
			d := compare.Compare(runs[0], runs[1], compare.Options{Seed: seed})
			doc := report.DiffDoc{Diff: d, Width: width}
			results := analysis.EvaluateGates(gates, d.GateValues())
			var failed []string
			for _, g := range results {
				doc.Gates = append(doc.Gates, report.GateView{Expr: g.Expr, Metric: g.Metric, Value: g.Value, Passed: g.Passed})
				if !g.Passed {
					failed = append(failed, g.Expr)
				}
			}
			var w io.Writer = cmd.OutOrStdout()
			if outPath != "" {
				file, err := os.Create(outPath)
				if err != nil {
					return usageError(err)
				}
				defer file.Close()
				w = file
			}
			switch format {
			case "json":
				err = report.WriteDiffJSON(w, doc)
			case "markdown":
				err = report.WriteDiffMarkdown(w, doc)
			default:
				err = report.WriteDiffText(w, doc)
			}
			if err != nil {
				return usageError(err)
			}
			if github {
				// stderr, as in analyze: stdout stays the report alone.
				if err := report.WriteDiffGitHubAnnotations(cmd.ErrOrStderr(), doc); err != nil {
					return usageError(err)
				}
				if stepSummary != "" {
					if err := appendFile(stepSummary, func(w io.Writer) error { return report.WriteDiffMarkdown(w, doc) }); err != nil {
						return usageError(fmt.Errorf("$GITHUB_STEP_SUMMARY: %w", err))
					}
				}
			}
			if junit != "" {
				if err := createFile(junit, func(w io.Writer) error { return report.WriteDiffJUnit(w, doc) }); err != nil {
					return usageError(err)
				}
			}
			// An incomplete side (a report saved from an incomplete run, or a run read
			// now) is exit 3, as in analyze.
			for _, r := range runs {
				if r.Incomplete && !af.allowPartial {
					return &exitError{code: exitIncomplete, err: fmt.Errorf("input incomplete: %s was not read in full (see its warnings); use --allow-partial to accept a partial result", r.Label)}
				}
			}
			if len(failed) > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "hcclprof: gate failed: %s\n", strings.Join(failed, "; "))
				return &exitError{code: exitGateFailed}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&format, "format", "text", "text, json or markdown")
	fl.StringArrayVar(&failOn, "fail-on", nil, "fail (exit 1) when METRIC[.delta|.delta_pct|.base|.p] OP VALUE holds; repeatable")
	fl.Uint64Var(&seed, "seed", 1, "bootstrap seed (the same seed gives the same intervals)")
	fl.StringVarP(&outPath, "output", "o", "", "write the diff to this file instead of stdout")
	fl.StringVar(&junit, "junit", "", "also write the gates as JUnit XML to this file (for CI test reports; with no --fail-on, one skipped case that says so)")
	fl.BoolVar(&github, "github", false, "print GitHub Actions annotations to stderr (an error per failed gate, a warning per warning) and append the Markdown diff to $GITHUB_STEP_SUMMARY when it is set")
	registerWidth(fl, &widthN)
	af.register(fl)
	return cmd
}

// loadRun reads one side of a diff: a saved JSON report, or profiles to analyse (then
// their cluster too, whose files are inputs no output may overwrite).
func (f *analysisFlags) loadRun(path string) (*compare.Run, *profile.Cluster, error) {
	if strings.HasSuffix(strings.ToLower(path), ".json") {
		if st, err := os.Stat(path); err == nil && !st.IsDir() {
			file, err := os.Open(path)
			if err != nil {
				return nil, nil, usageError(err)
			}
			defer file.Close()
			// A Kineto trace is .json too: try the report first, then the profile.
			run, reportErr := report.ReadReportRun(file, path)
			if reportErr == nil {
				return run, nil, nil
			}
			loaded, err := f.load([]string{path})
			if err != nil {
				// Neither: a damaged or newer report is refused with its own reason.
				return nil, nil, usageError(fmt.Errorf("%v; as a profile: %v", reportErr, err))
			}
			return f.fromLoaded(path, loaded), loaded.cluster, nil
		}
	}
	run, err := f.load([]string{path})
	if err != nil {
		return nil, nil, err
	}
	return f.fromLoaded(path, run), run.cluster, nil
}

// fromLoaded is the diff's side of a run read now; a rank incomplete for any reason
// partial() names makes the side incomplete.
func (f *analysisFlags) fromLoaded(path string, run *loaded) *compare.Run {
	r := compare.FromResult(path, run.result)
	if partial(run.cluster, run.result, false) != nil {
		r.Incomplete = true
	}
	return r
}
