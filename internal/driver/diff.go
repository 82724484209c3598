package driver

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis/compare"
	"github.com/hcclprof/hcclprof/profile"
	"github.com/hcclprof/hcclprof/report"
)

// DiffFlags is diff's flags.
type DiffFlags struct {
	Format   string
	FailOn   []string
	Seed     uint64
	Output   string
	JUnit    string
	GitHub   bool
	Width    int
	Analysis AnalysisFlags
}

// Diff is hcclprof diff: two runs compared metric by metric, with the gates on the
// changes and the CI outputs.
func Diff(env Env, args []string, f DiffFlags) error {
	out, err := outputOf(cmdDiff, f.Format)
	if err != nil {
		return err
	}
	width, err := textWidth(env, f.Width, f.Output != "")
	if err != nil {
		return err
	}
	var gates []advisor.Gate
	for _, expr := range f.FailOn {
		g, err := advisor.ParseGate(expr, compare.GateMetricNames)
		if err != nil {
			return usageError(err)
		}
		gates = append(gates, g)
	}
	runs := make([]*compare.Run, 2)
	read := &profile.Cluster{} // the ranks read from profiles, whose files are inputs
	for i, arg := range args {
		run, cluster, err := f.Analysis.loadRun(env, arg)
		if err != nil {
			return err
		}
		runs[i] = run
		if cluster != nil {
			read.Ranks = append(read.Ranks, cluster.Ranks...)
		}
	}
	var stepSummary string
	if f.GitHub {
		stepSummary = os.Getenv("GITHUB_STEP_SUMMARY")
	}
	if err := checkOutputs(args, read, output{"-o", f.Output}, output{"--junit", f.JUnit}, output{"$GITHUB_STEP_SUMMARY", stepSummary}); err != nil {
		return err
	}
	d := compare.Compare(runs[0], runs[1], compare.Options{Seed: f.Seed})
	// The advisor decides diff's gates as analyze's, on the changes compare measured.
	doc := report.DiffDoc{Diff: d, Gates: advisor.EvaluateGates(gates, d.GateValues()), Width: width}
	var failed []string
	for _, g := range advisor.FailedGates(doc.Gates) {
		failed = append(failed, g.Expr)
	}
	err = writeOutput(env, f.Output, func(w io.Writer) error { return doc.Write(w, out.as) })
	if err != nil {
		return usageError(err)
	}
	if f.GitHub {
		// stderr, as in analyze: stdout stays the report alone.
		if err := doc.Write(env.Stderr, report.GitHub); err != nil {
			return usageError(err)
		}
		if stepSummary != "" {
			if err := appendFile(stepSummary, func(w io.Writer) error { return doc.Write(w, report.Markdown) }); err != nil {
				return usageError(fmt.Errorf("$GITHUB_STEP_SUMMARY: %w", err))
			}
		}
	}
	if f.JUnit != "" {
		if err := createFile(f.JUnit, func(w io.Writer) error { return doc.Write(w, report.JUnit) }); err != nil {
			return usageError(err)
		}
	}
	// An incomplete side (a report saved from an incomplete run, or a run read
	// now) is exit 3, as in analyze.
	for _, r := range runs {
		if r.Incomplete && !f.Analysis.AllowPartial {
			return &exitError{code: ExitIncomplete, err: fmt.Errorf("input incomplete: %s was not read in full (see its warnings); use --allow-partial to accept a partial result", r.Label)}
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(env.Stderr, "hcclprof: gate failed: %s\n", strings.Join(failed, "; "))
		return &exitError{code: ExitGateFailed}
	}
	return nil
}

// loadRun reads one side of a diff: a saved JSON report, or profiles to analyse (then
// their cluster too, whose files are inputs no output may overwrite).
func (f *AnalysisFlags) loadRun(env Env, path string) (*compare.Run, *profile.Cluster, error) {
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
			loaded, err := f.load(env, []string{path})
			if err != nil {
				// Neither: a damaged or newer report is refused with its own reason.
				return nil, nil, usageError(fmt.Errorf("%v; as a profile: %v", reportErr, err))
			}
			return f.fromLoaded(path, loaded), loaded.cluster, nil
		}
	}
	run, err := f.load(env, []string{path})
	if err != nil {
		return nil, nil, err
	}
	return f.fromLoaded(path, run), run.cluster, nil
}

// fromLoaded is the diff's side of a run read now; a rank incomplete for any reason
// partial() names makes the side incomplete.
func (f *AnalysisFlags) fromLoaded(path string, run *loaded) *compare.Run {
	r := compare.FromResult(path, run.result)
	if partial(run.cluster, run.result, false) != nil {
		r.Incomplete = true
	}
	return r
}
