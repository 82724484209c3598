package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/parser"
	"github.com/hcclprof/hcclprof/profile"
	"github.com/hcclprof/hcclprof/report/export"
)

func newExportCmd() *cobra.Command {
	var to, out string
	var af analysisFlags
	cmd := &cobra.Command{
		Use:   "export PATH... --to parquet|csv|trace -o OUT",
		Short: "Write the analysis for other tools: Parquet or CSV tables, or a Chrome trace",
		Long: `Export writes the analysis of a run for other tools.

  --to parquet  OUT is a directory: steps, ops, tasks, links and findings .parquet
                (Snappy; INT64, DOUBLE, STRING and TIMESTAMP(NANOS) columns, units in
                the column names: _us, _ns, bytes, _gbps; NULL where the profile gives
                no value), readable by DuckDB, pandas and Spark. Timestamps (start_ns)
                are the profile's own ns since the epoch; group ids are strings;
                tasks.op_row is the ops row (ops.op_row) of the task's op.
  --to csv      the same tables as CSV: integers and timestamps (ns) as exact
                integers, an empty field for NULL. Group ids are digits that a
                CSV reader may take for a number: in DuckDB, read_csv('ops.csv',
                types={'group': 'VARCHAR'}).
  --to trace    OUT is a Chrome-trace JSON file: a process per rank ("rank N", in rank
                order) with its findings, its collectives, the time it waited for the
                others and its exposed communication, on the profile's own clock (open
                it in Perfetto or MindStudio Insight beside the profiler's trace);
                findings of no rank on a "findings" process. The same input gives the
                same file.

The tables are written as the ranks are read, so memory stays near analyze's.

Exit codes: 0 done; 2 usage or input error; 3 input incomplete unless --allow-partial.`,
		Example: "  hcclprof export ./cluster --to parquet -o out/\n  hcclprof export ./cluster --to trace -o analysis.json",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if to != "csv" && to != "trace" && to != "parquet" {
				return usageError(fmt.Errorf("unknown --to %q: want parquet, csv or trace", to))
			}
			if out == "" {
				return usageError(fmt.Errorf("-o is required"))
			}
			if to == "trace" {
				return exportTrace(args, out, af)
			}
			return exportTables(args, export.Format(to), out, af)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&to, "to", "", "parquet, csv or trace")
	fl.StringVarP(&out, "output", "o", "", "the directory (parquet, csv) or file (trace) to write")
	af.register(fl)
	return cmd
}

// exportTables writes the tables, the tasks rank by rank as the ranks are read. Nothing
// is put over a file the run read: the tables go to temporary files that take their
// names only once the check has passed.
func exportTables(args []string, format export.Format, dir string, af analysisFlags) error {
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
	run, err := af.loadWith(args, func(acc *analysis.Accumulator) (onRank, inOrder func(*profile.Rank)) {
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
	advice := advisor.Advise(run.result, advisor.EnvOf(run.cluster), run.advisor)
	if err := ex.Finish(run.result, &advice); err != nil {
		return usageError(err)
	}
	done = true
	return partial(run.cluster, run.result, af.allowPartial)
}

// exportTrace writes the Chrome trace, which needs every rank's timeline: the whole
// cluster is kept.
func exportTrace(args []string, out string, af analysisFlags) error {
	opts, advOpts, err := af.options()
	if err != nil {
		return usageError(err)
	}
	cluster, err := parser.LoadCluster(args, parser.LoadOptions{Workers: opts.Workers})
	if err != nil {
		return usageError(err)
	}
	res := analysis.Analyze(cluster, opts)
	if err := nothingToAnalyse(cluster, res, opts.SkipSteps); err != nil {
		return err
	}
	if err := checkOutputs(args, cluster, output{"-o", out}); err != nil {
		return err
	}
	advice := advisor.Advise(res, advisor.EnvOf(cluster), withFramework(advOpts, cluster))
	f, err := os.Create(out)
	if err != nil {
		return usageError(err)
	}
	err = export.WriteTrace(f, res, cluster, &advice)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return usageError(err)
	}
	return partial(cluster, res, af.allowPartial)
}
