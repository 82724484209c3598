// Package table reads the tables of hcclprof's inputs, knowing no profiler format:
// SQLite databases opened strictly read-only (OpenSQLite: from a file, a file with
// its -wal, or an archive's member), their tables streamed with columns found by
// name (DB.SelectAll) and queries with their columns scanned into destinations
// (DB.Query), both as Rows read with the one row loop, Each; ids turned into names
// through another table in the same query, an id that names nothing reported
// (DB.Lookup, Ref), and columns a table may lack read as NULL (DB.OptionalColumns);
// the loosely typed values SQLite stores scanned without a float64 round trip (Int,
// Text, and Rows.Float); and CSV files read a record at a time with their header
// (OpenCSV), damaged and cut-off rows refused with their line.
package table
