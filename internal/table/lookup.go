package table

import (
	"fmt"
	"strings"
)

// OptionalColumns returns, for each column of a table, "alias.col" when the table has
// it and NULL otherwise, so optional columns need no second query.
func (d *DB) OptionalColumns(table, alias string, cols ...string) ([]string, error) {
	have, err := d.Columns(table)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(cols))
	for i, c := range cols {
		if have[strings.ToUpper(c)] {
			out[i] = alias + "." + c
		} else {
			out[i] = "NULL"
		}
	}
	return out, nil
}

// Lookup returns the select expressions (the name, then the id itself: two columns,
// scanned into a Ref) and the join clause that turn the id column expr into its name,
// column valueCol of the row of table with that id; the name is NULL when the db has
// no such table. LEFT JOIN: an id the table lacks reads as a NULL name, not as a lost
// row, and Ref.Resolve says so.
func (d *DB) Lookup(table, valueCol, alias, expr string) (sel, join string) {
	if expr == "NULL" {
		return "NULL, NULL", ""
	}
	if !d.Has(table) {
		return "NULL, " + expr, ""
	}
	// The id is selected only where it names nothing: a NULL costs the driver no
	// allocation, and the ids of every row cost a tenth of a db's parse.
	v := alias + "." + valueCol
	return fmt.Sprintf("%s, CASE WHEN %s IS NULL AND %s IS NOT NULL THEN %s END", v, v, expr, expr),
		fmt.Sprintf(" LEFT JOIN %s AS %s ON %s.id = %s", table, alias, alias, expr)
}

// Ref is a column holding the id of a row of another table, read through a Lookup:
// the name the lookup found for it, and the id where it found none (NULL otherwise,
// and NULL for a NULL id).
type Ref struct {
	Name       Text
	Unresolved Int
}

// Dests are the scan destinations of a Lookup's two columns.
func (f *Ref) Dests() []any { return []any{&f.Name, &f.Unresolved} }

// Resolve is an error when the id names no row of table: a damaged db (a table of
// names cut short, or missing) read its names as empty, and what they named lost it
// without a word. required makes a NULL id an error too.
func (f *Ref) Resolve(what, column, table string, required bool) error {
	switch {
	case f.Unresolved.Valid:
		return fmt.Errorf("%s: %s %d is not in %s (or has no value there)", what, column, f.Unresolved.V, table)
	case !f.Name.Valid && required:
		return fmt.Errorf("%s: %s is NULL", what, column)
	}
	return nil
}
