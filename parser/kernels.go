package parser

import (
	"io"
	"slices"
	"strings"

	"github.com/hcclprof/hcclprof/internal/table"
	"github.com/hcclprof/hcclprof/internal/units"
	"github.com/hcclprof/hcclprof/profile"
)

// kernelCommOp is one communication row of kernel_details.csv: the op and the step
// the profiler assigned it to.
type kernelCommOp struct {
	profile.CommOp
	Step    int  // the Step Id column; -1 when absent
	HasStep bool // false when the file has no step column or the row's step is empty/N/A
}

// Column names of kernel_details.csv (docs/formats.md §6.1).
const (
	kdColName      = "Name"
	kdColCore      = "Accelerator Core"
	kdColStart     = "Start Time(us)"
	kdColDuration  = "Duration(us)"
	kdColStepId    = "Step Id"
	kdColStepIDAlt = "Step ID"
)

// maxKernelDurUs bounds Duration(us): 9e12 µs is 104 days, far beyond any op, and
// keeps StartNs + duration inside int64.
const maxKernelDurUs = 9e12

// parseKernelDetailsComm reads the communication rows of kernel_details.csv, the
// device task list torch_npu and MindSpore write (one row per kernel, µs). For a
// Level0 profile these rows are the only record of the comm ops.
//
// A row is a communication op when its Accelerator Core is HCCL (2023–early 2025) or
// COMMUNICATION (CANN 8.3); when that column is missing or the row's value is empty
// or N/A, when its Name starts with hcom or lccl (the advisor's rule). Other rows are
// skipped without parsing their numbers, so a file of tens of MB is streamed row by
// row and only the comm rows are kept.
//
// Columns are read by name: the step column is "Step Id" or "Step ID" (absent when
// the run has no step markers), torch_npu 2.7.1 inserts Device_id (ignored), 2023
// files lack OP State, and Level0 files have only 8 columns. Start Time(us) is a
// decimal string with a trailing TAB, parsed exactly with units.NsFromUsText; Duration(us) is
// a float µs rounded to ns. Type is the normalised op type of the name
// (profile.OpType: the CSV's Type column is N/A in Level0 files) and Group the group
// id inside the name. The result is sorted by start time (stable, so file order
// breaks ties).
func parseKernelDetailsComm(r io.Reader, file string) ([]kernelCommOp, error) {
	return parseCommRows(r, file, kernelDetailsCols)
}

// parseOpSummaryComm reads the communication rows of msprof's op_summary_*.csv
// (docs/formats.md §6.2): the same rows as kernel_details.csv under msprof's column names
// (Op Name, Task Type, Task Start Time(us) or Start Time(us), Task Duration(us),
// Step Id), the mapping msprof-analyze's advisor uses.
func parseOpSummaryComm(r io.Reader, file string) ([]kernelCommOp, error) {
	return parseCommRows(r, file, opSummaryCols)
}

// commCols names the columns of a device task CSV; each list holds the accepted
// spellings, the first one required ones are reported by.
type commCols struct {
	name, start, duration, core, step []string
}

var (
	kernelDetailsCols = commCols{name: []string{kdColName}, start: []string{kdColStart}, duration: []string{kdColDuration},
		core: []string{kdColCore}, step: []string{kdColStepId, kdColStepIDAlt}}
	opSummaryCols = commCols{name: []string{"Op Name"}, start: []string{"Task Start Time(us)", "Start Time(us)"},
		duration: []string{"Task Duration(us)"}, core: []string{"Task Type"}, step: []string{"Step Id", "Step ID"}}
)

func parseCommRows(r io.Reader, file string, cols commCols) ([]kernelCommOp, error) {
	t, err := table.OpenCSV(r, file)
	if err != nil {
		return nil, err
	}
	iName, iStart, iDur := t.Col(cols.name...), t.Col(cols.start...), t.Col(cols.duration...)
	var missing []string
	for i, c := range []int{iName, iStart, iDur} {
		if c < 0 {
			missing = append(missing, [][]string{cols.name, cols.start, cols.duration}[i][0])
		}
	}
	if len(missing) > 0 {
		_, err := t.RequireCols(missing...)
		return nil, err
	}
	colStart, colDuration, colStep := cols.start[0], cols.duration[0], cols.step[0]
	iCore := t.Col(cols.core...)
	iStep := t.Col(cols.step...)

	var ops []kernelCommOp
	for err := range table.Each(t) {
		if err != nil {
			return nil, err
		}
		name := t.Field(iName)
		if !isCommKernel(t.Field(iCore), name) {
			continue
		}
		op := kernelCommOp{Step: -1}
		if iStep >= 0 {
			if op.Step, op.HasStep, err = t.StepField(iStep, colStep); err != nil {
				return nil, err
			}
		}
		if name == "" { // its type and group are read from its name
			return nil, errAtLine(file, t.LineOf(iName), "column %q: a communication row without a name", cols.name[0])
		}
		iv, err := taskInterval(t, iStart, iDur, colStart, colDuration)
		if err != nil {
			return nil, err
		}
		op.Name = name
		op.Type = profile.OpType(name)
		op.Group = profile.GroupIDFromName(name)
		op.Interval = iv
		ops = append(ops, op)
	}
	slices.SortStableFunc(ops, func(a, b kernelCommOp) int {
		switch {
		case a.StartNs < b.StartNs:
			return -1
		case a.StartNs > b.StartNs:
			return 1
		}
		return 0
	})
	return ops, nil
}

// taskInterval reads a task row's start (a decimal µs string, exact) and duration
// (float µs, rounded to the ns, at most maxKernelDurUs) as an interval.
func taskInterval(t *table.CSV, iStart, iDur int, colStart, colDuration string) (profile.Interval, error) {
	start, err := units.NsFromUsText(t.Field(iStart))
	if err != nil {
		return profile.Interval{}, errAtLine(t.File, t.LineOf(iStart), "column %q: %v", colStart, err)
	}
	durUs, err := t.FloatField(iDur, colDuration)
	if err != nil {
		return profile.Interval{}, err
	}
	if durUs < 0 || durUs > maxKernelDurUs {
		return profile.Interval{}, errAtLine(t.File, t.LineOf(iDur), "column %q: duration %v µs out of range", colDuration, durUs)
	}
	return profile.Interval{StartNs: start, EndNs: start + units.NsFromUs(durUs)}, nil
}

// isCommKernel applies the comm-row rule of parseKernelDetailsComm to a row's
// trimmed Accelerator Core value and Name.
func isCommKernel(core, name string) bool {
	if !table.NullText(core) {
		return strings.EqualFold(core, "HCCL") || strings.EqualFold(core, "COMMUNICATION")
	}
	return kdHasPrefixFold(name, "hcom") || kdHasPrefixFold(name, "lccl")
}

func kdHasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// kdColInputTypes is kernel_details.csv's column of each kernel's input data types.
const kdColInputTypes = "Input Data Types"

// maxDTypeRows is how many rows of kernel_details.csv are read for the compute's
// data type: a model computes in one type from its first steps on.
const maxDTypeRows = 20000

// parseKernelDTypes reads, of kernel_details.csv's compute rows (not HCCL's), the time
// per first input data type over at most maxRows rows; nil when the file has no
// Input Data Types column.
func parseKernelDTypes(r io.Reader, file string, maxRows int) (map[string]int64, error) {
	t, err := table.OpenCSV(r, file)
	if err != nil {
		return nil, err
	}
	iTypes, iDur, iCore, iName := t.Col(kdColInputTypes), t.Col(kdColDuration), t.Col(kdColCore), t.Col(kdColName)
	if iTypes < 0 || iDur < 0 {
		return nil, nil
	}
	out := map[string]int64{}
	for rows := 0; rows < maxRows; rows++ {
		ok, err := t.Next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if isCommKernel(t.Field(iCore), t.Field(iName)) {
			continue
		}
		first, _, _ := strings.Cut(t.Field(iTypes), ";")
		dt := normaliseDType(first)
		if dt == "" {
			continue
		}
		durUs, err := t.FloatField(iDur, kdColDuration)
		if err != nil {
			return nil, err
		}
		if durUs < 0 || durUs > maxKernelDurUs {
			return nil, errAtLine(file, t.LineOf(iDur), "column %q: duration %v µs out of range", kdColDuration, durUs)
		}
		out[dt] += units.NsFromUs(durUs)
	}
	return out, nil
}

// normaliseDType names a CANN data type as the model's types are named: DT_BF16 and
// BFLOAT16 are BF16, FLOAT and DT_FLOAT FP32, FLOAT16 and DT_FLOAT16 FP16; "" for
// N/A and the empty cell.
func normaliseDType(s string) string {
	s = strings.ToUpper(strings.TrimSpace(strings.Trim(s, `"`)))
	s = strings.TrimPrefix(s, "DT_")
	switch s {
	case "", "N/A", "NA", "UNDEFINED":
		return ""
	case "BF16", "BFLOAT16", "BFP16":
		return "BF16"
	case "FLOAT16", "FP16", "HALF":
		return "FP16"
	case "FLOAT", "FLOAT32", "FP32":
		return "FP32"
	}
	return s
}
