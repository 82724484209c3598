package analysis

import (
	"slices"
	"sort"

	"github.com/hcclprof/hcclprof/profile"
)

// Compact returns a copy of r that every analysis measures exactly as it measures r,
// with the timeline reduced to what the analysis reads of it, so that a rank's
// summary (hcclprof summarize) is a small fraction of its trace:
//
//   - compute tasks become, for each stretch between two cut points, the union of
//     those starting in it; runs of union pieces that touch no communication op or
//     task are folded into one piece of their summed length placed at the run's start
//     (its last piece kept, so the stretch's span is unchanged). Cut points are every
//     step's host and device window bounds and every op's and task's ends, so each
//     step sums the same computation, overlaps the same communication and starts and
//     ends at the same times;
//   - host→device flows become, per step, the two that give its device window;
//   - the Overlap Analysis rows are folded in the same way, per row kind, between the
//     bounds the cross-check sums them over.
//
// Ops, tasks, steps, the profiler's statistics, matrix, step trace and metadata are
// kept whole. r is not modified.
func Compact(r *profile.Rank) *profile.Rank {
	c := *r
	if !r.HasTimeline {
		return &c
	}
	if !slices.IsSortedFunc(r.Compute, func(a, b profile.Interval) int { return cmpInt64(a.StartNs, b.StartNs) }) {
		return &c // the analysis' window searches need the order anyway
	}
	cuts := compactCuts(r)
	// Compute under an op is kept as it is (the exposed intervals subtract it from
	// the op); tasks only matter where a transfer may contend with compute.
	ops := make([]profile.Interval, 0, len(r.CommOps))
	for _, op := range r.CommOps {
		ops = append(ops, op.Interval)
		cuts = append(cuts, op.StartNs, op.EndNs)
	}
	for _, t := range r.CommTasks {
		if t.SizeBytes > 0 && t.DurNs() > 0 && isDataTask(&t) {
			cuts = append(cuts, t.StartNs, t.EndNs)
		}
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	// The micro-batch count needs every kernel: counted now, before the folding.
	if len(r.BackwardCompute) > 0 {
		c.MicroBatchesByWindow, c.BackwardCompute = microBatchesByWindow(r), nil
	}
	c.Compute = compactCompute(r.Compute, cuts, union(ops))
	c.Flows = compactFlows(r)
	if r.Overlap.Present() && !r.ClipToStepWindows && overlapSorted(r.Overlap) {
		oc := overlapCuts(r, cuts)
		c.Overlap = profile.OverlapLayer{
			Computing:         foldRows(r.Overlap.Computing, oc),
			Communication:     foldRows(r.Overlap.Communication, oc),
			CommNotOverlapped: foldRows(r.Overlap.CommNotOverlapped, oc),
			Free:              foldRows(r.Overlap.Free, oc),
		}
	}
	return &c
}

// compactCuts are the host step bounds and the device windows' bounds of a rank (of
// the one step spanning it when it has no markers).
func compactCuts(r *profile.Rank) []int64 {
	steps, _ := stepsOrSpan(r)
	var cuts []int64
	for _, st := range steps {
		cuts = append(cuts, st.StartNs, st.EndNs)
	}
	for _, flows := range [][]profile.DeviceFlow{r.Flows, nil} {
		for _, w := range deviceWindows(steps, flows) {
			cuts = append(cuts, w.startNs, w.endNs)
		}
	}
	return cuts
}

// overlapCuts adds to cuts every bound the Overlap Analysis rows are summed over
// (overlapStepRow, addTrailingIdle, addClosingIdle): the step breakdowns' first and
// last device work, before and after the trailing idle time is added.
func overlapCuts(r *profile.Rank, cuts []int64) []int64 {
	out := slices.Clone(cuts)
	steps, noMarkers := stepsOrSpan(r)
	if len(steps) == 0 {
		return out
	}
	windows := deviceWindows(steps, r.Flows)
	all := make([]breakdownWithStart, len(windows))
	for i, w := range windows {
		all[i] = breakdown(inWindow(r.Compute, w.startNs, w.endNs), opsInWindow(r.CommOps, w.startNs, w.endNs))
		out = append(out, w.startNs, w.endNs, all[i].firstNs, all[i].lastNs, all[i].lastNs+1)
	}
	if !noMarkers {
		addTrailingIdle(all, steps, r.Overlap.Free)
	} else {
		addClosingIdle(&all[0], r.Overlap.Free)
	}
	for i, w := range windows {
		b := all[i]
		out = append(out, b.firstNs, b.lastNs, b.lastNs+1, w.step.StartNs, w.step.EndNs)
		if !noMarkers {
			out = append(out, min(w.endNs, max(b.lastNs, w.step.EndNs)))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// stretch is the index of the stretch between cut points where t falls.
func stretch(cuts []int64, t int64) int {
	return sort.Search(len(cuts), func(i int) bool { return cuts[i] > t })
}

// compactCompute folds a rank's compute tasks (see Compact).
func compactCompute(compute []profile.Interval, cuts []int64, protected []profile.Interval) []profile.Interval {
	var out []profile.Interval
	touches := func(iv profile.Interval) bool {
		i := sort.Search(len(protected), func(i int) bool { return protected[i].EndNs >= iv.StartNs })
		return i < len(protected) && protected[i].StartNs <= iv.EndNs
	}
	crosses := func(iv profile.Interval) bool { return stretch(cuts, iv.StartNs) != stretch(cuts, iv.EndNs-1) }
	// reachNs is the latest end of the tasks of earlier stretches: pieces starting
	// before it may overlap those tasks, and are kept as they are.
	reachNs := int64(-1 << 62)
	for i := 0; i < len(compute); {
		s := stretch(cuts, compute[i].StartNs)
		j := i
		for j < len(compute) && stretch(cuts, compute[j].StartNs) == s {
			j++
		}
		var zero []profile.Interval
		for _, iv := range compute[i:j] {
			if iv.EndNs <= iv.StartNs { // union drops them; they still bound a run without markers
				zero = append(zero, iv)
			}
		}
		pieces := union(compute[i:j])
		var folded []profile.Interval
		run := []profile.Interval{}
		flush := func() {
			if len(run) >= 3 {
				var sum int64
				for _, p := range run[:len(run)-1] {
					sum += p.DurNs()
				}
				folded = append(folded, profile.Interval{StartNs: run[0].StartNs, EndNs: run[0].StartNs + sum}, run[len(run)-1])
			} else {
				folded = append(folded, run...)
			}
			run = run[:0]
		}
		for _, p := range pieces {
			if touches(p) || crosses(p) || p.StartNs <= reachNs {
				flush()
				folded = append(folded, p)
				continue
			}
			run = append(run, p)
		}
		flush()
		folded = append(folded, zero...)
		slices.SortStableFunc(folded, func(a, b profile.Interval) int { return cmpInt64(a.StartNs, b.StartNs) })
		out = append(out, folded...)
		for _, iv := range compute[i:j] {
			reachNs = max(reachNs, iv.EndNs)
		}
		i = j
	}
	return out
}

func overlapSorted(o profile.OverlapLayer) bool {
	for _, rows := range [][]profile.Interval{o.Computing, o.Communication, o.CommNotOverlapped, o.Free} {
		if !slices.IsSortedFunc(rows, func(a, b profile.Interval) int { return cmpInt64(a.StartNs, b.StartNs) }) {
			return false
		}
	}
	return true
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// foldRows folds runs of disjoint rows (one kind of the Overlap Analysis layer)
// starting in the same stretch: all but the last become one row of their summed
// length at the run's start, which ends before the last begins, so every stretch
// keeps its sum, first start and last end.
func foldRows(rows []profile.Interval, cuts []int64) []profile.Interval {
	out := make([]profile.Interval, 0, len(rows))
	for i := 0; i < len(rows); {
		s := stretch(cuts, rows[i].StartNs)
		j := i + 1
		for j < len(rows) && stretch(cuts, rows[j].StartNs) == s && rows[j-1].EndNs <= rows[j].StartNs && rows[j-1].EndNs >= rows[j-1].StartNs {
			j++
		}
		if j-i >= 3 {
			var sum int64
			for _, r := range rows[i : j-1] {
				sum += r.DurNs()
			}
			out = append(out, profile.Interval{StartNs: rows[i].StartNs, EndNs: rows[i].StartNs + sum}, rows[j-1])
		} else {
			out = append(out, rows[i:j]...)
		}
		i = j
	}
	return out
}

// compactFlows keeps, per host step (or the one step spanning a rank without
// markers), the flows with the earliest and the latest device time (all
// deviceWindows reads of them); when none falls in a step, the first flow alone, so
// that the rank still says it has flows.
func compactFlows(r *profile.Rank) []profile.DeviceFlow {
	if len(r.Flows) == 0 {
		return nil
	}
	keep := map[int]bool{}
	steps, _ := stepsOrSpan(r)
	first := make([]int, len(steps))
	last := make([]int, len(steps))
	for i := range first {
		first[i], last[i] = -1, -1
	}
	for k, f := range r.Flows {
		i := sort.Search(len(steps), func(i int) bool { return steps[i].EndNs > f.HostNs })
		if i == len(steps) || f.HostNs < steps[i].StartNs {
			continue
		}
		if first[i] < 0 || f.DeviceNs < r.Flows[first[i]].DeviceNs {
			first[i] = k
		}
		if last[i] < 0 || f.DeviceNs > r.Flows[last[i]].DeviceNs {
			last[i] = k
		}
	}
	for i := range first {
		if first[i] >= 0 {
			keep[first[i]], keep[last[i]] = true, true
		}
	}
	if len(keep) == 0 {
		keep[0] = true
	}
	out := make([]profile.DeviceFlow, 0, len(keep))
	for k, f := range r.Flows {
		if keep[k] {
			out = append(out, f)
		}
	}
	return out
}
