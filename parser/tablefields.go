package parser

import (
	"strconv"

	"github.com/hcclprof/hcclprof/internal/table"
	"github.com/hcclprof/hcclprof/internal/units"
)

// The readers of table cells that know the profilers' units, over internal/table's
// rows.

// microsNsOf converts a µs figure that SQLite stored as a REAL (analysis.db's
// start_timestamp, 1736410576431645.2) to ns through its shortest decimal form, so the
// digits written are kept as they are; f*1000 in float64 would be off by up to 128 ns.
func microsNsOf(f float64) (int64, error) {
	return units.NsFromUsText(strconv.FormatFloat(f, 'f', -1, 64))
}

// usField parses column i of t (named name, for the error) of the current record, a µs
// figure, as ns (units.NsFromUsFigureText).
func usField(t *table.CSV, i int, name string) (int64, error) {
	s := t.Field(i)
	ns, ok := units.NsFromUsFigureText(s)
	if !ok {
		return 0, errAtLine(t.File, t.LineOf(i), "column %q: %q is not a number", name, s)
	}
	return ns, nil
}
