package driver

import (
	"fmt"
	"io"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/profile"
	"github.com/hcclprof/hcclprof/report/export"
)

// ExportFlags is export's flags.
type ExportFlags struct {
	To       string // parquet, csv or trace
	Output   string
	Analysis AnalysisFlags
}

// Export is hcclprof export: the analysis written for other tools, as tables or as a
// Chrome trace.
func Export(env Env, args []string, f ExportFlags) error {
	out, err := outputOf(cmdExport, f.To)
	if err != nil {
		return err
	}
	if f.Output == "" {
		return usageError(fmt.Errorf("-o is required"))
	}
	if out.name == "trace" {
		return exportTrace(env, args, f.Output, f.Analysis)
	}
	return exportTables(env, args, export.Format(out.name), f.Output, f.Analysis)
}

// exportTables writes the tables, the tasks rank by rank as the ranks are read. Nothing
// is put over a file the run read: the tables go to temporary files that take their
// names only once the check has passed.
func exportTables(env Env, args []string, format export.Format, dir string, af AnalysisFlags) error {
	ex, err := export.Begin(dir, format)
	if err != nil {
		return usageError(err)
	}
	done := false
	defer func() {
		if !done {
			ex.Abort()
		}
	}()
	run, err := af.loadWith(env, args, func(acc *analysis.Accumulator) (onRank, inOrder func(*profile.Rank)) {
		return ex.Hooks(acc.Add, acc.OpIndices)
	})
	if err != nil {
		return err
	}
	var outputs []output
	for _, f := range export.Files(dir, format) {
		outputs = append(outputs, output{"-o", f})
	}
	if err := checkOutputs(args, run.cluster, outputs...); err != nil {
		return err
	}
	advice := run.advise()
	if err := ex.Finish(run.result, &advice); err != nil {
		return usageError(err)
	}
	done = true
	return partial(run.cluster, run.result, af.AllowPartial)
}

// exportTrace writes the Chrome trace, which draws every rank's timeline: the load
// keeps them all.
func exportTrace(env Env, args []string, out string, af AnalysisFlags) error {
	af.keep = func(int) bool { return true }
	run, err := af.load(env, args)
	if err != nil {
		return err
	}
	if err := checkOutputs(args, run.cluster, output{"-o", out}); err != nil {
		return err
	}
	advice := run.advise()
	err = createFile(out, func(w io.Writer) error { return export.WriteTrace(w, run.result, run.cluster, &advice) })
	if err != nil {
		return usageError(err)
	}
	return partial(run.cluster, run.result, af.AllowPartial)
}
