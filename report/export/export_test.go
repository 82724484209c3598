package export_test

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/parser"
	"github.com/hcclprof/hcclprof/profile"
	"github.com/hcclprof/hcclprof/report/export"
)

const sample = "../../fixtures/samples/demo-2server-8rank"

// pqColumn is one column of a Parquet file as arrow-go's reader gives it: its schema
// and its values, nil for NULL (definition level 0).
type pqColumn struct {
	col    *schema.Column
	values []any
}

// readParquet reads every column of a file with arrow-go's Parquet reader, row group
// by row group, and the number of row groups.
func readParquet(t *testing.T, path string) (map[string]*pqColumn, int) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rdr, err := file.NewParquetReader(f)
	require.NoError(t, err)
	defer rdr.Close()
	sch := rdr.MetaData().Schema
	out := map[string]*pqColumn{}
	for i := 0; i < sch.NumColumns(); i++ {
		out[sch.Column(i).Name()] = &pqColumn{col: sch.Column(i)}
	}
	for g := 0; g < rdr.NumRowGroups(); g++ {
		rg := rdr.RowGroup(g)
		n := rg.NumRows()
		for i := 0; i < sch.NumColumns(); i++ {
			cr, err := rg.Column(i)
			require.NoError(t, err)
			defs := make([]int16, n)
			var vals []any
			var read int64
			switch r := cr.(type) {
			case *file.Int64ColumnChunkReader:
				buf := make([]int64, n)
				var nv int
				read, nv, err = r.ReadBatch(n, buf, defs, nil)
				for _, v := range buf[:nv] {
					vals = append(vals, v)
				}
			case *file.Float64ColumnChunkReader:
				buf := make([]float64, n)
				var nv int
				read, nv, err = r.ReadBatch(n, buf, defs, nil)
				for _, v := range buf[:nv] {
					vals = append(vals, v)
				}
			case *file.ByteArrayColumnChunkReader:
				buf := make([]parquet.ByteArray, n)
				var nv int
				read, nv, err = r.ReadBatch(n, buf, defs, nil)
				for _, v := range buf[:nv] {
					vals = append(vals, string(v))
				}
			default:
				t.Fatalf("column %s: unexpected reader %T", sch.Column(i).Name(), cr)
			}
			require.NoError(t, err)
			require.EqualValues(t, n, read)
			c := out[sch.Column(i).Name()]
			if c.col.MaxDefinitionLevel() == 0 {
				c.values = append(c.values, vals...)
				continue
			}
			k := 0
			for _, d := range defs {
				if d == 0 {
					c.values = append(c.values, nil)
					continue
				}
				c.values = append(c.values, vals[k])
				k++
			}
		}
	}
	return out, rdr.NumRowGroups()
}

// streamed exports the bundled sample as the command does: the tasks written by the
// loader's hooks as each rank is read, the other tables from the analysis.
func streamed(t *testing.T, format export.Format, opts analysis.Options) (dir string, res *analysis.Result, adv advisor.Advice) {
	t.Helper()
	if _, err := os.Stat(sample); err != nil {
		t.Skip("bundled sample absent")
	}
	dir = filepath.Join(t.TempDir(), "out")
	ex, err := export.Begin(dir, format)
	require.NoError(t, err)
	acc := analysis.NewAccumulator(opts)
	onRank, inOrder := ex.Hooks(acc.Add, acc.OpIndices)
	c, err := parser.LoadCluster([]string{sample}, parser.LoadOptions{Workers: 3, OnRank: onRank, InOrder: inOrder})
	require.NoError(t, err)
	res = acc.Result(c)
	adv = advisor.Advise(res, advisor.EnvOf(c), advisor.DefaultOptions)
	require.NoError(t, ex.Finish(res, &adv))
	return dir, res, adv
}

// fullCluster is the sample with every rank's timeline.
func fullCluster(t *testing.T) *profile.Cluster {
	c, err := parser.LoadCluster([]string{sample}, parser.LoadOptions{})
	require.NoError(t, err)
	return c
}

// isTimestampNanos: TIMESTAMP(NANOS) on INT64, not adjusted to UTC (DuckDB reads an
// adjusted one as TIMESTAMP WITH TIME ZONE, in µs).
func isTimestampNanos(c *schema.Column) bool {
	ts, ok := c.LogicalType().(schema.TimestampLogicalType)
	return ok && ts.TimeUnit() == schema.TimeUnitNanos && !ts.IsAdjustedToUTC() && c.PhysicalType() == parquet.Types.Int64
}

func isString(c *schema.Column) bool {
	_, ok := c.LogicalType().(schema.StringLogicalType)
	return ok && c.PhysicalType() == parquet.Types.ByteArray
}

// TestParquetReadBack reads the sample's tables back with arrow-go's Parquet reader:
// logical types, exact timestamps equal to the model's int64 ns, group ids as text,
// NULLs where the profile gives no value, and comm_share recomputed from the steps
// table as docs/outputs.md's DuckDB query does.
func TestParquetReadBack(t *testing.T) {
	dir, res, adv := streamed(t, export.Parquet, analysis.Options{})

	steps, _ := readParquet(t, filepath.Join(dir, "steps.parquet"))
	require.Len(t, steps["stage_us"].values, 16)
	var exposed, stage float64
	for k := range steps["stage_us"].values {
		s := steps["stage_us"].values[k].(float64)
		e := steps["communication_not_overlapped_us"].values[k].(float64) - steps["bubble_us"].values[k].(float64)
		exposed += min(max(e, 0), s)
		stage += s
	}
	assert.InDelta(t, res.Summary.CommShare, exposed/stage, 1e-12)
	assert.Equal(t, parquet.Types.Double, steps["stage_us"].col.PhysicalType())
	assert.True(t, isString(steps["source"].col))
	assert.Zero(t, steps["rank"].col.MaxDefinitionLevel(), "rank is REQUIRED")
	assert.EqualValues(t, 1, steps["preparing_us"].col.MaxDefinitionLevel(), "preparing_us is OPTIONAL")

	ops, _ := readParquet(t, filepath.Join(dir, "ops.parquet"))
	require.Len(t, ops["start_ns"].values, len(res.Communication.Ops))
	require.NotEmpty(t, res.Communication.Ops)
	assert.True(t, isTimestampNanos(ops["start_ns"].col), "%s", ops["start_ns"].col)
	assert.True(t, isString(ops["group"].col))
	for k, o := range res.Communication.Ops {
		assert.Equal(t, int64(k), ops["op_row"].values[k])
		assert.Equal(t, o.StartNs, ops["start_ns"].values[k], "row %d: the model's ns, exactly", k)
		assert.Equal(t, o.Group, ops["group"].values[k])
		assert.Equal(t, float64(o.ElapseNs)/1e3, ops["elapse_us"].values[k])
	}

	findings, _ := readParquet(t, filepath.Join(dir, "findings.parquet"))
	require.Len(t, findings["id"].values, len(adv.Findings))
	assert.True(t, isTimestampNanos(findings["start_ns"].col))
	var exactStarts, nullRanks int
	for k, x := range adv.Findings {
		var ref advisor.Ref
		if len(x.Refs) > 0 {
			ref = x.Refs[0]
		}
		if ref.StartNs != 0 {
			assert.Equal(t, ref.StartNs, findings["start_ns"].values[k], x.ID)
			exactStarts++
		} else {
			assert.Nil(t, findings["start_ns"].values[k], "%s: no start is NULL", x.ID)
		}
		if len(x.Refs) == 0 || ref.Rank < 0 {
			assert.Nil(t, findings["rank"].values[k], x.ID)
			nullRanks++
		} else {
			assert.Equal(t, int64(ref.Rank), findings["rank"].values[k], x.ID)
		}
	}
	assert.Positive(t, exactStarts, "a finding points at an op")

	links, _ := readParquet(t, filepath.Join(dir, "links.parquet"))
	assert.Len(t, links["src"].values, len(res.Communication.Links))
}

// TestTasksJoinOps: every task's op_row is a row of ops on the same rank whose span
// holds the task's start, and every task that starts inside one of its rank's ops
// has one; with a step skipped, that step's tasks have none and the others still join.
func TestTasksJoinOps(t *testing.T) {
	c := fullCluster(t)
	for _, tc := range []struct {
		name string
		skip []int
	}{{"all steps", nil}, {"step 40 skipped", []int{40}}} {
		t.Run(tc.name, func(t *testing.T) {
			dir, res, _ := streamed(t, export.Parquet, analysis.Options{SkipSteps: tc.skip})
			tasks, _ := readParquet(t, filepath.Join(dir, "tasks.parquet"))
			ops, _ := readParquet(t, filepath.Join(dir, "ops.parquet"))
			assert.True(t, isTimestampNanos(tasks["start_ns"].col))
			var want []profile.CommTask
			var wantRank []int
			for _, r := range c.Ranks {
				want = append(want, r.CommTasks...)
				for range r.CommTasks {
					wantRank = append(wantRank, r.Rank)
				}
			}
			require.Len(t, tasks["op_row"].values, len(want))
			var joined, inOp int
			for k, task := range want {
				assert.Equal(t, task.StartNs, tasks["start_ns"].values[k])
				assert.Equal(t, int64(wantRank[k]), tasks["rank"].values[k])
				if task.DstRank < 0 {
					assert.Nil(t, tasks["dst_local"].values[k], "no destination is NULL")
				}
				var holder *analysis.OpStat
				for i := range res.Communication.Ops {
					o := &res.Communication.Ops[i]
					if o.Rank == wantRank[k] && o.StartNs <= task.StartNs && task.StartNs <= o.StartNs+o.ElapseNs {
						holder = o
					}
				}
				v := tasks["op_row"].values[k]
				if holder != nil {
					inOp++
				}
				if v == nil {
					continue
				}
				joined++
				row := v.(int64)
				require.Less(t, row, int64(len(ops["op_row"].values)))
				assert.Equal(t, row, ops["op_row"].values[row])
				assert.Equal(t, int64(wantRank[k]), ops["rank"].values[row])
				start := ops["start_ns"].values[row].(int64)
				assert.LessOrEqual(t, start, task.StartNs)
				assert.LessOrEqual(t, task.StartNs, start+int64(ops["elapse_us"].values[row].(float64)*1e3+0.5))
				if tc.skip != nil {
					assert.NotEqual(t, int64(40), ops["step"].values[row])
				}
			}
			assert.Positive(t, joined)
			assert.Equal(t, inOp, joined, "every task inside a kept op points at it")
			if tc.skip != nil {
				assert.Less(t, joined, len(want), "the skipped step's tasks point at no op")
			}
		})
	}
}

// TestCSVExact: the CSV tables hold the same values as the model, exactly: timestamps
// as whole ns, no exponent anywhere, an empty field for NULL.
func TestCSVExact(t *testing.T) {
	dir, res, _ := streamed(t, export.CSV, analysis.Options{})
	read := func(name string) ([]string, [][]string) {
		f, err := os.Open(filepath.Join(dir, name+".csv"))
		require.NoError(t, err)
		defer f.Close()
		rows, err := csv.NewReader(f).ReadAll()
		require.NoError(t, err)
		return rows[0], rows[1:]
	}
	for _, name := range export.TableNames {
		b, err := os.ReadFile(filepath.Join(dir, name+".csv"))
		require.NoError(t, err)
		assert.NotRegexp(t, `\d[eE][+-]\d`, string(b), "%s: no number in exponent form", name)
	}
	head, rows := read("ops")
	col := map[string]int{}
	for i, c := range head {
		col[c] = i
	}
	require.Len(t, rows, len(res.Communication.Ops))
	for k, o := range res.Communication.Ops {
		assert.Equal(t, strconv.FormatInt(o.StartNs, 10), rows[k][col["start_ns"]])
		assert.Equal(t, o.Group, rows[k][col["group"]])
		e, err := strconv.ParseFloat(rows[k][col["elapse_us"]], 64)
		require.NoError(t, err)
		assert.Equal(t, float64(o.ElapseNs)/1e3, e, "the double round-trips")
	}
	head, rows = read("tasks")
	dst := -1
	for i, c := range head {
		if c == "dst_local" {
			dst = i
		}
	}
	var empty int
	for _, r := range rows {
		if r[dst] == "" {
			empty++
		}
	}
	var wantEmpty int
	for _, r := range fullCluster(t).Ranks {
		for _, task := range r.CommTasks {
			if task.DstRank < 0 {
				wantEmpty++
			}
		}
	}
	assert.Equal(t, wantEmpty, empty, "dst_local is empty where the task has no destination")
	assert.Positive(t, empty)
}

// TestNullsAndGroupIds exports a made-up analysis whose values the profile did not
// give (no step, no Preparing, no split, no size, no peak, no other rank to wait for)
// and a group hash above
// 2^63: they are NULL in Parquet and empty in CSV, and the hash keeps every digit.
func TestNullsAndGroupIds(t *testing.T) {
	const hash = "18446744073709551557" // above 2^63: a DOUBLE would lose digits
	res := &analysis.Result{
		Ranks: []analysis.RankResult{{Rank: 0, Source: analysis.SourceStepTrace,
			Steps: []analysis.StepBreakdown{{Step: -1, StageNs: 0, ComputingNs: 5}}}},
		Communication: analysis.Communication{
			Ops:   []analysis.OpStat{{Rank: 0, Step: -1, Group: hash, Name: "hcom_allReduce__1_0_1", StartNs: 1736408883109428915, ElapseNs: 7, Source: "none"}},
			Links: []analysis.Link{{Src: 0, Dst: 1, Transport: "HCCS", Bytes: 8}},
		},
	}
	adv := &advisor.Advice{Findings: []advisor.Finding{{ID: "x", Severity: "low", Title: "t", Evidence: "e"}}}
	for _, format := range []export.Format{export.Parquet, export.CSV} {
		dir := t.TempDir()
		ex, err := export.Begin(dir, format)
		require.NoError(t, err)
		require.NoError(t, ex.Finish(res, adv))
		if format == export.CSV {
			b, err := os.ReadFile(filepath.Join(dir, "ops.csv"))
			require.NoError(t, err)
			assert.Equal(t, "op_row,rank,step,group,name,type,start_ns,elapse_us,transit_us,wait_us,sync_us,idle_us,cross_rank_wait_us,bytes,busbw_gbps,source\n"+
				"0,0,,"+hash+",hcom_allReduce__1_0_1,,1736408883109428915,0.007,,,,,,,,none\n", string(b))
			b, err = os.ReadFile(filepath.Join(dir, "findings.csv"))
			require.NoError(t, err)
			assert.Equal(t, "id,severity,title,evidence,rank,step,op,start_ns\nx,low,t,e,,,,\n", string(b))
			continue
		}
		ops, _ := readParquet(t, filepath.Join(dir, "ops.parquet"))
		assert.Equal(t, hash, ops["group"].values[0])
		for _, name := range []string{"step", "type", "transit_us", "wait_us", "sync_us", "idle_us", "bytes", "busbw_gbps"} {
			assert.Nil(t, ops[name].values[0], name)
		}
		assert.Equal(t, int64(1736408883109428915), ops["start_ns"].values[0])
		steps, _ := readParquet(t, filepath.Join(dir, "steps.parquet"))
		for _, name := range []string{"step", "format", "preparing_us", "comm_share"} {
			assert.Nil(t, steps[name].values[0], name)
		}
		links, _ := readParquet(t, filepath.Join(dir, "links.parquet"))
		for _, name := range []string{"bandwidth_gbps", "peak_gbps", "utilisation"} {
			assert.Nil(t, links[name].values[0], name)
		}
		findings, _ := readParquet(t, filepath.Join(dir, "findings.parquet"))
		for _, name := range []string{"rank", "step", "op", "start_ns"} {
			assert.Nil(t, findings[name].values[0], name)
		}
		tasks, groups := readParquet(t, filepath.Join(dir, "tasks.parquet"))
		assert.Empty(t, tasks["rank"].values)
		assert.Zero(t, groups)
	}
}

// TestRowGroups: a table longer than a row group is written in several, each read
// back in order.
func TestRowGroups(t *testing.T) {
	const n = 300000
	res := &analysis.Result{}
	for k := 0; k < n; k++ {
		res.Communication.Ops = append(res.Communication.Ops, analysis.OpStat{Rank: k % 7, Name: "op", Group: "g", StartNs: int64(k) * 1000, Source: "none"})
	}
	dir := t.TempDir()
	ex, err := export.Begin(dir, export.Parquet)
	require.NoError(t, err)
	require.NoError(t, ex.Finish(res, nil))
	ops, groups := readParquet(t, filepath.Join(dir, "ops.parquet"))
	assert.Equal(t, 3, groups, "122880 rows a group")
	require.Len(t, ops["start_ns"].values, n)
	for k := 0; k < n; k += 997 {
		assert.Equal(t, int64(k)*1000, ops["start_ns"].values[k])
		assert.Equal(t, int64(k), ops["op_row"].values[k])
	}
}

// TestAbortLeavesNothing: an export abandoned before Finish (its output refused, its
// input unreadable) leaves neither a table nor a temporary file, nor the directory
// it made.
func TestAbortLeavesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	ex, err := export.Begin(dir, export.Parquet)
	require.NoError(t, err)
	acc := analysis.NewAccumulator(analysis.Options{})
	onRank, inOrder := ex.Hooks(acc.Add, acc.OpIndices)
	if _, err := os.Stat(sample); err == nil {
		_, err := parser.LoadCluster([]string{sample}, parser.LoadOptions{OnRank: onRank, InOrder: inOrder})
		require.NoError(t, err)
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Len(t, entries, 1, "the tasks' temporary file")
		assert.True(t, strings.HasPrefix(entries[0].Name(), ".tasks.parquet."))
	}
	ex.Abort()
	_, err = os.Stat(dir)
	assert.True(t, os.IsNotExist(err), "the directory Begin made is gone")
}
