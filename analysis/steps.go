package analysis

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/hcclprof/hcclprof/internal/ranklist"
	"github.com/hcclprof/hcclprof/profile"
)

// Source says where a rank's step breakdown came from.
type Source string

// Sources of a step breakdown.
const (
	SourceTimeline  Source = "timeline"            // recomputed from trace_view.json
	SourceStepTrace Source = "step_trace_time.csv" // the profiler's own figures (no timeline, or the recomputation disagreed)
	// SourceClusterStepTrace: the profiler's figures as msprof-analyze's
	// cluster_step_trace_time.csv carries them (a rank known from its output only).
	SourceClusterStepTrace Source = "cluster_step_trace_time.csv"
	// SourceOverlapRows: the sums of the trace's Overlap Analysis rows, the profiler's
	// own figures, taken because the recomputation disagreed with them.
	SourceOverlapRows Source = "Overlap Analysis rows"
	SourceNone        Source = "none"
)

// StepBreakdown is one step of one rank, with torch_npu's step_trace_time.csv
// semantics (docs/formats.md §5), in ns.
type StepBreakdown struct {
	Step    int  // the profiler's step number; -1 when the run has no step markers
	HasStep bool // false when the run has no step markers
	StageNs, ComputingNs, CommunicationNs, CommNotOverlappedNs, OverlappedNs,
	FreeNs, BubbleNs, PreparingNs int64
	// HasPreparing is false when the step's Preparing is not known (a
	// step_trace_time.csv without the column, a step without device work or markers):
	// PreparingNs is then 0 and not a figure.
	HasPreparing bool
	AllReduceNs  int64 // union of AllReduce op intervals
	// AllReduceUnknown is set for a step without a timeline that communicates while
	// no op record names it (no per-op file, or none for this step): its AllReduce
	// time is not known, and AllReduceNs is 0 and not a figure.
	AllReduceUnknown bool
	// TailComputeNs is the computation after the step's last collective ends: the
	// optimizer, which waits for the gradients (timeline input only; 0 otherwise).
	// The what-if needs it apart because accumulation does not repeat it.
	TailComputeNs int64
	// MicroBatches is the number of backward passes the step's compute shows (runs
	// of backward kernels with a forward pass between them): the micro-batches of
	// gradient accumulation or of a pipeline. 0 when the timeline does not say
	// (no kernel names that mark a backward pass).
	MicroBatches int
	// ExposedNs is the time some op runs while no compute kernel and no receive does,
	// measured on a timeline (HasExposed). It is what the profiler's "Communication(Not
	// Overlapped and Exclude Receive)" column means, and equals its arithmetic
	// (Not Overlapped − Bubble) while receives do not overlap computation, as in a
	// pipeline's stage waiting for its input. A context-parallel ring receives beside
	// the attention: the arithmetic then subtracts receive time that was never exposed
	// and reads 0 (cp4-tp4-16rank: 0 against 3.6% of the step measured).
	ExposedNs  int64
	HasExposed bool
	// ExposedLowerBound is set where the profiler's exposed figure (Not Overlapped −
	// Bubble) is only a lower bound: a context-parallel ring's receives, read from the
	// summaries, run beside the attention yet count as Bubble. The exposed time is
	// then at most ExposedCommMaxNs.
	ExposedLowerBound bool
	// Groups splits the step's communication by communicator (timeline input only),
	// so that tp, dp and pp traffic can be told apart.
	Groups []GroupComm
}

// GroupComm is one communicator's share of a step: the union of its ops and the part
// of it not overlapped by computation.
type GroupComm struct {
	Group               string
	CommunicationNs     int64
	CommNotOverlappedNs int64
	// ExposedNs is the part of the union while no compute kernel and no receive runs
	// (the step's exposed communication, group by group; a receive's time is Bubble).
	// Without a timeline it is CommNotOverlappedNs's share, as that is: an
	// apportionment, not a measurement.
	ExposedNs int64
	// ExposedMinNs and ExposedMaxNs bound the exposed part: equal to ExposedNs on a
	// timeline. Without one, the exposed time is all the step's exposed
	// communication less what the other groups add to the union of the ops at most
	// (their time outside this group's ops), and at most the smaller of the group's
	// union and the step's exposed communication.
	ExposedMinNs, ExposedMaxNs int64
}

// ExposedCommNs is the step's exposed communication: Communication(Not Overlapped)
// less the receive time the profiler already counts as Bubble (its "Communication(Not
// Overlapped and Exclude Receive)"), so that it stays within Stage, which excludes
// Bubble too.
// With a timeline it is the measured ExposedNs, which is never less.
func (s StepBreakdown) ExposedCommNs() int64 {
	if s.HasExposed {
		return min(max(s.ExposedNs, 0), max(s.StageNs, 0))
	}
	return min(max(s.CommNotOverlappedNs-s.BubbleNs, 0), max(s.StageNs, 0))
}

// ExposedCommMaxNs is the most the step's exposed communication can be: ExposedCommNs,
// or Not Overlapped (within Stage) where that is only a lower bound
// (ExposedLowerBound).
func (s StepBreakdown) ExposedCommMaxNs() int64 {
	if s.ExposedLowerBound && !s.HasExposed {
		return max(s.ExposedCommNs(), min(max(s.CommNotOverlappedNs, 0), max(s.StageNs, 0)))
	}
	return s.ExposedCommNs()
}

// CommShare is the exposed communication over Stage (ExposedCommNs / Stage).
func (s StepBreakdown) CommShare() float64 { return ratio(s.ExposedCommNs(), s.StageNs) }

// CommTotalShare is Communication over the step's span, Stage + Bubble: the receive
// time counted as Bubble is communication outside Stage, so over Stage alone a
// pipeline's share passes 100% (pp 4, 2 micro-batches: 139%).
func (s StepBreakdown) CommTotalShare() float64 {
	return ratio(s.CommunicationNs, s.StageNs+s.BubbleNs)
}

// AllReduceShare is the union of AllReduce op intervals / Stage; ok is false when the
// step's AllReduce time is not known (AllReduceUnknown).
func (s StepBreakdown) AllReduceShare() (share float64, ok bool) {
	return ratio(s.AllReduceNs, s.StageNs), !s.AllReduceUnknown
}

func ratio(a, b int64) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// stepWindow is the device-time range whose tasks belong to one step.
type stepWindow struct {
	step    profile.StepMarker
	startNs int64 // device tasks starting in [startNs, endNs) belong to the step
	endNs   int64
}

// deviceWindows maps host step markers to device time. The device runs behind the
// host, so a step's device work is found through the host→device flows: the step's
// device window opens at the first device event launched from inside the host step,
// and closes where the next step's opens (for the last step: after the last device
// event it launched). Without flows the host windows are used as they are.
func deviceWindows(steps []profile.StepMarker, flows []profile.DeviceFlow) []stepWindow {
	w := make([]stepWindow, len(steps))
	first := make([]int64, len(steps))
	last := make([]int64, len(steps))
	for i := range steps {
		w[i].step = steps[i]
		first[i], last[i] = math.MaxInt64, math.MinInt64
	}
	haveFlows := false
	for _, f := range flows {
		i := sort.Search(len(steps), func(i int) bool { return steps[i].EndNs > f.HostNs })
		if i == len(steps) || f.HostNs < steps[i].StartNs {
			continue
		}
		haveFlows = true
		first[i] = min(first[i], f.DeviceNs)
		last[i] = max(last[i], f.DeviceNs)
	}
	for i := range steps {
		if !haveFlows || first[i] == math.MaxInt64 {
			w[i].startNs = steps[i].StartNs
		} else {
			w[i].startNs = first[i]
		}
	}
	for i := range steps {
		switch {
		case i+1 < len(steps):
			w[i].endNs = w[i+1].startNs
		case haveFlows && last[i] != math.MinInt64:
			w[i].endNs = max(last[i]+1, steps[i].EndNs)
		default:
			w[i].endNs = steps[i].EndNs
		}
		if w[i].endNs < w[i].startNs {
			w[i].endNs = w[i].startNs
		}
	}
	return w
}

// inWindow returns the intervals of a start-sorted list that start in [lo, hi).
func inWindow(ivs []profile.Interval, lo, hi int64) []profile.Interval {
	i := sort.Search(len(ivs), func(i int) bool { return ivs[i].StartNs >= lo })
	j := sort.Search(len(ivs), func(i int) bool { return ivs[i].StartNs >= hi })
	return ivs[i:j]
}

// opsInWindow returns the ops of a start-sorted list that start in [lo, hi).
func opsInWindow(ops []profile.CommOp, lo, hi int64) []profile.CommOp {
	i := sort.Search(len(ops), func(i int) bool { return ops[i].StartNs >= lo })
	j := sort.Search(len(ops), func(i int) bool { return ops[i].StartNs >= hi })
	return ops[i:j]
}

// timelineSteps recomputes the step breakdown of a rank from its timeline. When the
// trace has the profiler's Overlap Analysis rows it also returns their sums per step
// window, in step_trace_time.csv form, to cross-check the recomputation.
func timelineSteps(r *profile.Rank) ([]StepBreakdown, []profile.StepTraceRow) {
	steps, noMarkers := stepsOrSpan(r)
	if len(steps) == 0 {
		return nil, nil
	}
	if r.ClipToStepWindows && !noMarkers {
		return clippedSteps(r, steps), nil
	}
	windows := deviceWindows(steps, r.Flows)
	all := make([]breakdownWithStart, len(windows))
	for i, w := range windows {
		all[i] = breakdown(inWindow(r.Compute, w.startNs, w.endNs), opsInWindow(r.CommOps, w.startNs, w.endNs))
	}
	if !noMarkers {
		addTrailingIdle(all, steps, r.Overlap.Free)
	} else {
		addClosingIdle(&all[0], r.Overlap.Free)
	}
	out := make([]StepBreakdown, 0, len(windows))
	var overlapRows []profile.StepTraceRow
	for i, w := range windows {
		b := all[i]
		b.Step, b.HasStep = w.step.Step, !noMarkers
		if len(r.MicroBatchesByWindow) == len(windows) {
			b.MicroBatches = r.MicroBatchesByWindow[i]
		} else {
			b.MicroBatches = microBatches(inWindow(r.Compute, w.startNs, w.endNs), inWindow(r.BackwardCompute, w.startNs, w.endNs))
		}
		if !noMarkers && b.hasWork {
			b.PreparingNs, b.HasPreparing = max(0, b.firstNs-w.step.StartNs), true
		}
		out = append(out, b.StepBreakdown)
		if r.Overlap.Present() && b.hasWork {
			overlapRows = append(overlapRows, overlapStepRow(r.Overlap, w, b, noMarkers))
		}
	}
	return out, overlapRows
}

// microBatchesByWindow counts each device step window's micro-batches as
// timelineSteps does (nil where it counts none: no steps, or windows clipped to the
// host's).
func microBatchesByWindow(r *profile.Rank) []int {
	steps, noMarkers := stepsOrSpan(r)
	if len(steps) == 0 || (r.ClipToStepWindows && !noMarkers) {
		return nil
	}
	windows := deviceWindows(steps, r.Flows)
	out := make([]int, len(windows))
	for i, w := range windows {
		out[i] = microBatches(inWindow(r.Compute, w.startNs, w.endNs), inWindow(r.BackwardCompute, w.startNs, w.endNs))
	}
	return out
}

// stepsOrSpan is the rank's step markers, or, when it has none (noMarkers), one step
// spanning its whole device timeline; none when the timeline is empty.
func stepsOrSpan(r *profile.Rank) (steps []profile.StepMarker, noMarkers bool) {
	if len(r.Steps) > 0 {
		return r.Steps, false
	}
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, iv := range r.Compute {
		lo, hi = min(lo, iv.StartNs), max(hi, iv.EndNs)
	}
	for _, op := range r.CommOps {
		lo, hi = min(lo, op.StartNs), max(hi, op.EndNs)
	}
	if lo > hi {
		return nil, true
	}
	return []profile.StepMarker{{Step: -1, Interval: profile.Interval{StartNs: lo, EndNs: hi + 1}}}, true
}

// overlapStepRow sums the profiler's Overlap Analysis rows of one step as torch_npu
// does for step_trace_time.csv: the rows starting in the step's window, which closes
// at the later of the step's last device work and the host step's end (and at the
// next step's window); Stage is their span less Bubble, Preparing the first
// Computing or Communication row's start less the host step's start. The rows have
// no receive ops, so Bubble is the recomputed one.
func overlapStepRow(ov profile.OverlapLayer, w stepWindow, b breakdownWithStart, noMarkers bool) profile.StepTraceRow {
	hi := w.endNs
	if !noMarkers {
		hi = min(hi, max(b.lastNs, w.step.EndNs))
	}
	row := profile.StepTraceRow{Step: b.Step, HasStep: b.HasStep, BubbleNs: b.BubbleNs}
	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	firstTask := int64(math.MaxInt64)
	for _, c := range []struct {
		ivs  []profile.Interval
		dst  *int64
		task bool
	}{
		{ov.Computing, &row.ComputingNs, true},
		{ov.Communication, &row.CommunicationNs, true},
		{ov.CommNotOverlapped, &row.CommNotOverlappedNs, false},
		{ov.Free, &row.FreeNs, false},
	} {
		in := inWindow(c.ivs, w.startNs, hi)
		*c.dst = totalNs(in)
		for _, iv := range in {
			first, last = min(first, iv.StartNs), max(last, iv.EndNs)
			if c.task {
				firstTask = min(firstTask, iv.StartNs)
			}
		}
	}
	row.OverlappedNs = row.CommunicationNs - row.CommNotOverlappedNs
	if last > first {
		row.StageNs = last - first - b.BubbleNs
	}
	if !noMarkers && firstTask != math.MaxInt64 {
		row.PreparingNs, row.HasPreparing = firstTask-w.step.StartNs, true
	}
	return row
}

// addTrailingIdle gives a step the idle device time between its last task and the next
// step's first when torch_npu's step_trace_time.csv counts it there. torch_npu ends a
// step's device window at the later of its last launched task's end and the end of
// the host's ProfilerStep#N, and gives a step every Overlap Analysis row that starts in
// its window; Stage is the span of those rows. So when the host step outlasts its
// device work (a host-bound run, or a synchronisation at the end of the step), the
// Free row covering the wait for the next step starts inside the window: it is Free
// of this step, and Stage reaches to the next step's first task (torch_npu 2.7.1 with
// CANN 9.1, torchnpu-910b3-cann9-5step: Stage of steps 3-6 is 31-36% longer than the
// span of their own tasks). Whether that idle time is a Free row at all is the CANN
// timeline's choice: CANN 9.1 draws one over every gap between device tasks, a layer
// drawn step by step has none between steps. The gap is therefore counted only when
// the trace's Overlap Analysis layer (freeRows) has a Free row starting in it; without
// the layer it is left out, as before.
func addTrailingIdle(bs []breakdownWithStart, steps []profile.StepMarker, freeRows []profile.Interval) {
	if len(freeRows) == 0 {
		return
	}
	for i := range bs {
		if !bs[i].hasWork || bs[i].lastNs >= steps[i].EndNs {
			continue // no device work, or the host step ended first: the window closes at the last task
		}
		next, found := int64(0), false
		for j := i + 1; j < len(bs) && !found; j++ {
			next, found = bs[j].firstNs, bs[j].hasWork
		}
		if !found || next <= bs[i].lastNs || len(inWindow(freeRows, bs[i].lastNs, next)) == 0 {
			continue
		}
		gap := next - bs[i].lastNs
		bs[i].StageNs += gap
		bs[i].FreeNs += gap
		bs[i].lastNs = next
	}
}

// addClosingIdle extends the step-less range of a run without step markers to the
// end of the profiler's Free rows that start in it: the range is the collection, and
// msprof 25.5 draws Free from the last kernel to the device's last task of the
// collection (PLACE_HOLDER_SQE, after PROFILING_DISABLE), which is no computation
// (msprof-cann85-matmul: Computing 7.840 us, Free 1164.540 us, Stage 1172.380 us).
// Without the layer the range ends at the last computation or communication.
func addClosingIdle(b *breakdownWithStart, freeRows []profile.Interval) {
	if !b.hasWork {
		return
	}
	end := b.lastNs
	for _, iv := range inWindow(freeRows, b.firstNs, b.lastNs+1) {
		end = max(end, iv.EndNs)
	}
	gap := end - b.lastNs
	b.StageNs += gap
	b.FreeNs += gap
	b.lastNs = end
}

// clippedSteps is the breakdown of a rank whose device and host share a clock
// (profile.Rank.ClipToStepWindows: Kineto). A step is its host ProfilerStep#N window:
// the device intervals overlapping it are clipped to it, and its Stage is the window's
// length (less Bubble), so Free also counts the idle device time at the window's ends.
// Flows are not needed. Why clip rather than map windows through the flows as for
// Ascend: with one clock the window is the step as the user timed it, and clipping
// splits work that straddles two steps between them instead of giving all of it to
// the step it started in. It is also the rule of the reference figures for the real
// Kineto sample (kineto-nccl-a100-2gpu in ../shared/realdata/README.md), which this
// reproduces to the nanosecond.
func clippedSteps(r *profile.Rank, steps []profile.StepMarker) []StepBreakdown {
	computeMax := maxDur(r.Compute)
	var opMax int64
	for _, op := range r.CommOps {
		opMax = max(opMax, op.DurNs())
	}
	out := make([]StepBreakdown, 0, len(steps))
	for _, st := range steps {
		lo, hi := st.StartNs, st.EndNs
		compute := clipIntervals(r.Compute, lo, hi, computeMax)
		ops := clipOps(r.CommOps, lo, hi, opMax)
		b := breakdown(compute, ops)
		b.Step, b.HasStep = st.Step, true
		busyNs := b.ComputingNs + b.CommunicationNs - b.OverlappedNs
		b.StageNs = max(0, hi-lo-b.BubbleNs)
		b.FreeNs = max(0, hi-lo-busyNs)
		b.PreparingNs = 0
		if busyNs > 0 {
			b.PreparingNs, b.HasPreparing = b.firstNs-lo, true
		}
		out = append(out, b.StepBreakdown)
	}
	return out
}

func maxDur(ivs []profile.Interval) int64 {
	var m int64
	for _, iv := range ivs {
		m = max(m, iv.DurNs())
	}
	return m
}

// clipIntervals returns the intervals of a start-sorted list that overlap [lo, hi),
// clipped to it. None lasts more than maxDurNs, so only those starting at or after
// lo−maxDurNs can reach the window.
func clipIntervals(ivs []profile.Interval, lo, hi, maxDurNs int64) []profile.Interval {
	i := sort.Search(len(ivs), func(i int) bool { return ivs[i].StartNs >= lo-maxDurNs })
	var out []profile.Interval
	for ; i < len(ivs) && ivs[i].StartNs < hi; i++ {
		if iv := ivs[i]; iv.EndNs > lo {
			out = append(out, profile.Interval{StartNs: max(iv.StartNs, lo), EndNs: min(iv.EndNs, hi)})
		}
	}
	return out
}

// clipOps is clipIntervals for comm ops.
func clipOps(ops []profile.CommOp, lo, hi, maxDurNs int64) []profile.CommOp {
	i := sort.Search(len(ops), func(i int) bool { return ops[i].StartNs >= lo-maxDurNs })
	var out []profile.CommOp
	for ; i < len(ops) && ops[i].StartNs < hi; i++ {
		if op := ops[i]; op.EndNs > lo {
			op.StartNs, op.EndNs = max(op.StartNs, lo), min(op.EndNs, hi)
			out = append(out, op)
		}
	}
	return out
}

type breakdownWithStart struct {
	StepBreakdown
	hasWork         bool  // the step has device work
	firstNs, lastNs int64 // where the step's first device work starts and its last ends
}

// breakdown computes the step fields from a step's compute tasks and comm ops.
func breakdown(compute []profile.Interval, ops []profile.CommOp) breakdownWithStart {
	comp := union(compute)
	commIvs := make([]profile.Interval, 0, len(ops))
	arIvs := make([]profile.Interval, 0, len(ops))
	var bubbleNs int64
	var recvIvs []profile.Interval
	for _, op := range ops {
		commIvs = append(commIvs, op.Interval)
		if op.Type == "allreduce" {
			arIvs = append(arIvs, op.Interval)
		}
		if profile.IsReceiveOp(op.Name, op.Type) {
			bubbleNs += op.DurNs()
			recvIvs = append(recvIvs, op.Interval)
		}
	}
	comm := union(commIvs)
	busy := mergeSorted(comp, comm)
	var b breakdownWithStart
	if len(busy) == 0 {
		return b
	}
	spanNs := busy[len(busy)-1].EndNs - busy[0].StartNs
	b.hasWork = true
	b.firstNs = busy[0].StartNs
	b.lastNs = busy[len(busy)-1].EndNs
	b.ComputingNs = totalNs(comp)
	b.CommunicationNs = totalNs(comm)
	b.OverlappedNs = intersectNs(comm, comp)
	b.CommNotOverlappedNs = b.CommunicationNs - b.OverlappedNs
	b.FreeNs = spanNs - totalNs(busy)
	b.BubbleNs = bubbleNs
	b.ExposedNs, b.HasExposed = b.CommNotOverlappedNs, true
	if len(recvIvs) > 0 {
		b.ExposedNs = b.CommunicationNs - intersectNs(comm, mergeSorted(comp, union(recvIvs)))
	}
	b.StageNs = spanNs - bubbleNs
	b.AllReduceNs = totalNs(union(arIvs))
	if len(comm) > 0 {
		b.TailComputeNs = tailNs(comp, comm[len(comm)-1].EndNs)
	}
	b.Groups = groupComm(ops, comp)
	return b
}

// tailNs is the length of the sorted disjoint intervals after t.
func tailNs(ivs []profile.Interval, t int64) int64 {
	var n int64
	for i := len(ivs) - 1; i >= 0 && ivs[i].EndNs > t; i-- {
		n += ivs[i].EndNs - max(ivs[i].StartNs, t)
	}
	return n
}

// stepTraceSteps converts the profiler's step_trace_time.csv rows.
func stepTraceSteps(rows []profile.StepTraceRow) []StepBreakdown {
	out := make([]StepBreakdown, 0, len(rows))
	for _, row := range rows {
		b := StepBreakdown{
			Step: row.Step, HasStep: row.HasStep,
			StageNs: row.StageNs, ComputingNs: row.ComputingNs,
			CommunicationNs: row.CommunicationNs, CommNotOverlappedNs: row.CommNotOverlappedNs,
			OverlappedNs: row.OverlappedNs, FreeNs: row.FreeNs, BubbleNs: row.BubbleNs,
		}
		if row.HasPreparing {
			b.PreparingNs, b.HasPreparing = row.PreparingNs, true
		}
		if !row.HasStep {
			b.Step = -1
		}
		out = append(out, b)
	}
	return out
}

// Differences between hcclprof's recomputation and the profiler's own step figures,
// relative to the profiler's figure (or to 1% of the step for small fields): above
// mismatchWarn a warning; above mismatchProblem the recomputation is not trusted.
const (
	mismatchWarn    = 0.005
	mismatchProblem = 0.01
)

// stepCheck is what comparing a rank's recomputed steps with the profiler's says.
type stepCheck struct {
	problems []string // fields off by more than mismatchProblem
	warnings []string // fields off by more than mismatchWarn, up to mismatchProblem
	// selfDisagreement is set when steps differ only in the fields the profiler's own
	// op records decide (Communication, its part not overlapped, and Free, which
	// follows): the recomputation's Computing and Stage agree, so the profiler's step
	// table and its op records disagree with each other. Its step table is reported
	// and the difference is a warning, not a problem: no user can fix it.
	selfDisagreement bool
}

// compareWithStepTrace checks recomputed steps against the profiler's figures (rows,
// read from source, a file named for the user) field by field.
func compareWithStepTrace(rank int, got []StepBreakdown, rows []profile.StepTraceRow, source string) stepCheck {
	want := map[int]StepBreakdown{}
	for _, s := range stepTraceSteps(rows) {
		want[s.Step] = s
	}
	var c stepCheck
	for _, g := range got {
		w, ok := want[g.Step]
		if !ok {
			continue
		}
		fields := []struct {
			name      string
			got, want int64
		}{
			{"Computing", g.ComputingNs, w.ComputingNs},
			{"Communication", g.CommunicationNs, w.CommunicationNs},
			{"Communication(Not Overlapped)", g.CommNotOverlappedNs, w.CommNotOverlappedNs},
			{"Free", g.FreeNs, w.FreeNs},
			{"Stage", g.StageNs, w.StageNs},
		}
		off := map[string]bool{}
		for _, f := range fields {
			scale := float64(max(abs64(f.want), w.StageNs/100, 1000)) // small fields: relative to 1% of the step
			off[f.name] = float64(abs64(f.got-f.want)) > mismatchProblem*scale
		}
		opsOnly := !off["Computing"] && !off["Stage"] && off["Communication"]
		for _, f := range fields {
			scale := float64(max(abs64(f.want), w.StageNs/100, 1000)) // small fields: relative to 1% of the step
			d := float64(abs64(f.got - f.want))
			pct := 100 * float64(f.got-f.want) / float64(max(abs64(f.want), 1))
			switch {
			case d > mismatchProblem*scale && opsOnly:
				c.selfDisagreement = true
				c.warnings = append(c.warnings, fmt.Sprintf(
					"rank %d step %s: %s from the profiler's own op records is %.3f us, its step table (%s) says %.3f us (%+.2f%%): the profiler disagrees with itself; its step table is reported, as the profiler and msprof-analyze report it (Computing and Stage agree)",
					rank, StepLabel(g.Step), f.name, float64(f.got)/1000, source, float64(f.want)/1000, pct))
			case d > mismatchProblem*scale:
				c.problems = append(c.problems, fmt.Sprintf(
					"%s, step %s: %s recomputed from the timeline is %.3f us, the profiler's is %.3f us (%+.2f%%): the profiler's step figures are reported for this rank",
					source, StepLabel(g.Step), f.name, float64(f.got)/1000, float64(f.want)/1000, pct))
			case d > mismatchWarn*scale:
				c.warnings = append(c.warnings, fmt.Sprintf(
					"rank %d step %s: %s recomputed from the timeline is %.3f us, %s says %.3f us (%+.2f%%)",
					rank, StepLabel(g.Step), f.name, float64(f.got)/1000, source, float64(f.want)/1000, pct))
			}
		}
	}
	// A step the profiler measured that the timeline has no marker for is left out of
	// every figure: say so, or the mean reads as the run's.
	have := map[int]bool{}
	for _, g := range got {
		have[g.Step] = true
	}
	var unmarked []int
	for step := range want {
		if step >= 0 && !have[step] {
			unmarked = append(unmarked, step)
		}
	}
	if len(unmarked) > 0 {
		slices.Sort(unmarked)
		c.warnings = append(c.warnings, fmt.Sprintf("rank %d: %s lists step(s) %s, which the timeline has no ProfilerStep marker for: not measured",
			rank, source, ranklist.Format(unmarked)))
	}
	return c
}

// profilerSteps replaces a rank's recomputed steps by the profiler's own figures
// (rows), for a rank whose recomputation disagrees with them. A step the profiler has
// no row for keeps its recomputed figures. The AllReduce union, computed from the op
// intervals alone, is kept (within Stage); the per-group split and the compute after
// the last collective depend on the compute the recomputation got wrong, so they are
// dropped, as for a rank without a timeline.
func profilerSteps(got []StepBreakdown, rows []profile.StepTraceRow) []StepBreakdown {
	want := map[int]StepBreakdown{}
	for _, s := range stepTraceSteps(rows) {
		want[s.Step] = s
	}
	out := make([]StepBreakdown, len(got))
	for i, g := range got {
		w, ok := want[g.Step]
		if !ok {
			out[i] = g
			continue
		}
		w.AllReduceNs = min(g.AllReduceNs, w.StageNs)
		out[i] = w
	}
	return out
}

// stepFiguresSource names, for the user, where the profiler's step figures of a rank
// were read: its step_trace_time.csv (or analysis.db), else its trace.
func stepFiguresSource(r *profile.Rank, fromTrace bool) string {
	want := []string{"step_trace_time.csv", "analysis.db"}
	label := "step_trace_time.csv"
	if fromTrace {
		want = []string{"trace_view.json", ".db", ".json", ".json.gz"}
		label = "the trace"
	}
	for _, suffix := range want {
		for _, f := range r.FilesUsed {
			if strings.HasSuffix(f, suffix) {
				label = filepath.Join(r.Dir, f)
				if fromTrace {
					label += " (Overlap Analysis rows)"
				}
				return label
			}
		}
	}
	return label
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// addOpsAllReduce fills AllReduceNs of steps taken from step_trace_time.csv with the
// union of the AllReduce ops the rank's op records assign to each step: a rank
// without a timeline still lists its ops, with their steps (kernel_details.csv at
// Level0, communication.json or analysis.db otherwise). A step that communicates
// while no record names it has no known AllReduce time (AllReduceUnknown), rather
// than none.
func addOpsAllReduce(steps []StepBreakdown, ops []profile.CommOp) {
	byStep := map[int][]profile.Interval{}
	named := map[int]bool{}
	for _, op := range ops {
		named[op.Step] = true
		if op.Type == "allreduce" {
			byStep[op.Step] = append(byStep[op.Step], op.Interval)
		}
	}
	for i := range steps {
		st := &steps[i]
		if ivs, ok := byStep[st.Step]; ok {
			st.AllReduceNs = min(totalNs(union(ivs)), st.StageNs)
		}
		st.AllReduceUnknown = !named[st.Step] && st.CommunicationNs > 0
	}
}

// addOpsAllReduceOf is addOpsAllReduce over both of a rank's op records:
// kernel_details.csv's rows (Level0) and the profiler's per-op analysis
// (communication.json, analysis.db). Both record the same ops, but a task list cut
// short lists fewer of them (a real one put 0.5% of the step in AllReduce where the
// per-op analysis put 35%), so each step takes the record whose AllReduce union is
// larger, and a step where they differ by more than a tenth is named in a warning.
func addOpsAllReduceOf(rank int, steps []StepBreakdown, kernelOps, analysisOps []profile.CommOp) []string {
	if len(kernelOps) == 0 || len(analysisOps) == 0 {
		addOpsAllReduce(steps, append(kernelOps, analysisOps...))
		return nil
	}
	fromKernels := slices.Clone(steps)
	addOpsAllReduce(fromKernels, kernelOps)
	addOpsAllReduce(steps, analysisOps)
	var differ []int
	for i := range steps {
		k, a := fromKernels[i], steps[i]
		if k.AllReduceNs > a.AllReduceNs || a.AllReduceUnknown {
			steps[i].AllReduceNs, steps[i].AllReduceUnknown = k.AllReduceNs, k.AllReduceUnknown
		}
		if hi, lo := max(k.AllReduceNs, a.AllReduceNs), min(k.AllReduceNs, a.AllReduceNs); hi > 0 && 10*(hi-lo) > hi {
			differ = append(differ, steps[i].Step)
		}
	}
	if len(differ) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("rank %d: its op records disagree on the AllReduce time of step(s) %s by more than 10%% (kernel_details.csv against the per-op analysis; one of them may be cut short): the larger is reported",
		rank, ranklist.Format(differ))}
}

// groupComm splits a step's ops by group: each group's union and its exposed part.
func groupComm(ops []profile.CommOp, comp []profile.Interval) []GroupComm {
	byGroup := map[string][]profile.Interval{}
	var busy []profile.Interval // compute and receives
	for _, op := range ops {
		byGroup[op.Group] = append(byGroup[op.Group], op.Interval)
		if profile.IsReceiveOp(op.Name, op.Type) {
			busy = append(busy, op.Interval)
		}
	}
	if len(byGroup) == 0 {
		return nil
	}
	exposedOf := comp
	if len(busy) > 0 {
		exposedOf = union(append(busy, comp...))
	}
	out := make([]GroupComm, 0, len(byGroup))
	for g, ivs := range byGroup {
		u := union(ivs)
		total := totalNs(u)
		exposed := total - intersectNs(u, exposedOf)
		out = append(out, GroupComm{Group: g, CommunicationNs: total, CommNotOverlappedNs: total - intersectNs(u, comp),
			ExposedNs: exposed, ExposedMinNs: exposed, ExposedMaxNs: exposed})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Group < out[j].Group })
	return out
}

// checkWithProfiler compares a rank's recomputed steps with the profiler's own figures
// (step_trace_time.csv, else the trace's Overlap Analysis rows) and returns the
// warnings. Where a field of a step differs by more than mismatchProblem, the
// profiler's figures are the ones reported for the rank (its Source says which), and
// each such field is a problem of the rank, which makes it incomplete: a
// classification the recomputation got wrong must not pass a gate silently.
func checkWithProfiler(r *profile.Rank, rr *RankResult, overlapRows []profile.StepTraceRow) []string {
	rows, source, fromTrace := r.StepTrace, SourceStepTrace, false
	if len(rows) == 0 {
		rows, source, fromTrace = overlapRows, SourceOverlapRows, true
	}
	if len(rows) == 0 {
		return nil
	}
	c := compareWithStepTrace(r.Rank, rr.Steps, rows, stepFiguresSource(r, fromTrace))
	warnings := c.warnings
	if c.selfDisagreement && len(c.problems) == 0 {
		rr.Steps = profilerSteps(rr.Steps, rows)
		rr.Source = source
	}
	if len(c.problems) > 0 {
		rr.Steps = profilerSteps(rr.Steps, rows)
		rr.Source = source
		rr.Incomplete = true
		rr.Problems = append(rr.Problems, c.problems...)
		for _, p := range c.problems {
			warnings = append(warnings, fmt.Sprintf("rank %d: %s", r.Rank, p))
		}
	}
	return warnings
}

// Backward passes are told apart by the forward pass between them: a stretch of
// compute kernels none of which is a backward kernel, at least forwardMinKernels long
// and forwardStretch times the typical stretch between backward kernels (inside a
// backward pass that is a kernel or two, or a layer's worth). The forward passes of
// one step's micro-batches are alike, so a stretch under half the longest is taken
// for a pause inside a backward pass, and so is one under a fifth of the kernels per
// micro-batch it would imply. A run of backward kernels counts as a pass when
// it has at least backwardMinKernels (a gradient clip after the last pass is no
// micro-batch).
const (
	forwardMinKernels  = 5
	forwardStretch     = 3
	backwardMinKernels = 3
	forwardShare       = 5
)

// microBatches counts the backward passes in a step's compute (start-sorted; the
// backward kernels are a subset of compute). 0 when there is no backward kernel.
func microBatches(compute, backward []profile.Interval) int {
	if len(backward) == 0 {
		return 0
	}
	// The compute kernels between consecutive backward kernels.
	index := func(iv profile.Interval) int {
		return sort.Search(len(compute), func(i int) bool { return compute[i].StartNs >= iv.StartNs })
	}
	stretches := make([]int, len(backward)-1)
	prev := index(backward[0])
	for i := 1; i < len(backward); i++ {
		at := index(backward[i])
		stretches[i-1] = max(at-prev-1, 0)
		prev = at
	}
	limit := forwardMinKernels
	if len(stretches) > 0 {
		sorted := append([]int(nil), stretches...)
		sort.Ints(sorted)
		limit = max(limit, forwardStretch*sorted[len(sorted)*3/4], (sorted[len(sorted)-1]+1)/2)
	}
	// A forward pass is about a third of a micro-batch's kernels: a stretch under a
	// fifth of the kernels per micro-batch it would imply is a pause inside a
	// backward pass (with one micro-batch, the longest such pause would otherwise
	// split it in two). Raising the limit can only lower the count, so this settles.
	for {
		splits := 0
		for _, n := range stretches {
			if n >= limit {
				splits++
			}
		}
		perMicro := len(compute) / (splits + 1)
		if perMicro/forwardShare <= limit {
			break
		}
		limit = perMicro / forwardShare
	}
	passes, run := 0, 1
	for _, n := range stretches {
		if n >= limit {
			if run >= backwardMinKernels {
				passes++
			}
			run = 0
		}
		run++
	}
	if run >= backwardMinKernels {
		passes++
	}
	return max(passes, 1)
}
