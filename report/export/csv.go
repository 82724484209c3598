package export

import (
	"bufio"
	"encoding/csv"
	"os"
	"strconv"
)

// csvTable writes a table as CSV: a header of the column names, integers and
// timestamps (ns) as exact integers, doubles in their shortest exact decimal without
// an exponent, and an empty field for NULL.
type csvTable struct {
	file   *os.File
	buf    *bufio.Writer
	w      *csv.Writer
	cols   []column
	fields []string
}

func newCSVTable(f *os.File, cols []column) (*csvTable, error) {
	buf := bufio.NewWriter(f)
	t := &csvTable{file: f, buf: buf, w: csv.NewWriter(buf), cols: cols, fields: make([]string, len(cols))}
	for i, c := range cols {
		t.fields[i] = c.name
	}
	return t, t.w.Write(t.fields)
}

func (t *csvTable) write(row []cell) error {
	if err := clean(t.cols, row); err != nil {
		return err
	}
	for i, c := range t.cols {
		v := row[i]
		switch {
		case v.null:
			t.fields[i] = ""
		case c.kind == kindString:
			t.fields[i] = v.s
		case c.kind == kindFloat64:
			t.fields[i] = strconv.FormatFloat(v.f, 'f', -1, 64)
		default:
			t.fields[i] = strconv.FormatInt(v.i, 10)
		}
	}
	return t.w.Write(t.fields)
}

func (t *csvTable) close() error {
	t.w.Flush()
	err := t.w.Error()
	if err == nil {
		err = t.buf.Flush()
	}
	if cerr := t.file.Close(); err == nil {
		err = cerr
	}
	return err
}
