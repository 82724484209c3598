package export

import (
	"fmt"
	"os"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// rowGroupRows is the rows of a Parquet row group: DuckDB's own size (122,880), so a
// reader scans a large cluster's tasks in parallel. The rows are handed to the column
// writers batchRows at a time, so the writer holds one group's encoded pages and one
// batch of values, not the group's values (on 512 ranks, buffering whole groups of
// values cost 50 MB of peak RSS).
const (
	rowGroupRows = 30 * batchRows
	batchRows    = 4096
)

// parquetTable writes a table as Parquet with arrow-go's column writers (not its
// Arrow layer, pqarrow, which brings Arrow Flight, gRPC and protobuf into the
// binary): INT64, DOUBLE, STRING (BYTE_ARRAY) and TIMESTAMP(NANOS) (INT64) columns,
// OPTIONAL where a value can be NULL, Snappy-compressed, in row groups of
// rowGroupRows rows.
type parquetTable struct {
	w      *file.Writer
	cols   []column
	group  file.BufferedRowGroupWriter // nil between groups
	inRG   int                         // rows written to group
	ints   [][]int64                   // the batch's values by column
	floats [][]float64
	bytes  [][]parquet.ByteArray
	defs   [][]int16
	rows   int // rows in the batch
	// strs shares the bytes of each column's repeated strings (task names,
	// transports, groups) instead of copying them row by row.
	strs []map[string]parquet.ByteArray
}

// maxSharedStrings bounds each column's strs: a column of distinct texts (finding
// evidence) is copied as it comes.
const maxSharedStrings = 4096

func parquetColumn(c column) (schema.Node, error) {
	rep := parquet.Repetitions.Required
	if c.nullable {
		rep = parquet.Repetitions.Optional
	}
	switch c.kind {
	case kindFloat64:
		return schema.NewPrimitiveNode(c.name, rep, parquet.Types.Double, -1, -1)
	case kindString:
		return schema.NewPrimitiveNodeLogical(c.name, rep, schema.StringLogicalType{}, parquet.Types.ByteArray, -1, -1)
	case kindTimestamp:
		// Not adjusted to UTC: DuckDB reads such a column as TIMESTAMP_NS with every
		// ns, where it reads a UTC-adjusted one as TIMESTAMP WITH TIME ZONE in µs.
		return schema.NewPrimitiveNodeLogical(c.name, rep, schema.NewTimestampLogicalType(false, schema.TimeUnitNanos),
			parquet.Types.Int64, -1, -1)
	}
	return schema.NewPrimitiveNode(c.name, rep, parquet.Types.Int64, -1, -1)
}

func newParquetTable(f *os.File, cols []column) (*parquetTable, error) {
	fields := make(schema.FieldList, len(cols))
	for i, c := range cols {
		n, err := parquetColumn(c)
		if err != nil {
			return nil, err
		}
		fields[i] = n
	}
	root, err := schema.NewGroupNode("schema", parquet.Repetitions.Required, fields, -1)
	if err != nil {
		return nil, err
	}
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithCreatedBy("hcclprof"))
	w, err := file.NewParquetWriterWithError(f, root, file.WithWriterProps(props))
	if err != nil {
		return nil, err
	}
	n := len(cols)
	return &parquetTable{w: w, cols: cols, ints: make([][]int64, n), floats: make([][]float64, n),
		bytes: make([][]parquet.ByteArray, n), defs: make([][]int16, n), strs: make([]map[string]parquet.ByteArray, n)}, nil
}

func (t *parquetTable) write(row []cell) error {
	if err := clean(t.cols, row); err != nil {
		return err
	}
	for i, c := range t.cols {
		v := row[i]
		if c.nullable {
			def := int16(1) // the definition level: 0 is NULL
			if v.null {
				def = 0
			}
			t.defs[i] = append(t.defs[i], def)
			if v.null {
				continue
			}
		}
		switch c.kind {
		case kindFloat64:
			t.floats[i] = append(t.floats[i], v.f)
		case kindString:
			t.bytes[i] = append(t.bytes[i], t.shared(i, v.s))
		default:
			t.ints[i] = append(t.ints[i], v.i)
		}
	}
	t.rows++
	if t.rows == batchRows {
		return t.flush()
	}
	return nil
}

func (t *parquetTable) shared(col int, s string) parquet.ByteArray {
	if b, ok := t.strs[col][s]; ok {
		return b
	}
	b := parquet.ByteArray(s)
	if t.strs[col] == nil {
		t.strs[col] = map[string]parquet.ByteArray{}
	}
	if len(t.strs[col]) < maxSharedStrings {
		t.strs[col][s] = b
	}
	return b
}

// flush hands the batch to the row group's column writers, and closes the group when
// it is full.
func (t *parquetTable) flush() error {
	if t.rows == 0 {
		return nil
	}
	if t.group == nil {
		g, err := t.w.AppendBufferedRowGroupChecked()
		if err != nil {
			return err
		}
		t.group = g
	}
	for i, c := range t.cols {
		cw, err := t.group.Column(i)
		if err != nil {
			return err
		}
		defs := t.defs[i]
		if !c.nullable {
			defs = nil
		}
		switch w := cw.(type) {
		case *file.Int64ColumnChunkWriter:
			_, err = w.WriteBatch(t.ints[i], defs, nil)
		case *file.Float64ColumnChunkWriter:
			_, err = w.WriteBatch(t.floats[i], defs, nil)
		case *file.ByteArrayColumnChunkWriter:
			_, err = w.WriteBatch(t.bytes[i], defs, nil)
		default:
			err = fmt.Errorf("unexpected writer %T", cw)
		}
		if err != nil {
			return fmt.Errorf("column %s: %w", c.name, err)
		}
		t.ints[i], t.floats[i], t.bytes[i], t.defs[i] = t.ints[i][:0], t.floats[i][:0], t.bytes[i][:0], t.defs[i][:0]
	}
	t.inRG += t.rows
	t.rows = 0
	if t.inRG >= rowGroupRows {
		return t.closeGroup()
	}
	return nil
}

func (t *parquetTable) closeGroup() error {
	if t.group == nil {
		return nil
	}
	err := t.group.Close()
	t.group, t.inRG = nil, 0
	return err
}

// close writes the last row group and the footer, and closes the file.
func (t *parquetTable) close() error {
	err := t.flush()
	if err == nil {
		err = t.closeGroup()
	}
	if cerr := t.w.Close(); err == nil {
		err = cerr
	}
	return err
}
