package main

import (
	"github.com/spf13/cobra"

	"github.com/hcclprof/hcclprof/internal/driver"
)

func newExportCmd(in invocation) *cobra.Command {
	var f driver.ExportFlags
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
			return driver.Export(in.env(cmd), args, f)
		},
	}
	fl := cmd.Flags()
	registerFormat(cmd, &f.To)
	fl.StringVarP(&f.Output, "output", "o", "", "the directory (parquet, csv) or file (trace) to write")
	registerAnalysis(fl, &f.Analysis)
	return cmd
}
