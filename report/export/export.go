// Package export writes the analysis for other tools: CSV tables with units in their
// column names (steps, ops, links, findings), and a Chrome trace of the analysis
// (exposed communication, waits, findings) that opens in Perfetto or MindStudio
// Insight beside the profiler's own trace.
package export

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/profile"
	"github.com/hcclprof/hcclprof/report/internal/sanitize"
)

// Table is one exported table: column names (with units), their types, and rows of
// values written as text (the CSV form; Parquet parses them by type).
type Table struct {
	Name    string
	Columns []string
	Types   []ColumnType
	Rows    [][]string
}

// ColumnType is a column's type in typed outputs (Parquet).
type ColumnType int

// Column types.
const (
	Int64 ColumnType = iota
	Float64
	String
)

// typesOf gives each column its type from its name: ranks, steps, counts, bytes and
// ns are integers; _us, _gbps, shares and ratios are floats; the rest text.
func typesOf(cols []string) []ColumnType {
	out := make([]ColumnType, len(cols))
	for i, c := range cols {
		switch {
		case c == "rank" || c == "step" || c == "src" || c == "dst" || c == "transfers" || c == "bytes" || strings.HasSuffix(c, "_ns"):
			out[i] = Int64
		case strings.HasSuffix(c, "_us") || strings.HasSuffix(c, "_gbps") || c == "comm_share" || c == "utilisation":
			out[i] = Float64
		default:
			out[i] = String
		}
	}
	return out
}

func us(ns int64) string { return strconv.FormatFloat(float64(ns)/1e3, 'f', 3, 64) }
func f(x float64) string { return strconv.FormatFloat(x, 'g', 10, 64) }
func i(x int) string     { return strconv.Itoa(x) }
func i64(x int64) string { return strconv.FormatInt(x, 10) }

// Tables builds the exported tables from an analysis and its advice.
func Tables(res *analysis.Result, adv *advisor.Advice) []Table {
	steps := Table{Name: "steps", Columns: []string{"rank", "step", "source", "format", "stage_us", "computing_us", "communication_us",
		"communication_not_overlapped_us", "overlapped_us", "free_us", "bubble_us", "preparing_us", "comm_share"}}
	for _, r := range res.Ranks {
		for _, st := range r.Steps {
			steps.Rows = append(steps.Rows, []string{i(r.Rank), i(st.Step), string(r.Source), string(r.Format), us(st.StageNs), us(st.ComputingNs),
				us(st.CommunicationNs), us(st.CommNotOverlappedNs), us(st.OverlappedNs), us(st.FreeNs), us(st.BubbleNs), preparingUs(st), f(st.CommShare())})
		}
	}
	ops := Table{Name: "ops", Columns: []string{"rank", "step", "group", "name", "type", "start_ns", "elapse_us", "transit_us", "wait_us",
		"sync_us", "idle_us", "cross_rank_wait_us", "bytes", "busbw_gbps", "source"}}
	for _, o := range res.Communication.Ops {
		ops.Rows = append(ops.Rows, []string{i(o.Rank), i(o.Step), o.Group, o.Name, o.Type, i64(o.StartNs), us(o.ElapseNs), us(o.TransitNs),
			us(o.WaitNs), us(o.SyncNs), us(o.IdleNs), us(o.CrossWaitNs), i64(o.Bytes), f(o.BusBwGBps), o.Source})
	}
	links := Table{Name: "links", Columns: []string{"src", "dst", "transport", "bytes", "time_us", "transfers", "bandwidth_gbps", "peak_gbps", "utilisation"}}
	for _, l := range res.Communication.Links {
		links.Rows = append(links.Rows, []string{i(l.Src), i(l.Dst), l.Transport, i64(l.Bytes), us(l.TimeNs), i(l.Transfers),
			f(l.BandwidthGBps()), f(l.PeakGBps), f(l.Utilisation)})
	}
	findings := Table{Name: "findings", Columns: []string{"id", "severity", "title", "evidence", "rank", "step", "op", "start_us"}}
	if adv != nil {
		for _, x := range adv.Findings {
			ref := advisor.Ref{Rank: -1, Step: -1}
			if len(x.Refs) > 0 {
				ref = x.Refs[0]
			}
			findings.Rows = append(findings.Rows, []string{x.ID, string(x.Severity), x.Title, x.Evidence, i(ref.Rank), i(ref.Step), ref.Op, f(ref.StartUs)})
		}
	}
	tables := []Table{steps, ops, links, findings}
	for i := range tables {
		tables[i].Types = typesOf(tables[i].Columns)
	}
	return tables
}

// TasksTable is the HCCL task rows of every rank (needs the cluster's timelines):
// rank, the op row's name, plane, task name, group-local source and destination,
// transport, link, bytes, start and duration.
func TasksTable(c *profile.Cluster) Table {
	t := Table{Name: "tasks", Columns: []string{"rank", "op_row", "plane", "name", "src_local", "dst_local", "transport", "link",
		"bytes", "start_ns", "dur_ns"}}
	for _, r := range c.Ranks {
		for _, task := range r.CommTasks {
			t.Rows = append(t.Rows, []string{i(r.Rank), task.GroupRow, i(task.Plane), task.Name, i(task.SrcRank), i(task.DstRank),
				task.TransportType, task.LinkType, i64(task.SizeBytes), i64(task.StartNs), i64(task.DurNs())})
		}
	}
	t.Types = typesOf(t.Columns)
	for k, col := range t.Columns {
		if col == "plane" || col == "src_local" || col == "dst_local" {
			t.Types[k] = Int64
		}
	}
	return t
}

// WriteCSV writes each table to DIR/NAME.csv.
func WriteCSV(dir string, tables []Table) error {
	sanitize.Value(&tables) // names come from untrusted profiles
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, t := range tables {
		if err := writeCSVFile(filepath.Join(dir, t.Name+".csv"), t); err != nil {
			return err
		}
	}
	return nil
}

func writeCSVFile(path string, t Table) (err error) {
	file, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := file.Close(); err == nil {
			err = cerr
		}
	}()
	w := csv.NewWriter(bufio.NewWriter(file))
	if err := w.Write(t.Columns); err != nil {
		return err
	}
	if err := w.WriteAll(t.Rows); err != nil { // WriteAll flushes
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// preparingUs is a step's Preparing cell: empty when the profile does not say.
func preparingUs(st analysis.StepBreakdown) string {
	if !st.HasPreparing {
		return ""
	}
	return us(st.PreparingNs)
}
