package parser

import (
	"path/filepath"

	"github.com/hcclprof/hcclprof/profile"
)

// Sources of a rank's per-op records (profile.Rank.CommOpsSource).
const (
	opsFromTimeline = profile.OpsFromTimeline
	opsFromKernels  = profile.OpsFromKernels
)

// opsFromCommStats gives a rank without timeline ops (Level0/Level2 output copied
// without trace_view.json, a db export without its task tables) its ops from the
// profiler's own per-op analysis (communication.json, analysis.db's CommAnalyzerTime),
// as msprof-analyze reads every rank's communication.json: the op's name, group, start,
// elapse and step are all there, so every per-op analysis runs on them. A rank whose
// timeline has ops keeps those (the per-op statistics are joined to them by name).
func opsFromCommStats(r *profile.Rank) {
	switch {
	case len(r.CommOps) > 0:
		r.CommOpsSource = opsFromTimeline
		return
	case len(r.CommStats) == 0:
		// kernel_details.csv's rows are the last resort: names, steps and elapses,
		// without the time split.
		if len(r.KernelCommOps) > 0 {
			r.CommOps = append([]profile.CommOp(nil), r.KernelCommOps...)
			profile.SortOpsByStart(r.CommOps)
			r.CommOpsSource = opsFromKernels
		}
		return
	}
	r.CommOps = make([]profile.CommOp, 0, len(r.CommStats))
	for _, s := range r.CommStats {
		r.CommOps = append(r.CommOps, profile.CommOp{
			Name: s.Name, Type: profile.OpType(s.Name), Group: s.Group,
			Interval: profile.Interval{StartNs: s.StartNs, EndNs: s.StartNs + s.ElapseNs},
			Step:     s.Step,
		})
	}
	// CommStats are sorted by (step, start, name); the model wants ops by start.
	profile.SortOpsByStart(r.CommOps)
	r.CommOpsSource = commStatsFile(r)
}

// commStatsFile names the file the rank's per-op statistics were read from.
func commStatsFile(r *profile.Rank) string {
	return filepath.Base(r.CommStatsFile())
}
