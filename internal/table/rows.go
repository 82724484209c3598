package table

import (
	"database/sql"
	"fmt"
	"iter"
	"strings"
)

// Rows streams a whole table with its columns found by name.
type Rows struct {
	d     *DB
	table string
	rows  *sql.Rows
	idx   map[string]int // upper-cased column name → index
	vals  []any
	ptrs  []any
	n     int // rows read
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
	rows, err := d.Query("reading "+table, "SELECT * FROM "+d.tables[strings.ToUpper(table)])
	if err != nil {
		return nil, err
	}
	cols, err := rows.Columns()
	if err != nil {
		rows.Close()
		return nil, d.Wrap("reading "+table, err)
	}
	t := &Rows{d: d, table: table, rows: rows, idx: map[string]int{}, vals: make([]any, len(cols)), ptrs: make([]any, len(cols))}
	for i, c := range cols {
		if _, dup := t.idx[strings.ToUpper(c)]; !dup {
			t.idx[strings.ToUpper(c)] = i
		}
		t.ptrs[i] = &t.vals[i]
	}
	return t, nil
}

// Next reads the next row.
func (t *Rows) Next() (bool, error) {
	if !t.rows.Next() {
		err := t.rows.Err()
		t.rows.Close()
		if err != nil {
			return false, t.d.Wrap("reading "+t.table, err)
		}
		return false, nil
	}
	if err := t.rows.Scan(t.ptrs...); err != nil {
		t.rows.Close()
		return false, t.d.Wrap("reading "+t.table, err)
	}
	t.n++
	return true, nil
}

// Close ends the reading of the table.
func (t *Rows) Close() { t.rows.Close() }

// Raw is the current row's value in col as the driver gave it (nil when absent).
func (t *Rows) Raw(col string) any {
	if i, ok := t.idx[strings.ToUpper(col)]; ok {
		return t.vals[i]
	}
	return nil
}

// Has reports whether the table has col (names are case-insensitive).
func (t *Rows) Has(col string) bool { _, ok := t.idx[strings.ToUpper(col)]; return ok }

// Errf is an error about the current row.
func (t *Rows) Errf(format string, args ...any) error {
	return dbErr(t.d.File, "%s row %d: %s", t.table, t.n, fmt.Sprintf(format, args...))
}

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

// Reader is a table read a row at a time: a database's table (Rows) or a CSV file
// (CSV). Next reads the next row, false at the end.
type Reader interface{ Next() (bool, error) }

// Each is the one loop over a table's rows: it yields nil for each row, read into r,
// and at the end the error that stopped the reading, if one did (nothing follows it).
//
//	for err := range table.Each(t) {
//		if err != nil {
//			return err
//		}
//		... t's current row ...
//	}
func Each(r Reader) iter.Seq[error] {
	return func(yield func(error) bool) {
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
