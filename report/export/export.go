// Package export writes the analysis for other tools: typed Parquet or CSV tables with
// units in their column names (steps, ops, tasks, links, findings; NULL where the
// profile does not give a value), streamed as the ranks are read, and a Chrome trace
// of the analysis (exposed communication, waits, findings) that opens in Perfetto or
// MindStudio Insight beside the profiler's own trace.
package export
