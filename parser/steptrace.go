package parser

import (
	"io"

	"github.com/hcclprof/hcclprof/internal/table"
	"github.com/hcclprof/hcclprof/internal/units"
	"github.com/hcclprof/hcclprof/profile"
)

// Column names of step_trace_time.csv (docs/formats.md §5).
const (
	stColStep          = "Step"
	stColComputing     = "Computing"
	stColCommNotOvl    = "Communication(Not Overlapped)"
	stColOverlapped    = "Overlapped"
	stColCommunication = "Communication"
	stColFree          = "Free"
	stColStage         = "Stage"
	stColBubble        = "Bubble"
	stColExclReceive   = "Communication(Not Overlapped and Exclude Receive)"
	stColPreparing     = "Preparing"
)

// maxPreparingUs is the largest Preparing value taken as a duration. In runs without
// step markers torch_npu wrote an absolute epoch timestamp (~1.7e15 µs) into
// Preparing; no step spends 11 days preparing, so larger values are dropped.
const maxPreparingNs = 1e12 * 1e3

// parseStepTraceCSV reads step_trace_time.csv, the profiler's own per-step time
// breakdown: one row per step, every figure a µs decimal, kept in ns. Columns are read by name
// because the header changed across versions (docs/formats.md §5): Preparing was appended
// in 2024, torch_npu 2.7.1 put a Device_id column first, and the "Exclude Receive"
// column is missing from some files. Device_id is ignored (it is not the rank).
//
// Step, Computing, Communication(Not Overlapped), Communication, Free and Stage are
// required. When Overlapped is missing it is computed as Communication −
// Communication(Not Overlapped), its definition; a missing Bubble is 0; a missing
// "Exclude Receive" column is Communication(Not Overlapped) − Bubble, its definition.
// An empty Step (runs without step markers) gives Step -1, HasStep false. A Preparing
// above 1e12 µs is the no-step-marker bug (an absolute timestamp) and is treated as
// absent. A field that is not a number is a *SyntaxError naming file and line.
func parseStepTraceCSV(r io.Reader, file string) ([]profile.StepTraceRow, error) {
	t, err := table.OpenCSV(r, file)
	if err != nil {
		return nil, err
	}
	req, err := t.RequireCols(stColStep, stColComputing, stColCommNotOvl, stColCommunication, stColFree, stColStage)
	if err != nil {
		return nil, err
	}
	iStep, iComp, iCNO, iComm, iFree, iStage := req[0], req[1], req[2], req[3], req[4], req[5]
	cols := stepTraceCols{iStep, iComp, iCNO, iComm, iFree, iStage,
		t.Col(stColOverlapped), t.Col(stColBubble), t.Col(stColExclReceive), t.Col(stColPreparing)}

	var rows []profile.StepTraceRow
	for err := range table.Each(t) {
		if err != nil {
			return nil, err
		}
		row, err := stepTraceRow(t, cols)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// stepTraceCols are the column indexes of a step trace table (-1 for an absent
// optional column).
type stepTraceCols struct {
	step, comp, cno, comm, free, stage int
	ovl, bubble, excl, prep            int
}

// stepTraceRow reads the current record as a step trace row, with
// parseStepTraceCSV's rules for optional columns.
func stepTraceRow(t *table.CSV, c stepTraceCols) (profile.StepTraceRow, error) {
	var row profile.StepTraceRow
	var err error
	if row.Step, row.HasStep, err = t.StepField(c.step, stColStep); err != nil {
		return row, err
	}
	for _, f := range []struct {
		i    int
		name string
		dst  *int64
	}{
		{c.comp, stColComputing, &row.ComputingNs},
		{c.cno, stColCommNotOvl, &row.CommNotOverlappedNs},
		{c.comm, stColCommunication, &row.CommunicationNs},
		{c.free, stColFree, &row.FreeNs},
		{c.stage, stColStage, &row.StageNs},
	} {
		if *f.dst, err = usField(t, f.i, f.name); err != nil {
			return row, err
		}
		units.NoteSaturated(&row.OutOfRange, f.name, *f.dst, t.Field(f.i))
	}
	// Optional columns: absent, empty or N/A means "not written".
	opt := func(i int, name string) (int64, bool, error) {
		if i < 0 || table.NullText(t.Field(i)) {
			return 0, false, nil
		}
		v, err := usField(t, i, name)
		if err == nil {
			units.NoteSaturated(&row.OutOfRange, name, v, t.Field(i))
		}
		return v, err == nil, err
	}
	var has bool
	if row.OverlappedNs, has, err = opt(c.ovl, stColOverlapped); err != nil {
		return row, err
	} else if !has {
		row.OverlappedNs = row.CommunicationNs - row.CommNotOverlappedNs
	}
	if row.BubbleNs, _, err = opt(c.bubble, stColBubble); err != nil {
		return row, err
	}
	if row.CommNotOverlappedExclRecvNs, has, err = opt(c.excl, stColExclReceive); err != nil {
		return row, err
	} else if !has {
		row.CommNotOverlappedExclRecvNs = row.CommNotOverlappedNs - row.BubbleNs
	}
	if row.PreparingNs, row.HasPreparing, err = opt(c.prep, stColPreparing); err != nil {
		return row, err
	}
	if row.PreparingNs > maxPreparingNs {
		row.PreparingNs, row.HasPreparing = 0, false
	}
	return row, nil
}
