package export_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/parser"
	"github.com/hcclprof/hcclprof/report/export"
)

func readParquet(t *testing.T, path string) arrow.Table {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	pf, err := file.NewParquetReader(f)
	require.NoError(t, err)
	r, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	require.NoError(t, err)
	tbl, err := r.ReadTable(context.Background())
	require.NoError(t, err)
	t.Cleanup(tbl.Release)
	return tbl
}

// TestParquetRoundTrip exports the sample and reads it back with arrow-go: row counts,
// names and types, and comm_share recomputed from the steps table as the README's
// DuckDB query does.
func TestParquetRoundTrip(t *testing.T) {
	c, err := parser.LoadCluster([]string{"../../fixtures/samples/demo-2node-8rank"}, parser.LoadOptions{})
	if err != nil {
		t.Skip("bundled sample absent")
	}
	res := analysis.Analyze(c, analysis.Options{})
	adv := advisor.Advise(res, advisor.EnvOf(c), advisor.DefaultOptions)
	dir := t.TempDir()
	tables := append(export.Tables(res, &adv), export.TasksTable(c))
	require.NoError(t, export.WriteParquet(dir, tables))

	steps := readParquet(t, filepath.Join(dir, "steps.parquet"))
	assert.EqualValues(t, 16, steps.NumRows())
	sch := steps.Schema()
	for name, typ := range map[string]arrow.DataType{"rank": arrow.PrimitiveTypes.Int64, "stage_us": arrow.PrimitiveTypes.Float64,
		"communication_not_overlapped_us": arrow.PrimitiveTypes.Float64, "source": arrow.BinaryTypes.String} {
		idx := sch.FieldIndices(name)
		require.Len(t, idx, 1, name)
		assert.True(t, arrow.TypeEqual(typ, sch.Field(idx[0]).Type), "%s is %s", name, sch.Field(idx[0]).Type)
	}
	sum := func(col string) float64 {
		var s float64
		for _, chunk := range steps.Column(sch.FieldIndices(col)[0]).Data().Chunks() {
			for _, v := range chunk.(*array.Float64).Float64Values() {
				s += v
			}
		}
		return s
	}
	assert.InDelta(t, res.Summary.CommShare, sum("communication_not_overlapped_us")/sum("stage_us"), 1e-9)

	ops := readParquet(t, filepath.Join(dir, "ops.parquet"))
	assert.EqualValues(t, len(res.Communication.Ops), ops.NumRows())
	links := readParquet(t, filepath.Join(dir, "links.parquet"))
	assert.EqualValues(t, len(res.Communication.Links), links.NumRows())
	tasks := readParquet(t, filepath.Join(dir, "tasks.parquet"))
	var n int
	for _, r := range c.Ranks {
		n += len(r.CommTasks)
	}
	assert.EqualValues(t, n, tasks.NumRows())
	assert.Positive(t, n)
	findings := readParquet(t, filepath.Join(dir, "findings.parquet"))
	assert.EqualValues(t, len(adv.Findings), findings.NumRows())

	// The CSV holds the same values.
	require.NoError(t, export.WriteCSV(dir, tables))
	b, err := os.ReadFile(filepath.Join(dir, "steps.csv"))
	require.NoError(t, err)
	assert.Contains(t, string(b), tables[0].Rows[0][4])
}
