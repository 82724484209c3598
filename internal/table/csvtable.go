package table

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hcclprof/hcclprof/internal/jsonx"
)

// CSV reads the profiler's CSV files (step_trace_time.csv, kernel_details.csv)
// by column name, one record at a time. Columns move between versions (Device_id
// was inserted first or second, OP State appeared, Preparing was appended), so no
// parser may rely on positions. The quirks handled here, all seen in real files:
// a UTF-8 byte-order mark before the header, CRLF line ends, fields with a trailing
// TAB ("1736408883732241.563\t", quoted or not), shapes quoted with inner quotes
// ("""32,3,224,224"""), and rows shorter or longer than the header.
//
// Two signs of damage are errors rather than quirks: a header holding control
// characters or bytes that are not UTF-8 (a column read by name would be missing, and
// the rows read without it), and a file whose last row has no line break after it,
// which is what a file cut short looks like (its rows after the cut lost, or its last
// field cut): every profiler ends its CSV rows with one.
type CSV struct {
	File    string
	r       *csv.Reader
	end     *lastByte      // what the CSV reader consumed, to tell a cut-off last row
	cols    map[string]int // header name, trimmed and lower-cased → index of its first occurrence
	dups    map[string]int // header names that occur more than once → their second column
	width   int            // columns in the header
	ambig   error          // a column read by name that the header holds twice (see col)
	rec     []string
	line    int // line of the current record's first field
	lastLen int // fields of the last record read
	hdrLine int
}

// OpenCSV reads the header of a CSV file. An empty file is an error.
func OpenCSV(r io.Reader, file string) (*CSV, error) {
	size := 64 << 10
	if n := jsonx.SizeOf(r); n >= 0 && n < int64(size) {
		size = int(n) + 16 // a small file gets a small buffer: most of a rank's CSVs are small
	}
	br := bufio.NewReaderSize(r, size)
	if b, err := br.Peek(len(jsonx.BOM)); err == nil && bytes.Equal(b, jsonx.BOM) {
		_, _ = br.Discard(len(jsonx.BOM))
	}
	end := &lastByte{r: br}
	cr := csv.NewReader(end)
	cr.LazyQuotes = true
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	t := &CSV{File: file, r: cr, end: end}
	ok, err := t.Next()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, jsonx.ErrAtLine(file, 1, "empty file: no CSV header")
	}
	t.hdrLine = t.line
	t.cols = make(map[string]int, len(t.rec))
	t.width = len(t.rec)
	for i, name := range t.rec {
		if damagedText(name) {
			return nil, jsonx.ErrAtLine(file, t.hdrLine, "damaged header: column %d (%q) holds control characters or bytes that are not UTF-8", i+1, name)
		}
		k := strings.ToLower(strings.TrimSpace(name))
		if _, dup := t.cols[k]; !dup {
			t.cols[k] = i
		} else if _, seen := t.dups[k]; !seen && k != "" {
			if t.dups == nil {
				t.dups = map[string]int{}
			}
			t.dups[k] = i
		}
	}
	return t, nil
}

// Col returns the index of the first of names found in the header (case-insensitive),
// or -1. A name the header holds twice cannot be read by name: which of the two
// columns is the profiler's is unknown (a real file never repeats a column), so taking
// either could give wrong figures. Col then still returns the first, and the next
// call of Next (or RequireCols) returns an error naming both columns.
func (t *CSV) Col(names ...string) int {
	for _, n := range names {
		k := strings.ToLower(n)
		if i, ok := t.cols[k]; ok {
			if j, dup := t.dups[k]; dup && t.ambig == nil {
				t.ambig = jsonx.ErrAtLine(t.File, t.hdrLine, "column %q appears twice in the header (columns %d and %d): which one holds the figures is unknown, so the file is not read",
					n, i+1, j+1)
			}
			return i
		}
	}
	return -1
}

// RequireCols returns the indexes of the named columns, or an error naming every
// missing one and the file.
func (t *CSV) RequireCols(names ...string) ([]int, error) {
	idx := make([]int, len(names))
	var missing []string
	for i, n := range names {
		idx[i] = t.Col(n)
		if idx[i] < 0 {
			missing = append(missing, strconv.Quote(n))
		}
	}
	if len(missing) > 0 {
		return nil, jsonx.ErrAtLine(t.File, t.hdrLine, "missing column %s in the header", strings.Join(missing, ", "))
	}
	if t.ambig != nil {
		return nil, t.ambig
	}
	return idx, nil
}

// Next reads the next record, skipping records whose fields are all blank. It
// returns false at the end of the file.
func (t *CSV) Next() (bool, error) {
	if t.ambig != nil {
		return false, t.ambig
	}
	for {
		rec, err := t.r.Read()
		if errors.Is(err, io.EOF) {
			if t.end.last != '\n' && t.end.last != '\r' && t.end.last != 0 {
				if t.cols != nil && t.lastLen > 0 && t.lastLen < t.width {
					return false, jsonx.ErrAtLine(t.File, t.line, "the last row has %d of the header's %d columns and no line break after it: the file was cut short here",
						t.lastLen, t.width)
				}
				// A whole row, but its last field may be cut ("206.2" of "206.25"):
				// the profilers end every line, so a file without it is taken as cut.
				return false, jsonx.ErrAtLine(t.File, t.line, "no line break after the last row: the file looks cut short here (the profilers end every row with one)")
			}
			return false, nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return false, jsonx.ErrAtLine(t.File, max(pe.StartLine, 1), "%v", pe.Err)
			}
			return false, fmt.Errorf("%s: read: %w", t.File, err)
		}
		t.rec, t.lastLen = rec, len(rec)
		if len(rec) > 0 { // always true for encoding/csv; FieldPos panics otherwise
			t.line, _ = t.r.FieldPos(0)
		}
		if !csvBlankRecord(rec) {
			return true, nil
		}
		t.lastLen = 0 // a blank fragment at the end is no cut row
	}
}

// lastByte passes a reader through, remembering the last byte read.
type lastByte struct {
	r    io.Reader
	last byte
}

func (l *lastByte) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	if n > 0 {
		l.last = p[n-1]
	}
	return n, err
}

// damagedText reports whether s holds a control character other than TAB, or bytes
// that are not UTF-8 (or their replacement character).
func damagedText(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, c := range s {
		if (c < 0x20 && c != '\t') || c == 0x7f || c == utf8.RuneError {
			return true
		}
	}
	return false
}

func csvBlankRecord(rec []string) bool {
	for _, f := range rec {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}

// Field returns column i of the current record with white space trimmed, or "" when
// the record is shorter or i < 0.
func (t *CSV) Field(i int) string {
	if i < 0 || i >= len(t.rec) {
		return ""
	}
	return strings.TrimSpace(t.rec[i])
}

// LineOf is the line of column i of the current record (quoted fields may span lines).
func (t *CSV) LineOf(i int) int {
	if i < 0 || i >= len(t.rec) {
		return t.line
	}
	line, _ := t.r.FieldPos(i)
	return line
}

// NullText reports whether a trimmed field holds no value: empty or the profiler's N/A.
func NullText(s string) bool { return s == "" || strings.EqualFold(s, "N/A") }

// FloatField parses column i (named name, for the error) of the current record as a
// finite float.
func (t *CSV) FloatField(i int, name string) (float64, error) {
	s := t.Field(i)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, jsonx.ErrAtLine(t.File, t.LineOf(i), "column %q: %q is not a number", name, s)
	}
	return f, nil
}

// StepField parses a step column: empty or N/A means no step (-1, false).
func (t *CSV) StepField(i int, name string) (int, bool, error) {
	s := t.Field(i)
	if NullText(s) {
		return -1, false, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		// "50.0" from a spreadsheet round trip is still step 50.
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
			return 0, false, jsonx.ErrAtLine(t.File, t.LineOf(i), "column %q: %q is not a step number", name, s)
		}
		v = int(f)
	}
	return v, true, nil
}
