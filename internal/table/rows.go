package table

import (
	"database/sql"
	"fmt"
	"iter"
	"strings"
)

// Rows streams a whole table with its columns found by name (SelectAll), or a query's
// result scanned into the destinations it was given (Query). Either is read with Each.
type Rows struct {
	d     *DB
	table string // the table read, "" for a query
	what  string // what is being read, in errors: "reading STEP_TIME"
	rows  *sql.Rows
	err   error          // a query's error, given by the first Next (Query)
	idx   map[string]int // upper-cased column name → index (SelectAll)
	vals  []any
	dest  []any // where Next scans each row
	// scanCtx names the columns in the errors of a row's scan (ScanContext).
	scanCtx string
	n       int // rows read
}

// SelectAll opens a table for reading; required columns must exist. A missing table
// gives (nil, nil).
func (d *DB) SelectAll(table string, required ...string) (*Rows, error) {
	if !d.Has(table) {
		return nil, nil
	}
	if err := d.Require(table, required...); err != nil {
		return nil, err
	}
	what := "reading " + table
	rows, err := d.query(what, "SELECT * FROM "+d.tables[strings.ToUpper(table)])
	if err != nil {
		return nil, err
	}
	cols, err := rows.Columns()
	if err != nil {
		rows.Close()
		return nil, d.Wrap(what, err)
	}
	t := &Rows{d: d, table: table, what: what, rows: rows, idx: map[string]int{}, vals: make([]any, len(cols)), dest: make([]any, len(cols))}
	for i, c := range cols {
		if _, dup := t.idx[strings.ToUpper(c)]; !dup {
			t.idx[strings.ToUpper(c)] = i
		}
		t.dest[i] = &t.vals[i]
	}
	return t, nil
}

// Query runs a query whose rows Next scans into dest, one destination per selected
// column (an *Int or *Text reads SQLite's loosely typed values, NULL as not Valid;
// anything database/sql scans into will do). what names the query in every error,
// with the file: "reading STEP_TIME". A query SQLite refuses gives its error at the
// first Next, as database/sql's QueryRow does, so that a query is read in one loop:
//
//	q := d.Query("reading STEP_TIME", "SELECT id, startNs FROM STEP_TIME", &id, &start)
//	for err := range table.Each(q) {
//		if err != nil {
//			return err
//		}
//		... id and start hold the current row ...
//	}
func (d *DB) Query(what, q string, dest ...any) *Rows {
	rows, err := d.query(what, q)
	return &Rows{d: d, what: what, rows: rows, err: err, dest: dest}
}

// ScanContext names the columns in the errors of the row scans (a value a
// destination refuses), before database/sql's words: "PYTORCH_API.startNs" gives
// "reading …: PYTORCH_API.startNs: sql: Scan error on column index 1, …".
func (t *Rows) ScanContext(s string) { t.scanCtx = s }

// Next reads the next row.
func (t *Rows) Next() (bool, error) {
	if t.rows == nil {
		err := t.err
		t.err = nil
		return false, err
	}
	if !t.rows.Next() {
		err := t.rows.Err()
		t.rows.Close()
		if err != nil {
			return false, t.d.Wrap(t.what, err)
		}
		return false, nil
	}
	if err := t.rows.Scan(t.dest...); err != nil {
		t.rows.Close()
		if t.scanCtx != "" {
			err = fmt.Errorf("%s: %w", t.scanCtx, err)
		}
		return false, t.d.Wrap(t.what, err)
	}
	t.n++
	return true, nil
}

// Close ends the reading of the table or query. Each closes it when its loop ends.
func (t *Rows) Close() {
	if t.rows != nil {
		t.rows.Close()
	}
}

// Raw is the current row's value in col as the driver gave it (nil when absent).
func (t *Rows) Raw(col string) any {
	if i, ok := t.idx[strings.ToUpper(col)]; ok {
		return t.vals[i]
	}
	return nil
}

// Has reports whether the table has col (names are case-insensitive).
func (t *Rows) Has(col string) bool { _, ok := t.idx[strings.ToUpper(col)]; return ok }

// Errf is an error about the current row: "TABLE row N: …" for a table, and what the
// query reads for a query ("reading STEP_TIME: …": the rows of a join have no number
// a user could find).
func (t *Rows) Errf(format string, args ...any) error {
	if t.table == "" {
		return t.Wrap(fmt.Errorf(format, args...))
	}
	return dbErr(t.d.File, "%s row %d: %s", t.table, t.n, fmt.Sprintf(format, args...))
}

// Wrap names the file and what is being read in err (DB.Wrap).
func (t *Rows) Wrap(err error) error { return t.d.Wrap(t.what, err) }

// Text reads col as text; absent or NULL gives "".
func (t *Rows) Text(col string) string {
	var s Text
	_ = s.Scan(t.Raw(col))
	return s.V
}

// Float reads a number; absent, NULL, empty and N/A give ok false.
func (t *Rows) Float(col string) (v float64, ok bool, err error) {
	var f dbFloat
	if err := f.Scan(t.Raw(col)); err != nil {
		return 0, false, t.Errf("column %s: %v", col, err)
	}
	return f.V, f.Valid, nil
}

// MustFloat reads a required number.
func (t *Rows) MustFloat(col string) (float64, error) {
	v, ok, err := t.Float(col)
	if err == nil && !ok {
		err = t.Errf("column %s: no value", col)
	}
	return v, err
}

// Scaled reads a number in ms (MB) as ns (bytes). A column the table lacks (an older
// schema) reads 0; a NULL in a column it has is an error: the profilers write every
// figure of these tables (0 for none), and read as 0 a NULL transit time made an
// op's split the profiler's "transit 0".
func (t *Rows) Scaled(col string) (int64, error) {
	if err := t.NotNull(col); err != nil {
		return 0, err
	}
	v, _, err := t.Float(col)
	if err != nil {
		return 0, err
	}
	n, err := scaledOf(v)
	if err != nil {
		return 0, t.Errf("column %s: %v", col, err)
	}
	return n, nil
}

// NotNull is an error when the table has col and the current row holds NULL there.
func (t *Rows) NotNull(col string) error {
	if t.Has(col) && t.Raw(col) == nil {
		return t.Errf("column %s: NULL", col)
	}
	return nil
}

// Int reads col as an integer (Int's rules); absent or NULL gives 0.
func (t *Rows) Int(col string) (int64, error) {
	var n Int
	if err := n.Scan(t.Raw(col)); err != nil {
		return 0, t.Errf("column %s: %v", col, err)
	}
	return n.V, nil
}

// Reader is a table read a row at a time: a database's table or query (Rows) or a
// CSV file (CSV). Next reads the next row, false at the end.
type Reader interface{ Next() (bool, error) }

// Each is the one loop over a table's rows: it yields nil for each row, read into r,
// and at the end the error that stopped the reading, if one did (nothing follows it).
// A reader that has a Close (Rows) is closed when the loop ends, left early or not.
//
//	for err := range table.Each(t) {
//		if err != nil {
//			return err
//		}
//		... t's current row ...
//	}
func Each(r Reader) iter.Seq[error] {
	return func(yield func(error) bool) {
		if c, ok := r.(interface{ Close() }); ok {
			defer c.Close()
		}
		for {
			ok, err := r.Next()
			if err != nil {
				yield(err)
				return
			}
			if !ok || !yield(nil) {
				return
			}
		}
	}
}
