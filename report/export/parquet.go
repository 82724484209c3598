package export

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/hcclprof/hcclprof/report/internal/sanitize"
)

// WriteParquet writes each table to DIR/NAME.parquet (Snappy), with int64, double and
// utf8 columns: readable by DuckDB, pandas and Spark.
func WriteParquet(dir string, tables []Table) error {
	sanitize.Value(&tables) // names come from untrusted profiles
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, t := range tables {
		if err := writeParquetFile(filepath.Join(dir, t.Name+".parquet"), t); err != nil {
			return fmt.Errorf("%s: %w", t.Name, err)
		}
	}
	return nil
}

func arrowType(c ColumnType) arrow.DataType {
	switch c {
	case Int64:
		return arrow.PrimitiveTypes.Int64
	case Float64:
		return arrow.PrimitiveTypes.Float64
	}
	return arrow.BinaryTypes.String
}

func writeParquetFile(path string, t Table) error {
	fields := make([]arrow.Field, len(t.Columns))
	for i, c := range t.Columns {
		fields[i] = arrow.Field{Name: c, Type: arrowType(t.Types[i])}
	}
	schema := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for _, row := range t.Rows {
		for i, v := range row {
			switch fb := b.Field(i).(type) {
			case *array.Int64Builder:
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return fmt.Errorf("column %s: %q is not an integer", t.Columns[i], v)
				}
				fb.Append(n)
			case *array.Float64Builder:
				x, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return fmt.Errorf("column %s: %q is not a number", t.Columns[i], v)
				}
				fb.Append(x)
			case *array.StringBuilder:
				fb.Append(v)
			}
		}
	}
	rec := b.NewRecord()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy))
	w, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.DefaultWriterProps())
	if err != nil {
		f.Close()
		return err
	}
	// The writer's Close closes the file.
	if err := w.Write(rec); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}
