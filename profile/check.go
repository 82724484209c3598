package profile

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// MaxPlausibleNs bounds any duration a profile may hold: a day. A larger one is a
// damaged value (1e300 µs, which the parsers saturate to the int64 bound), not a
// measurement.
const MaxPlausibleNs = int64(24 * 3600 * 1e9)

// Normalize is the one check every parsed rank goes through, whatever its format,
// as pprof's Profile.CheckValid is after a parse: it checks every value against what
// it can be (an interval that ends before it starts, a duration that is negative or
// beyond a day, a step row whose parts exceed the step or that repeats a step, an op
// whose transit and wait exceed its elapse), and puts the timeline's lists in the
// order the analysis relies on (by start time; Flows by device time). A value outside
// is never passed on: the item is dropped, and the rank gets a problem naming the
// file, the item, the field and the value, which makes it incomplete (exit 3 unless
// --allow-partial). Parsers sort as they build; Normalize only sorts (stably) a list
// a parser left out of order. Position-level errors (a bad token, a line that is not
// a number) are the parsers' own: they stop the file there and name its line or
// byte offset.
func (r *Rank) Normalize() {
	r.sortTimeline()
	problem := func(format string, args ...any) { r.Problems = append(r.Problems, fmt.Sprintf(format, args...)) }
	timeline := r.timelineFile()

	r.CommOps = keepValidItems(r.CommOps, func(op CommOp) bool {
		if BadInterval(op.Interval) {
			problem("%s: op %s at %d ns: end %d ns before its start, a negative start or longer than a day: dropped", r.opsFile(), op.Name, op.StartNs, op.EndNs)
			return false
		}
		if op.Count < 0 { // read as an unknown size, with exit 0
			problem("%s: op %s at %d ns: count %d is negative: dropped", r.opsFile(), op.Name, op.StartNs, op.Count)
			return false
		}
		return true
	})
	r.KernelCommOps = keepValidItems(r.KernelCommOps, func(op CommOp) bool {
		if BadInterval(op.Interval) {
			problem("kernel_details.csv: op %s at %d ns: a start before the clock, or a duration %d ns out of range: dropped", op.Name, op.StartNs, op.DurNs())
			return false
		}
		return true
	})
	r.CommOps = r.dropRepeatedOps(r.CommOps, r.opsFile())
	r.KernelCommOps = r.dropRepeatedOps(r.KernelCommOps, r.kernelOpsFile())
	bad := 0
	r.Compute = keepValidItems(r.Compute, func(iv Interval) bool {
		if BadInterval(iv) {
			if bad++; bad == 1 {
				problem("%s: a compute task at %d ns ends at %d ns, before its start or over a day later, or starts before the clock: dropped", timeline, iv.StartNs, iv.EndNs)
			}
			return false
		}
		return true
	})
	bad = 0
	r.CommTasks = keepValidItems(r.CommTasks, func(t CommTask) bool {
		if BadInterval(t.Interval) || t.SizeBytes < 0 {
			if bad++; bad == 1 {
				problem("%s: HCCL task %s at %d ns: end %d ns or size %d bytes out of range: dropped", timeline, t.Name, t.StartNs, t.EndNs, t.SizeBytes)
			}
			return false
		}
		return true
	})
	r.checkStepMarkers(timeline, problem)

	stepFile := r.StepTraceFile()
	seen := map[int]bool{}
	r.StepTrace = keepValidItems(r.StepTrace, func(row StepTraceRow) bool {
		if why := row.Impossible(); why != "" {
			problem("%s: step %s: %s: row dropped", stepFile, stepText(row), why)
			return false
		}
		if seen[row.Step] {
			problem("%s: step %s appears twice: the second row dropped", stepFile, stepText(row))
			return false
		}
		seen[row.Step] = true
		return true
	})

	statsFile := r.CommStatsFile()
	r.CommStats = keepValidItems(r.CommStats, func(s CommOpStats) bool {
		if why := s.impossible(); why != "" {
			problem("%s: op %s@%s step %d: %s: dropped", statsFile, s.Name, s.Group, s.Step, why)
			return false
		}
		return true
	})
}

// checkStepMarkers drops the step markers out of range, repeated or of no length,
// and cuts a marker that reaches into the next one's, each with a problem naming
// the timeline's file.
func (r *Rank) checkStepMarkers(timeline string, problem func(format string, args ...any)) {
	markerAt := map[int]int64{}
	r.Steps = keepValidItems(r.Steps, func(s StepMarker) bool {
		if BadInterval(s.Interval) {
			problem("%s: ProfilerStep#%d ends at %d ns, before its start %d ns or over a day later, or starts before the clock: dropped", timeline, s.Step, s.EndNs, s.StartNs)
			return false
		}
		// A profiler numbers its steps once; a step twice is a trace written twice, or
		// two runs in one file, whose every figure would count both.
		if at, dup := markerAt[s.Step]; dup {
			problem("%s: ProfilerStep#%d appears twice (at %d ns and %d ns): the second dropped", timeline, s.Step, at, s.StartNs)
			return false
		}
		markerAt[s.Step] = s.StartNs
		// A step lasts: a marker of no length is damaged, and the step it marks (its
		// work now in no step) is lost from every figure over steps.
		if s.EndNs == s.StartNs {
			problem("%s: ProfilerStep#%d at %d ns lasts 0 ns: a step has a length, so its marker is damaged and the step's work is in no step: dropped", timeline, s.Step, s.StartNs)
			return false
		}
		return true
	})
	// Steps follow one another on the thread that runs them: a marker reaching into
	// the next step's is damaged, and the time both cover would count twice. It is cut
	// at the next marker's start (where the step ended, if only its end is wrong).
	for i := 0; i+1 < len(r.Steps); i++ {
		s, next := &r.Steps[i], r.Steps[i+1]
		if s.EndNs > next.StartNs {
			problem("%s: ProfilerStep#%d (%d to %d ns) overlaps ProfilerStep#%d, which starts at %d ns, by %d ns: a step cannot overlap the next, so its marker is damaged; cut at the next step's start",
				timeline, s.Step, s.StartNs, s.EndNs, next.Step, next.StartNs, s.EndNs-next.StartNs)
			s.EndNs = next.StartNs
		}
	}
}

// dropRepeatedOps drops the ops that repeat an earlier one exactly (name, start,
// duration, group, row, step, size): one op cannot run twice at once on one row, so a
// copy is a record written twice (a trace's events, a db's rows, a CSV's lines), which
// counted the op twice in every count and total. The copies are dropped and a note
// names the file and how many: what remains is the profile as measured.
func (r *Rank) dropRepeatedOps(ops []CommOp, file string) []CommOp {
	if len(ops) < 2 {
		return ops
	}
	seen := make(map[CommOp]struct{}, len(ops))
	n := 0
	var first CommOp
	ops = keepValidItems(ops, func(op CommOp) bool {
		if _, dup := seen[op]; dup {
			if n++; n == 1 {
				first = op
			}
			return false
		}
		seen[op] = struct{}{}
		return true
	})
	if n > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%s: %d HCCL op record(s) repeat another exactly (same name, start, duration and row; the first %s at %d ns): read once, the copies dropped",
			file, n, first.Name, first.StartNs))
	}
	return ops
}

// kernelOpsFile is the file KernelCommOps were read from.
func (r *Rank) kernelOpsFile() string {
	for _, f := range r.FilesUsed {
		if b := filepath.Base(f); b == "kernel_details.csv" || strings.HasPrefix(b, "op_summary") {
			return f
		}
	}
	return "kernel_details.csv"
}

// keepValidItems keeps the items ok accepts, in place.
func keepValidItems[T any](items []T, ok func(T) bool) []T {
	return slices.DeleteFunc(items, func(it T) bool { return !ok(it) })
}

// BadInterval reports whether an interval cannot be a measurement: it starts before
// its clock's zero (every profiler's clock, epoch or device-monotonic, is positive: a
// Kineto kernel at ts -5 fell out of every step, with exit 0), ends before it starts,
// or lasts longer than MaxPlausibleNs.
func BadInterval(iv Interval) bool {
	return iv.StartNs < 0 || iv.EndNs < iv.StartNs || iv.DurNs() > MaxPlausibleNs
}

// Impossible says what is impossible in a step_trace_time.csv row, "" when nothing.
// Bubble lies outside Stage (Stage = span − Bubble), so the parts of the device span
// are bounded by Stage + Bubble. Messages give µs, the unit of the file.
func (row StepTraceRow) Impossible() string {
	if row.OutOfRange != "" {
		// As written: the saturated ns would print as ±9.2e15 µs.
		return row.OutOfRange + " us is out of range"
	}
	us := func(ns int64) float64 { return float64(ns) / 1e3 }
	fields := []struct {
		name string
		v    int64
	}{
		{"Computing", row.ComputingNs}, {"Communication(Not Overlapped)", row.CommNotOverlappedNs},
		{"Overlapped", row.OverlappedNs}, {"Communication", row.CommunicationNs}, {"Free", row.FreeNs},
		{"Stage", row.StageNs}, {"Bubble", row.BubbleNs}, {"Preparing", row.PreparingNs},
	}
	for _, f := range fields {
		if f.v < 0 || f.v > MaxPlausibleNs {
			return fmt.Sprintf("%s = %g us is out of range", f.name, us(f.v))
		}
	}
	if row.StageNs <= 0 {
		return fmt.Sprintf("Stage = %g us: a step has a length", us(row.StageNs))
	}
	span := row.StageNs + row.BubbleNs
	// The profiler rounds each figure to the ns: allow that, and no more.
	const slackNs = 10
	for _, f := range []struct {
		name string
		v    int64
	}{{"Computing", row.ComputingNs}, {"Communication", row.CommunicationNs}, {"Free", row.FreeNs}} {
		if f.v > span+slackNs {
			return fmt.Sprintf("%s = %g us exceeds the step (Stage %g + Bubble %g us)", f.name, us(f.v), us(row.StageNs), us(row.BubbleNs))
		}
	}
	if row.CommNotOverlappedNs > row.CommunicationNs+slackNs {
		return fmt.Sprintf("Communication(Not Overlapped) = %g us exceeds Communication = %g us", us(row.CommNotOverlappedNs), us(row.CommunicationNs))
	}
	return ""
}

// impossible says what is impossible in an op of communication.json, "" when
// nothing. Transit and Wait are measured on one plane within the op, so each is at most
// its elapse, and so is their sum (Idle = Elapse − Transit − Wait ≥ 0); Synchronization
// is the part of Wait before the first transfer.
func (s CommOpStats) impossible() string {
	const slackNs = 1000 // the file's ms floats carry ~ns rounding
	switch {
	case s.ElapseNs < 0 || s.ElapseNs > MaxPlausibleNs:
		return fmt.Sprintf("Elapse Time %g ms is out of range", float64(s.ElapseNs)/1e6)
	case s.TransitNs < 0, s.WaitNs < 0, s.SyncNs < 0:
		return fmt.Sprintf("a negative time (Transit %g, Wait %g, Synchronization %g ms)", float64(s.TransitNs)/1e6, float64(s.WaitNs)/1e6, float64(s.SyncNs)/1e6)
	case s.TransitNs+s.WaitNs > s.ElapseNs+slackNs:
		return fmt.Sprintf("Transit %g ms + Wait %g ms exceed the Elapse Time %g ms", float64(s.TransitNs)/1e6, float64(s.WaitNs)/1e6, float64(s.ElapseNs)/1e6)
	case s.SyncNs > s.WaitNs+slackNs:
		return fmt.Sprintf("Synchronization %g ms exceeds Wait %g ms", float64(s.SyncNs)/1e6, float64(s.WaitNs)/1e6)
	case s.IdleNs != 0 && max(s.IdleNs-(s.ElapseNs-s.TransitNs-s.WaitNs), s.ElapseNs-s.TransitNs-s.WaitNs-s.IdleNs) > slackNs:
		// The profiler computes Idle so (to 1e-14 ms in every real file and db); 0 is
		// also what a layout without the field reads.
		return fmt.Sprintf("Idle Time %g ms is not Elapse − Transit − Wait (%g ms)", float64(s.IdleNs)/1e6, float64(s.ElapseNs-s.TransitNs-s.WaitNs)/1e6)
	case s.StartNs < 0:
		return fmt.Sprintf("Start Timestamp %d ns is negative", s.StartNs)
	}
	for name, t := range s.Transports {
		if t.Bytes < 0 || t.TimeNs < 0 || t.TimeNs > MaxPlausibleNs {
			return fmt.Sprintf("transport %s: %d bytes in %g ms is out of range", name, t.Bytes, float64(t.TimeNs)/1e6)
		}
		if t.LargePacketRatio < 0 || t.LargePacketRatio > 1 {
			return fmt.Sprintf("transport %s: Large Packet Ratio %g is not a fraction", name, t.LargePacketRatio)
		}
	}
	return ""
}

func stepText(row StepTraceRow) string {
	if !row.HasStep {
		return "(none)"
	}
	return fmt.Sprint(row.Step)
}

// commStatsFiles are the files a rank's per-op statistics may come from, in the
// order they are preferred.
var commStatsFiles = []string{"communication.json", analysisDBName, "communication_analyzer.db"}

// analysisDBName is torch_npu's db of the profiler's own analysis, which holds no
// timeline.
const analysisDBName = "analysis.db"

// Sources of a rank's per-op records (Rank.CommOpsSource).
const (
	OpsFromTimeline = "timeline"
	OpsFromKernels  = "kernel_details.csv"
)

// UsedFile is the first of names (base names) among the files the rank used, else def.
func (r *Rank) UsedFile(def string, names ...string) string {
	for _, want := range names {
		for _, f := range r.FilesUsed {
			if filepath.Base(f) == want {
				return f
			}
		}
	}
	return def
}

// CommStatsFile is the file the rank's per-op statistics were read from.
func (r *Rank) CommStatsFile() string {
	return r.UsedFile("communication.json", commStatsFiles...)
}

func (r *Rank) timelineFile() string {
	for _, f := range r.FilesUsed {
		if b := filepath.Base(f); b == "trace_view.json" || filepath.Ext(b) == ".db" && b != analysisDBName {
			return f
		}
	}
	if r.Format == FormatKineto && r.Dir != "" {
		return r.Dir // the trace file itself
	}
	return "the timeline"
}

// StepTraceFile is the file the rank's step rows were read from.
func (r *Rank) StepTraceFile() string {
	return r.UsedFile("step_trace_time.csv", "step_trace_time.csv", "cluster_step_trace_time.csv", analysisDBName, "cluster_analysis.db")
}

func (r *Rank) opsFile() string {
	if r.CommOpsSource != "" && r.CommOpsSource != OpsFromTimeline {
		return r.CommOpsSource
	}
	return r.timelineFile()
}

// sortTimeline puts the timeline's lists in start order where a parser did not.
func (r *Rank) sortTimeline() {
	byStart := func(a, b Interval) int { return cmp.Compare(a.StartNs, b.StartNs) }
	for _, ivs := range [][]Interval{r.Compute, r.BackwardCompute, r.Overlap.Computing, r.Overlap.Communication,
		r.Overlap.CommNotOverlapped, r.Overlap.Free} {
		sortIfNeeded(ivs, byStart)
	}
	sortIfNeeded(r.Steps, func(a, b StepMarker) int { return byStart(a.Interval, b.Interval) })
	sortIfNeeded(r.CommOps, func(a, b CommOp) int { return byStart(a.Interval, b.Interval) })
	sortIfNeeded(r.CommTasks, func(a, b CommTask) int { return byStart(a.Interval, b.Interval) })
	sortIfNeeded(r.Flows, func(a, b DeviceFlow) int { return cmp.Compare(a.DeviceNs, b.DeviceNs) })
}

// sortIfNeeded sorts xs stably by cmp unless it is sorted already, so that a sorted
// list keeps the order its parser gave ties.
func sortIfNeeded[T any](xs []T, cmp func(a, b T) int) {
	if !slices.IsSortedFunc(xs, cmp) {
		slices.SortStableFunc(xs, cmp)
	}
}
