package parser

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/hcclprof/hcclprof/profile"
)

// maxPlausibleNs bounds any duration a profile may hold: a day. A larger one is a
// damaged value (1e300 µs wraps int64), not a measurement.
const maxPlausibleNs = int64(24 * 3600 * 1e9)

// validate checks every value of a parsed rank against what it can be, as pprof's
// CheckValid does after a parse: an interval that ends before it starts, a duration
// that is negative or beyond a day, a step row whose parts exceed the step or that
// repeats a step, an op whose transit and wait exceed its elapse. A value outside is
// never passed on: the item is dropped, and the rank gets a problem naming the file,
// the item, the field and the value, which makes it incomplete (exit 3 unless
// --allow-partial).
func validate(r *profile.Rank) {
	problem := func(format string, args ...any) { r.Problems = append(r.Problems, fmt.Sprintf(format, args...)) }
	timeline := timelineFile(r)

	r.CommOps = keepValidItems(r.CommOps, func(op profile.CommOp) bool {
		if badInterval(op.Interval) {
			problem("%s: op %s at %d ns: end %d ns before its start, or longer than a day: dropped", opsFile(r), op.Name, op.StartNs, op.EndNs)
			return false
		}
		return true
	})
	r.KernelCommOps = keepValidItems(r.KernelCommOps, func(op profile.CommOp) bool {
		if badInterval(op.Interval) {
			problem("kernel_details.csv: op %s at %d ns: duration %d ns out of range: dropped", op.Name, op.StartNs, op.DurNs())
			return false
		}
		return true
	})
	bad := 0
	r.Compute = keepValidItems(r.Compute, func(iv profile.Interval) bool {
		if badInterval(iv) {
			if bad++; bad == 1 {
				problem("%s: a compute task at %d ns ends at %d ns, before its start or over a day later: dropped", timeline, iv.StartNs, iv.EndNs)
			}
			return false
		}
		return true
	})
	bad = 0
	r.CommTasks = keepValidItems(r.CommTasks, func(t profile.CommTask) bool {
		if badInterval(t.Interval) || t.SizeBytes < 0 {
			if bad++; bad == 1 {
				problem("%s: HCCL task %s at %d ns: end %d ns or size %d bytes out of range: dropped", timeline, t.Name, t.StartNs, t.EndNs, t.SizeBytes)
			}
			return false
		}
		return true
	})
	r.Steps = keepValidItems(r.Steps, func(s profile.StepMarker) bool {
		if badInterval(s.Interval) {
			problem("%s: ProfilerStep#%d ends at %d ns, before its start %d ns or over a day later: dropped", timeline, s.Step, s.EndNs, s.StartNs)
			return false
		}
		return true
	})

	stepFile := stepTraceFile(r)
	seen := map[int]bool{}
	r.StepTrace = keepValidItems(r.StepTrace, func(row profile.StepTraceRow) bool {
		if why := badStepRow(row); why != "" {
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

	statsFile := usedFile(r, "communication.json", commStatsFiles...)
	r.CommStats = keepValidItems(r.CommStats, func(s profile.CommOpStats) bool {
		if why := badOpStats(s); why != "" {
			problem("%s: op %s@%s step %d: %s: dropped", statsFile, s.Name, s.Group, s.Step, why)
			return false
		}
		return true
	})
}

// keepValidItems keeps the items ok accepts, in place.
func keepValidItems[T any](items []T, ok func(T) bool) []T {
	return slices.DeleteFunc(items, func(it T) bool { return !ok(it) })
}

func badInterval(iv profile.Interval) bool {
	return iv.EndNs < iv.StartNs || iv.DurNs() > maxPlausibleNs
}

// badStepRow says what is impossible in a step_trace_time.csv row, "" when nothing.
// Bubble lies outside Stage (Stage = span − Bubble), so the parts of the device span
// are bounded by Stage + Bubble. Messages give µs, the unit of the file.
func badStepRow(row profile.StepTraceRow) string {
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
		if f.v < 0 || f.v > maxPlausibleNs {
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

// badOpStats says what is impossible in an op of communication.json, "" when
// nothing. Transit and Wait are measured on one plane within the op, so each is at most
// its elapse, and so is their sum (Idle = Elapse − Transit − Wait ≥ 0); Synchronization
// is the part of Wait before the first transfer.
func badOpStats(s profile.CommOpStats) string {
	const slackNs = 1000 // the file's ms floats carry ~ns rounding
	switch {
	case s.ElapseNs < 0 || s.ElapseNs > maxPlausibleNs:
		return fmt.Sprintf("Elapse Time %g ms is out of range", float64(s.ElapseNs)/1e6)
	case s.TransitNs < 0, s.WaitNs < 0, s.SyncNs < 0:
		return fmt.Sprintf("a negative time (Transit %g, Wait %g, Synchronization %g ms)", float64(s.TransitNs)/1e6, float64(s.WaitNs)/1e6, float64(s.SyncNs)/1e6)
	case s.TransitNs+s.WaitNs > s.ElapseNs+slackNs:
		return fmt.Sprintf("Transit %g ms + Wait %g ms exceed the Elapse Time %g ms", float64(s.TransitNs)/1e6, float64(s.WaitNs)/1e6, float64(s.ElapseNs)/1e6)
	case s.SyncNs > s.WaitNs+slackNs:
		return fmt.Sprintf("Synchronization %g ms exceeds Wait %g ms", float64(s.SyncNs)/1e6, float64(s.WaitNs)/1e6)
	}
	for name, t := range s.Transports {
		if t.Bytes < 0 || t.TimeNs < 0 || t.TimeNs > maxPlausibleNs {
			return fmt.Sprintf("transport %s: %d bytes in %g ms is out of range", name, t.Bytes, float64(t.TimeNs)/1e6)
		}
	}
	return ""
}

func stepText(row profile.StepTraceRow) string {
	if !row.HasStep {
		return "(none)"
	}
	return fmt.Sprint(row.Step)
}

// usedFile is the first of names among the files the rank used, else def.
func usedFile(r *profile.Rank, def string, names ...string) string {
	for _, want := range names {
		for _, f := range r.FilesUsed {
			if filepath.Base(f) == want {
				return f
			}
		}
	}
	return def
}

func timelineFile(r *profile.Rank) string {
	for _, f := range r.FilesUsed {
		if b := filepath.Base(f); b == "trace_view.json" || filepath.Ext(b) == ".db" && b != analysisDBName {
			return f
		}
	}
	return "the timeline"
}

func stepTraceFile(r *profile.Rank) string {
	return usedFile(r, "step_trace_time.csv", "step_trace_time.csv", analysisDBName)
}

func opsFile(r *profile.Rank) string {
	if r.CommOpsSource != "" && r.CommOpsSource != OpsFromTimeline {
		return r.CommOpsSource
	}
	return timelineFile(r)
}
