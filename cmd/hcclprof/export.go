package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/parser"
	"github.com/hcclprof/hcclprof/report/export"
)

func newExportCmd() *cobra.Command {
	var to, out string
	var af analysisFlags
	cmd := &cobra.Command{
		Use:   "export PATH... --to parquet|csv|trace -o OUT",
		Short: "Write the analysis for other tools: Parquet or CSV tables, or a Chrome trace",
		Long: `Export writes the analysis of a run for other tools.

  --to parquet  OUT is a directory: steps, ops, tasks, links and findings .parquet (Snappy;
                int64, double and utf8 columns, units in the column names: _us, _ns,
                bytes, _gbps), readable by DuckDB, pandas and Spark.
  --to csv      the same tables as CSV.
  --to trace  OUT is a Chrome-trace JSON file: a process per rank ("rank N", in rank
              order) with its findings, its collectives, the time it waited for the
              others and its exposed communication, on the profile's own clock (open it
              in Perfetto or MindStudio Insight beside the profiler's trace); findings
              of no rank on a "findings" process. The same input gives the same file.

Exit codes: 0 done; 2 usage or input error; 3 input incomplete unless --allow-partial.`,
		Example: "  hcclprof export ./cluster --to csv -o out/\n  hcclprof export ./cluster --to trace -o analysis.json",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if to != "csv" && to != "trace" && to != "parquet" {
				return usageError(fmt.Errorf("unknown --to %q: want parquet, csv or trace", to))
			}
			if out == "" {
				return usageError(fmt.Errorf("-o is required"))
			}
			opts, advOpts, err := af.options()
			if err != nil {
				return usageError(err)
			}
			// The trace needs every rank's timeline: the whole cluster is kept.
			cluster, err := parser.LoadCluster(args, parser.LoadOptions{Workers: opts.Workers})
			if err != nil {
				return usageError(err)
			}
			res := analysis.Analyze(cluster, opts)
			if err := nothingToAnalyse(cluster, res, opts.SkipSteps); err != nil {
				return err
			}
			advice := advisor.Advise(res, advisor.EnvOf(cluster), withFramework(advOpts, cluster))
			tables := append(export.Tables(res, &advice), export.TasksTable(cluster))
			// Nothing is written over a file the run read: the trace's file, or each
			// table's file in the directory.
			outputs := []output{{"-o", out}}
			if to != "trace" {
				outputs = nil
				for _, t := range tables {
					outputs = append(outputs, output{"-o", filepath.Join(out, t.Name+"."+to)})
				}
			}
			if err := checkOutputs(args, cluster, outputs...); err != nil {
				return err
			}
			switch to {
			case "csv":
				if err := export.WriteCSV(out, tables); err != nil {
					return usageError(err)
				}
				return partial(cluster, res, af.allowPartial)
			case "parquet":
				if err := export.WriteParquet(out, tables); err != nil {
					return usageError(err)
				}
				return partial(cluster, res, af.allowPartial)
			}
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
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&to, "to", "", "parquet, csv or trace")
	fl.StringVarP(&out, "output", "o", "", "the directory (csv) or file (trace) to write")
	af.register(fl)
	return cmd
}
