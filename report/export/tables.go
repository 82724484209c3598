package export

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/internal/units"
	"github.com/hcclprof/hcclprof/profile"
	"github.com/hcclprof/hcclprof/report/internal/sanitize"
)

// Format is the file format of the exported tables.
type Format string

// Table formats.
const (
	Parquet Format = "parquet"
	CSV     Format = "csv"
)

// kind is a column's type in the files.
type kind uint8

const (
	kindInt64 kind = iota
	kindFloat64
	kindString
	// kindTimestamp is int64 ns on the profile's clock (the Unix epoch): Parquet's
	// TIMESTAMP(NANOS), the integer itself in CSV.
	kindTimestamp
)

// column is one column of a table: its name (with its unit), type and whether it can
// be NULL (a value the profile does not give).
type column struct {
	name     string
	kind     kind
	nullable bool
}

// cell is one value of a row; null marks a value the profile does not give.
type cell struct {
	i    int64
	f    float64
	s    string
	null bool
}

var null = cell{null: true}

func ival(x int64) cell   { return cell{i: x} }
func fval(x float64) cell { return cell{f: x} }
func sval(s string) cell  { return cell{s: s} }
func usval(ns int64) cell { return cell{f: units.Us(ns)} }
func intCell(x int) cell  { return cell{i: int64(x)} }
func optString(s string) cell {
	if s == "" {
		return null
	}
	return sval(s)
}

// nonNegative is a rank, step or local rank, which the model gives as -1 when absent.
func nonNegative(x int) cell {
	if x < 0 {
		return null
	}
	return intCell(x)
}

// positive is a figure the model gives as 0 when it is unknown.
func positive(x float64) cell {
	if x <= 0 {
		return null
	}
	return fval(x)
}

// The tables, in the order they are written.
var (
	stepsColumns = []column{{"rank", kindInt64, false}, {"step", kindInt64, true}, {"source", kindString, false},
		{"format", kindString, true}, {"stage_us", kindFloat64, false}, {"computing_us", kindFloat64, false},
		{"communication_us", kindFloat64, false}, {"communication_not_overlapped_us", kindFloat64, false},
		{"overlapped_us", kindFloat64, false}, {"free_us", kindFloat64, false}, {"bubble_us", kindFloat64, false},
		{"preparing_us", kindFloat64, true}, {"comm_share", kindFloat64, true}}
	// op_row numbers the ops rows from 0: tasks.op_row points at it.
	opsColumns = []column{{"op_row", kindInt64, false}, {"rank", kindInt64, false}, {"step", kindInt64, true},
		{"group", kindString, true}, {"name", kindString, false}, {"type", kindString, true},
		{"start_ns", kindTimestamp, false}, {"elapse_us", kindFloat64, false}, {"transit_us", kindFloat64, true},
		{"wait_us", kindFloat64, true}, {"sync_us", kindFloat64, true}, {"idle_us", kindFloat64, true},
		{"cross_rank_wait_us", kindFloat64, true}, {"bytes", kindInt64, true}, {"busbw_gbps", kindFloat64, true},
		{"source", kindString, false}}
	tasksColumns = []column{{"rank", kindInt64, false}, {"op_row", kindInt64, true}, {"hccl_row", kindString, true},
		{"plane", kindInt64, false}, {"name", kindString, false}, {"src_local", kindInt64, true},
		{"dst_local", kindInt64, true}, {"transport", kindString, true}, {"link", kindString, true},
		{"bytes", kindInt64, false}, {"start_ns", kindTimestamp, false}, {"dur_ns", kindInt64, false}}
	linksColumns = []column{{"src", kindInt64, false}, {"dst", kindInt64, false}, {"transport", kindString, false},
		{"bytes", kindInt64, false}, {"time_us", kindFloat64, false}, {"transfers", kindInt64, false},
		{"bandwidth_gbps", kindFloat64, true}, {"peak_gbps", kindFloat64, true}, {"utilisation", kindFloat64, true}}
	findingsColumns = []column{{"id", kindString, false}, {"severity", kindString, false}, {"title", kindString, false},
		{"evidence", kindString, false}, {"rank", kindInt64, true}, {"step", kindInt64, true}, {"op", kindString, true},
		{"start_ns", kindTimestamp, true}}
)

// TableNames are the exported tables, each written to DIR/NAME.FORMAT.
var TableNames = []string{"steps", "ops", "tasks", "links", "findings"}

// Files are the files an export to dir writes.
func Files(dir string, format Format) []string {
	out := make([]string, len(TableNames))
	for i, name := range TableNames {
		out[i] = filepath.Join(dir, name+"."+string(format))
	}
	return out
}

// tableWriter writes one table's rows to a file as they come.
type tableWriter interface {
	write(row []cell) error
	close() error
}

func newTableWriter(f *os.File, format Format, cols []column) (tableWriter, error) {
	if format == Parquet {
		return newParquetTable(f, cols)
	}
	return newCSVTable(f, cols)
}

// Export writes a run's tables to a directory: the tasks table while the ranks are
// read (a rank's tasks are written and released before the later ranks' are read, so
// memory does not grow with the cluster), the others from the analysis at the end.
// Every table is written to a hidden temporary file beside its final name and moved
// into place by Finish, so a refused or failed export leaves no table behind.
type Export struct {
	dir        string
	format     Format
	createdDir bool

	mu      sync.Mutex // guards pending: onRank runs on every loading worker
	pending map[*profile.Rank]*rankTasks
	err     error               // the first failed write of the tasks
	temps   map[string]*os.File // by table name
	tasks   tableWriter
	ranks   int // ranks whose tasks were written
	opRows  int // ops rows the written ranks keep: the next rank's first op_row
	row     []cell
}

// Begin starts an export to dir (created when missing).
func Begin(dir string, format Format) (*Export, error) {
	if format != Parquet && format != CSV {
		return nil, fmt.Errorf("unknown table format %q", format)
	}
	_, statErr := os.Stat(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &Export{dir: dir, format: format, createdDir: os.IsNotExist(statErr),
		pending: map[*profile.Rank]*rankTasks{}, temps: map[string]*os.File{}}, nil
}

// open creates a table's temporary file and its writer.
func (e *Export) open(name string, cols []column) (tableWriter, error) {
	f, err := os.CreateTemp(e.dir, "."+name+"."+string(e.format)+".*.tmp")
	if err != nil {
		return nil, err
	}
	e.temps[name] = f
	// CreateTemp makes the file private; a table is as readable as a file os.Create makes.
	if err := f.Chmod(0o644); err != nil {
		return nil, err
	}
	w, err := newTableWriter(f, e.format, cols)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return w, nil
}

// rankTasks is a rank's HCCL tasks with the op each belongs to (its index in the
// rank's CommOps, -1 for none), kept from when the rank is read until its turn to be
// written.
type rankTasks struct {
	rank  int
	tasks []profile.CommTask
	op    []int32
}

// tasksOf attributes each of a rank's tasks to its op as the analysis does: the op on
// the same HCCL row whose span holds the task's start (the latest-starting such op
// where two touch).
func tasksOf(r *profile.Rank) *rankTasks {
	byRow := map[string][]int{}
	for i, op := range r.CommOps {
		byRow[op.GroupRow] = append(byRow[op.GroupRow], i)
	}
	for _, idx := range byRow {
		sort.SliceStable(idx, func(a, b int) bool { return r.CommOps[idx[a]].StartNs < r.CommOps[idx[b]].StartNs })
	}
	rt := &rankTasks{rank: r.Rank, tasks: r.CommTasks, op: make([]int32, len(r.CommTasks))}
	for k, t := range r.CommTasks {
		rt.op[k] = -1
		idx := byRow[t.GroupRow]
		j := sort.Search(len(idx), func(j int) bool { return r.CommOps[idx[j]].StartNs > t.StartNs }) - 1
		if j >= 0 && t.StartNs <= r.CommOps[idx[j]].EndNs {
			rt.op[k] = int32(idx[j])
		}
	}
	return rt
}

// Hooks are the functions that write the tasks table while the ranks are read
// (parser.LoadOptions' OnRank and InOrder): onRank takes each rank's tasks and then
// calls add (the analysis' Accumulator.Add, which may drop the rank's timeline);
// inOrder writes them, rank after rank, pointing each task at its op's row with kept
// (the Accumulator's OpIndices). A failed write is returned by Finish.
func (e *Export) Hooks(add func(*profile.Rank), kept func(*profile.Rank) []int) (onRank, inOrder func(*profile.Rank)) {
	onRank = func(r *profile.Rank) {
		rt := tasksOf(r)
		add(r)
		e.mu.Lock()
		e.pending[r] = rt
		e.mu.Unlock()
	}
	inOrder = func(r *profile.Rank) {
		// The loader calls inOrder one rank at a time: only pending is shared.
		e.mu.Lock()
		rt := e.pending[r]
		delete(e.pending, r)
		e.mu.Unlock()
		if e.err == nil {
			e.err = e.writeTasks(rt, kept(r))
		}
	}
	return onRank, inOrder
}

func (e *Export) writeTasks(rt *rankTasks, kept []int) error {
	if e.tasks == nil {
		w, err := e.open("tasks", tasksColumns)
		if err != nil {
			return err
		}
		e.tasks = w
	}
	// The op's row: this rank's ops follow the ops of the ranks before it.
	row := map[int32]int64{}
	for k, opIndex := range kept {
		row[int32(opIndex)] = int64(e.opRows + k)
	}
	e.opRows += len(kept)
	e.ranks++
	for k, t := range rt.tasks {
		opRow := null
		if r, ok := row[rt.op[k]]; ok {
			opRow = ival(r)
		}
		e.row = append(e.row[:0], intCell(rt.rank), opRow, optString(t.GroupRow), intCell(t.Plane), sval(t.Name),
			nonNegative(t.SrcRank), nonNegative(t.DstRank), optString(t.TransportType), optString(t.LinkType),
			ival(t.SizeBytes), ival(t.StartNs), ival(t.DurNs()))
		if err := e.tasks.write(e.row); err != nil {
			return fmt.Errorf("tasks: %w", err)
		}
	}
	return nil
}

// Finish writes the steps, ops, links and findings tables from the analysis and its
// advice (adv may be nil), closes every table and moves them into place. The tasks
// table holds the ranks given to the hooks (none when they were not used).
func (e *Export) Finish(res *analysis.Result, adv *advisor.Advice) error {
	if e.err != nil {
		return e.err
	}
	if e.ranks > 0 && (e.ranks != len(res.Ranks) || e.opRows != len(res.Communication.Ops)) {
		return fmt.Errorf("the tasks of %d ranks point at %d op rows, the analysis has %d ranks and %d ops",
			e.ranks, e.opRows, len(res.Ranks), len(res.Communication.Ops))
	}
	if e.tasks == nil {
		w, err := e.open("tasks", tasksColumns)
		if err != nil {
			return err
		}
		e.tasks = w
	}
	if err := e.tasks.close(); err != nil {
		return fmt.Errorf("tasks: %w", err)
	}
	tables := []struct {
		name string
		cols []column
		rows func(emit func(...cell) error) error
	}{
		{"steps", stepsColumns, func(emit func(...cell) error) error { return stepRows(res, emit) }},
		{"ops", opsColumns, func(emit func(...cell) error) error { return opRows(res, emit) }},
		{"links", linksColumns, func(emit func(...cell) error) error { return linkRows(res, emit) }},
		{"findings", findingsColumns, func(emit func(...cell) error) error { return findingRows(adv, emit) }},
	}
	for _, t := range tables {
		w, err := e.open(t.name, t.cols)
		if err != nil {
			return err
		}
		if err := t.rows(func(cells ...cell) error { return w.write(cells) }); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		if err := w.close(); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
	}
	for _, name := range TableNames {
		f := e.temps[name]
		if err := os.Rename(f.Name(), filepath.Join(e.dir, name+"."+string(e.format))); err != nil {
			return err
		}
		delete(e.temps, name)
	}
	return nil
}

// Abort removes what the export wrote: its temporary files, and the directory when
// Begin created it and it is empty.
func (e *Export) Abort() {
	for name, f := range e.temps {
		f.Close()
		os.Remove(f.Name())
		delete(e.temps, name)
	}
	if e.createdDir {
		os.Remove(e.dir)
	}
}

func stepRows(res *analysis.Result, emit func(...cell) error) error {
	for _, r := range res.Ranks {
		for _, st := range r.Steps {
			step, preparing, share := null, null, null
			if st.HasStep {
				step = intCell(st.Step)
			}
			if st.HasPreparing {
				preparing = usval(st.PreparingNs)
			}
			if st.StageNs > 0 {
				share = fval(st.CommShare())
			}
			if err := emit(intCell(r.Rank), step, sval(string(r.Source)), optString(string(r.Format)), usval(st.StageNs),
				usval(st.ComputingNs), usval(st.CommunicationNs), usval(st.CommNotOverlappedNs), usval(st.OverlappedNs),
				usval(st.FreeNs), usval(st.BubbleNs), preparing, share); err != nil {
				return err
			}
		}
	}
	return nil
}

func opRows(res *analysis.Result, emit func(...cell) error) error {
	for k, o := range res.Communication.Ops {
		// Without the profiler's split or the tasks to recompute it, the split is
		// unknown, not zero.
		transit, wait, sync, idle := null, null, null, null
		if o.Source != "none" {
			transit, wait, sync, idle = usval(o.TransitNs), usval(o.WaitNs), usval(o.SyncNs), usval(o.IdleNs)
		}
		crossWait := null
		if o.CrossWaitKnown {
			crossWait = usval(o.CrossWaitNs)
		}
		bytes := null
		if o.Bytes > 0 {
			bytes = ival(o.Bytes)
		}
		if err := emit(intCell(k), intCell(o.Rank), nonNegative(o.Step), optString(o.Group), sval(o.Name), optString(o.Type),
			ival(o.StartNs), usval(o.ElapseNs), transit, wait, sync, idle, crossWait, bytes,
			positive(o.BusBwGBps), sval(o.Source)); err != nil {
			return err
		}
	}
	return nil
}

func linkRows(res *analysis.Result, emit func(...cell) error) error {
	for _, l := range res.Communication.Links {
		bw := null
		if l.TimeNs > 0 {
			bw = fval(l.BandwidthGBps())
		}
		util := null
		if l.PeakGBps > 0 {
			util = fval(l.Utilisation)
		}
		if err := emit(intCell(l.Src), intCell(l.Dst), sval(l.Transport), ival(l.Bytes), usval(l.TimeNs), intCell(l.Transfers),
			bw, positive(l.PeakGBps), util); err != nil {
			return err
		}
	}
	return nil
}

func findingRows(adv *advisor.Advice, emit func(...cell) error) error {
	if adv == nil {
		return nil
	}
	for _, x := range adv.Findings {
		ref := advisor.Ref{Rank: -1, Step: -1}
		if len(x.Refs) > 0 {
			ref = x.Refs[0]
		}
		start := null
		if ref.StartNs != 0 {
			start = ival(ref.StartNs)
		}
		if err := emit(sval(x.ID), sval(string(x.Severity)), sval(x.Title), sval(x.Evidence), nonNegative(ref.Rank),
			nonNegative(ref.Step), optString(ref.Op), start); err != nil {
			return err
		}
	}
	return nil
}

// clean makes a row's text safe (names come from untrusted profiles) and checks that
// only nullable columns are NULL.
func clean(cols []column, row []cell) error {
	if len(row) != len(cols) {
		return fmt.Errorf("%d values for %d columns", len(row), len(cols))
	}
	for i, c := range cols {
		if row[i].null {
			if !c.nullable {
				return fmt.Errorf("column %s: NULL in a column that is never NULL", c.name)
			}
			continue
		}
		if c.kind == kindString {
			row[i].s = sanitize.String(row[i].s)
		}
	}
	return nil
}
