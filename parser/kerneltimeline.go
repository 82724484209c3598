package parser

import (
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/hcclprof/hcclprof/internal/table"
	"github.com/hcclprof/hcclprof/internal/units"
	"github.com/hcclprof/hcclprof/profile"
)

// kernelTimeline is a rank's device timeline read from a device task list
// (kernel_details.csv, msprof's op_summary) when nothing else gives one: every task
// with its step, from the Step Id the profiler wrote on each row. A step is the span
// of its tasks, from the first's start to the last's end, as Ascend's step time is
// the device's span; what the host did before its first task is not in the file.
type kernelTimeline struct {
	Compute []profile.Interval
	CommOps []profile.CommOp
	Steps   []profile.StepMarker
	// NoStepRows counts the tasks whose Step Id is empty: they count in a step only
	// where they fall inside its span.
	NoStepRows int
}

// parseKernelDetailsTimeline reads kernel_details.csv whole as a device timeline (a
// row per task; compute and communication told apart as parseKernelDetailsComm
// does). A file without a Step Id column, or with no row carrying one, gives no steps.
func parseKernelDetailsTimeline(r io.Reader, file string) (*kernelTimeline, error) {
	return parseKernelTimeline(r, file, kernelDetailsCols)
}

// parseOpSummaryTimeline is parseKernelDetailsTimeline for msprof's op_summary_*.csv.
func parseOpSummaryTimeline(r io.Reader, file string) (*kernelTimeline, error) {
	return parseKernelTimeline(r, file, opSummaryCols)
}

func parseKernelTimeline(r io.Reader, file string, cols commCols) (*kernelTimeline, error) {
	t, err := table.OpenCSV(r, file)
	if err != nil {
		return nil, err
	}
	iName, iStart, iDur, iStep := t.Col(cols.name...), t.Col(cols.start...), t.Col(cols.duration...), t.Col(cols.step...)
	if iStep < 0 {
		return &kernelTimeline{}, nil // no steps to read: the caller reads the comm rows alone
	}
	if iName < 0 || iStart < 0 || iDur < 0 {
		_, err := t.RequireCols(cols.name[0], cols.start[0], cols.duration[0])
		return nil, err
	}
	iCore := t.Col(cols.core...)
	out := &kernelTimeline{}
	type span struct{ lo, hi int64 }
	spans := map[int]*span{}
	for err := range table.Each(t) {
		if err != nil {
			return nil, err
		}
		name := t.Field(iName)
		step, hasStep, err := t.StepField(iStep, cols.step[0])
		if err != nil {
			return nil, err
		}
		iv, err := taskInterval(t, iStart, iDur, cols.start[0], cols.duration[0])
		if err != nil {
			return nil, err
		}
		if isCommKernel(t.Field(iCore), name) {
			if name == "" {
				return nil, errAtLine(file, t.LineOf(iName), "column %q: a communication row without a name", cols.name[0])
			}
			// traceTimeline ops: analysis assigns them to the steps by time, as it does
			// for every timeline.
			out.CommOps = append(out.CommOps, profile.CommOp{Name: name, Type: profile.OpType(name), Group: profile.GroupIDFromName(name),
				Interval: iv, Step: -1})
		} else {
			out.Compute = append(out.Compute, iv)
		}
		if !hasStep {
			out.NoStepRows++
			continue
		}
		if s := spans[step]; s != nil {
			s.lo, s.hi = min(s.lo, iv.StartNs), max(s.hi, iv.EndNs)
		} else {
			spans[step] = &span{iv.StartNs, iv.EndNs}
		}
	}
	for step, s := range spans {
		out.Steps = append(out.Steps, profile.StepMarker{Step: step, Interval: profile.Interval{StartNs: s.lo, EndNs: s.hi}})
	}
	slices.SortFunc(out.Steps, func(a, b profile.StepMarker) int { return cmp.Compare(a.StartNs, b.StartNs) })
	for i := 1; i < len(out.Steps); i++ {
		if prev, cur := out.Steps[i-1], out.Steps[i]; cur.StartNs < prev.EndNs {
			// Steps whose tasks interleave have no span of their own: their
			// breakdown would count the shared time twice.
			return nil, fmt.Errorf("%s: the tasks of steps %d and %d interleave (step %d's last task ends %s ms after step %d's first starts): the steps cannot be told apart by time",
				file, prev.Step, cur.Step, prev.Step, units.FormatMs(float64(prev.EndNs-cur.StartNs)), cur.Step)
		}
	}
	slices.SortStableFunc(out.Compute, func(a, b profile.Interval) int { return cmp.Compare(a.StartNs, b.StartNs) })
	profile.SortOpsByStart(out.CommOps)
	return out, nil
}
