package table_test

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/table"
)

// TestCSVRows: the header is found past a BOM and by name in any case, blank rows
// are skipped, fields are trimmed, a float written for a step still reads as one, and
// a bad figure is named with its line.
func TestCSVRows(t *testing.T) {
	doc := "\xef\xbb\xbfStep, Computing(us) ,Free\n50,1.5,N/A\n , ,\n51.0,x,2\n"
	c, err := table.OpenCSV(strings.NewReader(doc), "s.csv")
	require.NoError(t, err)
	idx, err := c.RequireCols("step", "COMPUTING(US)")
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1}, idx)
	assert.Equal(t, 2, c.Col("nope", "free"))

	ok, err := c.Next()
	require.NoError(t, err)
	require.True(t, ok)
	step, has, err := c.StepField(0, "Step")
	require.NoError(t, err)
	assert.Equal(t, 50, step)
	assert.True(t, has)
	f, err := c.FloatField(1, "Computing(us)")
	require.NoError(t, err)
	assert.Equal(t, 1.5, f)
	assert.True(t, table.NullText(c.Field(2)))

	ok, err = c.Next() // the blank row is skipped
	require.NoError(t, err)
	require.True(t, ok)
	step, _, err = c.StepField(0, "Step")
	require.NoError(t, err)
	assert.Equal(t, 51, step)
	_, err = c.FloatField(1, "Computing(us)")
	assert.EqualError(t, err, `s.csv:4: column "Computing(us)": "x" is not a number`)

	ok, err = c.Next()
	require.NoError(t, err)
	assert.False(t, ok)
}

// TestCSVRefusals: a missing column, a repeated one, an empty file and a cut-off last
// row are errors naming the file and line.
func TestCSVRefusals(t *testing.T) {
	c, err := table.OpenCSV(strings.NewReader("a,b\n1,2\n"), "m.csv")
	require.NoError(t, err)
	_, err = c.RequireCols("a", "c", "d")
	assert.EqualError(t, err, `m.csv:1: missing column "c", "d" in the header`)

	c, err = table.OpenCSV(strings.NewReader("a,b,A\n1,2,3\n"), "d.csv")
	require.NoError(t, err)
	_, err = c.RequireCols("a")
	assert.ErrorContains(t, err, `d.csv:1: column "a" appears twice in the header (columns 1 and 3)`)

	_, err = table.OpenCSV(strings.NewReader(""), "e.csv")
	assert.EqualError(t, err, "e.csv:1: empty file: no CSV header")

	c, err = table.OpenCSV(strings.NewReader("a,b,c\n1,2,3\n4,5"), "cut.csv")
	require.NoError(t, err)
	for range 2 { // the whole row, and the cut one (read, then refused at the end)
		ok, err := c.Next()
		require.NoError(t, err)
		require.True(t, ok)
	}
	_, err = c.Next()
	assert.EqualError(t, err, "cut.csv:3: the last row has 2 of the header's 3 columns and no line break after it: the file was cut short here")
}

// TestSQLiteRows: a table is read read-only with its columns by name in any case,
// SQLite's loose types read as numbers where they are, a missing table is no rows, and
// a missing required column is an error naming it.
func TestSQLiteRows(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.db")
	w, err := sql.Open("sqlite", p)
	require.NoError(t, err)
	for _, q := range []string{
		`CREATE TABLE StepTraceTime (step TEXT, computing NUMERIC, startNs TEXT, free REAL)`,
		`INSERT INTO StepTraceTime VALUES ('50', 1.5, '1736408883700059821', NULL)`,
		`INSERT INTO StepTraceTime VALUES ('51', 7, ' 12 ', 2.25)`,
	} {
		_, err := w.Exec(q)
		require.NoError(t, err, q)
	}
	require.NoError(t, w.Close())

	d, err := table.OpenSQLite(p)
	require.NoError(t, err)
	defer d.Close()
	assert.True(t, d.Has("steptracetime"))
	none, err := d.SelectAll("CommAnalyzerTime")
	require.NoError(t, err)
	assert.Nil(t, none)
	_, err = d.SelectAll("StepTraceTime", "step", "stage")
	assert.ErrorContains(t, err, "stage")

	r, err := d.SelectAll("steptracetime", "STEP", "computing")
	require.NoError(t, err)
	defer r.Close()
	var steps, starts []int64
	var comp []float64
	var frees []bool
	for {
		ok, err := r.Next()
		require.NoError(t, err)
		if !ok {
			break
		}
		s, err := r.Int("step")
		require.NoError(t, err)
		ns, err := r.Int("startns")
		require.NoError(t, err)
		c, err := r.MustFloat("computing")
		require.NoError(t, err)
		_, hasFree, err := r.Float("free")
		require.NoError(t, err)
		steps, starts, comp, frees = append(steps, s), append(starts, ns), append(comp, c), append(frees, hasFree)
	}
	assert.Equal(t, []int64{50, 51}, steps)
	assert.Equal(t, []int64{1736408883700059821, 12}, starts, "an int64 written as text is read exactly")
	assert.Equal(t, []float64{1.5, 7}, comp)
	assert.Equal(t, []bool{false, true}, frees, "NULL is no value")
}

// TestEach: the one row loop yields nil for each row, then the error that stopped the
// reading (a cut-off last row here) and nothing after it; a loop left early reads no
// further row.
func TestEach(t *testing.T) {
	c, err := table.OpenCSV(strings.NewReader("a\n1\n2\n3"), "cut.csv")
	require.NoError(t, err)
	var got []string
	var errs []error
	for err := range table.Each(c) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		got = append(got, c.Field(0))
	}
	assert.Equal(t, []string{"1", "2", "3"}, got)
	require.Len(t, errs, 1)
	assert.EqualError(t, errs[0], "cut.csv:4: no line break after the last row: the file looks cut short here (the profilers end every row with one)")

	c, err = table.OpenCSV(strings.NewReader("a\n1\n2\n"), "two.csv")
	require.NoError(t, err)
	for err := range table.Each(c) {
		require.NoError(t, err)
		break
	}
	assert.Equal(t, "1", c.Field(0), "no row read past the break")
}

// TestSQLiteQuery: a query's rows are scanned into its destinations by the one row
// loop (NULL as not Valid); a query SQLite refuses, a value a destination refuses and
// an error about a row all name the file and what the query reads.
func TestSQLiteQuery(t *testing.T) {
	p := filepath.Join(t.TempDir(), "q.db")
	w, err := sql.Open("sqlite", p)
	require.NoError(t, err)
	for _, q := range []string{
		`CREATE TABLE STEP_TIME (id INTEGER, startNs TEXT)`,
		`INSERT INTO STEP_TIME VALUES (1, '10'), (2, NULL), (3, 'soon')`,
	} {
		_, err := w.Exec(q)
		require.NoError(t, err, q)
	}
	require.NoError(t, w.Close())
	d, err := table.OpenSQLite(p)
	require.NoError(t, err)
	defer d.Close()

	var id, start table.Int
	var ids []int64
	var valid []bool
	q := d.Query("reading STEP_TIME", "SELECT id, startNs FROM STEP_TIME ORDER BY id", &id, &start)
	q.ScanContext("STEP_TIME.startNs")
	var last error
	for err := range table.Each(q) {
		if err != nil {
			last = err
			break
		}
		ids, valid = append(ids, id.V), append(valid, start.Valid)
	}
	assert.Equal(t, []int64{1, 2}, ids)
	assert.Equal(t, []bool{true, false}, valid)
	assert.EqualError(t, last, p+`: reading STEP_TIME: STEP_TIME.startNs: sql: Scan error on column index 1, name "startNs": "soon" is not an integer`)

	q = d.Query("reading STEP_TIME", "SELECT id FROM STEP_TIME WHERE id = 2", &id)
	for err := range table.Each(q) {
		require.NoError(t, err)
		assert.EqualError(t, q.Errf("step %d has no start", id.V), p+": reading STEP_TIME: step 2 has no start")
	}

	var n int
	var errs []error
	for err := range table.Each(d.Query("reading NOPE", "SELECT COUNT(*) FROM NOPE", &n)) {
		errs = append(errs, err)
	}
	require.Len(t, errs, 1, "the query's error, at the first row, and nothing after it")
	assert.EqualError(t, errs[0], p+": reading NOPE: SQL logic error: no such table: NOPE (1)")
}
