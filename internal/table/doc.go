// Package table reads the tables of hcclprof's inputs, knowing no profiler format:
// SQLite databases opened strictly read-only (OpenSQLite: from a file, a file with
// its -wal, or an archive's member), their tables streamed with columns found by
// name (DB.SelectAll) and queries with their columns scanned into destinations
// (DB.Query), both as Rows read with the one row loop, Each; the loosely typed values
// SQLite stores scanned without a float64 round trip (Int, Text, and Rows.Float); and
// CSV files read a record at a time with their header (OpenCSV), damaged and cut-off
// rows refused with their line.
package table
